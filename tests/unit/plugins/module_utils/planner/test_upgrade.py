# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rolling driver upgrade planner: its refusals, its choices, and a replay of every plan it makes.

``replay`` walks a plan step by step on its own copy of the cluster and checks, independently of the planner, that no
host holds more than its GPUs can, that every running VM's guest driver is accepted by its host's vGPU Manager at
every step, that no more hosts are out than allowed and that everything ends on the target. Small random clusters
are also searched exhaustively to confirm that the planner finds room whenever room exists.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools
import random

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia._compatibility import vgpu_guest_compat
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._upgrade import refusal, upgrade_plan
from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._upgrade_capacity import UpgradeHost, evacuate

OLD_HOST, OLD_GUEST = "525.105.14", "525.105.17"
NEW_HOST, NEW_GUEST = "535.54.06", "535.54.03"
P40_MAX = dict((p["name"], p["max_per_gpu"]) for p in _catalog.gpu_model("P40")["profiles"])


def gpu(index, profile=None, vms=(), model="P40"):
    return {"pci_id": "0000:%02x:00.0" % (0x3b + index), "model": model, "memory_mib": 24576,
            "graphics_type": "sharedDirect", "vgpu_mode": "sameSize", "profile": profile, "vms": list(vms)}


def host(name, *gpus, **extra):
    entry = {"name": name, "cluster": extra.pop("cluster", "gpu-cluster"), "connection_state": "connected",
             "maintenance_mode": False, "gpus": list(gpus) or [gpu(0)],
             "suspend_profiles": ["grid_p40-%s" % s for s in ("1q", "2q", "3q", "4q", "6q", "8q", "12q", "24q")]}
    entry.update(extra)
    return entry


def three_hosts():
    return [host("esxi-01", gpu(0, "grid_p40-8q", ["vm-a", "vm-b"]), gpu(1)),
            host("esxi-02", gpu(0, "grid_p40-8q", ["vm-c"]), gpu(1)),
            host("esxi-03", gpu(0), gpu(1))]


def make(inventory, **options):
    args = dict(current_host_driver=OLD_HOST, current_guest_driver=OLD_GUEST, hot_migrate=True)
    args.update(options)
    return upgrade_plan(inventory, options.pop("target", NEW_HOST), **dict(
        (k, v) for k, v in args.items() if k != "target"))


def kinds(result):
    return sorted(set(b["kind"] for b in result["blocked"]))


# ---- the independent replay ----------------------------------------------------------------------------------------

def replay(inventory, result, max_out=1, host_drivers=None, guest_drivers=None):
    """Walk the plan; assert capacity, compatibility and the hosts-out limit at every step; return the end state."""
    drivers = dict((h["name"], (host_drivers or {}).get(h["name"], OLD_HOST)) for h in inventory)
    where, guests, carve = {}, {}, {}
    for h in inventory:
        for g in h["gpus"]:
            carve[h["name"], g["pci_id"]] = g["model"]
            for vm in g["vms"]:
                where[vm] = (h["name"], g["pci_id"], g["profile"])
                guests[vm] = (guest_drivers or {}).get(vm, OLD_GUEST)

    def check(running, note):
        load = {}
        for vm in running:
            name, pci, profile = where[vm]
            assert vgpu_guest_compat(drivers[name], guests[vm])["status"] != "incompatible", (note, vm)
            load.setdefault((name, pci), []).append(profile)
        for key, profiles in load.items():
            assert len(set(profiles)) == 1, (note, key, profiles)
            assert len(profiles) <= P40_MAX[profiles[0]], (note, key, profiles)

    for upgrade in [u for u in result["guest_upgrades"] if u["when"] == "before_hosts"]:
        guests[upgrade["vm"]] = upgrade["to"]
        check(list(where), "before hosts: %s" % upgrade["vm"])
    for step in result["steps"]:
        out = set(step["hosts"])
        assert len(out) <= max_out
        stopped = set()
        for row in step["vms"]:
            assert where[row["vm"]][0] in out
            if row["action"] == "migrate":
                assert row["to_host"] not in out
                where[row["vm"]] = (row["to_host"], row["to_gpu"], row["profile"])
            else:
                stopped.add(row["vm"])
        assert not [vm for vm in where if where[vm][0] in out and vm not in stopped]
        check([vm for vm in where if vm not in stopped], "step %d, hosts out" % step["step"])
        for name in out:
            drivers[name] = step["host_driver"]["to"]
        check(list(where), "step %d, hosts back" % step["step"])
    for upgrade in [u for u in result["guest_upgrades"] if u["when"] == "after_hosts"]:
        assert where[upgrade["vm"]][0] == upgrade["host"]
        guests[upgrade["vm"]] = upgrade["to"]
        check(list(where), "guest upgrade %s" % upgrade["vm"])
    return drivers, guests, where


# ---- plans ---------------------------------------------------------------------------------------------------------

def test_migrate_rolls_host_by_host_and_guests_after_all_hosts():
    inventory = three_hosts()
    result = make(inventory, depot_host_drivers=[NEW_HOST + "-1OEM.800.1.0.20613240"])
    assert result["ok"] and result["blocked"] == []
    assert result["host_order"] == ["esxi-03", "esxi-02", "esxi-01"]
    assert result["target"] == {"host_driver": NEW_HOST, "guest_driver": NEW_GUEST, "release": "16.0"}
    actions = [(row["vm"], row["action"], row["to_host"]) for step in result["steps"] for row in step["vms"]]
    # Upgraded hosts first and the same carve first: all three share esxi-03's first GPU (a P40-8Q takes three).
    assert actions == [("vm-c", "migrate", "esxi-03"), ("vm-a", "migrate", "esxi-03"), ("vm-b", "migrate", "esxi-03")]
    assert [(u["vm"], u["host"], u["when"]) for u in result["guest_upgrades"]] == [
        ("vm-a", "esxi-03", "after_hosts"), ("vm-b", "esxi-03", "after_hosts"), ("vm-c", "esxi-03", "after_hosts")]
    drivers, guests, _where = replay(inventory, result)
    assert set(drivers.values()) == {NEW_HOST} and set(guests.values()) == {NEW_GUEST}


@pytest.mark.parametrize("policy", ["suspend", "shutdown"])
def test_suspend_and_shutdown_keep_vms_on_their_host_for_the_remediation_time(policy):
    inventory = three_hosts()
    result = make(inventory, policy=policy, hot_migrate=False, remediation_s=900)
    assert result["ok"]
    rows = [row for step in result["steps"] for row in step["vms"]]
    assert set(row["action"] for row in rows) == {policy} and len(rows) == 3
    assert all(row["to_host"] is None and row["downtime_s"] == 900 for row in rows)
    assert dict((v["vm"], v["downtime_s"]) for v in result["vms"]) == {"vm-a": 900, "vm-b": 900, "vm-c": 900}
    replay(inventory, result)


def test_per_vm_override_and_hot_migrate_off():
    inventory = three_hosts()
    result = make(inventory, hot_migrate=False, policy="migrate", vm_policies={"vm-a": "shutdown"})
    assert kinds(result) == ["hot-migrate-off"]
    assert sorted(b["vm"] for b in result["blocked"]) == ["vm-b", "vm-c"]
    assert "vgpu.hotmigrate.enabled" in str(refusal(result))
    result = make(inventory, hot_migrate=False, policy="suspend", vm_policies={"vm-a": "shutdown"})
    assert result["ok"]
    assert [(r["vm"], r["action"]) for s in result["steps"] for r in s["vms"]] == [
        ("vm-c", "suspend"), ("vm-a", "shutdown"), ("vm-b", "suspend")]


def test_suspend_needs_the_hosts_suspend_capability():
    inventory = three_hosts()
    inventory[0]["suspend_profiles"] = []
    result = make(inventory, policy="suspend")
    assert kinds(result) == ["suspend-unsupported"]
    assert "sharedGpuCapabilities.suspendSupported" in result["blocked"][0]["message"]


def test_no_room_for_one_hosts_vms_is_refused():
    inventory = [host("esxi-01", gpu(0, "grid_p40-12q", ["vm-a", "vm-b"])),
                 host("esxi-02", gpu(0, "grid_p40-8q", ["vm-c", "vm-d", "vm-e"]))]
    result = make(inventory)
    assert kinds(result) == ["no-room"]
    assert set(b["host"] for b in result["blocked"]) == {"esxi-01", "esxi-02"}
    assert "vm-a, vm-b" in str(refusal(result))
    # With nowhere to go, the VMs wait on their host instead, each as its own policy says.
    result = make(inventory, policy="shutdown", vm_policies={"vm-a": "suspend", "vm-b": "suspend"})
    assert result["ok"]
    assert sorted((r["vm"], r["action"]) for s in result["steps"] for r in s["vms"]) == [
        ("vm-a", "suspend"), ("vm-b", "suspend"), ("vm-c", "shutdown"), ("vm-d", "shutdown"), ("vm-e", "shutdown")]
    replay(inventory, result)


def test_max_hosts_out_batches_hosts_only_while_the_rest_holds_their_vms():
    inventory = [host("esxi-0%d" % i, gpu(0), gpu(1)) for i in range(1, 5)]
    inventory[0]["gpus"][0].update(profile="grid_p40-8q", vms=["vm-a"])
    result = make(inventory, max_hosts_out=2)
    assert [step["hosts"] for step in result["steps"]] == [["esxi-02", "esxi-03"], ["esxi-04", "esxi-01"]]
    replay(inventory, result, max_out=2)
    tight = [host("esxi-01", gpu(0, "grid_p40-24q", ["vm-a"])), host("esxi-02", gpu(0, "grid_p40-24q", ["vm-b"])),
             host("esxi-03", gpu(0))]
    result = make(tight, max_hosts_out=3)
    assert [len(step["hosts"]) for step in result["steps"]] == [1, 1, 1]
    replay(tight, result, max_out=3)


def test_refusals_for_versions_and_depot():
    inventory = three_hosts()
    assert kinds(make(inventory, depot_host_drivers=[OLD_HOST + "-1OEM.800.1.0.20613240"])) == ["bundle-not-in-depot"]
    assert kinds(make(inventory, target=OLD_HOST, target_guest_driver=OLD_GUEST,
                      current_guest_driver=NEW_GUEST)) == ["target-older-than-guest"]
    assert kinds(make(inventory, target_guest_driver="550.54.14")) == ["target-guest-not-accepted"]
    # R550 accepts R535 guests (previous branch), not R525 ones, and an R525 manager never takes an R550 guest.
    result = make(inventory, target="550.54.10", target_guest_driver="550.54.14")
    assert kinds(result) == ["guest-not-accepted"]
    assert "R550 or R535" in result["blocked"][0]["message"] and result["steps"] == []


def test_a_guest_the_target_refuses_is_upgraded_first_when_every_current_host_accepts_the_new_one():
    inventory = three_hosts()
    result = make(inventory, target="595.58.02", target_guest_driver="580.65.06", current_host_driver="580.65.05",
                  current_guest_driver=NEW_GUEST)
    assert result["ok"]
    assert [(u["vm"], u["when"]) for u in result["guest_upgrades"]] == [
        ("vm-a", "before_hosts"), ("vm-b", "before_hosts"), ("vm-c", "before_hosts")]
    replay(inventory, result, host_drivers=dict.fromkeys(["esxi-01", "esxi-02", "esxi-03"], "580.65.05"),
           guest_drivers=dict.fromkeys(["vm-a", "vm-b", "vm-c"], NEW_GUEST))


def test_a_guest_driver_that_would_not_run_the_installed_cuda_is_refused_up_front():
    inventory = three_hosts()
    # R535's guest driver runs CUDA 12.2 fully; 12.4 (needs 550.54.14) only under minor-version compatibility.
    assert make(inventory, current_guest_cuda="12.2")["ok"]
    result = make(inventory, current_guest_cuda="12.2", guest_cuda={"vm-b": "12.4"})
    assert result["ok"] and [n for n in result["notes"] if "vm-b" in n and "minor-version" in n]
    # The way back to R525 (vGPU 15.2): its guest driver 525.105.17 runs no CUDA 13 toolkit at all.
    result = make(inventory, target=OLD_HOST, target_guest_driver=OLD_GUEST, current_host_driver=NEW_HOST,
                  current_guest_driver="525.85.05", guest_cuda={"vm-c": "13.0"})
    assert kinds(result) == ["cuda-unsupported"]
    assert result["blocked"][0]["vm"] == "vm-c" and "CUDA 13.0 needs driver 580.65.06" in result["blocked"][0]["message"]
    assert "vm-c" in str(refusal(result))
    with pytest.raises(InputError) as err:
        make(inventory, current_guest_cuda="twelve")
    assert "'twelve' of VM vm-a" in str(err.value)


def test_nothing_to_do_when_everything_runs_the_target():
    result = make(three_hosts(), current_host_driver=NEW_HOST, current_guest_driver=NEW_GUEST)
    assert result["ok"] and result["steps"] == [] and result["guest_upgrades"] == []
    assert result["clusters"][0]["already_at_target"] == ["esxi-01", "esxi-02", "esxi-03"]


def test_hosts_out_of_reach_and_partial_rollouts():
    inventory = three_hosts()
    inventory[2]["connection_state"] = "disconnected"
    result = make(inventory, host_drivers={"esxi-01": NEW_HOST})
    assert kinds(result) == ["host-not-connected"]
    assert result["guest_upgrades"] == [] and "stay on their current vGPU Manager" in result["notes"][0]


@pytest.mark.parametrize("options, needle", [
    (dict(policy="evacuate"), "policy 'evacuate'"),
    (dict(vm_policies={"vm-a": "pause"}), "vm-a has policy 'pause'"),
    (dict(max_hosts_out=0), "max_hosts_out"),
    (dict(current_guest_driver=525.1), "guest driver of vm-a"),
    (dict(current_guest_driver=None), "guest driver of VM vm-a is not known"),
    (dict(current_host_driver=None), "vGPU Manager version of host esxi-01"),
    (dict(target="595.1.1"), "target_guest_driver is not set"),
])
def test_bad_input_is_refused(options, needle):
    with pytest.raises(InputError) as err:
        make(three_hosts(), **options)
    assert needle in str(err.value)


# ---- brute force ---------------------------------------------------------------------------------------------------

PROFILES = ["grid_p40-24q", "grid_p40-12q", "grid_p40-8q"]


def random_cluster(rng):
    inventory = []
    vm = itertools.count(1)
    for h in range(rng.randint(2, 4)):
        gpus = []
        for g in range(rng.randint(1, 2)):
            profile = rng.choice(PROFILES + [None, None])
            count = rng.randint(1, P40_MAX[profile]) if profile else 0
            gpus.append(gpu(g, profile, ["vm-%02d" % next(vm) for _i in range(count)]))
        inventory.append(host("esxi-%02d" % (h + 1), *gpus))
    return inventory


def exhaustive_room(inventory, leaving):
    """Whether the VMs of ``leaving`` fit on the other hosts, by trying every GPU for every VM."""
    movers = [(vm, g["profile"]) for h in inventory if h["name"] == leaving for g in h["gpus"] for vm in g["vms"]]
    slots = [[h["name"], g["pci_id"], g["profile"], len(g["vms"])] for h in inventory if h["name"] != leaving
             for g in h["gpus"]]
    for choice in itertools.product(range(len(slots)), repeat=len(movers)):
        state = [list(s) for s in slots]
        fits = True
        for (vm, profile), index in zip(movers, choice):
            slot = state[index]
            if slot[3] and slot[2] != profile or slot[3] + 1 > P40_MAX[profile]:
                fits = False
                break
            slot[2], slot[3] = profile, slot[3] + 1
        if fits:
            return True
    return not movers


@pytest.mark.parametrize("seed", range(60))
def test_random_clusters_replay_and_room_matches_exhaustive_search(seed):
    rng = random.Random(seed)
    inventory = random_cluster(rng)
    hosts = [UpgradeHost(h, NEW_HOST) for h in inventory]
    for entry, h in zip(inventory, hosts):
        for g_entry, g in zip(entry["gpus"], h.gpus):
            g.vms.update(dict.fromkeys(g_entry["vms"], g_entry["profile"]))
    for h in hosts:
        placed = evacuate(hosts, {h.name}, [(vm, p) for vm, p, _g in h.running()], lambda _h, _v: True, set())
        assert (placed is not None) == exhaustive_room(inventory, h.name), h.name
    max_out = rng.randint(1, 2)
    policy = rng.choice(["migrate", "migrate", "suspend", "shutdown"])
    result = make(inventory, policy=policy, max_hosts_out=max_out)
    if result["ok"]:
        drivers, guests, _where = replay(inventory, result, max_out=max_out)
        assert set(drivers.values()) == {NEW_HOST} and set(guests.values()) == {NEW_GUEST}
    else:
        assert kinds(result) == ["no-room"] and policy == "migrate"
