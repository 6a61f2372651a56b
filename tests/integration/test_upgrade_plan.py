# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""upgrade_plan against the lab vCenter: the plan matches the lab's ground truth and changes nothing.

gpu-cluster has three hosts with one P40 each. The tests run gpu-vm-01 and gpu-vm-02 (grid_p40-8q) on esxi-01 and
gpu-vm-04 (grid_p40-8q) on esxi-02, and put esxi-03's P40 in Shared Direct, idle.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from vsphere_direct import Direct

HOTMIGRATE = "vgpu.hotmigrate.enabled"
CLUSTER = "gpu-cluster"
VERSIONS = dict(current_host_driver="525.105.14", current_guest_driver="525.105.17", target_host_driver="535.54.06")


@pytest.fixture
def running(lab):
    session = Direct(lab)
    try:
        session.run_vgpu("esxi-01.lab.local", "gpu-vm-01", "grid_p40-8q")
        session.run_vgpu("esxi-01.lab.local", "gpu-vm-02", "grid_p40-8q")
        session.run_vgpu("esxi-02.lab.local", "gpu-vm-04", "grid_p40-8q")
        session.shared_direct("esxi-03.lab.local")
    finally:
        session.close()
    return lab


def hot_migrate(run_tasks, value):
    run_tasks([{"name": "vGPU vMotion", "gpuops.vgpu.vcenter_settings": {"settings": {HOTMIGRATE: value}}}])


def plan(run_tasks, check=False, expect_failure=False, **options):
    run = run_tasks([{"name": "plan", "gpuops.vgpu.upgrade_plan": dict(VERSIONS, cluster=CLUSTER, **options)}],
                    check=check, expect_failure=expect_failure)
    return run.result(0)


def test_migrate_plan_follows_the_labs_ground_truth_and_changes_nothing(running, run_tasks):
    hot_migrate(run_tasks, True)
    before = running.state()
    result = plan(run_tasks, check=True)
    assert result["changed"] is False and result["ok"] is True and result["hot_migrate"] is True
    truth = dict((vm["name"], vm) for vm in before["vms"] if vm["power_state"] == "poweredOn" and vm["vgpus"])
    assert sorted(truth) == ["gpu-vm-01", "gpu-vm-02", "gpu-vm-04"]
    cluster_hosts = [h["name"] for h in before["hosts"] if h["cluster"] == CLUSTER]
    assert sorted(result["host_order"]) == sorted(cluster_hosts)
    assert result["host_order"][0] == "esxi-03.lab.local", "the idle host goes first"
    rows = [row for step in result["steps"] for row in step["vms"]]
    assert sorted(row["vm"] for row in rows) == sorted(truth)
    gpus = dict((h["name"], h["gpus"]) for h in before["hosts"])
    for row in rows:
        assert row["host"] == truth[row["vm"]]["host"] and row["profile"] == "grid_p40-8q"
        assert row["action"] == "migrate" and row["to_host"] not in (row["host"], None)
        assert [g["model"] for g in gpus[row["to_host"]] if g["pci_id"] == row["to_gpu"]] == ["P40"]
    assert [u["to"] for u in result["guest_upgrades"]] == ["535.54.03"] * 3
    assert running.state() == before


def test_hot_migrate_off_is_refused_naming_the_setting_and_suspend_is_planned(running, run_tasks):
    hot_migrate(run_tasks, False)
    before = running.state()
    failed = plan(run_tasks, expect_failure=True)
    assert failed["failed"] is True and HOTMIGRATE in failed["msg"] and "gpu-vm-04" in failed["msg"]
    result = plan(run_tasks, policy="suspend", vm_policies={"gpu-vm-04": "shutdown"}, remediation_s=600)
    actions = dict((row["vm"], (row["action"], row["downtime_s"])) for s in result["steps"] for row in s["vms"])
    assert actions == {"gpu-vm-01": ("suspend", 600), "gpu-vm-02": ("suspend", 600), "gpu-vm-04": ("shutdown", 600)}
    assert running.state() == before


def test_target_not_in_the_depot_is_refused(running, run_tasks):
    hot_migrate(run_tasks, True)
    failed = plan(run_tasks, expect_failure=True, depot_host_drivers=["525.105.14-1OEM.800.1.0.20613240"])
    assert "535.54.06 is in no imported depot" in failed["msg"]
