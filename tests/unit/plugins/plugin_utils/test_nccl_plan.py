# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nccl role's plan from one gpu_guest_info read: what is installed, built or refused."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib

import pytest

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._nccl_plan import nccl_plan, stamp_text

ARCHIVE = "/srv/artifacts/nccl-tests-2.13.6.tar.gz"
STAMP = "/opt/nccl-tests/.gpuops-nccl-tests.json"
PROGRAM = "/opt/nccl-tests/bin/all_reduce_perf"
ARCHIVE_SHA1 = "a" * 40


def params(**overrides):
    base = {"source": "repository", "version": "2.21.5-1", "cuda_version": "", "package_files": [],
            "package_manager": "", "cuda_home": "/usr/local/cuda", "tests": True, "tests_src": "",
            "tests_remote_src": ARCHIVE, "tests_archive_checksum": "", "prefix": "/opt/nccl-tests",
            "stamp_path": STAMP, "make_options": [], "min_gpus": 2}
    base.update(overrides)
    return base


def guest(gpus=8, packages=None, toolkit="12.1.1", family="deb", files=None, errors=None, smi_gpus=None):
    series = ".".join(toolkit.split(".")[:2])
    toolkits = [{"path": "/usr/local/cuda-%s" % series, "version": toolkit}] if toolkit else []
    state = {
        "os": {"family": "Debian" if family == "deb" else "RedHat", "package_format": family},
        "pci": {"gpus": [{"address": "0000:%02x:00.0" % (0x19 + n)} for n in range(gpus)]},
        "nvidia_smi": ({"present": True, "gpus": [{"index": n} for n in range(smi_gpus)]} if smi_gpus is not None
                       else {"present": False, "gpus": []}),
        "packages": dict(packages or {}),
        "cuda": {"toolkits": toolkits,
                 "link": {"path": "/usr/local/cuda", "target": toolkits[0]["path"]} if toolkits else None},
        "files": {ARCHIVE: {"exists": True, "type": "file", "checksum": ARCHIVE_SHA1}},
        "errors": errors or {},
    }
    state["files"].update(files or {})
    return state


def converged_files(nccl="2.21.5-1+cuda12.1", cuda="12.1.1"):
    stamp = stamp_text("nccl-tests-2.13.6.tar.gz", ARCHIVE_SHA1, nccl, cuda, "/usr/local/cuda", [])
    return {STAMP: {"exists": True, "type": "file", "checksum": hashlib.sha1(stamp.encode()).hexdigest()},
            PROGRAM: {"exists": True, "type": "file", "checksum": "b" * 40}}


INSTALLED = {"libnccl2": "2.21.5-1+cuda12.1", "libnccl-dev": "2.21.5-1+cuda12.1"}


def test_a_machine_without_nccl_gets_the_build_for_its_toolkit_and_nccl_tests():
    plan = nccl_plan(guest(), params(), hostname="hgx-01")
    assert plan["error"] == ""
    assert plan["install"] == ["libnccl2=2.21.5-1+cuda12.1", "libnccl-dev=2.21.5-1+cuda12.1"]
    assert plan["manager"] == "apt" and plan["build"] and not plan["converged"]
    assert plan["result"]["nccl_version"] == "2.21.5-1+cuda12.1" and plan["result"]["gpus"] == 8
    assert '"archive_sha1": "%s"' % ARCHIVE_SHA1 in plan["stamp"]


def test_a_converged_machine_needs_nothing():
    plan = nccl_plan(guest(packages=INSTALLED, files=converged_files()), params())
    assert plan["converged"] and plan["install"] == [] and not plan["build"] and plan["error"] == ""
    assert plan["result"]["changed"] is False


@pytest.mark.parametrize("change, why", [
    ({"files": {}}, "another archive"),
    ({"toolkit": "12.2.2"}, "another toolkit"),
])
def test_a_different_archive_or_toolkit_builds_again(change, why):
    files = converged_files()
    if change.get("files") is not None:
        files = dict(files)
        files[ARCHIVE] = {"exists": True, "type": "file", "checksum": "c" * 40}
    toolkit = change.get("toolkit", "12.1.1")
    packages = dict((k, v.replace("12.1", toolkit[:4])) for k, v in INSTALLED.items())
    plan = nccl_plan(guest(packages=packages, files=files, toolkit=toolkit), params())
    assert plan["error"] == "" and plan["install"] == [] and plan["build"], why


def test_another_nccl_version_installs_it_and_builds_again():
    plan = nccl_plan(guest(packages={"libnccl2": "2.18.3-1+cuda12.1", "libnccl-dev": "2.18.3-1+cuda12.1"},
                           files=converged_files()), params())
    assert plan["install"] == ["libnccl2=2.21.5-1+cuda12.1", "libnccl-dev=2.21.5-1+cuda12.1"] and plan["build"]


def test_a_minor_of_the_same_major_is_allowed():
    plan = nccl_plan(guest(), params(cuda_version="12.4"))
    assert plan["error"] == "" and plan["install"][0] == "libnccl2=2.21.5-1+cuda12.4"


def test_dnf_names():
    plan = nccl_plan(guest(family="rpm"), params())
    assert plan["install"] == ["libnccl-2.21.5-1+cuda12.1", "libnccl-devel-2.21.5-1+cuda12.1"]


def test_one_gpu_gets_nccl_and_a_note_instead_of_nccl_tests():
    plan = nccl_plan(guest(gpus=1), params(tests_remote_src=""), hostname="pt-01")
    assert plan["error"] == "" and not plan["build"] and plan["install"]
    assert "1 GPU: nccl-tests measure NCCL across two or more GPUs" in plan["notes"][0]
    assert plan["result"]["tests"]["wanted"] is False


@pytest.mark.parametrize("overrides, facts, words", [
    ({"cuda_version": "11.0"}, {}, "NCCL 2.21.5-1+cuda11.0 is built for CUDA 11.0, but the toolkit at /usr/local/cuda "
                                   "is CUDA 12.1.1: use a build for CUDA 12.x"),
    ({}, {"toolkit": ""}, "no CUDA toolkit at /usr/local/cuda"),
    ({"version": ""}, {}, "nccl_version '' is not an NCCL package version"),
    ({"version": "2.21.5"}, {}, "nccl_version '2.21.5' is not an NCCL package version"),
    ({"tests_remote_src": ""}, {}, "hgx-01 has 8 GPUs, so nccl-tests are built there"),
    ({"tests_remote_src": "/srv/missing.tar.gz"}, {}, "the nccl-tests archive /srv/missing.tar.gz does not exist"),
    ({"tests_src": "/ctl/nccl-tests.tar.gz"}, {}, "nccl_tests_src and nccl_tests_remote_src are set"),
    ({"tests_remote_src": "", "tests_src": "/ctl/nccl-tests.tar.gz"}, {}, "does not exist on the controller"),
    ({"source": "packages"}, {}, "nccl_source packages needs nccl_package_files"),
    ({"source": "packages", "package_files": ["/tmp/nccl.deb"]}, {}, "is not named like NVIDIA's NCCL packages"),
    ({"source": "packages", "package_files": ["/tmp/libnccl2_2.21.5-1+cuda12.1_amd64.deb"]}, {},
     "nccl_package_files lack libnccl-dev"),
    ({"source": "packages", "package_files": ["/tmp/libnccl2_2.21.5-1+cuda12.1_amd64.deb",
                                              "/tmp/libnccl-dev_2.21.5-1+cuda12.1_amd64.deb"]}, {},
     "the package file /tmp/libnccl2_2.21.5-1+cuda12.1_amd64.deb does not exist there"),
    ({"source": "wheel"}, {}, "nccl_source 'wheel' is not one of repository, packages"),
    ({"tests_remote_src": "/srv/nccl-tests.zip"}, {"files": {"/srv/nccl-tests.zip": {"exists": True}}},
     "The nccl-tests source /srv/nccl-tests.zip is not a tar archive"),
    ({}, {"errors": {"packages": {"msg": "dpkg status unreadable"}}}, "the read of packages failed"),
])
def test_bad_input_is_refused_before_any_change(overrides, facts, words):
    plan = nccl_plan(guest(**facts), params(**overrides), hostname="hgx-01")
    assert words in plan["error"], plan["error"]
    assert plan["error"].endswith("Nothing was changed.")
    assert plan["install"] == [] and not plan["build"] and not plan["converged"]


def test_package_files_install_runtime_first_and_name_the_version():
    files = ["/srv/libnccl-dev_2.21.5-1+cuda12.1_amd64.deb", "/srv/libnccl2_2.21.5-1+cuda12.1_amd64.deb"]
    present = dict((path, {"exists": True, "type": "file", "checksum": "d" * 40}) for path in files)
    plan = nccl_plan(guest(files=present), params(source="packages", package_files=files, version=""))
    assert plan["error"] == "" and plan["install"] == list(reversed(files))
    assert plan["result"]["nccl_version"] == "2.21.5-1+cuda12.1"
    converged = dict(present, **converged_files())
    again = nccl_plan(guest(files=converged, packages=INSTALLED), params(source="packages", package_files=files))
    assert again["converged"]


def test_package_files_for_another_cuda_major_are_refused():
    files = ["/srv/libnccl2_2.21.5-1+cuda11.0_amd64.deb", "/srv/libnccl-dev_2.21.5-1+cuda11.0_amd64.deb"]
    present = dict((path, {"exists": True}) for path in files)
    plan = nccl_plan(guest(files=present), params(source="packages", package_files=files))
    assert "built for CUDA 11.0" in plan["error"]


def test_check_mode_before_the_toolkit_says_what_waits_instead_of_refusing():
    plan = nccl_plan(guest(toolkit=""), params(), check_mode=True, hostname="hgx-01")
    assert plan["error"] == "" and not plan["converged"] and plan["install"] == [] and not plan["build"]
    assert plan["pending"].startswith("hgx-01: no CUDA toolkit at /usr/local/cuda yet (check mode")
    assert plan["result"]["changed"] is True
    assert "no CUDA toolkit" in nccl_plan(guest(toolkit=""), params(), hostname="hgx-01")["error"]


def test_nccl_tests_off_installs_nccl_only():
    plan = nccl_plan(guest(packages=INSTALLED), params(tests=False, tests_remote_src=""))
    assert plan["converged"] and plan["notes"] == []


def test_the_gpus_are_those_nvidia_smi_lists_where_it_answers():
    # A VM whose lspci does not show its passthrough GPUs, but whose driver sees two.
    plan = nccl_plan(guest(gpus=0, smi_gpus=2), params())
    assert plan["result"]["gpus"] == 2 and plan["build"]
    assert nccl_plan(guest(gpus=2, smi_gpus=1), params(tests_remote_src=""))["result"]["gpus"] == 1
