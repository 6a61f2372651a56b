# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vgpu_differences: from one gpu_info read, what the vgpu_assign role's change steps would act on."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.vgpu.plugins.filter.inventory import vgpu_differences
from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._planner import kept_in_place, plan
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._vgpu_differences import differences

P40_PROFILES = [{"name": name} for name in ("grid_p40-8q", "grid_p40-4q", "grid_p40-3q")]
REQUESTS = [{"name": "train-1", "profile": "grid_p40-8q"}, {"name": "light-1", "profile": "grid_p40-3q"}]


def gpu(pci_id, profile=None, vms=()):
    return {"pci_id": pci_id, "model": "P40", "graphics_type": "sharedDirect",
            "configured_graphics_type": "sharedDirect", "vgpu_mode": None, "profile": profile,
            "profiles": [profile] if profile else [], "vms": list(vms), "used": len(vms)}


def host(name, gpus, cluster="gpu-cluster"):
    return {"name": name, "cluster": cluster, "connection_state": "connected", "maintenance_mode": False,
            "graphics_config": {"assignment_policy": "performance"}, "gpus": gpus,
            "supported_profiles": P40_PROFILES}


def vm(name, host_name, profiles, power_state="poweredOn", locked=True):
    return {"name": name, "host": host_name, "power_state": power_state, "memory_reservation_locked_to_max": locked,
            "vgpus": [{"key": 13000 + n, "profile": profile} for n, profile in enumerate(profiles)]}


def converged():
    """train-1 runs its 8Q on esxi-01's P40, light-1 its 3Q on esxi-02's; esxi-03 is idle."""
    return {
        "hosts": [host("esxi-01", [gpu("0000:3b:00.0", "grid_p40-8q", ["train-1"])]),
                  host("esxi-02", [gpu("0000:3b:00.0", "grid_p40-3q", ["light-1"])]),
                  host("esxi-03", [gpu("0000:3b:00.0")])],
        "vms": [vm("train-1", "esxi-01", ["grid_p40-8q"]), vm("light-1", "esxi-02", ["grid_p40-3q"])],
        "power_records": [],
    }


def test_vms_as_asked_leave_nothing_to_do_planned_or_not():
    assert differences(converged(), REQUESTS, ["gpu-cluster"], running=True) == []
    assert differences(converged(), REQUESTS) == []


def test_what_vm_vgpu_would_change_is_named_per_vm():
    read = converged()
    read["vms"] = [vm("train-1", "esxi-01", []), vm("light-1", "esxi-02", ["grid_p40-3q", "grid_p40-3q"])]
    assert differences(read, REQUESTS) == ["train-1 has no vGPU, wants grid_p40-8q",
                                           "light-1 has grid_p40-3q, grid_p40-3q, wants grid_p40-3q"]
    read["vms"] = [vm("train-1", "esxi-01", ["grid_p40-4q"]), vm("light-1", "esxi-02", ["grid_p40-3q"], locked=False)]
    assert differences(read, REQUESTS) == ["train-1 has grid_p40-4q, wants grid_p40-8q",
                                           "light-1 has grid_p40-3q without all its memory reserved"]


def test_a_vm_that_is_off_differs_only_when_it_is_to_run():
    read = converged()
    read["vms"][1]["power_state"] = "poweredOff"
    read["hosts"][1]["gpus"] = [gpu("0000:3b:00.0")]
    assert differences(read, REQUESTS) == []
    assert differences(read, REQUESTS, running=True) == ["light-1 is poweredOff, wants to run"]


def test_a_vm_that_is_off_with_its_profile_is_kept_unless_replanned():
    read = converged()
    read["vms"][1]["power_state"] = "poweredOff"
    read["hosts"][1]["gpus"] = [gpu("0000:3b:00.0")]
    assert differences(read, REQUESTS, ["gpu-cluster"]) == []
    assert differences(read, REQUESTS, ["gpu-cluster"], replan=True) == [
        "light-1 does not run where the plan of cluster gpu-cluster keeps it"]
    assert vgpu_differences(read, REQUESTS, ["gpu-cluster"], replan="yes") == [
        "light-1 does not run where the plan of cluster gpu-cluster keeps it"]
    assert differences(read, REQUESTS, ["other-cluster"]) == [
        "the plan cannot start: cluster(s) other-cluster not in the GPU inventory (known: gpu-cluster)."]


def test_the_plan_would_place_a_vm_that_lacks_its_profile():
    read = converged()
    read["vms"][1] = vm("light-1", "esxi-02", [], power_state="poweredOff")
    read["hosts"][1]["gpus"] = [gpu("0000:3b:00.0")]
    assert differences(read, REQUESTS, ["gpu-cluster"]) == [
        "light-1 has no vGPU, wants grid_p40-3q",
        "light-1 does not run where the plan of cluster gpu-cluster keeps it"]


def test_vms_outside_the_planned_clusters_are_not_planned():
    read = converged()
    read["hosts"][1]["cluster"] = "light-cluster"
    read["vms"][1]["power_state"] = "poweredOff"
    read["hosts"][1]["gpus"] = [gpu("0000:3b:00.0")]
    assert differences(read, REQUESTS, ["gpu-cluster"]) == []


def test_every_power_record_counts_requested_or_not():
    read = converged()
    read["power_records"] = [
        {"name": "batch-9", "moid": "vm-9", "host": "esxi-03", "run": "r-1", "by": "ops@ctl02",
         "recorded_at": "2026-11-28T09:00:00.000000Z", "problem": None},
        {"name": "train-1", "moid": "vm-1", "host": "esxi-01", "run": None, "by": None, "recorded_at": None,
         "problem": "it lacks want"}]
    assert differences(read, REQUESTS) == [
        "batch-9 carries the power record of run r-1 (ops@ctl02, 2026-11-28T09:00:00.000000Z): vm_vgpu finishes it",
        "train-1 carries a power record that cannot be read (it lacks want)"]


def test_a_read_without_power_records_is_refused():
    read = converged()
    del read["power_records"]
    with pytest.raises(ValueError, match="read it with power_records: true"):
        differences(read, REQUESTS)
    with pytest.raises(AnsibleFilterError, match="vgpu_differences: the gpu_info result holds no power_records"):
        vgpu_differences(read, REQUESTS)


def test_what_vm_vgpu_or_the_plan_would_refuse_counts_so_that_they_say_it():
    read = converged()
    read["hosts"][0]["supported_profiles"] = [{"name": "grid_p40-4q"}]
    read["vms"].pop()
    assert differences(read, REQUESTS) == ["train-1: its host esxi-01 does not offer grid_p40-8q",
                                           "light-1 was not read"]
    odd = converged()
    odd["vms"][0]["vgpus"] = [{"key": 1, "profile": "nonsense"}]
    wanted = [{"name": "train-1", "profile": "nonsense"}]
    odd["hosts"][0]["supported_profiles"] = [{"name": "nonsense"}]
    assert [line.split(":")[0] for line in differences(odd, wanted, ["gpu-cluster"], replan=True)] == [
        "the plan of cluster gpu-cluster refuses its input"]


def test_kept_in_place_is_what_the_plan_keeps():
    read = converged()
    requests = [{"vm": "train-1", "profile": "grid_p40-8q"}, {"vm": "light-1", "profile": "grid_p40-8q"}]
    assert kept_in_place(read["hosts"], requests) == ["train-1"]
    placements = plan(copy.deepcopy(read["hosts"]), requests)["placements"]
    assert [(p["vm"], p["current"]) for p in placements] == [("train-1", True), ("light-1", False)]


def test_the_filter_reads_running_as_ansible_does():
    read = converged()
    read["vms"][1]["power_state"] = "poweredOff"
    read["hosts"][1]["gpus"] = [gpu("0000:3b:00.0")]
    assert vgpu_differences(read, REQUESTS, running="yes") == ["light-1 is poweredOff, wants to run"]
    assert vgpu_differences(read, REQUESTS, None, "false") == []
