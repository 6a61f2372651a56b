# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An interrupted vm_vgpu run never leaves a running VM off: the run is killed at every change it makes (before the
change and after it, before its answer), then run once more, with the same request or none."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import subprocess
import sys
import time

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import Busy, InputError, TaskFailed
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _vm_power_records as power_records
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._cluster_lock import playbook_running
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._vm_vgpu import VgpuAssignment
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.vcenter.vm_vgpu_fake import (
    VCENTER_UUID,
    FakeVcenter,
    Killed,
    params,
)

ASKED = "grid_p40-8q"
REQUEST = [{"name": "run-%d" % n} for n in range(1, 5)] + [{"name": "off-1"}]


def datacenter():
    """Four running VMs with a 4Q vGPU, one that is off, and one running VM nobody asks about."""
    lab = FakeVcenter()
    for n in range(1, 5):
        lab.vm("run-%d" % n, profiles=["grid_p40-4q"], power="poweredOn", host="host-%d" % (1 + n % 2))
    lab.vm("off-1", profiles=["grid_p40-4q"])
    lab.vm("bystander", profiles=["grid_p40-4q"], power="poweredOn")
    return lab


def assign(lab, vms, check_mode=False, **options):
    options.setdefault("power", "shutdown_guest")
    options.setdefault("profile", ASKED)
    return VgpuAssignment(lab, params(vms, **options), check_mode).run()


def changes_of_a_whole_run():
    lab = datacenter()
    assign(lab, REQUEST)
    return lab.changes


def power(lab):
    return dict((vm.vm_name, vm.power) for vm in lab.vms)


@pytest.mark.parametrize("after_change", [False, True], ids=["before", "after"])
@pytest.mark.parametrize("kill_at", range(1, changes_of_a_whole_run() + 1))
def test_killed_at_any_change_then_the_same_request_ends_as_asked_with_every_running_vm_running(
        kill_at, after_change):
    lab = datacenter()
    lab.kill_at, lab.kill_after_change = kill_at, after_change
    with pytest.raises(Killed):
        assign(lab, REQUEST, run_id="run-killed")
    lab.kill_at = None

    result = assign(lab, REQUEST, run_id="run-next")
    assert power(lab) == {"run-1": "poweredOn", "run-2": "poweredOn", "run-3": "poweredOn", "run-4": "poweredOn",
                          "off-1": "poweredOff", "bystander": "poweredOn"}
    for name in ("run-1", "run-2", "run-3", "run-4", "off-1"):
        assert lab.profiles(name) == [ASKED], name
        assert not lab.record(name), name
    assert all(entry["run"] == "run-killed" and entry["ended"] in ("powered on", "was running")
               for entry in result["recovered"])
    assert assign(lab, REQUEST)["changed"] is False


@pytest.mark.parametrize("kill_at", range(1, changes_of_a_whole_run() + 1))
def test_killed_at_any_change_then_a_run_with_no_request_powers_every_vm_back_on(kill_at):
    lab = datacenter()
    lab.kill_at = kill_at
    with pytest.raises(Killed):
        assign(lab, REQUEST, run_id="run-killed")
    lab.kill_at = None
    off_before = set(vm.vm_name for vm in lab.vms if vm.power == "poweredOff") - {"off-1"}

    result = assign(lab, [], run_id="run-recover")
    assert power(lab)["off-1"] == "poweredOff"
    assert all(state == "poweredOn" for name, state in power(lab).items() if name != "off-1")
    for vm in lab.vms:
        assert lab.profiles(vm.vm_name) in (["grid_p40-4q"], [ASKED]), "one vGPU, the old or the asked one"
        assert not lab.record(vm.vm_name)
    assert result["vms"] == []
    recovered = dict((entry["name"], entry) for entry in result["recovered"])
    assert set(name for name, entry in recovered.items() if entry["ended"] == "powered on") == off_before
    for name in off_before:
        assert lab.profiles(name) == [ASKED], "the recorded change is finished: %s" % name
        assert recovered[name]["run"] == "run-killed" and recovered[name]["by"] == "ops@ctl01"


def killed_after_the_power_off():
    """A datacenter where a run took run-1 down and died right after: run-1 is off with its record."""
    lab = datacenter()
    lab.kill_at, lab.kill_after_change = 3, True  # the field, run-1's record, then run-1's shutdown
    with pytest.raises(Killed):
        assign(lab, [{"name": "run-1"}], run_id="run-killed")
    lab.kill_at = None
    assert power(lab)["run-1"] == "poweredOff" and lab.record("run-1")
    return lab


def test_a_vm_a_person_powered_on_and_off_again_since_the_record_stays_off_and_is_named():
    lab = killed_after_the_power_off()
    vm = lab.vms[0]
    vm.power_on(user="VSPHERE.LOCAL\\alice")
    vm.power = "poweredOff"
    result = assign(lab, [])
    assert power(lab)["run-1"] == "poweredOff" and not lab.record("run-1")
    entry = result["recovered"][0]
    assert entry["ended"] == "left off" and "alice" in entry["why"] and result["changed"] is True
    assert lab.profiles("run-1") == ["grid_p40-4q"], "a person's VM is not changed either"


def test_a_vm_listed_in_keep_powered_off_stays_off():
    lab = killed_after_the_power_off()
    result = assign(lab, [], keep_powered_off=["run-1"])
    assert power(lab)["run-1"] == "poweredOff" and not lab.record("run-1")
    assert result["recovered"][0]["why"] == "listed in keep_powered_off"


def test_check_mode_predicts_the_recovery_and_changes_nothing():
    lab = killed_after_the_power_off()
    calls = list(lab.calls)
    result = assign(lab, [], check_mode=True)
    assert lab.calls == calls and lab.record("run-1")
    assert result["changed"] is True and result["recovered"][0]["after"]["power_state"] == "poweredOn"


def test_a_vm_whose_power_on_fails_keeps_its_record_and_the_task_fails_naming_it():
    lab = killed_after_the_power_off()
    lab.failing[("PowerOnVM_Task", "run-1")] = "Insufficient resources to satisfy configured failover level"
    with pytest.raises(TaskFailed) as caught:
        assign(lab, [])
    assert "run-1" in caught.value.message and "power record stays" in caught.value.message
    assert lab.record("run-1") and caught.value.details["recovered"][0]["ended"] == "still off"
    lab.failing.clear()
    assign(lab, [])
    assert power(lab)["run-1"] == "poweredOn" and not lab.record("run-1")


@pytest.mark.parametrize("edit, words", [
    (lambda record: json.dumps(record)[:40], ["run-1", "cut short"]),
    (lambda record: json.dumps(dict(record, vcenter="another-vcenter")), ["run-1", "another-vcenter", VCENTER_UUID]),
    (lambda record: json.dumps(dict(record, cluster="domain-c99")), ["run-1", "domain-c99", "domain-c7"]),
    (lambda record: json.dumps(dict((k, v) for k, v in record.items() if k != "at")), ["run-1", "lacks at"]),
])
def test_a_record_that_cannot_be_trusted_is_refused_before_any_change(edit, words):
    lab = killed_after_the_power_off()
    field = lab.fields[0].key
    lab.vms[0].values[field] = edit(json.loads(lab.vms[0].values[field]))
    calls, changes = list(lab.calls), lab.changes
    with pytest.raises(InputError) as caught:
        assign(lab, REQUEST)
    for word in words:
        assert word in str(caught.value)
    assert power_records.FIELD in caught.value.hint
    assert lab.calls == calls and lab.changes == changes


def test_a_converged_run_writes_no_record_and_no_field():
    lab = FakeVcenter()
    lab.vm("run-1", profiles=[ASKED], power="poweredOn")
    assert assign(lab, [{"name": "run-1"}])["changed"] is False
    assert lab.changes == 0 and lab.fields == []


def test_the_vms_of_a_run_that_still_holds_its_cluster_lock_are_left_to_it():
    lab = killed_after_the_power_off()
    lab.lock("run-killed", "2026-11-28T23:00:00Z")
    result = assign(lab, [], run_id="run-other")
    assert power(lab)["run-1"] == "poweredOff" and lab.record("run-1")
    entry = result["recovered"][0]
    assert entry["ended"] == "in progress" and "run-killed holds the lock of cluster domain-c7" in entry["why"]
    calls, changes = list(lab.calls), lab.changes
    with pytest.raises(Busy) as caught:
        assign(lab, [{"name": "run-1"}], run_id="run-other")
    assert "run-1" in caught.value.message and lab.calls == calls and lab.changes == changes


def test_the_vms_of_a_run_whose_lock_expired_are_recovered():
    lab = killed_after_the_power_off()
    lab.lock("run-killed", "2026-11-28T08:30:00Z")
    result = assign(lab, [], run_id="run-other")
    assert power(lab)["run-1"] == "poweredOn" and result["recovered"][0]["ended"] == "powered on"


def test_the_vms_of_an_ansible_playbook_of_this_controller_that_still_runs_are_left_to_it():
    lab = killed_after_the_power_off()
    playbook = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "ansible-playbook"])
    try:
        for _wait in range(200):  # until the process shows its command line
            if playbook_running(playbook.pid):
                break
            time.sleep(0.01)
        field = lab.fields[0].key
        record = dict(json.loads(lab.vms[0].values[field]), pid=playbook.pid)
        lab.vms[0].values[field] = json.dumps(record)
        result = assign(lab, [], run_id="run-other")
        assert result["recovered"][0]["ended"] == "in progress" and power(lab)["run-1"] == "poweredOff"
    finally:
        playbook.kill()
        playbook.wait()
    assert assign(lab, [], run_id="run-other")["recovered"][0]["ended"] == "powered on"
