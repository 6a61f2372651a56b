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

    again = run_role(run_tasks, lab, guests_inventory, vgpu_assign_power_on=True)
    assigned = [r for r in again.results if r.get("_task", "").endswith("Put the vGPU profiles on the VMs, in one task for all of them")]
    assert assigned and assigned[0]["changed"] is False
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
