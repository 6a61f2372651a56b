# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vGPU placement planner against brute-force optima, lower bounds and its own documented rules.

Every plan a test makes also goes through ``check_plan``, which verifies the end state independently of the planner:
no GPU holds more than it can, every VM is on one host that offers its profile, pins hold, counts add up.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import itertools
import random

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._planner import plan

P40 = dict((p["name"], p["max_per_gpu"]) for p in _catalog.gpu_model("P40")["profiles"])
L4_FB = _catalog.gpu_model("L4")["framebuffer_mib"]


# ---- building inventories ------------------------------------------------------------------------------------------

def gpu(index, model="P40", profile=None, vms=(), used=None, vgpu_mode="sameSize", graphics_type="sharedDirect",
        **extra):
    entry = {"pci_id": "0000:%02x:00.0" % (0x3b + index), "model": model, "graphics_type": graphics_type,
             "configured_graphics_type": graphics_type, "vgpu_mode": vgpu_mode, "profile": profile,
             "profiles": [profile] if profile else [], "vms": list(vms), "used": len(vms) if used is None else used}
    entry.update(extra)
    return entry


def host(name, gpus=1, model="P40", profiles=None, policy="consolidation", cluster="gpu-cluster", **extra):
    if isinstance(gpus, int):
        gpus = [gpu(i, model) for i in range(gpus)]
    if profiles is None:
        profiles = [p["name"] for p in _catalog.gpu_model(model)["profiles"]]
    entry = {"name": name, "cluster": cluster, "connection_state": "connected", "maintenance_mode": False,
             "graphics_config": {"default_graphics_type": "sharedDirect", "assignment_policy": policy},
             "gpus": gpus, "supported_profiles": [{"name": p} for p in profiles]}
    entry.update(extra)
    return entry


def requests_of(*groups):
    """("grid_p40-8q", 3) or ("grid_p40-8q", 1, "esxi-02") or with a count: ("grid_p40-24q", 1, None, 2)."""
    out = []
    for group in groups:
        profile, number = group[0], group[1]
        pin = group[2] if len(group) > 2 else None
        count = group[3] if len(group) > 3 else None
        for _vm in range(number):
            entry = {"vm": "vm-%03d" % (len(out) + 1), "profile": profile}
            if pin:
                entry["host"] = pin
            if count:
                entry["count"] = count
            out.append(entry)
    return out


def by_vm(result):
    rows = collections.defaultdict(list)
    for row in result["placements"]:
        rows[row["vm"]].append(row)
    return rows


def carve_counts(result):
    """{host: {profile: GPUs}} over GPUs that hold a profile after the plan."""
    counts = collections.defaultdict(collections.Counter)
    for entry in result["gpus"]:
        if entry["profile"]:
            counts[entry["host"]][entry["profile"]] += 1
    return counts


# ---- the independent end-state check ---------------------------------------------------------------------------

def check_plan(result, inventory, requests):
    hosts = dict((h["name"], h) for h in inventory)
    inventory_gpus = dict(((h["name"], g["pci_id"]), g) for h in inventory for g in h["gpus"])
    planned = dict(((g["host"], g["pci_id"]), g) for g in result["gpus"])
    rows = by_vm(result)
    unplaced = dict((u["vm"], u) for u in result["unplaced"])
    assert len(rows) + len(unplaced) == len(requests)
    assert result["feasible"] == (not unplaced)
    assert result["stats"]["placed"] == len(rows) and result["stats"]["unplaced"] == len(unplaced)
    added = collections.Counter()
    profiles_on = collections.defaultdict(set)
    for request in requests:
        name = _catalog.parse_profile(request["profile"])["name"]
        if request["vm"] in unplaced:
            assert request["vm"] not in rows
            continue
        vm_rows = rows[request["vm"]]
        assert sum(r["count"] for r in vm_rows) == int(request.get("count") or 1), request
        assert len(set(r["host"] for r in vm_rows)) == 1, "a VM's vGPUs are on one host"
        where = vm_rows[0]["host"]
        if request.get("host"):
            assert where == request["host"]
        offered = hosts[where]["supported_profiles"]
        if offered is None:
            offered = [p for g in hosts[where]["gpus"] for p in _catalog.gpu_model(g["model"])["profiles"]]
        assert name in [p["name"] for p in offered]
        for row in vm_rows:
            assert row["profile"] == name
            key = (row["host"], row["gpu"])
            assert key in planned and key in inventory_gpus
            profiles_on[key].add(name)
            if not row["current"]:
                added[key] += row["count"]
    for key, entry in planned.items():
        before = inventory_gpus[key]
        kept = before["used"] - sum(1 for vm in before["vms"] if vm in rows and not rows[vm][0]["current"]
                                    or vm in unplaced)
        assert entry["used"] >= added[key]
        if entry["vgpu_mode"] == "sameSize":
            assert entry["used"] <= entry["max"] == P40.get(entry["profile"], entry["max"])
            assert profiles_on[key] <= {entry["profile"]}
        if entry["vgpu_mode"] == "mixedSize":
            framebuffer = sum(_catalog.parse_profile(p)["framebuffer_mib"] for p in entry["profiles"])
            assert framebuffer and entry["framebuffer_free_mib"] >= 0
        if not before["used"]:
            assert entry["used"] == added[key]
        else:
            assert entry["used"] <= max(kept, 0) + added[key] + before["used"]
    return rows


def run(inventory, requests, **options):
    result = plan(inventory, requests, **options)
    check_plan(result, inventory, requests)
    return result


# ---- the brute-force optimum -----------------------------------------------------------------------------------

def max_flow(capacity, source, sink):
    flow = 0
    while True:
        parent = {source: None}
        queue = collections.deque([source])
        while queue and sink not in parent:
            node = queue.popleft()
            for nxt, room in capacity[node].items():
                if room > 0 and nxt not in parent:
                    parent[nxt] = node
                    queue.append(nxt)
        if sink not in parent:
            return flow
        node = sink
        while parent[node] is not None:
            capacity[parent[node]][node] -= 1
            capacity[node][parent[node]] = capacity[node].get(parent[node], 0) + 1
            node = parent[node]
        flow += 1


def placed_by(carve, wanted):
    """Most single-vGPU VMs a carve {(host, profile): GPUs} takes: a max flow from VMs to (host, profile) slots."""
    capacity = collections.defaultdict(dict)
    for index, (profile, pin) in enumerate(wanted):
        capacity["source"][index] = 1
        for (where, carved), gpus in carve.items():
            if carved == profile and pin in (None, where):
                capacity[index][(where, carved)] = 1
    for key, gpus in carve.items():
        capacity[key]["sink"] = gpus * P40[key[1]]
    return max_flow(capacity, "source", "sink")


def optimum(hosts, wanted, symmetric=False):
    """(most VMs placed, fewest GPUs carved for that) over every carve; symmetric: every host carved alike."""
    best = None
    if symmetric:
        gpus, profiles = next(iter(hosts.values()))
        choices = [[((h, p), n) for h in hosts for p, n in collections.Counter(c for c in combo if c).items()]
                   for combo in itertools.combinations_with_replacement([None] + profiles, gpus)]
    else:
        per_host = []
        for where, (gpus, profiles) in sorted(hosts.items()):
            per_host.append([[((where, p), n) for p, n in collections.Counter(c for c in combo if c).items()]
                             for combo in itertools.combinations_with_replacement([None] + profiles, gpus)])
        choices = [sum(parts, []) for parts in itertools.product(*per_host)]
    for choice in choices:
        carve = dict(choice)
        key = (placed_by(carve, wanted), -sum(carve.values()))
        best = key if best is None or key > best else best
    return best[0], -best[1]


def random_instance(seed, pins, hosts_max=3, gpus_max=2, requests_max=10, sizes=("24q", "12q", "8q", "6q", "4q")):
    rng = random.Random(seed)
    names = ["esxi-%02d" % i for i in range(1, rng.randint(1, hosts_max) + 1)]
    offered = ["grid_p40-" + s for s in rng.sample(sizes, rng.randint(1, 3))]
    hosts = dict((n, (rng.randint(1, gpus_max), sorted(rng.sample(offered, rng.randint(1, len(offered))))))
                 for n in names)
    wanted = [(rng.choice(offered), rng.choice(names) if pins and rng.random() < 0.4 else None)
              for _vm in range(rng.randint(1, requests_max))]
    return hosts, wanted


def instance_inventory(hosts, policy="consolidation"):
    return [host(n, gpus=g, profiles=p, policy=policy) for n, (g, p) in sorted(hosts.items())]


def instance_requests(wanted):
    return [dict({"vm": "vm-%03d" % i, "profile": p}, **({"host": pin} if pin else {}))
            for i, (p, pin) in enumerate(wanted)]


def planned(hosts, wanted, policy="consolidation", **options):
    result = run(instance_inventory(hosts, policy), instance_requests(wanted), **options)
    return result["stats"]["placed"], result["stats"]["gpus_carved_by_plan"]


# ---- optimality ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("policy", ["consolidation", "performance"])
def test_without_pins_the_plan_is_the_brute_force_optimum(policy):
    scarce = 0
    for seed in range(150):
        hosts, wanted = random_instance(seed, pins=False)
        best = optimum(hosts, wanted)
        scarce += best[0] < len(wanted)
        assert planned(hosts, wanted, policy) == best, (seed, hosts, wanted)
    assert scarce > 40, "the instances must include many where capacity runs short"


def test_with_pins_the_plan_never_exceeds_and_nearly_always_reaches_the_optimum():
    exact = 0
    for seed in range(300):
        hosts, wanted = random_instance(seed, pins=True)
        best = optimum(hosts, wanted)
        got = planned(hosts, wanted)
        assert got[0] <= best[0] and got[0] >= best[0] - 1, (seed, hosts, wanted)
        if got[0] == len(wanted):
            assert got == best, "with room for every VM, pinned or not, the GPU count is the optimum"
        exact += got == best
    # All of these reach the optimum; on larger random sets about 3 in 1,000 miss it by one VM or one GPU
    # (docs/planner.md), so a change that loses any of these is a regression to look at.
    assert exact == 300


def test_gpus_used_meets_the_lower_bound_when_capacity_is_ample():
    rng = random.Random(7)
    for _instance in range(60):
        inventory = [host("esxi-%02d" % i, gpus=4, policy=rng.choice(["performance", "consolidation"]))
                     for i in range(1, 5)]
        sizes = rng.sample(sorted(P40), 4)
        wanted = dict((s, rng.randint(0, 9)) for s in sizes)
        # Ample: the sizes' own GPU needs add up to at most the 16 GPUs.
        while sum(-(-n // P40[s]) for s, n in wanted.items()) > 16:
            wanted[max(wanted, key=lambda s: -(-wanted[s] // P40[s]))] -= 1
        requests = requests_of(*((s, n) for s, n in wanted.items()))
        result = run(inventory, requests)
        bound = sum(-(-n // P40[s]) for s, n in wanted.items())
        assert result["feasible"]
        assert result["stats"]["gpus_used"] == result["stats"]["gpus_used_lower_bound"] == bound


def test_running_gpus_absorb_requests_before_any_gpu_is_carved():
    inventory = [host("esxi-01", gpus=[gpu(0, profile="grid_p40-8q", vms=["old-1"]), gpu(1)]),
                 host("esxi-02", gpus=[gpu(0, profile="grid_p40-3q", vms=["old-2", "old-3"]), gpu(1)])]
    requests = requests_of(("grid_p40-8q", 2), ("grid_p40-3q", 8))
    result = run(inventory, requests)
    # 8q: 2 new fit in the running GPU's 2 free slots; 3q: 6 free slots, then one more GPU for the last 2.
    assert result["stats"]["gpus_used"] == result["stats"]["gpus_used_lower_bound"] == 3
    assert result["stats"]["gpus_carved_by_plan"] == 1


def test_symmetric_plans_match_the_best_symmetric_carve():
    for seed in range(60):
        rng = random.Random(seed)
        profiles = sorted("grid_p40-" + s for s in rng.sample(["24q", "12q", "8q", "6q", "4q"], rng.randint(1, 3)))
        hosts = dict(("esxi-%02d" % i, (2, profiles)) for i in range(1, rng.randint(2, 3) + 1))
        wanted = [(rng.choice(profiles), None) for _vm in range(rng.randint(1, 14))]
        result = run(instance_inventory(hosts), instance_requests(wanted), symmetric=True)
        assert result["stats"]["placed"] == optimum(hosts, wanted, symmetric=True)[0], (seed, hosts, wanted)
        counts = carve_counts(result)
        assert len(set(tuple(sorted(counts[h].items())) for h in hosts)) == 1, "every host carved alike"


def test_local_search_gives_a_pinned_host_to_the_profile_that_places_more():
    # One GPU on esxi-01 carved 3q would take the 2 pinned and 4 unpinned 3q VMs (6), but esxi-01 is the only host
    # that offers 8q: carving it for three 8q VMs and esxi-02 for the unpinned 3q VMs places 7.
    hosts = {"esxi-01": (1, ["grid_p40-3q", "grid_p40-8q"]), "esxi-02": (1, ["grid_p40-3q"])}
    wanted = [("grid_p40-3q", "esxi-01")] * 2 + [("grid_p40-3q", None)] * 4 + [("grid_p40-8q", None)] * 3
    assert planned(hosts, wanted) == optimum(hosts, wanted) == (7, 2)
    result = run(instance_inventory(hosts), instance_requests(wanted))
    assert [u["reason"] for u in result["unplaced"]] == ["pinned_host_full"] * 2


def test_unpinned_carves_avoid_hosts_that_pinned_vms_wait_for():
    hosts = {"esxi-01": (1, ["grid_p40-4q", "grid_p40-8q"]),
             "esxi-02": (1, ["grid_p40-12q", "grid_p40-4q", "grid_p40-6q", "grid_p40-8q"]),
             "esxi-03": (1, ["grid_p40-12q", "grid_p40-4q", "grid_p40-8q"])}
    wanted = [("grid_p40-6q", None), ("grid_p40-4q", None), ("grid_p40-12q", "esxi-01"), ("grid_p40-4q", None),
              ("grid_p40-12q", None), ("grid_p40-8q", "esxi-01"), ("grid_p40-12q", "esxi-02"),
              ("grid_p40-6q", "esxi-02"), ("grid_p40-8q", None), ("grid_p40-4q", None)]
    assert planned(hosts, wanted) == optimum(hosts, wanted) == (7, 3)


def test_a_gpu_an_exchange_leaves_without_work_is_given_back():
    hosts = {"esxi-01": (1, ["grid_p40-4q", "grid_p40-8q"]), "esxi-02": (2, ["grid_p40-4q"]),
             "esxi-03": (1, ["grid_p40-4q", "grid_p40-8q"])}
    wanted = [("grid_p40-4q", None), ("grid_p40-8q", "esxi-03"), ("grid_p40-4q", None), ("grid_p40-8q", None),
              ("grid_p40-4q", "esxi-03"), ("grid_p40-8q", "esxi-03")]
    assert planned(hosts, wanted) == optimum(hosts, wanted) == (5, 2)


# ---- the reference procedure's planning advice and placement rules ------------------------------------------------

def test_a_p40_fleet_is_carved_for_light_and_large_work():
    inventory = [host("esxi-%02d" % i) for i in range(1, 4)]
    requests = requests_of(("grid_p40-3q", 12), ("grid_p40-8q", 3))
    result = run(inventory, requests)
    assert result["feasible"]
    carved = collections.Counter(g["profile"] for g in result["gpus"] if g["profile"])
    assert carved == {"grid_p40-3q": 2, "grid_p40-8q": 1}
    assert result["free_capacity"]["grid_p40-3q"] == 4 and result["free_capacity"]["grid_p40-8q"] == 0
    assert result["stats"]["gpus_idle"] == 0


def test_consolidation_fills_one_gpu_and_performance_spreads_within_the_carve():
    running = [gpu(0, profile="grid_p40-3q", vms=["old-1"]), gpu(1, profile="grid_p40-3q", vms=["old-2"])]
    requests = requests_of(("grid_p40-3q", 4))
    packed = run([host("esxi-01", gpus=[dict(g) for g in running], policy="consolidation")], requests)
    spread = run([host("esxi-01", gpus=[dict(g) for g in running], policy="performance")], requests)
    assert sorted(g["used"] for g in packed["gpus"]) == [1, 5]
    assert sorted(g["used"] for g in spread["gpus"]) == [3, 3]
    overridden = run([host("esxi-01", gpus=[dict(g) for g in running], policy="consolidation")], requests,
                     assignment_policy="performance")
    assert sorted(g["used"] for g in overridden["gpus"]) == [3, 3]


def test_performance_carves_across_hosts_and_consolidation_packs_hosts():
    requests = requests_of(("grid_p40-8q", 6))
    spread = run([host("esxi-01", gpus=2, policy="performance"), host("esxi-02", gpus=2, policy="performance")],
                 requests)
    packed = run([host("esxi-01", gpus=2), host("esxi-02", gpus=2)], requests)
    assert sorted(carve_counts(spread)[h]["grid_p40-8q"] for h in ("esxi-01", "esxi-02")) == [1, 1]
    assert sorted(carve_counts(packed)[h]["grid_p40-8q"] for h in ("esxi-01", "esxi-02")) == [0, 2]


def test_a_vm_with_several_vgpus_stays_on_one_host():
    inventory = [host("esxi-01", gpus=1), host("esxi-02", gpus=2)]
    requests = requests_of(("grid_p40-24q", 1, None, 2))
    result = run(inventory, requests)
    rows = by_vm(result)["vm-001"]
    assert [(r["host"], r["count"]) for r in rows] == [("esxi-02", 1), ("esxi-02", 1)]
    too_big = run(inventory, requests_of(("grid_p40-24q", 1, None, 3)))
    assert too_big["unplaced"][0]["reason"] == "no_capacity"


def test_no_capacity_messages_give_the_numbers():
    inventory = [host("esxi-01", gpus=[gpu(0, profile="grid_p40-12q", vms=["other"])])]
    result = run(inventory, requests_of(("grid_p40-12q", 1, None, 2)))
    assert result["unplaced"][0]["message"] == "Only 1 grid_p40-12q slot(s) are free; the VM needs 2."
    kept = run(inventory, requests_of(("grid_p40-12q", 1)), headroom=1)
    assert kept["unplaced"][0]["message"] == "1 grid_p40-12q slot(s) are free and 1 of them are kept as headroom; " \
        "the VM needs 1."
    pinned = run(inventory, requests_of(("grid_p40-12q", 1, "esxi-01")), headroom=1)
    assert pinned["unplaced"][0]["reason"] == "pinned_host_full"
    assert pinned["unplaced"][0]["message"] == "Pinned host esxi-01 has 1 free grid_p40-12q slot(s) (1 kept as " \
        "headroom) and no idle GPU for more; the VM needs 1."
    # With another host, the headroom moves there and the pinned VM takes the slot on its host.
    moved = run(inventory + [host("esxi-02", gpus=1)], requests_of(("grid_p40-12q", 1, "esxi-01")), headroom=1)
    assert moved["feasible"] and [g["used"] for g in moved["gpus"]] == [2, 0]
    assert moved["gpus"][1]["profile"] == "grid_p40-12q" and moved["free_capacity"]["grid_p40-12q"] == 2


def test_pinned_requests_go_to_their_host():
    inventory = [host("esxi-01", gpus=2), host("esxi-02", gpus=2)]
    requests = requests_of(("grid_p40-8q", 2, "esxi-02"), ("grid_p40-8q", 1))
    result = run(inventory, requests)
    assert result["stats"]["gpus_used"] == 1
    assert set(r["host"] for r in result["placements"]) == {"esxi-02"}


# ---- current state -------------------------------------------------------------------------------------------------

def test_running_vms_keep_their_place_and_changed_ones_move():
    inventory = [host("esxi-01", gpus=[gpu(0, profile="grid_p40-8q", vms=["keep", "change"])]),
                 host("esxi-02", gpus=1)]
    requests = [{"vm": "keep", "profile": "grid_p40-8q"}, {"vm": "change", "profile": "grid_p40-4q"},
                {"vm": "new", "profile": "grid_p40-8q"}]
    result = run(inventory, requests)
    rows = by_vm(result)
    assert rows["keep"][0]["current"] and rows["keep"][0]["host"] == "esxi-01"
    assert rows["change"][0]["current"] is False and rows["change"][0]["profile"] == "grid_p40-4q"
    assert rows["change"][0]["host"] == "esxi-02"
    assert rows["new"][0]["host"] == "esxi-01", "the slot the changed VM leaves is free again"
    assert result["stats"]["kept"] == 1


def test_a_gpu_emptied_by_moving_vms_can_be_recarved():
    inventory = [host("esxi-01", gpus=[gpu(0, profile="grid_p40-8q", vms=["a", "b", "c"])])]
    requests = [{"vm": name, "profile": "grid_p40-4q"} for name in ("a", "b", "c")]
    result = run(inventory, requests)
    assert result["feasible"]
    assert result["gpus"][0]["profile"] == "grid_p40-4q" and result["gpus"][0]["used"] == 3


def test_a_pin_elsewhere_moves_a_running_vm():
    inventory = [host("esxi-01", gpus=[gpu(0, profile="grid_p40-8q", vms=["a"])]), host("esxi-02", gpus=1)]
    result = run(inventory, [{"vm": "a", "profile": "grid_p40-8q", "host": "esxi-02"}])
    assert by_vm(result)["a"][0]["host"] == "esxi-02" and not by_vm(result)["a"][0]["current"]
    assert result["gpus"][0]["used"] == 0 and result["gpus"][0]["profile"] is None


def test_other_running_vms_keep_their_slots():
    inventory = [host("esxi-01", gpus=[gpu(0, profile="grid_p40-12q", vms=["other"])])]
    result = run(inventory, requests_of(("grid_p40-12q", 2)))
    assert result["stats"]["placed"] == 1 and result["unplaced"][0]["reason"] == "no_capacity"


def test_respect_current_false_plans_as_if_nothing_ran():
    inventory = [host("esxi-01", gpus=[gpu(0, profile="grid_p40-12q", vms=["other", "x"])])]
    result = run(inventory, requests_of(("grid_p40-3q", 8)), respect_current=False)
    assert result["feasible"] and result["gpus"][0]["profile"] == "grid_p40-3q"
    assert any("respect_current=false" in note and "2 running vGPU" in note for note in result["notes"])


# ---- reasons ------------------------------------------------------------------------------------------------------

def test_every_reason_for_a_request_that_does_not_fit():
    inventory = [
        host("esxi-01", gpus=1, profiles=["grid_p40-8q", "grid_p40-24q"]),
        host("esxi-02", gpus=1, profiles=["grid_p40-24q"]),
        host("esxi-03", gpus=1, maintenance_mode=True),
    ]
    requests = [
        {"vm": "unknown", "profile": "grid_m60-8q"},
        {"vm": "not-offered", "profile": "grid_p40-3q"},
        {"vm": "no-such-host", "profile": "grid_p40-8q", "host": "esxi-99"},
        {"vm": "maintenance", "profile": "grid_p40-8q", "host": "esxi-03"},
        {"vm": "lacks", "profile": "grid_p40-8q", "host": "esxi-02"},
        {"vm": "pinned-1", "profile": "grid_p40-24q", "host": "esxi-02"},
        {"vm": "pinned-2", "profile": "grid_p40-24q", "host": "esxi-02"},
        {"vm": "fits-1", "profile": "grid_p40-8q"},
        {"vm": "fits-2", "profile": "grid_p40-8q"},
        {"vm": "fits-3", "profile": "grid_p40-8q"},
        {"vm": "no-room", "profile": "grid_p40-8q"},
    ]
    result = run(inventory, requests)
    reasons = dict((u["vm"], u["reason"]) for u in result["unplaced"])
    assert reasons == {
        "unknown": "unknown_profile",
        "not-offered": "profile_not_offered",
        "no-such-host": "pinned_host_unavailable",
        "maintenance": "pinned_host_unavailable",
        "lacks": "pinned_host_lacks_profile",
        "pinned-2": "pinned_host_full",
        "no-room": "no_capacity",
    }
    messages = dict((u["vm"], u["message"]) for u in result["unplaced"])
    assert "maintenance mode" in messages["maintenance"] and "not in the inventory" in messages["no-such-host"]
    assert result["excluded"] == [{"host": "esxi-03", "pci_id": "0000:3b:00.0", "model": "P40",
                                   "reason": "host is in maintenance mode"}]


def test_gpus_outside_shared_direct_are_left_out_and_named():
    gpus = [gpu(0, graphics_type="basic"), gpu(1, graphics_type="shared", configured_graphics_type="sharedDirect"),
            gpu(2, model="M60")]
    inventory = [host("esxi-01", gpus=gpus, profiles=["grid_p40-8q"])]
    result = run(inventory, requests_of(("grid_p40-8q", 1)))
    assert [e["reason"] for e in result["excluded"]] == [
        "is in basic mode, not Shared Direct", "waits for an Xorg restart to enter Shared Direct",
        "GPU model 'M60' is not in the catalog"]
    assert result["unplaced"][0]["reason"] == "profile_not_offered"
    assert result["suggestions"] == [
        "P40: 1 request(s) do not fit (grid_p40-8q 1); 2 P40 GPU(s) are left out of the plan: esxi-01 0000:3b:00.0 is "
        "in basic mode, not Shared Direct, esxi-01 0000:3c:00.0 waits for an Xorg restart to enter Shared Direct. Put "
        "them in Shared Direct with gpuops.vgpu.host_graphics, or bring their hosts back, and plan again."]


def test_mig_mode_gpus_take_only_mig_types():
    gpus = [gpu(0, "A100-40", vgpu_mode="multiInstanceGpu"), gpu(1, "A100-40", vgpu_mode="sameSize")]
    inventory = [host("esxi-01", model="A100-40", gpus=gpus)]
    result = run(inventory, requests_of(("grid_a100-3-20c", 2), ("grid_a100-20c", 4)))
    modes = dict((g["pci_id"], g["profile"]) for g in result["gpus"])
    assert modes == {"0000:3b:00.0": "grid_a100-3-20c", "0000:3c:00.0": "grid_a100-20c"}
    assert result["stats"]["unplaced"] == 2
    assert any("other vGPU mode" in s for s in result["suggestions"]) is False, "no idle GPU is of the wrong kind"
    idle_mig = [host("esxi-01", model="A100-40", gpus=[gpu(0, "A100-40", vgpu_mode="multiInstanceGpu")])]
    wrong = run(idle_mig, requests_of(("grid_a100-20c", 1)))
    assert wrong["unplaced"][0]["reason"] == "profile_not_offered"


# ---- headroom ------------------------------------------------------------------------------------------------------

def test_headroom_keeps_slots_free_and_reserves_gpus_for_it():
    inventory = [host("esxi-01", gpus=2), host("esxi-02", gpus=2)]
    result = run(inventory, requests_of(("grid_p40-8q", 3), ("grid_p40-3q", 8)), headroom={"grid_p40-8q": 2})
    assert result["feasible"] and result["free_capacity"]["grid_p40-8q"] >= 2
    reserved = [g for g in result["gpus"] if g["carved_by_plan"] and g["used"] == 0]
    assert [g["profile"] for g in reserved] == ["grid_p40-8q"]
    assert result["stats"]["gpus_reserved"] == 1 and result["stats"]["headroom_shortfall"] == {}


def test_headroom_comes_before_requests_and_a_shortfall_is_reported():
    inventory = [host("esxi-01", gpus=1)]
    result = run(inventory, requests_of(("grid_p40-8q", 3)), headroom=1)
    assert result["stats"]["placed"] == 2 and result["unplaced"][0]["reason"] == "no_capacity"
    assert "headroom" in result["unplaced"][0]["message"]
    short = run(inventory, requests_of(("grid_p40-8q", 1)), headroom={"grid_p40-8q": 1, "grid_p40-24q": 1})
    assert short["stats"]["headroom_shortfall"] == {"grid_p40-24q": 1}
    assert any(s.startswith("Headroom for grid_p40-24q falls 1 slot(s) short") for s in short["suggestions"])


# ---- symmetric ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("policy, used", [("consolidation", [2, 8, 2]), ("performance", [4, 3, 3, 1, 1])])
def test_symmetric_carves_every_host_of_a_group_alike(policy, used):
    inventory = [host("esxi-%02d" % i, gpus=2, policy=policy) for i in range(1, 4)]
    result = run(inventory, requests_of(("grid_p40-3q", 10), ("grid_p40-8q", 2)), symmetric=True)
    counts = carve_counts(result)
    assert all(counts[h] == {"grid_p40-3q": 1, "grid_p40-8q": 1} for h in ("esxi-01", "esxi-02", "esxi-03"))
    # The carved GPUs the policy leaves empty are kept for their profile: vMotion and HA targets.
    assert result["feasible"] and sorted(g["used"] for g in result["gpus"] if g["used"]) == sorted(used)
    assert result["stats"]["gpus_reserved"] == 6 - len(used)


def test_symmetric_groups_follow_cluster_and_gpu_count():
    inventory = [host("esxi-01", gpus=2), host("esxi-02", gpus=2), host("esxi-03", gpus=1),
                 host("esxi-04", gpus=2, cluster="other")]
    result = run(inventory, requests_of(("grid_p40-24q", 2)), symmetric=True)
    counts = carve_counts(result)
    assert counts["esxi-01"] == counts["esxi-02"] == {"grid_p40-24q": 1}
    assert not counts["esxi-03"] and not counts["esxi-04"]


def test_symmetric_reports_hosts_that_running_vgpus_keep_apart():
    inventory = [host("esxi-01", gpus=[gpu(0, profile="grid_p40-8q", vms=["a", "b", "c"]), gpu(1)]),
                 host("esxi-02", gpus=[gpu(0, profile="grid_p40-8q", vms=["d", "e", "f"]),
                                       gpu(1, profile="grid_p40-8q", vms=["g"])])]
    result = run(inventory, requests_of(("grid_p40-8q", 1)), symmetric=True)
    assert result["feasible"]
    assert any(s.startswith("Hosts esxi-01, esxi-02 are carved differently for grid_p40-8q (1, 2 GPU(s))")
               for s in result["suggestions"])


# ---- mixed-size ----------------------------------------------------------------------------------------------------

def l4_host(name, gpus=1, mode="sameSize"):
    return host(name, model="L4", gpus=[gpu(i, "L4", vgpu_mode=mode) for i in range(gpus)])


def test_mixed_size_puts_several_sizes_on_one_gpu():
    requests = requests_of(("grid_l4-12q", 1), ("grid_l4-8q", 1), ("grid_l4-4q", 1))
    equal = run([l4_host("esxi-01", gpus=3)], requests)
    mixed = run([l4_host("esxi-01", gpus=3)], requests, mode="mixed_size")
    assert equal["stats"]["gpus_used"] == 3
    assert mixed["stats"]["gpus_used"] == mixed["stats"]["gpus_used_lower_bound"] == 1
    entry = [g for g in mixed["gpus"] if g["used"]][0]
    assert (entry["vgpu_mode"], entry["profiles"], entry["framebuffer_free_mib"]) == (
        "mixedSize", ["grid_l4-12q", "grid_l4-4q", "grid_l4-8q"], 0)
    # Largest first at the lowest free placement ID: 12q at 0, 8q at 16 (0 is taken), 4q in the gap at 12.
    assert dict((p["profile"], p["placement_ids"]) for p in mixed["placements"]) == {
        "grid_l4-12q": [0], "grid_l4-8q": [16], "grid_l4-4q": [12]}
    assert all(p["placement_ids"] is None for p in equal["placements"])
    assert any("placement IDs" in note and "lowest first" in note for note in mixed["notes"])
    assert any(s.startswith("Set the vGPU mode of 1 GPU(s) to mixed-size") for s in mixed["suggestions"])


def test_equal_size_suggests_mixed_size_when_it_places_more():
    result = run([l4_host("esxi-01", gpus=1)], requests_of(("grid_l4-12q", 1), ("grid_l4-6q", 2)))
    assert result["stats"]["placed"] == 2
    assert any(s.startswith("mode=mixed_size would place 1 more request(s) on mixed-size capable GPUs (L4)")
               for s in result["suggestions"])


def test_mixed_size_needs_a_capable_gpu_and_host():
    p40 = run([host("esxi-01", gpus=1)], requests_of(("grid_p40-12q", 1), ("grid_p40-6q", 2)), mode="mixed_size")
    old_host = run([l4_host("esxi-01", mode=None)], requests_of(("grid_l4-12q", 1), ("grid_l4-6q", 2)),
                   mode="mixed_size")
    assert p40["stats"]["placed"] == old_host["stats"]["placed"] == 2
    assert all(g["vgpu_mode"] in (None, "sameSize") for g in p40["gpus"] + old_host["gpus"])


def replay_power_on(placements):
    """The lab's rule: each vGPU, in power-on order, takes the lowest placement ID of its type that is free."""
    taken = []
    got = []
    for profile in placements:
        facts = _catalog.parse_profile(profile)
        size = facts["framebuffer_mib"] // 1024
        at = next(i for i in facts["mixed_size_placements"]
                  if not any(i < end and start < i + size for start, end in taken))
        taken.append((at, at + size))
        got.append(at)
    return got


def test_mixed_size_plans_replay_at_the_same_placement_ids_in_placement_order():
    sizes = ["grid_l4-%dq" % fb for fb in (12, 8, 6, 4)] + ["grid_l4-3q"]
    for seed in range(80):
        rng = random.Random(seed)
        picks = [rng.choice(sizes) for _vm in range(rng.randint(1, 9))]
        requests = [{"vm": "vm-%d" % i, "profile": name} for i, name in enumerate(picks)]
        result = run([l4_host("esxi-01", gpus=3), l4_host("esxi-02", gpus=3)], requests, mode="mixed_size")
        assert result["stats"]["gpus_used"] >= result["stats"]["gpus_used_lower_bound"]
        by_gpu = {}
        for placement in result["placements"]:
            if placement["profile"] == "grid_l4-3q":  # no mixed-size placement: an equal-size GPU of its own
                assert placement["placement_ids"] is None
                continue
            for at in placement["placement_ids"] or []:
                by_gpu.setdefault((placement["host"], placement["gpu"]), []).append((at, placement["profile"]))
        for vgpus in by_gpu.values():
            vgpus.sort()
            assert replay_power_on([profile for _at, profile in vgpus]) == [at for at, _profile in vgpus], (seed, picks)
        for entry in result["gpus"]:
            assert entry["framebuffer_free_mib"] is None or entry["framebuffer_free_mib"] >= 0


def test_mixed_size_packs_largest_first():
    requests = [{"vm": "vm-%d" % i, "profile": "grid_l4-%dq" % fb} for i, fb in enumerate((4, 4, 8, 8, 12, 12))]
    result = run([l4_host("esxi-01", gpus=3)], requests, mode="mixed_size")
    # Smallest first: 4q at 0 and 8, 8q at 16; the next 8q and a 12q on a second GPU, the last 12q on a third.
    # Largest first: both 12q on one GPU, 8q at 0 and 16 and both 4q between them on a second.
    assert result["feasible"] and result["stats"]["gpus_used"] == 2


def test_mixed_size_places_small_vms_first_when_room_is_short():
    requests = requests_of(("grid_l4-24q", 1), ("grid_l4-4q", 4))
    result = run([l4_host("esxi-01", gpus=1)], requests, mode="mixed_size")
    assert result["stats"]["placed"] == 4 and result["unplaced"][0]["profile"] == "grid_l4-24q"


def test_mixed_size_maxima_are_the_placement_counts():
    # Equal-size mode runs six 4q on an L4, mixed-size mode four (placement IDs 0, 8, 12, 20): with an 8q beside
    # them, one GPU takes four vGPUs whichever order they are packed in.
    requests = requests_of(("grid_l4-4q", 5), ("grid_l4-8q", 1))
    assert run([l4_host("esxi-01", gpus=1)], requests)["stats"]["placed"] == 5
    mixed = run([l4_host("esxi-01", gpus=1)], requests, mode="mixed_size")
    assert mixed["stats"]["placed"] == 4 and not mixed["feasible"]


def min_bins(items, capacity):
    items = sorted(items, reverse=True)
    for bins in range(1, len(items) + 1):
        if _fits(items, [capacity] * bins):
            return bins
    return 0


def _fits(items, room):
    if not items:
        return True
    seen = set()
    for index, free in enumerate(room):
        if free >= items[0] and free not in seen:
            seen.add(free)
            room[index] -= items[0]
            if _fits(items[1:], room):
                room[index] += items[0]
                return True
            room[index] += items[0]
    return False


# ---- suggestions -------------------------------------------------------------------------------------------------

def test_suggests_recarving_a_lightly_used_gpu():
    gpus = [gpu(0, profile="grid_p40-8q", vms=["lonely"]), gpu(1, profile="grid_p40-8q", vms=["x"])]
    inventory = [host("esxi-01", gpus=gpus)]
    result = run(inventory, requests_of(("grid_p40-3q", 3)))
    assert result["stats"]["placed"] == 0
    assert ("3 request(s) for grid_p40-3q would fit if GPU 0000:3b:00.0 on esxi-01 (grid_p40-8q, 1 vGPU(s): lonely) "
            "were emptied and recarved; 2 free grid_p40-8q slot(s) on other GPUs can take its VMs.") in result[
        "suggestions"]


def test_suggests_more_gpus_when_nothing_else_helps():
    result = run([host("esxi-01", gpus=1)], requests_of(("grid_p40-8q", 7)))
    assert result["suggestions"] == [
        "P40: 4 request(s) do not fit (grid_p40-8q 4); every P40 GPU the plan may use is taken: about 2 more P40 "
        "GPU(s) would take them."]


def test_suggests_unpinning_when_other_hosts_have_room():
    inventory = [host("esxi-01", gpus=1), host("esxi-02", gpus=1)]
    result = run(inventory, requests_of(("grid_p40-24q", 2, "esxi-01")))
    assert ("vm-002 (pinned to esxi-01, which is full for grid_p40-24q) would fit elsewhere: 1 free slot(s) on other "
            "hosts.") in result["suggestions"]


def test_warns_about_the_performance_policy_on_hosts_with_several_new_profiles():
    inventory = [host("esxi-01", gpus=2, policy="performance")]
    result = run(inventory, requests_of(("grid_p40-8q", 1), ("grid_p40-3q", 1)), assignment_policy="consolidation")
    assert any(s.startswith("Hosts esxi-01 use the performance assignment policy") for s in result["suggestions"])
    calm = run([host("esxi-01", gpus=2)], requests_of(("grid_p40-8q", 1), ("grid_p40-3q", 1)))
    assert not any("performance assignment policy" in s for s in calm["suggestions"])


def test_names_idle_gpus_in_the_wrong_vgpu_mode():
    gpus = [gpu(0, "A100-40", vgpu_mode="multiInstanceGpu"), gpu(1, "A100-40", vgpu_mode="sameSize")]
    inventory = [host("esxi-01", model="A100-40", gpus=gpus)]
    result = run(inventory, requests_of(("grid_a100-40c", 2)))
    assert any("1 idle A100-40 GPU(s) run in the other vGPU mode" in s and "esxi-01 0000:3b:00.0" in s
               for s in result["suggestions"])


# ---- output and input --------------------------------------------------------------------------------------------

def test_output_shape_and_determinism():
    inventory = [host("esxi-01", gpus=2), host("esxi-02", gpus=2, supported_profiles=None)]
    requests = requests_of(("grid_p40-8q", 4), ("GRID P40-4Q", 2), ("p40-2q", 1))
    first = run(inventory, requests)
    assert first == plan(inventory, requests)
    assert set(first) == {"feasible", "placements", "gpus", "unplaced", "free_capacity", "suggestions", "notes",
                          "excluded", "stats"}
    assert set(first["placements"][0]) == {"vm", "profile", "host", "gpu", "count", "current", "placement_ids"}
    assert set(first["gpus"][0]) == {"host", "pci_id", "model", "vgpu_mode", "profile", "profiles", "used", "max",
                                     "free", "framebuffer_mib", "framebuffer_free_mib", "carved_by_plan", "vms"}
    assert set(r["profile"] for r in first["placements"]) == {"grid_p40-8q", "grid_p40-4q", "grid_p40-2q"}
    idle = [g for g in first["gpus"] if g["profile"] is None]
    assert all(g["used"] == 0 and g["max"] is None and g["vgpu_mode"] is None for g in idle)
    assert first["free_capacity"]["grid_p40-1q"] == sum(
        24 for g in first["gpus"] if g["profile"] is None)


@pytest.mark.parametrize("kwargs, message", [
    ({"inventory": {"hosts": []}}, "inventory must be the hosts list"),
    ({"inventory": [{"gpus": []}]}, "inventory[0] is not a host entry"),
    ({"inventory": [host("a"), host("a")]}, "lists host a twice"),
    ({"requests": [{"vm": "a", "profile": "grid_p40-8q"}, {"vm": "a", "profile": "grid_p40-8q"}]},
     "requests[1] (vm a) is listed twice (also requests[0])"),
    ({"requests": [{"vm": "a", "profile": "grid_p40-8x"}]}, "requests[0] (vm a): 'grid_p40-8x' is not a vGPU profile"),
    ({"requests": [{"vm": "a"}]}, "requests[0] (vm a) has no vGPU profile"),
    ({"requests": [{"profile": "grid_p40-8q"}]}, "requests[0] has no vm name"),
    ({"requests": [{"vm": "a", "profile": "grid_p40-8q", "count": 0}]}, "count must be an integer of at least 1"),
    ({"requests": [{"vm": "a", "profile": "grid_p40-8q", "count": True}]}, "count must be an integer"),
    ({"mode": "mixed"}, "mode 'mixed' is not known"),
    ({"assignment_policy": "spread"}, "assignment_policy 'spread' is not known"),
    ({"headroom": -1}, "headroom must be an integer of at least 0"),
    ({"headroom": {"grid_p40-8q": "x"}}, "headroom for grid_p40-8q must be an integer"),
])
def test_bad_input_fails_with_a_message_that_names_it(kwargs, message):
    arguments = {"inventory": [host("esxi-01")], "requests": requests_of(("grid_p40-8q", 1))}
    arguments.update(kwargs)
    with pytest.raises(InputError) as failure:
        plan(**arguments)
    assert message in str(failure.value)


def test_headroom_and_counts_accept_digit_strings():
    result = run([host("esxi-01", gpus=3)], [{"vm": "a", "profile": "grid_p40-24q", "count": "2"}],
                 headroom={"grid_p40-8q": "1"})
    assert result["feasible"] and result["free_capacity"]["grid_p40-8q"] == 3
    assert result["stats"]["gpus_reserved"] == 1 and result["stats"]["headroom_shortfall"] == {}
