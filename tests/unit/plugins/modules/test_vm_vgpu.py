# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vm_vgpu's real main() on a fake vCenter."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.modules import vm_vgpu
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.vcenter.vm_vgpu_fake import FakeVcenter
from ansible_collections.gpuops.vgpu.tests.unit.plugins.modules.module_runner import CONNECTION, fake_vcenter, run_main

VMS = {"vms": [{"name": "gpu-vm-01"}, {"name": "gpu-vm-02", "profile": "grid_p40-4q"}], "profile": "grid_p40-8q",
       "power": "power_off"}


def lab_with_two_vms():
    lab = FakeVcenter()
    lab.vm("gpu-vm-01", power="poweredOn", locked=False)
    lab.vm("gpu-vm-02", profiles=["grid_p40-8q"])
    return lab


def test_check_mode_predicts_and_sends_nothing(monkeypatch, capsys):
    lab = lab_with_two_vms()
    sessions = fake_vcenter(monkeypatch, lab)
    code, result = run_main(vm_vgpu.main, dict(CONNECTION, **VMS), capsys, check_mode=True, diff=True)
    assert code == 0 and result["changed"] is True
    assert lab.calls == [] and lab.specs == []
    assert [vm["after"]["profiles"] for vm in result["vms"]] == [["grid_p40-8q"], ["grid_p40-4q"]]
    assert sorted(result["diff"]["after"]) == ["gpu-vm-01", "gpu-vm-02"]
    assert sessions[0].params["hostname"] == "vc.test" and sessions[0].closed


def test_a_change_then_an_idempotent_rerun(monkeypatch, capsys):
    lab = lab_with_two_vms()
    fake_vcenter(monkeypatch, lab)
    code, result = run_main(vm_vgpu.main, dict(CONNECTION, **VMS), capsys)
    assert code == 0 and result["changed"] is True and "diff" not in result
    assert lab.profiles("gpu-vm-01") == ["grid_p40-8q"] and lab.profiles("gpu-vm-02") == ["grid_p40-4q"]
    assert ("PowerOnVM_Task", "gpu-vm-01") in lab.calls and ("PowerOnVM_Task", "gpu-vm-02") not in lab.calls
    assert [vm["after"]["power_state"] for vm in result["vms"]] == ["poweredOn", "poweredOff"]
    sent = len(lab.calls)

    code, result = run_main(vm_vgpu.main, dict(CONNECTION, **VMS), capsys, diff=True)
    assert code == 0 and result["changed"] is False
    assert result["diff"] == {"before": {}, "after": {}}
    assert len(lab.calls) == sent


def test_bad_input_fails_before_connecting(monkeypatch, capsys):
    sessions = fake_vcenter(monkeypatch, lab_with_two_vms())
    code, result = run_main(vm_vgpu.main, dict(CONNECTION, parallel=0, **VMS), capsys)
    assert code == 1 and result["msg"] == "parallel must be at least 1, got 0."
    assert sessions == []

    absent_with_profile = [{"name": "gpu-vm-01", "state": "absent", "profile": "grid_p40-8q"}]
    code, result = run_main(vm_vgpu.main, dict(CONNECTION, vms=absent_with_profile), capsys)
    assert code == 1 and "has state absent and a profile" in result["msg"]


def test_a_failed_vm_fails_the_task_with_every_vm_reported(monkeypatch, capsys):
    lab = lab_with_two_vms()
    lab.failing[("ReconfigVM_Task", "gpu-vm-02")] = "Insufficient resources."
    sessions = fake_vcenter(monkeypatch, lab)
    code, result = run_main(vm_vgpu.main, dict(CONNECTION, **VMS), capsys)
    assert code == 1 and result["failed"] is True
    assert "gpu-vm-02 (reconfigure: Insufficient resources.)" in result["msg"]
    assert [(vm["name"], vm["error"]) for vm in result["vms"]] == [
        ("gpu-vm-01", None), ("gpu-vm-02", "reconfigure: Insufficient resources.")]
    assert result["vms"][1]["ended"] == "as it was" and result["changed"] is True
    assert "S3cret!" not in str(result) and sessions[0].closed
