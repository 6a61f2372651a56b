# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fabric Manager's rules: the fabric verdict from real recorded ``nvidia-smi -q`` Fabric sections
(tests/fixtures/nvidia-smi), the package for the driver and the refusal of any other version."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import parse_query
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _fabric

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from nvidia_smi_fixtures import read  # noqa: E402

HGX = read("q_8xH100_80gb_hbm3_baremetal_ecc_on_driver535.161.txt")
IN_PROGRESS = read("fabric_section_of_q_h100_sxm_vm_in_progress_driver570_TRUNCATED.txt")
COMPLETED_SECTION = ("    Fabric\n        State                             : Completed\n"
                     "        Status                            : Success\n")


def with_fabric(text, section, gpus):
    """The HGX recording with the Fabric section of the first ``gpus`` GPUs replaced by ``section``."""
    parts = text.split(COMPLETED_SECTION)
    assert len(parts) == 9, "the 8x H100 recording has eight Fabric sections"
    return "".join(part + (section if index < gpus else COMPLETED_SECTION)
                   for index, part in enumerate(parts[:-1])) + parts[-1]


def test_the_recorded_hgx_board_reads_completed_success_on_every_gpu():
    query = parse_query(HGX)
    assert [(gpu["fabric_state"], gpu["fabric_status"]) for gpu in query["gpus"]] == [("Completed", "Success")] * 8
    verdict = _fabric.check(query)
    assert verdict["ready"] is True
    assert len(verdict["completed"]) == 8 and verdict["completed"][0] == "00000000:19:00.0"
    assert verdict["message"] == "The NVSwitch fabric is ready: 8 GPU(s) Completed, Success."


def test_a_gpu_still_in_progress_keeps_the_fabric_from_ready():
    query = parse_query(with_fabric(HGX, IN_PROGRESS, 1))
    assert (query["gpus"][0]["fabric_state"], query["gpus"][0]["fabric_status"]) == ("In Progress", None)
    verdict = _fabric.check(query)
    assert verdict["ready"] is False
    assert verdict["waiting"] == ["00000000:19:00.0 (In Progress)"]
    assert "waiting on 00000000:19:00.0 (In Progress)" in verdict["message"]


def test_completed_with_another_status_is_a_failure():
    failed = COMPLETED_SECTION.replace("Success", "Insufficient Resources")
    verdict = _fabric.check(parse_query(with_fabric(HGX, failed, 2)))
    assert verdict["ready"] is False
    assert verdict["failed"] == ["00000000:19:00.0 (Completed, Insufficient Resources)",
                                 "00000000:3B:00.0 (Completed, Insufficient Resources)"]


def test_gpus_without_a_fabric_report_none_and_are_not_ready():
    query = parse_query(read("q_a10_passthrough_ecc_on_driver535.129.txt"))
    assert (query["gpus"][0]["fabric_state"], query["gpus"][0]["fabric_status"]) == (None, None)
    verdict = _fabric.check(query)
    assert verdict["ready"] is False and verdict["not_reported"] == [query["gpus"][0]["pci_bus_id"]]


def test_the_590_layout_with_clique_and_cluster_lines_reads_the_same():
    query = parse_query(read("q_h100_80gb_hbm3_passthrough_ecc_on_driver590.txt"))
    assert (query["gpus"][0]["fabric_state"], query["gpus"][0]["fabric_status"]) == ("Completed", "Success")


@pytest.mark.parametrize("version,manager,name", [
    ("535.161.08", "apt", "nvidia-fabricmanager-535"),
    ("570.195.03", "apt", "nvidia-fabricmanager-570"),
    ("580.126.09", "apt", "nvidia-fabricmanager"),
    ("535.161.08", "dnf", "nvidia-fabric-manager"),
])
def test_package_names_follow_nvidias_repositories(version, manager, name):
    assert _fabric.package_name(version, manager) == name


def test_the_plan_installs_the_drivers_exact_version_where_nvswitches_are():
    plan = _fabric.plan("535.161.08", ["05:00.0", "06:00.0"])
    assert plan == {"needed": True, "package": "nvidia-fabricmanager-535", "version": "535.161.08",
                    "package_spec": "nvidia-fabricmanager-535=535.161.08-1", "remove": [], "installed": None, "restart": False,
                    "converged": False, "reason": "2 NVSwitch(es): 05:00.0, 06:00.0"}
    assert _fabric.plan("535.161.08", ["05:00.0"], package_manager="dnf")["package_spec"] == \
        "nvidia-fabric-manager-535.161.08-1"


def machine(packages=None, active=True, enabled=True, smi=HGX):
    """gpu_guest_info's read of an HGX server running Fabric Manager, as the role asks for it."""
    return {"packages": {"nvidia-driver-535": "535.161.08-1"} if packages is None else packages,
            "services": {"nvidia-fabricmanager": {"name": "nvidia-fabricmanager", "exists": True,
                                                  "active": active, "enabled": enabled}},
            "nvidia_smi": parse_query(smi)}


RUNNING = {"nvidia-driver-535": "535.161.08-1", "nvidia-fabricmanager-535": "535.161.08-1"}


def test_a_machine_running_the_drivers_fabric_manager_with_the_fabric_completed_is_converged():
    plan = _fabric.plan("535.161.08", ["05:00.0"], machine=machine(RUNNING))
    assert (plan["installed"], plan["converged"]) == ("535.161.08", True)
    assert _fabric.plan("535.161.08", ["05:00.0"], machine=machine({"nvidia-fabricmanager": "1:535.161.08-1"}))[
        "converged"] is True


@pytest.mark.parametrize("read", [
    machine(),                                                             # not installed
    machine({"nvidia-fabricmanager-535": "535.154.05-1"}),                 # another version
    machine(RUNNING, active=False),                                        # stopped
    machine(RUNNING, enabled=False),                                       # not started at boot
    machine(RUNNING, smi=with_fabric(HGX, IN_PROGRESS, 3)),               # the fabric still in progress
    dict(machine(RUNNING), services={}),                                   # the service not read
])
def test_anything_short_of_that_is_work_to_do(read):
    assert _fabric.plan("535.161.08", ["05:00.0"], machine=read)["converged"] is False


def test_a_service_running_the_program_its_package_replaced_since_it_started_is_restarted():
    # A run stopped between the package's upgrade and the restart: the old daemon still runs, the fabric still ready.
    read = machine(RUNNING)
    unit = read["services"]["nvidia-fabricmanager"]
    unit.update(active_since=1000.0, executable="/usr/bin/nv-fabricmanager", executable_changed_at=1200.0)
    plan = _fabric.plan("535.161.08", ["05:00.0"], machine=read)
    assert (plan["restart"], plan["converged"]) == (True, False)
    unit.update(active_since=1300.0)  # restarted since
    plan = _fabric.plan("535.161.08", ["05:00.0"], machine=read)
    assert (plan["restart"], plan["converged"]) == (False, True)
    assert _fabric.plan("535.161.08", [], machine=read)["restart"] is False


def test_a_branch_upgrade_removes_the_other_branchs_package_first():
    # R535's package is named for its branch, R580's is not: both hold nv-fabricmanager and its unit.
    old = {"nvidia-fabricmanager-535": "535.161.08-1", "nvidia-open-580": "580.65.06-1"}
    plan = _fabric.plan("580.65.06", ["05:00.0"], machine=machine(old))
    assert (plan["package"], plan["remove"], plan["installed"], plan["converged"]) == (
        "nvidia-fabricmanager", ["nvidia-fabricmanager-535"], "535.161.08", False)
    assert _fabric.plan("535.161.08", ["05:00.0"], machine=machine(RUNNING))["remove"] == []
    assert _fabric.plan("580.65.06", [], machine=machine(old))["remove"] == []


def test_no_nvswitch_means_nothing_to_install():
    plan = _fabric.plan("535.161.08", [])
    assert plan["needed"] is False and plan["package_spec"] is None
    assert "NVSwitch systems only" in plan["reason"]


def test_a_package_file_is_taken_at_the_version_its_name_carries():
    src = "/srv/nvidia-fabricmanager-535_535.161.08-1_amd64.deb"
    assert _fabric.package_file_version(src) == "535.161.08"
    assert _fabric.plan("535.161.08", ["05:00.0"], src=src)["package_spec"] == src


@pytest.mark.parametrize("kwargs,words", [
    ({"version": "535.154.05"}, "Fabric Manager 535.154.05 does not match the NVIDIA driver 535.161.08"),
    ({"src": "nvidia-fabricmanager-535_535.154.05-1_amd64.deb"}, "Fabric Manager 535.154.05 does not match"),
    ({"version": "550.90.07"}, "Fabric Manager 550.90.07 does not match"),
    ({"src": "fm.deb"}, "Cannot tell the Fabric Manager version of fm.deb"),
])
def test_any_other_version_is_refused_whatever_the_machine(kwargs, words):
    for switches in (["05:00.0"], []):
        with pytest.raises(InputError) as error:
            _fabric.plan("535.161.08", switches, **kwargs)
        assert words in str(error.value)
    assert "exactly the driver's version" in str(error.value) or "file name" in str(error.value)


def test_a_driver_version_that_is_not_one_is_refused():
    with pytest.raises(InputError, match="'R535' is not a driver version"):
        _fabric.plan("R535", ["05:00.0"])


def test_nvswitches_are_nvidia_bridges_of_class_0680_in_lspci():
    text = ("05:00.0 0680: 10de:22a3 (rev a1)\n06:00.0 0680: 10de:22a3 (rev a1)\n"
            "19:00.0 0302: 10de:2330 (rev a1)\n00:1f.0 0680: 8086:a1c8\n")
    assert _fabric.nvswitches(text) == ["05:00.0", "06:00.0"]
    assert _fabric.nvswitches("19:00.0 0302: 10de:2330 (rev a1)\n") == []
