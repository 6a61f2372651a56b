# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""End state of a vGPU guest after grid_driver, grid_license, cuda_toolkit, cudnn and gpu_validate."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

import pytest

TOKEN_DIR = "/etc/nvidia/ClientConfigToken"
TOKEN = "client_configuration_token_05-26-2022-00-08-28.tok"
CUDA = "/usr/local/cuda-11.6"


@pytest.fixture(scope="module")
def results(host):
    return json.loads(host.file("/var/lib/gpuops-lab/results.json").content_string)


# --- grid_driver ----------------------------------------------------------------------------------------------

def test_driver_package_is_installed_with_its_dependency(host):
    assert host.package("nvidia-linux-grid-510").version == "510.47.03"
    # Only a package manager that resolves dependencies installs the driver's own dependency.
    assert host.package("libglvnd0").is_installed


def test_driver_file_is_not_left_behind(host):
    assert host.file("/var/tmp/gpuops-grid-driver").listdir() == []


def test_nouveau_is_blacklisted(host):
    conf = host.file("/etc/modprobe.d/blacklist-nouveau.conf")
    assert conf.mode == 0o644 and conf.user == "root"
    assert "blacklist nouveau" in conf.content_string.splitlines()
    assert "options nouveau modeset=0" in conf.content_string.splitlines()


def test_driver_result(results):
    driver = results["grid_driver"]
    assert driver["version"] == "510.47.03" and driver["installed"] is True and driver["previous_version"] is None
    assert driver["host_compat"]["status"] == "ok-previous-branch"
    assert driver["gpus"] == ["02:01.0 3D controller [0302]: NVIDIA Corporation GA100 [A100 PCIe 40GB] [10de:20f1] (rev a1)"]
    # initramfs rebuild and reboot are switched off for the container.
    assert driver["initramfs_rebuilt"] is False and driver["rebooted"] is False
    assert driver["reboot_required"] is False
    assert driver["nvidia_smi"]["driver_version"] == "510.47.03"


# --- grid_license ---------------------------------------------------------------------------------------------

def test_gridd_conf_from_the_template_with_feature_type_1(host):
    conf = host.file("/etc/nvidia/gridd.conf")
    assert conf.exists and conf.mode == 0o644 and conf.user == "root"
    lines = conf.content_string.splitlines()
    assert [line for line in lines if line.startswith("FeatureType")] == ["FeatureType=1"]
    # The rest of the driver's template is kept as it was.
    template = host.file("/etc/nvidia/gridd.conf.template").content_string.splitlines()
    assert [line for line in lines if not line.startswith("FeatureType")] == \
        [line for line in template if not line.startswith("FeatureType")]
    assert "EnableUI=FALSE" in lines


def test_token_is_placed_0744_root_and_older_tokens_are_gone(host):
    token = host.file("%s/%s" % (TOKEN_DIR, TOKEN))
    assert token.mode == 0o744 and token.user == "root" and token.group == "root"
    assert host.file(TOKEN_DIR).listdir() == [TOKEN]


def test_gridd_runs_and_licensed(host):
    gridd = host.service("nvidia-gridd")
    assert gridd.is_running and gridd.is_enabled
    journal = host.check_output("journalctl -u nvidia-gridd --no-pager -o cat")
    assert "License acquired successfully. (Info: dls.gpuops.lab, NVIDIA Virtual Compute Server" in journal
    query = host.check_output("nvidia-smi -q")
    assert re.search(r"License Status\s+: Licensed \(Expiry: 2022-5-27 0:8:28 GMT\)", query)


def test_license_result_reports_product_expiry_and_warnings(results):
    license_ = results["grid_license"]
    assert license_["licensed"] is True
    assert license_["product"] == "NVIDIA Virtual Compute Server"
    assert license_["expiry"] == "2022-05-27T00:08:28Z"
    assert license_["restarted"] is True
    # The container's clock is not NTP-synchronised and the recorded expiry has passed: both are warnings.
    assert license_["clock_synchronized"] is False
    assert any("not synchronised" in warning for warning in license_["warnings"])
    assert license_["days_left"] < 0
    assert any("expired" in warning for warning in license_["warnings"])


# --- cuda_toolkit ---------------------------------------------------------------------------------------------

def test_toolkit_version_json_and_link(host):
    version = json.loads(host.file(CUDA + "/version.json").content_string)
    assert version["cuda"]["version"] == "11.6.2"
    link = host.file("/usr/local/cuda")
    assert link.is_symlink and link.linked_to == CUDA


def test_runfile_ran_with_toolkit_options_and_never_driver(host):
    log = host.file("/var/log/cuda-installer.log").content_string
    command_lines = [line for line in log.splitlines() if line.startswith("Command line:")]
    assert command_lines == ["Command line: --silent --toolkit --toolkitpath=%s --override --no-man-page "
                             "--tmpdir=/var/tmp/cuda-installer" % CUDA]
    assert "--driver" not in log
    assert not host.file(CUDA + "/share/man").exists
    assert host.file("/var/tmp/cuda-installer").is_directory
    assert host.file("/var/tmp/cuda-installer").listdir() == []
    assert host.file("/var/tmp/gpuops-cuda").listdir() == []


def test_nvcc_on_path_for_login_shells(host):
    assert host.file("/etc/profile.d/cuda.sh").mode == 0o644
    assert host.check_output("bash -lc 'command -v nvcc'") == "/usr/local/cuda/bin/nvcc"
    assert "release 11.6, V11.6.124" in host.check_output("bash -lc 'nvcc --version'")


def test_path_in_etc_environment(host):
    lines = host.file("/etc/environment").content_string.splitlines()
    path = [line for line in lines if line.startswith("PATH=")]
    assert len(path) == 1
    assert path[0].strip('"').split(":")[-1] == "/usr/local/cuda/bin"
    assert path[0].count("/usr/local/cuda/bin") == 1


def test_lib64_in_the_loader_path(host):
    assert host.file("/etc/ld.so.conf.d/cuda.conf").content_string.splitlines()[-1] == "/usr/local/cuda/lib64"
    directories = host.check_output("ldconfig -v -N 2>/dev/null | grep -v '^\\s'")
    assert any(line.startswith("/usr/local/cuda/lib64:") for line in directories.splitlines())


def test_toolkit_result(results):
    cuda = results["cuda_toolkit"]
    assert cuda["version"] == "11.6.2" and cuda["installed"] is True and cuda["nvcc_version"] == "11.6.124"
    assert cuda["driver_check"]["status"] == "ok" and cuda["warnings"] == []


# --- cudnn ----------------------------------------------------------------------------------------------------

def test_cudnn_archive_in_the_toolkit_tree(host):
    header = host.file("/usr/local/cuda/include/cudnn_version.h").content_string
    assert re.search(r"#define CUDNN_MAJOR 8\b", header) and re.search(r"#define CUDNN_MINOR 9\b", header)
    assert re.search(r"#define CUDNN_PATCHLEVEL 7\b", header)
    assert host.file(CUDA + "/lib64/libcudnn.so.8").linked_to == CUDA + "/lib64/libcudnn.so.8.9.7"
    assert not host.file(CUDA + "/lib").exists
    assert not host.file(CUDA + "/LICENSE").exists


def test_cudnn_wheel_in_the_virtual_environment(host):
    show = host.check_output("/opt/lab-cudnn/bin/pip show nvidia-cudnn-cu11")
    assert "Version: 8.9.6.50" in show.splitlines()


def test_cudnn_results(results):
    assert results["cudnn_archive"]["version"] == "8.9.7" and results["cudnn_archive"]["installed"] is True
    assert results["cudnn_archive"]["cuda_major"] == "11" and results["cudnn_archive"]["toolkit_version"] == "11.6.2"
    assert results["cudnn_wheel"]["version"] == "8.9.6"
    assert results["cudnn_wheel"]["header"].endswith("/site-packages/nvidia/cudnn/include/cudnn_version.h")


# --- gpu_validate ---------------------------------------------------------------------------------------------

def test_validation_passes_with_nvenc_unavailable_on_an_a100_profile(results):
    validate = results["gpu_validate"]
    statuses = dict((name, check["status"]) for name, check in validate["checks"].items())
    assert statuses == {"driver": "ok", "license": "ok", "profile": "ok", "nvcc": "ok", "cuda_program": "ok",
                        "nvenc": "warning", "pytorch": "ok",
                        "nccl": "skipped", "dcgm": "skipped"}
    assert validate["passed"] is True and validate["warnings"] == ["nvenc"]
    assert validate["checks"]["nvenc"]["category"] == "not_available"
    assert validate["checks"]["profile"]["seen"] == ["grid_a100-4c"]
    assert validate["checks"]["cuda_program"]["output"][-1] == "PASS"
    assert validate["checks"]["pytorch"]["details"]["devices"] == ["GRID A100-4C"]


def test_validation_leaves_no_scratch_files(host):
    assert host.run("ls -d /tmp/gpuops-validate.* 2>/dev/null").stdout == ""
