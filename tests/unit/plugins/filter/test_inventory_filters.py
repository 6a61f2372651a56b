# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.vgpu.plugins.filter.inventory import (
    FilterModule,
    apply_plan,
    plan_scopes,
    site_clusters,
    vgpu_differences,
    vgpu_guests,
    vgpu_placement,
    vgpu_requests,
)

HOSTVARS = {
    "train-1": {"vgpu_profile": "grid_p40-8q"},
    "train-2.example.com": {"vgpu_profile": "grid_p40-8q", "vgpu_vm_name": "train-2"},
    "no-gpu": {},
    "light-1": {"vgpu_profile": "grid_p40-3q"},
}


def test_requests_in_inventory_order():
    assert vgpu_requests(["train-1", "train-2.example.com", "no-gpu", "light-1"], HOSTVARS) == [
        {"name": "train-1", "profile": "grid_p40-8q"},
        {"name": "train-2", "profile": "grid_p40-8q"},
        {"name": "light-1", "profile": "grid_p40-3q"},
    ]
    assert vgpu_requests([], HOSTVARS) == []


def test_extra_requests_follow_the_guests():
    extra = [{"name": "batch-9", "profile": "grid_p40-2q"}]
    wanted = [{"name": "light-1", "profile": "grid_p40-3q"}, {"name": "batch-9", "profile": "grid_p40-2q"}]
    assert vgpu_requests(["light-1"], HOSTVARS, extra) == wanted
    with pytest.raises(AnsibleFilterError, match="train-2 is both in the inventory .train-2.example.com."):
        vgpu_requests(["train-2.example.com"], HOSTVARS, [{"name": "train-2", "profile": "grid_p40-2q"}])


def test_two_guests_for_one_vm():
    hostvars = dict(HOSTVARS, dup={"vgpu_profile": "grid_p40-4q", "vgpu_vm_name": "train-1"})
    with pytest.raises(AnsibleFilterError, match="train-1 and dup both name the VM train-1"):
        vgpu_requests(["train-1", "dup"], hostvars)


def test_profile_must_be_a_name():
    with pytest.raises(AnsibleFilterError, match="vgpu_profile of odd"):
        vgpu_requests(["odd"], {"odd": {"vgpu_profile": ["grid_p40-8q"]}})


GPU_INFO = {
    "hosts": [{"name": "esxi-01", "cluster": "p40"}, {"name": "esxi-02", "cluster": "p40"},
              {"name": "esxi-11", "cluster": "a100"}, {"name": "esxi-sa", "cluster": None}],
    "vms": [{"name": "a", "host": "esxi-01"}, {"name": "b", "host": "esxi-02"}, {"name": "c", "host": "esxi-11"},
            {"name": "d", "host": "esxi-sa"}],
}
VMS = [{"name": "a", "profile": "grid_p40-8q"}, {"name": "b", "profile": "grid_p40-8q"},
       {"name": "c", "profile": "grid_a100-4c"}, {"name": "d", "profile": "grid_t4-4c"}]


def test_plan_scopes_keep_vms_in_their_cluster():
    scopes = plan_scopes(GPU_INFO, VMS, ["p40", "a100"])
    assert [(s["cluster"], [h["name"] for h in s["inventory"]], s["requests"]) for s in scopes] == [
        ("p40", ["esxi-01", "esxi-02"], [{"vm": "a", "profile": "grid_p40-8q"}, {"vm": "b", "profile": "grid_p40-8q"}]),
        ("a100", ["esxi-11"], [{"vm": "c", "profile": "grid_a100-4c"}]),
    ]
    with pytest.raises(AnsibleFilterError, match="cluster.s. nope not in the GPU inventory .known: a100, p40."):
        plan_scopes(GPU_INFO, VMS, ["nope"])


def test_plan_scopes_leave_out_the_vms_that_carry_their_profile_unless_replanned():
    read = {"hosts": GPU_INFO["hosts"], "vms": [
        {"name": "a", "host": "esxi-01", "vgpus": [{"profile": "grid_p40-8q"}], "power_state": "poweredOff"},
        {"name": "b", "host": "esxi-02", "vgpus": [{"profile": "grid_p40-4q"}], "power_state": "poweredOn"},
        {"name": "c", "host": "esxi-11", "vgpus": [{"profile": "grid_a100-4c"}] * 2, "power_state": "poweredOn"}]}
    kept = plan_scopes(read, VMS[:3], ["p40", "a100"])
    assert [scope["requests"] for scope in kept] == [[{"vm": "b", "profile": "grid_p40-8q"}], []]
    replanned = plan_scopes(read, VMS[:3], ["p40", "a100"], replan="true")
    assert [[r["vm"] for r in scope["requests"]] for scope in replanned] == [["a", "b"], ["c"]]


def test_apply_plans():
    plans = [{"placements": [{"vm": "a", "host": "esxi-02", "current": False},
                             {"vm": "b", "host": "esxi-02", "current": True}]},
             {"placements": [{"vm": "c", "host": "esxi-11", "current": False}]}]
    assert apply_plan(VMS, plans) == [dict(VMS[0], host="esxi-02"), VMS[1], dict(VMS[2], host="esxi-11"), VMS[3]]
    assert apply_plan(VMS, plans[1]) == [VMS[0], VMS[1], dict(VMS[2], host="esxi-11"), VMS[3]]


def test_apply_plan_orders_mixed_size_vms_by_placement_id():
    vms = [{"name": "big", "profile": "grid_l40s-24c"}, {"name": "mid", "profile": "grid_l40s-16q"},
           {"name": "small", "profile": "grid_l40s-8c"}, {"name": "other", "profile": "grid_p40-8q"}]
    plan = {"placements": [
        {"vm": "big", "host": "esxi-21", "current": False, "placement_ids": [0]},
        {"vm": "mid", "host": "esxi-21", "current": False, "placement_ids": [32]},
        {"vm": "small", "host": "esxi-21", "current": False, "placement_ids": [24]},
        {"vm": "other", "host": "esxi-01", "current": False, "placement_ids": None}]}
    assert [vm["name"] for vm in apply_plan(vms, plan)] == ["other", "big", "small", "mid"]
    assert "host" not in VMS[0], "the input list is left as it was"


def test_guests_with_or_without_a_profile():
    assert vgpu_guests(["train-2.example.com", "no-gpu"], HOSTVARS) == [
        {"name": "train-2.example.com", "vm": "train-2", "profile": "grid_p40-8q"},
        {"name": "no-gpu", "vm": "no-gpu", "profile": None},
    ]
    with pytest.raises(AnsibleFilterError, match="vgpu_guests: guests no-gpu and dup both name the VM no-gpu"):
        vgpu_guests(["no-gpu", "dup"], dict(HOSTVARS, dup={"vgpu_vm_name": "no-gpu"}))
    with pytest.raises(AnsibleFilterError, match="vgpu_guests: vgpu_profile of odd"):
        vgpu_guests(["odd"], {"odd": {"vgpu_profile": 8}})


PLACED = {
    "hosts": [{"name": "esxi-01", "gpus": [
        {"pci_id": "0000:3b:00.0", "profile": "grid_p40-8q", "vms": ["a"]},
        {"pci_id": "0000:3c:00.0", "profile": "grid_p40-3q", "vms": ["b"]}]}],
    "vms": [
        {"name": "a", "host": "esxi-01", "power_state": "poweredOn", "vgpus": [{"profile": "grid_p40-8q"}]},
        {"name": "b", "host": "esxi-01", "power_state": "poweredOn", "vgpus": [{"profile": "grid_p40-8q"}]},
        {"name": "c", "host": "esxi-02", "power_state": "poweredOff", "vgpus": [{"profile": "grid_a100-4c"}]},
        {"name": "d", "host": "esxi-sa", "power_state": "poweredOff", "vgpus": []},
    ],
}


def test_placement_of_each_vm():
    placed = vgpu_placement(PLACED, VMS)
    assert placed[0] == {"name": "a", "profile": "grid_p40-8q", "profiles": ["grid_p40-8q"],
                         "power_state": "poweredOn", "host": "esxi-01", "gpu": "0000:3b:00.0", "ok": True}
    assert [(vm["name"], vm["gpu"], vm["ok"]) for vm in placed] == [
        ("a", "0000:3b:00.0", True), ("b", "0000:3c:00.0", True), ("c", None, True), ("d", None, False)]


def test_placement_when_the_vms_should_run():
    placed = vgpu_placement(PLACED, VMS, running=True)
    assert [vm["ok"] for vm in placed] == [True, False, False, False], "b runs on a GPU carved for 3Q, c is off"
    with pytest.raises(AnsibleFilterError, match="vgpu_placement: the GPU inventory names the VM d, which was not"):
        vgpu_placement(PLACED, VMS[:3])


def test_filter_map():
    assert FilterModule().filters() == {"site_clusters": site_clusters, "vgpu_guests": vgpu_guests, "vgpu_requests": vgpu_requests,
                                        "plan_scopes": plan_scopes, "apply_plan": apply_plan,
                                        "vgpu_placement": vgpu_placement, "vgpu_differences": vgpu_differences}


@pytest.mark.parametrize("vgpu_clusters, vcenter_cluster, clusters", [
    (["gpu-a", "gpu-b"], "other", ["gpu-a", "gpu-b"]),
    ([], "other", []),
    (None, "gpu-cluster", ["gpu-cluster"]),
    (None, "", []),
    (None, None, []),
])
def test_site_clusters_take_vgpu_clusters_then_vcenter_cluster(vgpu_clusters, vcenter_cluster, clusters):
    assert site_clusters(vgpu_clusters, vcenter_cluster) == clusters


@pytest.mark.parametrize("vgpu_clusters, vcenter_cluster, named", [
    ("gpu-a", None, "vgpu_clusters must be a list of cluster names, got 'gpu-a'"),
    (["gpu-a", ""], None, "vgpu_clusters must be a list"),
    (None, ["gpu-a"], "vcenter_cluster must be the name of a cluster"),
])
def test_site_clusters_refuse_what_names_no_cluster(vgpu_clusters, vcenter_cluster, named):
    with pytest.raises(AnsibleFilterError, match=named):
        site_clusters(vgpu_clusters, vcenter_cluster)


def test_site_clusters_required_by_the_playbooks_name_what_to_set():
    with pytest.raises(AnsibleFilterError, match="set vgpu_clusters .* or vcenter_cluster in the inventory"):
        site_clusters(None, None, required=True)
    assert site_clusters(None, "gpu-cluster", required=True) == ["gpu-cluster"]


def test_the_playbooks_and_roles_take_their_clusters_from_site_clusters():
    """One rule for which clusters the site manages: no role or playbook restates it."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..")
    users = {"playbooks/vars/vcenter.yml": "playbook_clusters:", "roles/doctor/defaults/main.yml": "doctor_clusters:",
             "roles/vgpu_assign/defaults/main.yml": "vgpu_assign_clusters:"}
    for path, variable in users.items():
        with open(os.path.join(root, path)) as handle:
            line = next(line for line in handle if line.startswith(variable))
        assert "gpuops.vgpu.site_clusters(" in line, path
    for folder in ("playbooks", "roles"):
        for base, _dirs, files in os.walk(os.path.join(root, folder)):
            for name in files:
                if name.endswith(".yml"):
                    with open(os.path.join(base, name)) as handle:
                        code = [line for line in handle if "{{" in line and not line.lstrip().startswith("#")]
                    assert not [line for line in code if "[vcenter_cluster]" in line], name
