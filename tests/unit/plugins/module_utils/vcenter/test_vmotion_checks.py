# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vGPU vMotion preconditions on gpu_info-shaped data: each refusal names what is missing."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._vmotion_checks import plan_moves, refusal_message

P40_8Q = {"name": "grid_p40-8q", "max_per_gpu": 3, "mixed_size_max": None}
P40_2Q = {"name": "grid_p40-2q", "max_per_gpu": 12, "mixed_size_max": None}


def gpu(vms=(), profile=None, graphics_type="sharedDirect", vgpu_mode="sameSize", model="P40", pci="0000:3b:00.0"):
    return {"pci_id": pci, "model": model, "graphics_type": graphics_type, "vgpu_mode": vgpu_mode,
            "profiles": [profile] if profile else [], "vms": list(vms), "used": len(vms)}


def host(name, gpus, cluster="gpu-cluster", **extra):
    entry = {"name": name, "cluster": cluster, "connection_state": "connected", "maintenance_mode": False,
             "gpus": gpus, "supported_profiles": [P40_8Q, P40_2Q]}
    entry.update(extra)
    return entry


def vm(name="gpu-vm-01", host_name="esxi-01", profile="grid_p40-8q", count=1):
    return {"name": name, "host": host_name, "power_state": "poweredOn",
            "vgpus": [{"key": 100 + i, "profile": profile} for i in range(count)]}


def lab(*others):
    return [host("esxi-01", [gpu(["gpu-vm-01"], "grid_p40-8q")])] + list(others)


def test_an_idle_gpu_of_the_same_model_takes_the_vm_and_unknown_facts_are_listed():
    plan, = plan_moves([vm()], lab(host("esxi-02", [gpu()])), hot_migrate=True)
    assert plan["target"] == "esxi-02" and plan["refused"] == []
    assert plan["unchecked"] == ["ecc", "driver"]
    assert refusal_message([plan]) is None


def test_hotmigrate_off_is_named_even_when_a_target_fits():
    plan, = plan_moves([vm()], lab(host("esxi-02", [gpu()])), hot_migrate=False)
    assert plan["target"] is None
    assert "vgpu.hotmigrate.enabled is false" in refusal_message([plan])


def test_a_gpu_carved_for_another_profile_is_refused_naming_the_host_and_the_profile():
    plan, = plan_moves([vm()], lab(host("esxi-02", [gpu(["gpu-vm-04"], "grid_p40-2q")])), hot_migrate=True)
    message = refusal_message([plan])
    assert plan["target"] is None
    assert "esxi-02" in message and "carved for grid_p40-2q" in message


def test_graphics_type_vgpu_mode_and_model_must_match():
    hosts = lab(host("esxi-02", [gpu(graphics_type="shared")]), host("esxi-03", [gpu(vgpu_mode="mixedSize")]),
                host("esxi-04", [gpu(model="T4")]))
    plan, = plan_moves([vm()], hosts, hot_migrate=True)
    assert plan["candidates"]["esxi-02"].endswith("is in graphics type shared, not sharedDirect")
    assert "vGPU mode mixedSize" in plan["candidates"]["esxi-03"]
    assert plan["candidates"]["esxi-04"] == "has no P40 GPU"


def test_no_room_on_a_full_gpu_and_the_second_vm_sees_the_first_ones_slot():
    full = host("esxi-02", [gpu(["a", "b", "c"], "grid_p40-8q")])
    plan, = plan_moves([vm()], lab(full), hot_migrate=True)
    assert "has no room: 3 of 3" in plan["candidates"]["esxi-02"]
    two_free = host("esxi-02", [gpu(["a", "b"], "grid_p40-8q")])
    hosts = [host("esxi-01", [gpu(["gpu-vm-01", "gpu-vm-02"], "grid_p40-8q")]), two_free]
    first, second = plan_moves([vm(), vm("gpu-vm-02")], hosts, hot_migrate=True)
    assert first["target"] == "esxi-02" and second["target"] is None
    assert "no room" in second["candidates"]["esxi-02"]


def test_hosts_outside_the_cluster_disconnected_or_in_maintenance_are_not_targets():
    hosts = lab(host("esxi-02", [gpu()], maintenance_mode=True), host("esxi-03", [gpu()], connection_state="notResponding"),
                host("esxi-11", [gpu()], cluster="mixed-cluster"))
    plan, = plan_moves([vm()], hosts, hot_migrate=True)
    assert plan["candidates"] == {"esxi-02": "is in maintenance mode", "esxi-03": "is notResponding"}
    assert "no host of cluster gpu-cluster can take it" in refusal_message([plan])


def test_a_named_target_outside_the_cluster_is_refused():
    plan, = plan_moves([vm()], lab(host("esxi-11", [gpu()], cluster="other")), hot_migrate=True,
                       targets={"gpu-vm-01": "esxi-11"})
    assert "target host esxi-11 is not another host of cluster gpu-cluster" in plan["refused"][0]


def test_ecc_must_be_alike_where_known():
    facts = {"esxi-01": {"ecc": True}, "esxi-02": {"ecc": False}, "esxi-03": {"ecc": True}}
    hosts = lab(host("esxi-02", [gpu()]), host("esxi-03", [gpu()]))
    plan, = plan_moves([vm()], hosts, hot_migrate=True, host_facts=facts)
    assert plan["target"] == "esxi-03" and plan["unchecked"] == ["driver"]
    assert "ECC off" in plan["candidates"]["esxi-02"]
    plan, = plan_moves([vm()], hosts[:2], hot_migrate=True, host_facts=facts)
    assert "keep ECC alike" in refusal_message([plan])


def test_the_targets_vgpu_manager_must_accept_the_guest_driver():
    facts = {"esxi-02": {"driver": "525.105.14"}, "esxi-03": {"driver": "535.54.06"}}
    hosts = lab(host("esxi-02", [gpu()]), host("esxi-03", [gpu()]))
    plan, = plan_moves([vm()], hosts, hot_migrate=True, host_facts=facts, guest_drivers={"gpu-vm-01": "535.54.03"})
    assert plan["target"] == "esxi-03"
    assert "does not accept guest driver 535.54.03" in plan["candidates"]["esxi-02"]


def test_a_standalone_host_has_nowhere_to_go():
    hosts = [host("esxi-sa", [gpu(["gpu-vm-01"], "grid_p40-8q")], cluster=None)]
    plan, = plan_moves([vm(host_name="esxi-sa")], hosts, hot_migrate=True)
    assert "standalone" in plan["refused"][0]
