# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.vgpu.vgpu_vmotion on the default lab: gpu-vm-01 runs grid_p40-8q on esxi-01, the other two P40 hosts of
gpu-cluster are in Shared Direct and idle. What the lab vCenter itself refuses (vMotion off, a GPU carved for
another profile) is checked with plain pyVmomi beside it; vm_vgpu's host for a running VM moves the same way."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from pyVim.task import WaitForTask
from pyVmomi import vim

from vsphere_direct import Direct

ESXI = ["esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local"]


@pytest.fixture
def direct(lab):
    direct = Direct(lab)
    try:
        for host in ESXI:
            direct.shared_direct(host)
        direct.add_vgpu("gpu-vm-01", "grid_p40-8q")
        direct.power_on("gpu-vm-01")
        yield direct
    finally:
        direct.close()


def hot_migrate(run_tasks, value):
    run_tasks([{"name": "vGPU vMotion", "gpuops.vgpu.vcenter_settings": {"settings": {"vgpu.hotmigrate.enabled": value}}}])


def vmotion(run_tasks, check=False, expect_failure=False, **options):
    run = run_tasks([{"name": "drill", "gpuops.vgpu.vgpu_vmotion": options}], check=check, expect_failure=expect_failure)
    return run.result()


def truth(lab):
    """Where every VM runs, its power and its vGPUs' GPUs, and every vGPU start and stop so far."""
    state = lab.state()
    return ({vm["name"]: (vm["host"], vm["power_state"], vm["vgpus"]) for vm in state["vms"]},
            state["vgpu_events"])


def test_check_mode_moves_nothing_and_the_drill_moves_live_and_back(direct, lab, run_tasks):
    hot_migrate(run_tasks, True)
    before = truth(lab)
    # Nothing named: the one running vGPU VM is sampled.
    predicted = vmotion(run_tasks, check=True)
    entry, = predicted["vms"]
    assert predicted["changed"] and predicted["hot_migrate"] is True
    assert (entry["name"], entry["source"], entry["target"], entry["moved"]) == (
        "gpu-vm-01", "esxi-01.lab.local", "esxi-02.lab.local", False)
    assert entry["unchecked"] == ["ecc", "driver"] and entry["stun_time_s"] is None
    assert truth(lab) == before

    result = vmotion(run_tasks, vms=[{"name": "gpu-vm-01", "host": "esxi-03.lab.local"}])
    entry, = result["vms"]
    assert result["changed"] and entry["moved"] and entry["returned"] and entry["error"] is None
    assert entry["migration_s"] is not None and entry["return_s"] is not None
    assert (entry["host"], entry["power_state"]) == ("esxi-01.lab.local", "poweredOn")
    vms, events = truth(lab)
    assert vms["gpu-vm-01"][:2] == ("esxi-01.lab.local", "poweredOn")
    moves = [(e["event"], e["host"]) for e in events[len(before[1]):] if e.get("vm") == "gpu-vm-01"]
    assert ("vgpu_start", "esxi-03.lab.local") in moves and moves[-1] == ("vgpu_start", "esxi-01.lab.local"), moves
    assert dict((k, v) for k, v in vms.items() if k != "gpu-vm-01") == dict(
        (k, v) for k, v in before[0].items() if k != "gpu-vm-01")


def test_left_where_it_arrived_then_moved_back_by_name(direct, lab, run_tasks):
    hot_migrate(run_tasks, True)
    there = vmotion(run_tasks, vms=[{"name": "gpu-vm-01"}], **{"return": False})
    assert there["vms"][0]["returned"] is False and there["move_back"] == [
        {"name": "gpu-vm-01", "host": "esxi-01.lab.local"}]
    assert lab.vm("gpu-vm-01")["host"] == there["vms"][0]["target"] == "esxi-02.lab.local"
    back = vmotion(run_tasks, vms=there["move_back"], **{"return": False})
    assert back["vms"][0]["moved"] and back["move_back"] == [{"name": "gpu-vm-01", "host": "esxi-02.lab.local"}]
    assert (lab.vm("gpu-vm-01")["host"], lab.vm("gpu-vm-01")["power_state"]) == ("esxi-01.lab.local", "poweredOn")


def test_vmotion_off_is_refused_before_any_move_as_the_lab_refuses_it(direct, lab, run_tasks):
    before = truth(lab)
    failed = vmotion(run_tasks, vms=[{"name": "gpu-vm-01"}], expect_failure=True)
    assert "Nothing was moved" in failed["msg"] and "gpu-vm-01: vgpu.hotmigrate.enabled is false" in failed["msg"]
    assert truth(lab) == before
    # The lab vCenter itself: DisallowedMigrationDeviceAttached, the VM where it was.
    with pytest.raises(vim.fault.DisallowedMigrationDeviceAttached):
        WaitForTask(direct.vm("gpu-vm-01").RelocateVM_Task(
            spec=vim.vm.RelocateSpec(host=direct.host("esxi-02.lab.local"))))
    assert truth(lab) == before


def test_a_gpu_carved_for_another_profile_is_refused_before_any_move_as_the_lab_refuses_it(direct, lab, run_tasks):
    hot_migrate(run_tasks, True)
    direct.add_vgpu("gpu-vm-04", "grid_p40-2q")
    direct.power_on("gpu-vm-04")
    before = truth(lab)
    failed = vmotion(run_tasks, vms=[{"name": "gpu-vm-01", "host": "esxi-02.lab.local"}], expect_failure=True)
    assert "gpu-vm-01: no host of cluster gpu-cluster can take it: esxi-02.lab.local GPU" in failed["msg"]
    assert "is carved for grid_p40-2q" in failed["msg"]
    assert failed["vms"][0]["moved"] is False
    assert truth(lab) == before
    with pytest.raises(vim.fault.InsufficientGraphicsResourcesFault):
        WaitForTask(direct.vm("gpu-vm-01").RelocateVM_Task(
            spec=vim.vm.RelocateSpec(host=direct.host("esxi-02.lab.local"))))
    # vm_vgpu's host for a running VM takes the same path: vCenter's refusal, and the VM runs on where it was.
    run = run_tasks([{"name": "move", "gpuops.vgpu.vm_vgpu": {
        "vms": [{"name": "gpu-vm-01", "profile": "grid_p40-8q", "host": "esxi-02.lab.local"}]}}], expect_failure=True)
    assert "move: Cannot migrate virtual machine gpu-vm-01 to host esxi-02.lab.local" in run.result()["msg"]
    assert truth(lab) == before


def test_vm_vgpu_moves_a_running_vm_live(direct, lab, run_tasks):
    hot_migrate(run_tasks, True)
    events = len(lab.state()["vgpu_events"])
    run = run_tasks([{"name": "move", "gpuops.vgpu.vm_vgpu": {
        "vms": [{"name": "gpu-vm-01", "profile": "grid_p40-8q", "host": "esxi-03.lab.local"}]}}])
    entry, = run.result()["vms"]
    assert entry["before"]["host"] == "esxi-01.lab.local" and entry["after"]["host"] == "esxi-03.lab.local"
    assert entry["after"]["power_state"] == "poweredOn"
    vm = lab.vm("gpu-vm-01")
    assert (vm["host"], vm["power_state"]) == ("esxi-03.lab.local", "poweredOn")
    assert [(e["event"], e["host"]) for e in lab.state()["vgpu_events"][events:]] == [
        ("vgpu_stop", "esxi-01.lab.local"), ("vgpu_start", "esxi-03.lab.local")]


@pytest.mark.parametrize("vms, named", [
    ([{"name": "no-such-vm"}], "VM(s) not found: no-such-vm"),
    ([{"name": "gpu-vm-03"}], "gpu-vm-03 is poweredOff, and only a powered-on VM moves"),
    ([{"name": "standalone-vm-01"}], "standalone-vm-01 has no vGPU"),
])
def test_bad_input_is_refused_naming_the_vm(direct, lab, run_tasks, vms, named):
    direct.add_vgpu("gpu-vm-03", "grid_p40-8q")
    hot_migrate(run_tasks, True)
    before = truth(lab)
    failed = vmotion(run_tasks, vms=vms, expect_failure=True)
    assert named in failed["msg"] and failed["msg"].startswith("Nothing was moved")
    assert truth(lab) == before
