# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""upgrade_plan's real main() on the fake inventory of the inventory tests, with suspend capabilities and settings."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.modules import upgrade_plan
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.vcenter.test_inventory import inventory_client
from ansible_collections.gpuops.vgpu.tests.unit.plugins.modules.module_runner import CONNECTION, fake_vcenter, run_main

vim = pytest.importorskip("pyVmomi").vim

PLAN = dict(CONNECTION, cluster="gpu-cluster", current_host_driver="525.105.14", current_guest_driver="525.105.17",
            target_host_driver="535.54.06")


def client_with(hot_migrate, suspend=True):
    """esxi-01 runs train-1 and train-2 on its P40 (grid_p40-8q); esxi-02's P40 is idle."""
    client = inventory_client()
    manager = vim.option.OptionManager("VpxSettings")
    client.content = type("Content", (), {"setting": manager})()
    client.vm_props["VpxSettings"] = {
        "supportedOption": [], "setting": [vim.option.OptionValue(key="vgpu.hotmigrate.enabled", value=hot_migrate)]}
    for item in client.tree[vim.HostSystem]:
        item["config.sharedGpuCapabilities"] = [
            vim.host.SharedGpuCapabilities(vgpu=profile, suspendSupported=suspend, migrateSupported=True,
                                           diskSnapshotSupported=True, memorySnapshotSupported=True)
            for profile in item["config.sharedPassthruGpuTypes"]]
    # esxi-02's P40 is in Shared Direct already, so it can take the VMs of esxi-01.
    item = client.tree[vim.HostSystem][0]
    item["config.graphicsInfo"][0].graphicsType = "sharedDirect"
    return client


@pytest.mark.parametrize("check_mode", [False, True])
def test_plans_from_vcenter_in_few_round_trips_and_changes_nothing(monkeypatch, capsys, check_mode):
    client = client_with("true")
    sessions = fake_vcenter(monkeypatch, client)
    code, result = run_main(upgrade_plan.main, PLAN, capsys, check_mode=check_mode)
    assert code == 0 and result["changed"] is False and result["ok"] is True and result["hot_migrate"] is True
    assert result["host_order"] == ["esxi-02", "esxi-01"]
    assert [(r["vm"], r["action"], r["to_host"]) for s in result["steps"] for r in s["vms"]] == [
        ("train-1", "migrate", "esxi-02"), ("train-2", "migrate", "esxi-02")]
    assert [(u["vm"], u["to"]) for u in result["guest_upgrades"]] == [("train-1", "535.54.03"), ("train-2", "535.54.03")]
    # Hosts and GPUs, running VMs, sharedGpuCapabilities, settings: the count does not grow with hosts or VMs.
    assert [call[0] for call in client.calls] == ["retrieve", "retrieve_objects", "retrieve", "retrieve_objects"]
    assert sessions[0].closed


def test_hot_migrate_off_refuses_migrate_and_plans_suspend(monkeypatch, capsys):
    fake_vcenter(monkeypatch, client_with("false"))
    code, result = run_main(upgrade_plan.main, PLAN, capsys)
    assert code == 1 and "train-1 should move by vMotion" in result["msg"] and "vgpu.hotmigrate.enabled" in result["msg"]
    assert [b["kind"] for b in result["blocked"]] == ["hot-migrate-off", "hot-migrate-off"]
    code, result = run_main(upgrade_plan.main, dict(PLAN, policy="suspend"), capsys)
    assert code == 0 and [r["action"] for s in result["steps"] for r in s["vms"]] == ["suspend", "suspend"]


def test_suspend_without_the_capability_and_allow_blocked(monkeypatch, capsys):
    fake_vcenter(monkeypatch, client_with("true", suspend=False))
    code, result = run_main(upgrade_plan.main, dict(PLAN, policy="suspend", vm_policies={"train-2": "shutdown"},
                                                    allow_blocked=True), capsys)
    assert code == 0 and result["ok"] is False
    assert [(b["kind"], b["vm"]) for b in result["blocked"]] == [("suspend-unsupported", "train-1")]


def test_target_not_in_the_depot_is_refused(monkeypatch, capsys):
    fake_vcenter(monkeypatch, client_with("true"))
    code, result = run_main(upgrade_plan.main, dict(PLAN, depot_host_drivers=["525.105.14-1OEM.800.1.0.20613240"]),
                            capsys)
    assert code == 1 and "vGPU Manager 535.54.06 is in no imported depot" in result["msg"]


def test_bad_options_fail_before_connecting(monkeypatch, capsys):
    sessions = fake_vcenter(monkeypatch, client_with("true"))
    code, result = run_main(upgrade_plan.main, dict(PLAN, policy="evacuate"), capsys)
    assert code == 1 and "policy" in result["msg"] and sessions == []
