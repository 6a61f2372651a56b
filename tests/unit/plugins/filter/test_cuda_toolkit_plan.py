# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cuda_toolkit role's plan: the first broken rule in the role's order, the steps that differ, the result."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import copy
import hashlib
import json

import pytest

from ansible_collections.gpuops.vgpu.plugins.filter import guest_plans

PROFILE = "# profile\n"
LOADER = "# loader\n/usr/local/cuda/lib64\n"
PARAMS = {
    "sources": ["cuda_toolkit_src"], "version": "11.6.2", "series": "11.6", "file": "cuda_11.6.2_510.47.03_linux.run",
    "prefix": "/usr/local/cuda-11.6", "home": "/usr/local/cuda", "bin": "/usr/local/cuda/bin",
    "env_path": ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/cuda/bin"],
    "install_root": "/usr/local", "installer_options": [],
    "conflicting_packages": ["nvidia-cuda-toolkit", "cuda", "cuda-drivers", "cuda-drivers-[0-9]+"],
    "prerequisites": [], "driver_version": "", "allow_minor_compat": True, "symlink": True, "profile_d": True,
    "etc_environment": True, "ldconfig": True, "link_path": "/usr/local/cuda", "profile_path": "/etc/profile.d/cuda.sh",
    "loader_path": "/etc/ld.so.conf.d/cuda.conf", "profile_script": PROFILE, "loader_conf": LOADER,
}


def _file(content):
    return {"exists": True, "type": "file", "mode": "0644", "owner": "root", "group": "root",
            "checksum": hashlib.sha1(content.encode()).hexdigest()}


GUEST = {
    "gathered": ["packages", "nvidia_smi", "cuda"], "errors": {},
    "packages": {"nvidia-linux-grid-510": "510.47.03"},
    "nvidia_smi": {"present": True, "driver_version": "510.47.03"},
    "cuda": {"toolkits": [{"path": "/usr/local/cuda-11.6", "series": "11.6", "version": "11.6.2",
                           "nvcc_version": "11.6.124", "nvcc": True}]},
    "files": {"/usr/local/cuda": {"exists": True, "type": "link", "target": "/usr/local/cuda-11.6", "owner": "root",
                                  "group": "root"},
              "/etc/profile.d/cuda.sh": _file(PROFILE), "/etc/ld.so.conf.d/cuda.conf": _file(LOADER)},
}


def plan(guest=None, check_mode=False, version_json=None, **params):
    return guest_plans.cuda_toolkit_plan(guest or GUEST, dict(PARAMS, **params), check_mode=check_mode,
                                         hostname="vm1", version_json=version_json)


def test_a_converged_guest_has_nothing_to_do_and_reports_the_toolkit_as_read():
    decided = plan()
    assert decided["error"] == "" and decided["changes"] == [] and decided["run_nvcc"] is False
    assert decided["result"] == {
        "version": "11.6.2", "path": "/usr/local/cuda-11.6", "home": "/usr/local/cuda", "previous_version": "11.6.2",
        "installed": False, "nvcc_version": "11.6.124", "driver_version": "510.47.03",
        "driver_check": decided["result"]["driver_check"], "warnings": [], "changed": False}
    assert decided["result"]["driver_check"]["status"] == "ok"


def test_a_bare_guest_gets_every_step_and_nvcc_after_the_install():
    guest = dict(GUEST, cuda={"toolkits": []}, files={})
    decided = plan(guest, etc_environment=True, env_path=["/usr/bin"])
    assert decided["changes"] == ["install", "link", "profile", "environment", "loader"]
    assert decided["run_nvcc"] is True and decided["result"]["changed"] is True
    assert decided["result"]["previous_version"] is None and decided["result"]["nvcc_version"] is None
    assert plan(guest, check_mode=True)["run_nvcc"] is False


@pytest.mark.parametrize("params, guest_change, message", [
    ({"sources": []}, {}, "Set exactly one of cuda_toolkit_src (runfile on the controller), cuda_toolkit_url or "
                          "cuda_toolkit_remote_src (runfile on the guest); none is set."),
    ({"sources": ["cuda_toolkit_src", "cuda_toolkit_url"]}, {}, "; cuda_toolkit_src and cuda_toolkit_url are set."),
    ({"version": "12"}, {}, "No CUDA version in the runfile name cuda_11.6.2_510.47.03_linux.run (expected "
                            "cuda_<version>_<driver>_linux.run): set cuda_toolkit_version."),
    ({"installer_options": ["--driver"]}, {}, "cuda_toolkit_installer_options contains --driver: the runfile's "
                                              "driver would replace the GRID driver of this vGPU guest. Remove it."),
    ({}, {"errors": {"packages": {"msg": "rpm failed"}}},
     "Could not read packages on vm1: rpm failed. Nothing was changed."),
    ({}, {"packages": {"nvidia-cuda-toolkit": "11.8", "cuda": "12"}},
     "cuda, nvidia-cuda-toolkit installed on vm1: distribution CUDA packages pull a non-GRID NVIDIA driver and "
     "remove the GRID driver of this vGPU guest. Remove cuda nvidia-cuda-toolkit, reinstall"),
    ({"prerequisites": ["gcc", "cuda-drivers-530"]}, {}, "cuda_toolkit_prerequisites asks for cuda-drivers-530: "
                                                         "distribution CUDA packages"),
    ({}, {"nvidia_smi": {"present": False, "kind": "not_installed", "msg": "No nvidia-smi."}},
     "No working NVIDIA driver on vm1 to check CUDA 11.6.2 against (nvidia-smi: not_installed: No nvidia-smi.). "
     "Install the GRID driver first (gpuops.vgpu.grid_driver), or set cuda_toolkit_driver_version when a reboot is "
     "pending. Nothing was installed."),
    ({"version": "12.1.1", "series": "12.1", "prefix": "/usr/local/cuda-12.1"}, {},
     "CUDA 12.1 Update 1 needs driver 530.30.02 or newer"),
    ({}, {"cuda": {"toolkits": [{"path": "/usr/local/cuda-11.6", "version": "11.6.2", "nvcc_version": "11.6.124",
                                 "nvcc": False}]}}, "/usr/local/cuda-11.6/bin/nvcc is missing or not executable"),
    ({}, {"cuda": {"toolkits": [{"path": "/usr/local/cuda-11.6", "version": "11.6.2", "nvcc_version": "11.5.119",
                                 "nvcc": True}]}},
     "/usr/local/cuda-11.6/bin/nvcc reports release '11.5', not 11.6"),
])
def test_the_first_broken_rule_is_the_error_and_nothing_is_to_change(params, guest_change, message):
    guest = dict(copy.deepcopy(GUEST), **guest_change)
    decided = plan(guest, **params)
    assert message in decided["error"]
    assert decided["changes"] == [] and decided["run_nvcc"] is False and decided["result"]["changed"] is False


SERVER = dict(GUEST, packages={"cuda-drivers-535": "535.161.08-1", "nvidia-driver-535": "535.161.08-1"},
              nvidia_smi={"present": True, "driver_version": "535.161.08"})


def test_the_data_center_driver_is_no_conflict_where_the_machine_owns_its_gpus():
    owned = guest_plans.cuda_toolkit_plan(SERVER, PARAMS, hostname="hgx-01", vgpu_guest=False)
    assert owned["error"] == ""
    refused = "cuda-drivers-535 installed on %s: distribution CUDA packages pull a non-GRID NVIDIA driver"
    assert refused % "vm1" in plan(SERVER)["error"], "a vGPU guest keeps its refusal"
    with_grid = dict(SERVER, driver={"packages": [{"name": "nvidia-linux-grid-535"}]})
    server = {"hostname": "hgx-01", "vgpu_guest": False}
    assert refused % "hgx-01" in guest_plans.cuda_toolkit_plan(with_grid, PARAMS, **server)["error"]
    with_meta = dict(SERVER, packages=dict(SERVER["packages"], cuda="12.2.2-1"))
    assert "cuda installed on hgx-01" in guest_plans.cuda_toolkit_plan(with_meta, PARAMS, **server)["error"]


def test_minor_version_compatibility_is_a_warning_unless_refused():
    params = {"version": "11.8.0", "series": "11.8", "prefix": "/usr/local/cuda-11.8"}
    allowed = plan(**params)
    assert allowed["error"] == "" and allowed["warnings"] == [allowed["result"]["driver_check"]["message"]]
    assert "CUDA 11.8 needs driver 520.61.05 or newer" in allowed["warnings"][0]
    refused = plan(allow_minor_compat=False, **params)
    assert refused["error"].endswith(" Nothing was installed.") and "520.61.05" in refused["error"]


def test_another_install_root_is_known_by_its_version_json():
    content = base64.b64encode(json.dumps({"cuda": {"version": "11.6.2"}}).encode()).decode()
    params = {"install_root": "/opt", "prefix": "/opt/cuda-11.6", "link_path": "/opt/cuda"}
    assert "install" not in plan(version_json=content, **params)["changes"]
    assert plan(version_json=None, **params)["changes"][0] == "install"
