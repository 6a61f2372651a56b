# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the guest roles refuse or report, each before changing anything, and the kernel-module switches.

The converge recorded, per case, whether the role failed, its message, and which watched paths existed right
after (outcomes.json); the end state of the guest is checked directly.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

import pytest

DRIVER_PACKAGE = "/var/lib/dpkg/info/nvidia-linux-grid-510.list"
BLACKLIST = "/etc/modprobe.d/blacklist-nouveau.conf"
TOKEN = "/etc/nvidia/ClientConfigToken/client_configuration_token.tok"


@pytest.fixture(scope="module")
def outcomes(host):
    return json.loads(host.file("/var/lib/gpuops-lab/outcomes.json").content_string)


def failed_with(outcomes, case, *phrases):
    outcome = outcomes[case]
    assert outcome["failed"] is True, "%s did not fail" % case
    for phrase in phrases:
        assert phrase in outcome["msg"], "%r not in the message of %s: %s" % (phrase, case, outcome["msg"])
    return outcome


def test_validation_without_a_driver_tells_a_broken_driver_from_missing_nvenc(outcomes):
    outcome = failed_with(outcomes, "validate_without_driver", "failed driver", "nvidia-smi fails (not_installed)")
    checks = outcome["result"]["checks"]
    statuses = dict((name, check["status"]) for name, check in checks.items())
    assert statuses == {"driver": "failed", "license": "skipped", "profile": "skipped", "nvcc": "failed",
                        "cuda_program": "skipped", "nvenc": "failed", "pytorch": "skipped",
                        "nccl": "skipped", "dcgm": "skipped"}
    assert checks["nvenc"]["category"] == "driver"
    assert "Cannot load libnvidia-encode.so.1" in checks["nvenc"]["message"]


def test_check_mode_predicts_the_install_and_changes_nothing(outcomes):
    outcome = outcomes["driver_check_mode"]
    run = outcome["result"]
    assert run["rc"] == 0
    # It predicts the copy, the install and the blacklist ...
    changed = int(re.search(r"changed=(\d+)", run["recap"][0]).group(1))
    assert changed >= 3
    assert run["grid_driver_result"]["installed"] is True
    # ... and changes none of them.
    for path in (DRIVER_PACKAGE, "/usr/bin/nvidia-smi", BLACKLIST,
                 "/var/tmp/gpuops-grid-driver/nvidia-linux-grid-510_510.47.03_amd64.deb"):
        assert path not in outcome["existing"]


def test_runfile_installs_silently_with_dkms(outcomes):
    outcome = outcomes["runfile"]
    assert outcome["failed"] is False
    assert outcome["result"]["format"] == "run" and outcome["result"]["installed"] is True
    assert outcome["result"]["nvidia_smi"]["driver_version"] == "510.47.03"
    assert "/usr/bin/nvidia-uninstall" in outcome["existing"] and DRIVER_PACKAGE not in outcome["existing"]


def test_runfile_is_not_run_again_for_the_installed_version(outcomes):
    outcome = outcomes["runfile_again"]
    assert outcome["failed"] is False
    assert outcome["result"]["installed"] is False and outcome["result"]["previous_version"] == "510.47.03"
    # The log is the first run's: its command line had the options the role passes.
    assert outcome["log"][1:4] == ["command line:", "    --silent", "    --dkms"]
    assert any("registered with DKMS" in line for line in outcome["log"])


def test_no_gpu_visible_fails_before_installing(outcomes):
    outcome = failed_with(outcomes, "no_gpu", "No NVIDIA GPU is visible on the PCI bus",
                          "lists no display or 3D controller", "Nothing was installed")
    assert DRIVER_PACKAGE not in outcome["existing"]


def test_driver_the_host_does_not_accept_fails_before_installing(outcomes):
    outcome = failed_with(outcomes, "host_incompatible", "does not work with vGPU Manager 470.129.04",
                          "install a GRID guest driver from R470", "Nothing was installed")
    assert DRIVER_PACKAGE not in outcome["existing"]


def test_no_token_is_a_clear_error_and_changes_nothing(outcomes):
    outcome = failed_with(outcomes, "no_token", "No client configuration token given",
                          "grid_license_token_src", "Nothing was changed")
    assert "/etc/nvidia/gridd.conf" not in outcome["existing"]


def test_kernel_steps_off_install_the_driver_and_touch_no_kernel_setting(outcomes):
    outcome = outcomes["kernel_steps_off"]
    assert outcome["failed"] is False
    assert DRIVER_PACKAGE in outcome["existing"]
    assert BLACKLIST not in outcome["existing"]
    assert outcome["initramfs_calls"] == []


def test_kernel_steps_on_blacklist_nouveau_and_rebuild_the_initramfs_once(outcomes):
    outcome = outcomes["kernel_steps_on"]
    assert outcome["failed"] is False
    assert BLACKLIST in outcome["existing"]
    assert outcome["initramfs_calls"] == ["update-initramfs -u"]
    assert outcome["result"]["installed"] is False
    assert outcome["result"]["initramfs_rebuilt"] is True
    assert outcome["result"]["reboot_required"] is False


def test_a_needed_reboot_is_reported_not_done_when_not_allowed(outcomes):
    outcome = outcomes["reboot_not_allowed"]
    assert outcome["failed"] is False
    assert outcome["result"]["reboot_required"] is True and outcome["result"]["rebooted"] is False
    # The blacklist did not change, so the initramfs was not rebuilt again.
    assert outcome["initramfs_calls"] == ["update-initramfs -u"]


def test_license_that_never_arrives_fails_after_the_timeout_with_status_and_journal(outcomes, host):
    outcome = failed_with(outcomes, "license_never_arrives", "(grid_license_timeout 4)",
                          "GRID A100-4C (00000000:02:01.0): Unlicensed (Unrestricted)",
                          "nvidia-gridd journal",
                          "Failed to acquire license from dls.unreachable.invalid")
    waited = int(re.search(r"is not licensed after (\d+) s", outcome["msg"]).group(1))
    assert 4 <= waited <= 15
    token = host.file(TOKEN)
    assert token.mode == 0o744 and token.user == "root" and token.group == "root"
    # The token itself never appears in the message.
    assert token.content_string.strip() not in outcome["msg"]
    assert TOKEN in outcome["existing"]


def test_cuda_the_driver_cannot_run_fails_before_installing(outcomes):
    failed_with(outcomes, "cuda_driver_too_old", "CUDA 12.1 Update 1 needs driver 530.30.02 or newer",
                "driver 510.47.03 cannot run it", "Nothing was installed")


def test_cuda_under_minor_compatibility_is_refused_when_not_allowed(outcomes):
    failed_with(outcomes, "cuda_minor_compat_refused", "CUDA 11.8 needs driver 520.61.05 or newer",
                "minor-version compatibility", "Nothing was installed")


def test_installer_driver_option_is_refused(outcomes):
    failed_with(outcomes, "cuda_driver_option", "--driver", "would replace the GRID driver")


def test_distribution_toolkit_requested_is_refused(outcomes):
    failed_with(outcomes, "distro_toolkit_requested", "cuda_toolkit_prerequisites asks for nvidia-cuda-toolkit",
                "remove the GRID driver", "Nothing was changed")


def test_distribution_toolkit_installed_fails_before_anything(outcomes):
    outcome = failed_with(outcomes, "distro_toolkit_installed", "nvidia-cuda-toolkit installed on",
                          "pull a non-GRID NVIDIA driver", "Nothing was changed")
    assert "/var/lib/dpkg/info/nvidia-cuda-toolkit.list" in outcome["existing"]
    # None of the refused CUDA cases ran the installer.
    for path in ("/var/log/cuda-installer.log", "/usr/local/cuda-11.6", "/usr/local/cuda-11.8",
                 "/usr/local/cuda-12.1"):
        assert path not in outcome["existing"]


def test_cudnn_needs_a_toolkit(outcomes):
    failed_with(outcomes, "cudnn_without_toolkit", "No CUDA toolkit at /usr/local/cuda", "Nothing was installed")


def test_cuda_under_minor_compatibility_installs_with_a_warning(outcomes, host):
    outcome = outcomes["cuda_minor_compat"]
    assert outcome["failed"] is False
    assert outcome["result"]["installed"] is True
    assert outcome["result"]["driver_check"]["status"] == "minor-compat-only"
    assert len(outcome["result"]["warnings"]) == 1
    assert "runs it only under CUDA minor-version compatibility" in outcome["result"]["warnings"][0]
    assert host.file("/usr/local/cuda").linked_to == "/usr/local/cuda-11.8"


def test_cudnn_for_another_cuda_major_fails_before_installing(outcomes):
    outcome = failed_with(outcomes, "cudnn_wrong_cuda_major", "is built for CUDA 12",
                          "the toolkit at /usr/local/cuda is CUDA 11.8.0", "Nothing was installed")
    assert "/usr/local/cuda/include/cudnn_version.h" not in outcome["existing"]


def test_validation_names_the_wrong_profile_the_missing_license_and_torch(outcomes):
    outcome = failed_with(outcomes, "validate_wrong_profile", "failed license, profile, pytorch")
    checks = outcome["result"]["checks"]
    assert checks["driver"]["status"] == "ok"
    assert checks["license"]["message"] == "not licensed: GRID A100-4C Unlicensed (Unrestricted)"
    assert checks["profile"]["message"] == "the guest sees grid_a100-4c, the inventory says grid_a100-8c"
    # CUDA 11.8 on the 510 driver: a warning, not a failure.
    assert checks["nvcc"]["status"] == "warning" and checks["nvcc"]["release"] == "11.8"
    assert checks["pytorch"]["message"].startswith("/usr/bin/python3 cannot import torch: ")
    assert "No module named 'torch'" in checks["pytorch"]["message"]
    assert outcome["result"]["warnings"] == ["nvcc"]


def test_end_state(host):
    assert host.package("nvidia-linux-grid-510").is_installed
    assert not host.package("nvidia-cuda-toolkit").is_installed
    assert host.file("/usr/bin/nvidia-smi").mode == 0o755
    assert host.service("nvidia-gridd").is_running
    assert not host.file("/usr/local/cuda-12.1").exists
    assert not host.file("/usr/local/cuda-11.6").exists
