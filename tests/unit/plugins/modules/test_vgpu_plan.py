# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vgpu_plan's real main(): argument handling, check mode, warnings and failures, on an inventory as gpu_info
returns it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible.module_utils import basic
from ansible_collections.gpuops.vgpu.plugins.modules import vgpu_plan
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_args import patch_module_args


def gpu_info_host(name, gpus, policy="consolidation"):
    """A host entry shaped exactly as gpu_info returns it."""
    return {
        "name": name, "moid": "host-%s" % name[-2:], "cluster": "gpu-cluster", "datacenter": "lab-dc",
        "connection_state": "connected", "maintenance_mode": False,
        "graphics_config": {"default_graphics_type": "sharedDirect", "assignment_policy": policy,
                            "devices": [{"pci_id": g["pci_id"], "graphics_type": "sharedDirect", "vgpu_mode": None}
                                        for g in gpus]},
        "gpus": gpus,
        "supported_profiles": [
            {"name": "grid_p40-%s" % size, "framebuffer_mib": fb * 1024, "series": "Q", "cuda": True,
             "max_per_gpu": 24 // fb, "gpus": len(gpus), "capacity": 24 // fb * len(gpus), "free": None,
             "known": True} for size, fb in (("3q", 3), ("8q", 8), ("24q", 24))],
    }


def p40(pci_id, profile=None, vms=()):
    return {"pci_id": pci_id, "device_name": "Tesla P40", "vendor": "NVIDIA Corporation", "model": "P40",
            "memory_mib": 24576, "graphics_type": "sharedDirect", "configured_graphics_type": "sharedDirect",
            "xorg_restart_pending": False, "vgpu_mode": None, "profile": profile,
            "profiles": [profile] if profile else [], "vms": list(vms), "used": len(vms),
            "max": {"grid_p40-8q": 3}.get(profile), "free": None}


INVENTORY = [
    gpu_info_host("esxi-01.lab.local", [p40("0000:3b:00.0", "grid_p40-8q", ["gpu-vm-01"])]),
    gpu_info_host("esxi-02.lab.local", [p40("0000:3b:00.0")]),
    gpu_info_host("esxi-03.lab.local", [p40("0000:3b:00.0")]),
]


def run(args, capsys, check_mode=False):
    if check_mode:
        args = dict(args, _ansible_check_mode=True)
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exited:
            vgpu_plan.main()
    return exited.value.code, json.loads(capsys.readouterr().out)


@pytest.fixture(autouse=True)
def warned(monkeypatch):
    """What the module passes to warn(): where ansible-core puts a warning depends on what the process loaded."""
    calls = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, warning: calls.append(warning))
    return calls


def test_plans_and_never_reports_a_change(capsys, warned):
    requests = [{"vm": "gpu-vm-01", "profile": "grid_p40-8q"}, {"vm": "gpu-vm-02", "profile": "grid_p40-8q"}] + [
        {"vm": "gpu-vm-%02d" % n, "profile": "grid_p40-3q"} for n in range(3, 9)]
    code, result = run({"inventory": INVENTORY, "requests": requests}, capsys)
    assert code == 0 and result["changed"] is False and result["feasible"] is True
    where = dict((p["vm"], (p["host"], p["current"])) for p in result["placements"])
    assert where["gpu-vm-01"] == ("esxi-01.lab.local", True)
    assert where["gpu-vm-02"] == ("esxi-01.lab.local", False), "the running 8Q GPU takes the second 8Q VM"
    assert set(where[vm][0] for vm in where if vm not in ("gpu-vm-01", "gpu-vm-02")) == {"esxi-02.lab.local"}
    assert result["stats"]["gpus_used"] == result["stats"]["gpus_used_lower_bound"] == 2
    assert result["free_capacity"] == {"grid_p40-24q": 1, "grid_p40-3q": 10, "grid_p40-8q": 4}
    assert warned == [] and result["notes"] == []


def test_check_mode_gives_the_same_plan(capsys):
    args = {"inventory": INVENTORY, "requests": [{"vm": "a", "profile": "grid_p40-24q", "count": 2}],
            "symmetric": True, "headroom": {"grid_p40-24q": 0}}
    _code, normal = run(args, capsys)
    _code, checked = run(args, capsys, check_mode=True)
    for key in ("placements", "gpus", "unplaced", "free_capacity", "suggestions", "stats"):
        assert normal[key] == checked[key]
    # Two free P40s exist, but on two hosts: a VM's vGPUs all run on one host.
    assert normal["placements"] == [] and normal["unplaced"][0]["reason"] == "no_capacity"
    assert normal["unplaced"][0]["message"].startswith("The VM needs 2 grid_p40-24q vGPUs on one host")


def test_options_reach_the_planner(capsys, warned):
    requests = [{"vm": "x%d" % n, "profile": "grid_p40-3q"} for n in range(4)]
    _code, packed = run({"inventory": INVENTORY, "requests": requests, "assignment_policy": "consolidation",
                         "headroom": "2", "respect_current": False}, capsys)
    assert packed["stats"]["gpus_carved_by_plan"] == 1 and packed["free_capacity"]["grid_p40-3q"] == 20
    assert warned == packed["notes"] == [
        "Planned as if no vGPU ran (respect_current=false): the 1 running vGPU(s) must be powered off before this "
        "plan can be applied."]
    _code, mixed = run({"inventory": INVENTORY, "requests": requests, "mode": "mixed_size"}, capsys)
    assert mixed["feasible"] and all(g["vgpu_mode"] != "mixedSize" for g in mixed["gpus"]), "P40s stay equal-size"


def test_unplaced_requests_are_returned_not_failed(capsys):
    requests = [{"vm": "a", "profile": "grid_p40-3q", "host": "esxi-09.lab.local"},
                {"vm": "b", "profile": "grid_m60-8q"}]
    code, result = run({"inventory": INVENTORY, "requests": requests}, capsys)
    assert code == 0 and result["feasible"] is False
    assert [u["reason"] for u in result["unplaced"]] == ["pinned_host_unavailable", "unknown_profile"]


@pytest.mark.parametrize("args, message", [
    ({"requests": [{"vm": "a"}]}, "missing required arguments: profile found in requests"),
    ({"requests": [{"vm": "a", "profile": "grid_p40-8q", "count": "two"}]}, "count"),
    ({"requests": [{"vm": "a", "profile": "8q"}]}, "requests[0] (vm a): '8q' is not a vGPU profile"),
    ({"requests": [{"vm": "a", "profile": "grid_p40-8q"}, {"vm": "a", "profile": "grid_p40-3q"}]},
     "requests[1] (vm a) is listed twice"),
    ({"mode": "any"}, "value of mode must be one of: equal_size, mixed_size"),
    ({"headroom": [1]}, "headroom must be an integer of at least 0"),
])
def test_bad_input_fails_before_planning(capsys, args, message):
    arguments = {"inventory": INVENTORY, "requests": [{"vm": "a", "profile": "grid_p40-8q"}]}
    arguments.update(args)
    code, result = run(arguments, capsys)
    assert code == 1 and result["failed"] is True
    assert message in result["msg"]
