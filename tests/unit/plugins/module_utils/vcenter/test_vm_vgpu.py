# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""VgpuAssignment against a fake vCenter: what is sent, in which order, and how each VM ends."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError, NotFound, TaskFailed
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._vm_vgpu import VgpuAssignment, check_limits
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.vcenter.vm_vgpu_fake import FakeVcenter, params


def assign(lab, vms, check_mode=False, **options):
    return VgpuAssignment(lab, params(vms, **options), check_mode).run()


def test_a_powered_off_vm_gets_its_vgpu_and_memory_lock_in_one_reconfigure_and_a_rerun_sends_nothing():
    lab = FakeVcenter()
    lab.vm("gpu-vm-01", locked=False)
    result = assign(lab, [{"name": "gpu-vm-01", "profile": "grid_p40-8q"}])
    assert lab.calls == [("ReconfigVM_Task", "gpu-vm-01")]
    spec = lab.specs[0][1]
    assert [(entry.operation, entry.device.backing.vgpu) for entry in spec.deviceChange] == [("add", "grid_p40-8q")]
    assert spec.memoryReservationLockedToMax is True
    assert lab.profiles("gpu-vm-01") == ["grid_p40-8q"]
    entry = result["vms"][0]
    assert result["changed"] is True and entry["changed"] is True and entry["error"] is None
    assert entry["before"] == {"profiles": [], "memory_reservation_locked_to_max": False,
                               "power_state": "poweredOff", "host": "esxi-01"}
    assert entry["after"] == dict(entry["before"], profiles=["grid_p40-8q"], memory_reservation_locked_to_max=True)
    assert result["diff"] == {"before": {"gpu-vm-01": entry["before"]}, "after": {"gpu-vm-01": entry["after"]}}

    again = assign(lab, [{"name": "gpu-vm-01", "profile": "grid_p40-8q"}])
    assert again["changed"] is False and again["diff"] == {"before": {}, "after": {}}
    assert lab.calls == [("ReconfigVM_Task", "gpu-vm-01")]


def test_check_mode_predicts_and_sends_nothing():
    lab = FakeVcenter()
    lab.vm("gpu-vm-01", profiles=["grid_p40-4q"], power="poweredOn")
    result = assign(lab, [{"name": "gpu-vm-01", "profile": "grid_p40-8q"}], check_mode=True, power="power_off",
                    power_on=True)
    assert lab.calls == [] and lab.specs == []
    assert result["changed"] is True
    assert result["vms"][0]["after"]["profiles"] == ["grid_p40-8q"]
    assert lab.profiles("gpu-vm-01") == ["grid_p40-4q"]


def test_a_profile_change_on_a_running_vm_powers_it_off_replaces_the_device_and_powers_it_on():
    lab = FakeVcenter()
    lab.vm("gpu-vm-01", profiles=["grid_p40-4q"], power="poweredOn")
    result = assign(lab, [{"name": "gpu-vm-01", "profile": "grid_p40-8q"}], power="power_off", parallel=3)
    assert lab.calls == [("PowerOffVM_Task", "gpu-vm-01"), ("ReconfigVM_Task", "gpu-vm-01"),
                         ("PowerOnVM_Task", "gpu-vm-01")]
    operations = [entry.operation for entry in lab.specs[0][1].deviceChange]
    assert operations == ["remove", "add"], "one reconfigure, so the VM never has two vGPUs"
    assert all(parallel == 3 for count, parallel in lab.batches)
    assert lab.profiles("gpu-vm-01") == ["grid_p40-8q"]
    assert result["vms"][0]["after"]["power_state"] == "poweredOn"


def test_guest_shutdown_that_does_not_finish_fails_that_vm_only_unless_hard_power_off():
    lab = FakeVcenter()
    lab.vm("stuck", power="poweredOn", guest_stops=False)
    lab.vm("clean", power="poweredOn")
    vms = [{"name": "stuck", "profile": "grid_p40-8q"}, {"name": "clean", "profile": "grid_p40-8q"}]
    with pytest.raises(TaskFailed) as err:
        assign(lab, vms, power="shutdown_guest")
    assert "stuck (the guest did not shut down within 300 s" in str(err.value)
    entries = dict((entry["name"], entry) for entry in err.value.details["vms"])
    assert entries["stuck"]["ended"] == "as it was" and entries["clean"]["error"] is None
    assert lab.profiles("stuck") == [] and lab.profiles("clean") == ["grid_p40-8q"]
    assert ("PowerOnVM_Task", "clean") in lab.calls and ("PowerOffVM_Task", "stuck") not in lab.calls

    lab.calls[:] = []
    result = assign(lab, vms[:1], power="shutdown_guest", hard_power_off=True)
    assert lab.calls == [("ShutdownGuest", "stuck"), ("PowerOffVM_Task", "stuck"), ("ReconfigVM_Task", "stuck"),
                         ("PowerOnVM_Task", "stuck")]
    assert result["vms"][0]["error"] is None


def test_a_failed_reconfigure_leaves_the_others_done_and_says_how_the_vm_ended():
    lab = FakeVcenter()
    lab.vm("gpu-vm-01", power="poweredOn")
    lab.vm("gpu-vm-02")
    lab.failing[("ReconfigVM_Task", "gpu-vm-01")] = "Invalid configuration for device '0'."
    with pytest.raises(TaskFailed) as err:
        assign(lab, [{"name": "gpu-vm-01"}, {"name": "gpu-vm-02"}], profile="grid_p40-8q", power="power_off")
    assert "failed on 1 of 2 VM(s): gpu-vm-01 (reconfigure: Invalid configuration" in str(err.value)
    first, second = err.value.details["vms"]
    assert (first["ended"], first["after"]["power_state"]) == ("as it was", "poweredOn")
    assert second["error"] is None and second["after"]["profiles"] == ["grid_p40-8q"]
    assert err.value.details["changed"] is True


@pytest.mark.parametrize("vms, options, error, words", [
    ([{"name": "gpu-vm-01", "profile": "grid_p40-8q"}], {}, InputError,
     ["cannot be powered off", "vms[0] (name gpu-vm-01) is powered on and power is 'never'"]),
    ([{"name": "gpu-vm-01", "profile": "grid_p40-2b"}], {"power": "power_off"}, InputError,
     ["grid_p40-2b not supported by host esxi-01", "grid_p40-24q, grid_p40-4q, grid_p40-8q"]),
    ([{"name": "gpu-vm-01", "profile": "grid_p40-8q", "host": "esxi-09"}], {"power": "power_off"}, NotFound,
     ["esxi-09"]),
    ([{"name": "gpu-vm-09", "profile": "grid_p40-8q"}, {"moid": "vm-77", "state": "absent"}], {}, NotFound,
     ["Nothing was changed", "vms[0] (name gpu-vm-09); vms[1] (moid vm-77)"]),
    ([{"name": "gpu-vm-01", "profile": "grid_p40-8q"}], {"datacenter": "other-dc"}, NotFound, ["other-dc"]),
])
def test_bad_input_fails_before_anything_is_sent(vms, options, error, words):
    lab = FakeVcenter()
    lab.vm("gpu-vm-01", power="poweredOn")
    with pytest.raises(error) as err:
        assign(lab, vms, **options)
    for word in words:
        assert word in str(err.value)
    assert lab.calls == []


def test_limits_are_checked_before_connecting():
    with pytest.raises(InputError, match="parallel must be at least 1, got 0"):
        check_limits(params([], parallel=0))
    check_limits(params([]))


def test_a_vm_moves_to_the_asked_host_while_powered_off():
    lab = FakeVcenter()
    lab.vm("gpu-vm-01", profiles=["grid_p40-8q"])
    result = assign(lab, [{"uuid": "4200-VM-1".lower(), "profile": "grid_p40-8q", "host": "esxi-02"}])
    assert lab.calls == [("RelocateVM_Task", "gpu-vm-01")]
    spec = lab.specs[0][1]
    assert (spec.host._moId, spec.pool._moId) == ("host-2", "resgroup-8")
    assert result["vms"][0]["after"]["host"] == "esxi-02"
    assert assign(lab, [{"name": "gpu-vm-01", "host": "esxi-02", "profile": "grid_p40-8q"}])["changed"] is False


def test_reads_do_not_grow_with_the_number_of_vms():
    def reads(count):
        lab = FakeVcenter()
        for number in range(count):
            lab.vm("gpu-vm-%02d" % number, profiles=["grid_p40-8q"], host="host-%d" % (1 + number % 2))
        assign(lab, [{"name": vm.vm_name} for vm in lab.vms], profile="grid_p40-8q")
        assert lab.calls == []
        return len(lab.reads)

    assert reads(1) == reads(12)
