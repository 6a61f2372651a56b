# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vgpu_assign role against the lab: requests from the inventory, one vm_vgpu call, placement checked."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
import yaml

from vsphere_direct import Direct

GUESTS = {
    "trainer-a.example.com": {"vgpu_profile": "grid_p40-8q", "vgpu_vm_name": "gpu-vm-01"},
    "gpu-vm-02": {"vgpu_profile": "grid_p40-8q"},
    "gpu-vm-04": {"vgpu_profile": "grid_p40-3q"},
    "no-vgpu": {},
}
CHANGE_STEPS = "Plan, put the profiles on the VMs and read where they landed"


@pytest.fixture
def guests_inventory(tmp_path):
    path = tmp_path / "guests.yml"
    path.write_text(yaml.safe_dump({"gpu_guests": {"hosts": GUESTS}}))
    return path


def role(**variables):
    return [{"name": "vgpu_assign", "ansible.builtin.include_role": {"name": "gpuops.vgpu.vgpu_assign"},
             "vars": variables}]


def run_role(run_tasks, lab, inventory, check=False, expect_failure=False, **variables):
    variables.setdefault("vgpu_assign_plan", False)
    return run_tasks(role(**variables), inventories=[inventory], check=check, expect_failure=expect_failure)


def placement(run):
    facts = [r["ansible_facts"]["vgpu_assign_placement"] for r in run.results
             if "vgpu_assign_placement" in r.get("ansible_facts", {})]
    return facts[-1]


def differences(run):
    return [r["ansible_facts"]["vgpu_assign_differences"] for r in run.results
            if "vgpu_assign_differences" in r.get("ansible_facts", {})][-1]


def pending(run_tasks, inventory, **variables):
    """The pending entry point's answer: does any VM need a vGPU change."""
    task = {"name": "vgpu_assign pending", "ansible.builtin.include_role": {
        "name": "gpuops.vgpu.vgpu_assign", "tasks_from": "pending"}, "vars": variables}
    run = run_tasks([task], inventories=[inventory])
    return [r["ansible_facts"]["vgpu_assign_pending"] for r in run.results
            if "vgpu_assign_pending" in r.get("ansible_facts", {})][-1]


def test_check_mode_changes_nothing(lab, run_tasks, guests_inventory):
    before = lab.state()
    run_role(run_tasks, lab, guests_inventory, check=True)
    assert pending(run_tasks, guests_inventory) is True
    assert lab.state() == before


def test_profiles_from_inventory_powered_on_and_placed(lab, run_tasks, guests_inventory):
    direct = Direct(lab)
    try:
        for host in ("esxi-01.lab.local", "esxi-02.lab.local"):
            direct.shared_direct(host)
    finally:
        direct.close()
    run = run_role(run_tasks, lab, guests_inventory, vgpu_assign_power_on=True)
    placed = dict((entry["name"], entry) for entry in placement(run))
    assert sorted(placed) == ["gpu-vm-01", "gpu-vm-02", "gpu-vm-04"]
    for name, profile in (("gpu-vm-01", "grid_p40-8q"), ("gpu-vm-02", "grid_p40-8q"), ("gpu-vm-04", "grid_p40-3q")):
        truth = lab.vm(name)
        assert [v["profile"] for v in truth["vgpus"]] == [profile]
        assert truth["power_state"] == "poweredOn"
        assert truth["vgpus"][0]["gpu"] is not None
        assert placed[name]["gpu"] == truth["vgpus"][0]["gpu"]
        assert placed[name]["host"] == truth["host"]
    assert lab.vm("gpu-vm-03")["vgpus"] == []

    before = lab.state()
    again = run_role(run_tasks, lab, guests_inventory, vgpu_assign_power_on=True)
    assert [r["_task"] for r in again.results if r.get("changed")] == []
    assert differences(again) == [], "the one read finds nothing to change, so the change steps do not run"
    assert [r for r in again.results if r["_task"].endswith(CHANGE_STEPS)][0]["skipped"] is True
    assert lab.state() == before
    assert dict((entry["name"], entry) for entry in placement(again)) == placed
    assert pending(run_tasks, guests_inventory, vgpu_assign_power_on=True) is False
    assert pending(run_tasks, guests_inventory) is False


def test_running_vm_needing_a_change_stops_the_role_before_any_change(lab, run_tasks, guests_inventory, tmp_path):
    direct = Direct(lab)
    try:
        direct.shared_direct("esxi-01.lab.local")
        direct.add_vgpu("gpu-vm-02", "grid_p40-8q")
        direct.power_on("gpu-vm-02")
    finally:
        direct.close()
    other = tmp_path / "other.yml"
    other.write_text(yaml.safe_dump({"gpu_guests": {"hosts": {"gpu-vm-02": {"vgpu_profile": "grid_p40-4q"}}}}))
    before = lab.state()
    run = run_role(run_tasks, lab, other, expect_failure=True)
    assert "gpu-vm-02" in run.failed[0]["msg"] and "powered on" in run.failed[0]["msg"]
    assert lab.state() == before


def test_empty_inventory_is_a_clear_error(lab, run_tasks, tmp_path):
    empty = tmp_path / "empty.yml"
    empty.write_text(yaml.safe_dump({"gpu_guests": {"hosts": {"no-vgpu": {}}}}))
    run = run_role(run_tasks, lab, empty, expect_failure=True)
    assert "set vgpu_profile" in run.failed[0]["msg"]


def test_plan_moves_vms_before_power_on(lab, run_tasks, tmp_path):
    """Three 8Q VMs all registered on esxi-01: the plan fills one GPU; a fourth goes to another host."""
    direct = Direct(lab)
    try:
        for host in ("esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local"):
            direct.shared_direct(host)
    finally:
        direct.close()
    inventory = tmp_path / "planned.yml"
    guests = dict(("gpu-vm-%02d" % n, {"vgpu_profile": "grid_p40-8q"}) for n in (6, 7, 8, 9))
    inventory.write_text(yaml.safe_dump({"gpu_guests": {"hosts": guests}}))
    run = run_role(run_tasks, lab, inventory, vgpu_assign_plan=True, vgpu_assign_power_on=True)
    truth = dict((vm["name"], vm) for vm in lab.state()["vms"])
    hosts = [truth[name]["host"] for name in guests]
    assert all(truth[name]["power_state"] == "poweredOn" for name in guests)
    for host in lab.state()["hosts"]:
        for gpu in host["gpus"]:
            assert len([vm for vm in gpu["vms"] if vm in guests]) <= 3, "the plan never overfills a P40 with 8Q"
    assert len(set(hosts)) == 2, "four 8Q VMs need exactly two P40s: %s" % hosts
    placed = dict((entry["name"], entry) for entry in placement(run))
    assert all(placed[name]["ok"] for name in guests)


def test_plan_that_cannot_fit_stops_before_any_change(lab, run_tasks, tmp_path):
    inventory = tmp_path / "too-big.yml"
    guests = dict(("gpu-vm-%02d" % n, {"vgpu_profile": "grid_p40-24q"}) for n in (1, 2, 3, 5))
    inventory.write_text(yaml.safe_dump({"gpu_guests": {"hosts": guests}}))
    before = lab.state()
    run = run_role(run_tasks, lab, inventory, vgpu_assign_plan=True, expect_failure=True)
    assert "Not every vGPU fits" in run.failed[0]["msg"] and "gpu-cluster" in run.failed[0]["msg"]
    assert lab.state() == before


def test_each_cluster_planned_on_its_own(lab, run_tasks, tmp_path):
    direct = Direct(lab)
    try:
        direct.shared_direct("esxi-11.lab.local")
        direct.shared_direct("esxi-12.lab.local")
    finally:
        direct.close()
    inventory = tmp_path / "two-clusters.yml"
    guests = {"mixed-vm-02": {"vgpu_profile": "grid_a100-4c"}, "mixed-vm-01": {"vgpu_profile": "grid_t4-4c"}}
    inventory.write_text(yaml.safe_dump({"gpu_guests": {"hosts": guests}}))
    run_role(run_tasks, lab, inventory, vgpu_assign_plan=True, vgpu_assign_power_on=True, vgpu_assign_power="power_off",
             vgpu_assign_clusters=["gpu-cluster", "mixed-cluster"])
    a100 = lab.vm("mixed-vm-02")
    assert a100["host"] == "esxi-12.lab.local" and a100["power_state"] == "poweredOn"
    assert [v["profile"] for v in a100["vgpus"]] == ["grid_a100-4c"] and a100["vgpus"][0]["gpu"]
    t4 = lab.vm("mixed-vm-01")
    assert t4["host"] == "esxi-11.lab.local" and t4["power_state"] == "poweredOn" and t4["vgpus"][0]["gpu"]


def test_bad_role_input_fails_without_showing_the_password(lab, run_tasks, guests_inventory):
    run = run_tasks(role(vgpu_assign_power="maybe"), inventories=[guests_inventory],
                    expect_failure=True, verbosity=3, callback="ansible.builtin.default")
    assert "vgpu_assign_power" in run.stdout and "maybe" in run.stdout
    assert lab.connection["password"] not in run.stdout + run.stderr


# The site's choices (inventories/lab/job.yml): plan both clusters, shut running guests down for a change, run every VM.
SITE_CHOICES = {"vgpu_assign_plan": True, "vgpu_assign_power": "shutdown_guest", "vgpu_assign_power_on": True}
READ_TASK = "Read the GPUs, the VMs and what interrupted runs left"
# Login, the host tree, the custom field definitions, the VM names and custom values, the VMs, one QueryConfigTarget
# per compute resource, logout.
CONVERGED_SOAP_REQUESTS = 18


def converged(lab, run_tasks, inventory):
    """The guests' VMs as the site asks, after a first run that changed them."""
    direct = Direct(lab)
    try:
        for host in ("esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local"):
            direct.shared_direct(host)
    finally:
        direct.close()
    first = run_role(run_tasks, lab, inventory, **SITE_CHOICES)
    assert differences(first) and any(task.endswith("Put the vGPU profiles on the VMs, in one task for all of them")
                                      for task in first.module_runs)
    return first


def test_a_converged_rerun_reads_once_and_changes_nothing(lab, run_tasks, guests_inventory):
    converged(lab, run_tasks, guests_inventory)
    before = lab.state()
    lab.reset_stats()
    again = run_role(run_tasks, lab, guests_inventory, **SITE_CHOICES)
    stats = lab.stats()
    assert [task.split(" : ")[-1] for task in again.module_runs] == [READ_TASK], "the read alone runs a module"
    assert [r["_task"] for r in again.results if r.get("changed")] == []
    assert differences(again) == []
    assert all(entry["ok"] and entry["gpu"] for entry in placement(again)), "placed and checked from the one read"
    assert lab.state() == before
    assert stats["soap_requests"] <= CONVERGED_SOAP_REQUESTS, stats
    assert not [method for method in stats["by_method"] if method.endswith("_Task") or method == "SetField"], stats

    check = run_role(run_tasks, lab, guests_inventory, check=True, **SITE_CHOICES)
    assert [task.split(" : ")[-1] for task in check.module_runs] == [READ_TASK]
    assert not [r for r in check.results if r.get("changed")] and lab.state() == before


def test_a_converged_layer_still_finishes_what_an_interrupted_run_left(lab, run_tasks, guests_inventory):
    """gpu-vm-07, which no request names, was powered off by a run that died: the one read finds its power record,
    so vm_vgpu runs, makes the recorded change, powers it on and says so; then the layer is converged again."""
    converged(lab, run_tasks, guests_inventory)
    direct = Direct(lab)
    try:
        direct.add_vgpu("gpu-vm-07", "grid_p40-2q")
        direct.power_on("gpu-vm-07")
        direct.left_off_by_an_interrupted_run("gpu-vm-07", {"state": "present", "profiles": ["grid_p40-4q"],
                                                            "host": None})
    finally:
        direct.close()
    assert lab.vm("gpu-vm-07")["power_state"] == "poweredOff"
    run = run_role(run_tasks, lab, guests_inventory, **SITE_CHOICES)
    found = differences(run)
    assert len(found) == 1 and found[0].startswith(
        "gpu-vm-07 carries the power record of run 20261128T090000Z-4242 (ops@ctl02, "), found
    said = [r["msg"] for r in run.results if r["_task"].endswith("Say what an interrupted run had left")]
    assert said and said[0][0].startswith("gpu-vm-07: powered on (powered off by run 20261128T090000Z-4242 of "
                                          "ops@ctl02")
    vm = lab.vm("gpu-vm-07")
    assert vm["power_state"] == "poweredOn" and [v["profile"] for v in vm["vgpus"]] == ["grid_p40-4q"]
    assert not vm["custom_values"].get("gpuops.vgpu.vm_vgpu.power")

    again = run_role(run_tasks, lab, guests_inventory, **SITE_CHOICES)
    assert differences(again) == [] and [task.split(" : ")[-1] for task in again.module_runs] == [READ_TASK]
