# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA's data center driver on a server: installed from the repository and running, the role's fact, check mode
of a branch upgrade changing nothing, and refusals that leave the server as it was (the state case.yml recorded
after each, against the state before)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

import pytest

VERSION = "535.161.08"


@pytest.fixture(scope="module")
def outcomes(host):
    return json.loads(host.file("/var/lib/gpuops-lab/outcomes.json").content_string)


def test_the_branch_package_is_installed_and_nvidia_smi_reports_it(host):
    assert host.package("cuda-drivers-535").is_installed
    assert host.package("cuda-drivers-535").version == VERSION + "-1"
    assert not host.package("nvidia-open-535").is_installed
    query = host.run("nvidia-smi -q")
    assert query.rc == 0 and re.search(r"^Driver Version\s+: %s$" % re.escape(VERSION), query.stdout, re.M)


def test_without_the_module_nvidia_smi_fails_like_the_real_one(host):
    bare = host.run("GPUOPS_LAB_KERNEL=/nonexistent nvidia-smi -q")
    assert bare.rc == 9
    assert bare.stdout.startswith("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")


def test_nouveau_is_blacklisted_the_initramfs_rebuilt_and_persistenced_runs(host):
    assert "blacklist nouveau" in host.file("/etc/modprobe.d/blacklist-nouveau.conf").content_string
    assert "update-initramfs -u" in host.file("/var/log/gpuops-lab/initramfs.log").content_string
    service = host.service("nvidia-persistenced")
    assert service.is_running and service.is_enabled


def test_the_role_exposes_the_installed_version(host):
    kept = json.loads(host.file("/var/lib/gpuops-lab/nvidia_driver.json").content_string)
    assert kept["version"] == VERSION
    assert kept["result"]["kernel_module"] == "proprietary" and kept["result"]["architectures"] == ["hopper"]


def test_check_mode_of_an_upgrade_changes_nothing(outcomes):
    run = outcomes["check_run"]
    assert run["rc"] == 0
    assert "Install the branch from the repository (apt)" in run["stdout"]
    assert outcomes["after_check"]["state"] == outcomes["before"]["state"]
    assert "cuda-drivers-535=%s-1" % VERSION in outcomes["before"]["state"]


@pytest.mark.parametrize("case, phrases", [
    ("upgrade_without_reboot", ["needs a reboot", "535.161.08", "nvidia_driver_reboot is false"]),
    ("branch_too_old", ["branch 510 does not support", "hopper", "520"]),
    ("runfile_over_packages", ["installed by the package manager (cuda-drivers-535)"]),
    ("cuda_too_new", ["CUDA 13.0 needs driver", "no R535 driver runs it"]),
    ("b200_proprietary", ["runs only the open kernel modules", "nvidia_driver_kernel_module"]),
])
def test_refusals_leave_the_server_as_it_was(outcomes, case, phrases):
    outcome = outcomes[case]
    assert outcome["failed"] is True, "%s did not fail" % case
    for phrase in phrases:
        assert phrase in outcome["msg"], "%r not in %s's message: %s" % (phrase, case, outcome["msg"])
    assert "Nothing was changed" in outcome["msg"]
    assert outcome["state"] == outcomes["before"]["state"]


def test_a_vgpu_guest_is_sent_to_grid_driver(host, outcomes):
    outcome = json.loads(host.file("/var/lib/gpuops-lab/outcomes-vgpu.json").content_string)["vgpu_guest"]
    assert outcome["failed"] is True and "gpuops.vgpu.grid_driver" in outcome["msg"]
    assert outcome["state"] == outcomes["before"]["state"]
