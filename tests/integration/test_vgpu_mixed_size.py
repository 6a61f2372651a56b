# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mixed-size vGPU against the lab vCenter: its 8.0.3 vGPU API read by plain pyVmomi, host_graphics switching an
L40S between the modes, and vgpu_plan's mixed-size plans powered on (or refused) by the lab's placement rules.

The default topology's ai-cluster has esxi-21.lab.local with one NVIDIA L40S (48 GB) and VMs ai-vm-01..03.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest

from conftest import ROOT
from vsphere_direct import Direct

pyVmomi = pytest.importorskip("pyVmomi")
vim = pyVmomi.vim

sys.path.insert(0, os.path.join(ROOT, ".tmp", "collections"))
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog  # noqa: E402

AI_HOST = "esxi-21.lab.local"
P40_HOST = "esxi-01.lab.local"
GPU = "0000:3b:00.0"


@pytest.fixture
def direct(lab):
    client = Direct(lab)
    yield client
    client.close()


def tasks(run_tasks, *steps, **kwargs):
    return run_tasks([{"name": name, "gpuops.vgpu.%s" % name: options} for name, options in steps], **kwargs)


def test_plain_pyvmomi_reads_vgpu_mode_profile_info_and_config_target(lab, direct):
    direct.shared_direct(P40_HOST)
    direct.set_vgpu_mode(AI_HOST, GPU, "mixedSize")
    modes = direct.graphics_modes()
    assert modes[P40_HOST] == {GPU: "sameSize"}
    assert modes[AI_HOST] == {GPU: "mixedSize"}
    assert modes["esxi-11.lab.local"] == {GPU: "none", "0000:5e:00.0": "none"}  # still basic graphics
    for host in (P40_HOST, AI_HOST):
        assert lab.host(host)["gpus"][0]["vgpu_mode"] == modes[host][GPU]

    for host, model in ((P40_HOST, "P40"), (AI_HOST, "L40S")):
        info = direct.vgpu_profile_info(host)
        assert [p.profileName for p in info] == lab.host(host)["supported_profiles"]
        for profile in info:
            facts = _catalog.parse_profile(profile.profileName)
            assert facts["model"] == model
            assert (profile.fbSizeInGib, profile.profileSharing, profile.profileClass, profile.deviceVendorId) == (
                facts["framebuffer_mib"] // 1024, facts["sharing"], facts["profile_class"], 0x10DE)
    l40s = dict((p.profileName, p) for p in direct.vgpu_profile_info(AI_HOST))
    assert (l40s["grid_l40s-16c"].fbSizeInGib, l40s["grid_l40s-16c"].profileClass) == (16, "compute")

    target = direct.config_target("ai-cluster")
    assert [p.profileName for p in target.vgpuProfileInfo] == lab.host(AI_HOST)["supported_profiles"]
    assert [(d.deviceName, d.maxFbSizeInGib, d.timeSlicedCapable, d.migCapable, d.computeProfileCapable)
            for d in target.vgpuDeviceInfo] == [("NVIDIA L40S", 48, True, False, True)]
    p40 = direct.config_target("gpu-cluster", P40_HOST)
    assert [d.deviceName for d in p40.vgpuDeviceInfo] == ["Tesla P40"]
    assert set(p.profileName for p in p40.vgpuProfileInfo) == set(lab.host(P40_HOST)["supported_profiles"])


def test_gpu_info_takes_profile_facts_from_vcenter_in_few_requests(lab, run_tasks, direct):
    direct.set_vgpu_mode(AI_HOST, GPU, "mixedSize")
    lab.reset_stats()
    result = tasks(run_tasks, ("gpu_info", {"esxi_hostnames": [AI_HOST, P40_HOST]})).result(0)
    by_method = lab.stats()["by_method"]
    assert by_method["QueryConfigTarget"] == 2  # one per compute resource: ai-cluster and gpu-cluster
    assert by_method["RetrievePropertiesEx"] == 1 and "RetrieveVgpuProfileInfo" not in by_method
    hosts = dict((host["name"], host) for host in result["hosts"])
    assert hosts[AI_HOST]["gpus"][0]["vgpu_mode"] == lab.host(AI_HOST)["gpus"][0]["vgpu_mode"] == "mixedSize"
    assert hosts[P40_HOST]["gpus"][0]["vgpu_mode"] == lab.host(P40_HOST)["gpus"][0]["vgpu_mode"] == "none"
    profiles = dict((p["name"], p) for p in hosts[AI_HOST]["supported_profiles"])
    assert all(p["facts_source"] == "vcenter" for p in profiles.values())
    eight = profiles["grid_l40s-8c"]
    assert (eight["framebuffer_mib"], eight["sharing"], eight["profile_class"]) == (8192, "timeSliced", "compute")
    assert (eight["max_per_gpu"], eight["mixed_size_max"], eight["free"]) == (6, 4, 4)  # idle GPU, mixed-size mode


def host_graphics(run_tasks, check=False, expect_failure=False, **options):
    return tasks(run_tasks, ("host_graphics", options), check=check, expect_failure=expect_failure).result(0)


def test_host_graphics_switches_the_l40s_to_mixed_size_and_back(lab, run_tasks, direct):
    direct.shared_direct(AI_HOST)
    mixed = {"esxi_hostnames": [AI_HOST], "devices": [{"pci_id": GPU, "vgpu_mode": "mixedSize"}]}
    before = lab.state()

    predicted = host_graphics(run_tasks, check=True, **mixed)
    assert predicted["changed"] is True and predicted["hosts"][0]["after"]["gpus"][0]["vgpu_mode"] == "mixedSize"
    assert lab.state() == before

    restarts = lab.host(AI_HOST)["xorg_restarts"]
    changed = host_graphics(run_tasks, **mixed)
    truth = lab.host(AI_HOST)
    assert changed["changed"] is True
    assert truth["graphics_config"]["device_types"] == [
        {"device_id": GPU, "graphics_type": "sharedDirect", "vgpu_mode": "mixedSize"}]
    assert truth["gpus"][0]["vgpu_mode"] == "mixedSize" and truth["xorg_restarts"] == restarts + 1
    assert changed["hosts"][0]["after"]["gpus"][0]["vgpu_mode"] == "mixedSize"
    assert not [w for w in changed.get("warnings", []) if "did not take" in w]

    again = host_graphics(run_tasks, **mixed)
    assert again["changed"] is False and lab.host(AI_HOST)["xorg_restarts"] == restarts + 1

    direct.add_vgpu("ai-vm-01", "grid_l40s-16c")
    direct.power_on("ai-vm-01")
    busy = lab.state()
    same = {"esxi_hostnames": [AI_HOST], "devices": [{"pci_id": GPU, "vgpu_mode": "sameSize"}]}
    refused = host_graphics(run_tasks, expect_failure=True, force=True, **same)
    for word in ("vGPU mode", AI_HOST, GPU, "NVIDIA L40S", "ai-vm-01", "Power those VMs off"):
        assert word in refused["msg"]
    assert lab.state() == busy
    # The lab refuses the same change when a client sends it anyway.
    with pytest.raises(vim.fault.InvalidState) as fault:
        direct.set_vgpu_mode(AI_HOST, GPU, "sameSize", restart=False)
    assert "ai-vm-01" in fault.value.msg
    assert lab.state() == busy

    direct.power_off("ai-vm-01")
    back = host_graphics(run_tasks, **same)
    assert back["changed"] is True and lab.host(AI_HOST)["gpus"][0]["vgpu_mode"] == "sameSize"


def test_host_graphics_refuses_mixed_size_on_a_p40(lab, run_tasks):
    before = lab.state()
    result = host_graphics(run_tasks, expect_failure=True, cluster="gpu-cluster",
                           devices=[{"pci_id": GPU, "vgpu_mode": "mixedSize"}])
    for word in ("esxi-01.lab.local", GPU, "Tesla P40", "cannot run vgpu_mode mixedSize", "L40S"):
        assert word in result["msg"]
    assert lab.state() == before


def plan(lab, run_tasks, requests):
    """gpu_info of the L40S host, then vgpu_plan in mixed-size mode, as a playbook chains them."""
    run = run_tasks([
        {"name": "inventory", "gpuops.vgpu.gpu_info": {"esxi_hostnames": [AI_HOST]}, "register": "inventory"},
        {"name": "plan", "gpuops.vgpu.vgpu_plan": {
            "inventory": "{{ inventory.hosts }}", "requests": requests, "mode": "mixed_size"}},
    ])
    return run.result(1)


def test_a_feasible_mixed_size_plan_powers_on_at_its_placement_ids(lab, run_tasks, direct):
    direct.set_vgpu_mode(AI_HOST, GPU, "mixedSize")
    requests = [{"vm": "ai-vm-01", "profile": "grid_l40s-8c"}, {"vm": "ai-vm-02", "profile": "grid_l40s-16q"},
                {"vm": "ai-vm-03", "profile": "grid_l40s-24c"}]
    result = plan(lab, run_tasks, requests)
    assert result["feasible"] is True
    planned = dict((p["vm"], (p["gpu"], p["profile"], p["placement_ids"])) for p in result["placements"])
    # Largest first: 24c at 0; 16q cannot start at 0, so 32; 8c overlaps the 24c at 0 and 16, so 24: 48 GB full.
    assert planned == {"ai-vm-03": (GPU, "grid_l40s-24c", [0]), "ai-vm-02": (GPU, "grid_l40s-16q", [32]),
                       "ai-vm-01": (GPU, "grid_l40s-8c", [24])}
    # Powered on in request order instead, the 8c would take 0 and leave the 24c no placement.

    # The filter orders the entries by placement ID: vSphere then places each vGPU where the plan put it.
    applied = run_tasks([{"name": "vm_vgpu", "gpuops.vgpu.vm_vgpu": {
        "vms": "{{ vms | gpuops.vgpu.apply_plan(plan) }}", "power_on": True, "parallel": 1}}],
        extra_vars={"plan": result, "vms": [{"name": r["vm"], "profile": r["profile"]} for r in requests]})
    assert applied.result(0)["changed"] is True
    truth = lab.host(AI_HOST)["gpus"][0]
    assert truth["vgpu_mode"] == "mixedSize" and sorted(truth["vms"]) == ["ai-vm-01", "ai-vm-02", "ai-vm-03"]
    for vm, (gpu, profile, ids) in planned.items():
        state = lab.vm(vm)
        assert state["power_state"] == "poweredOn"
        assert [(v["profile"], v["gpu"], v["placement_id"]) for v in state["vgpus"]] == [(profile, gpu, ids[0])]


@pytest.mark.parametrize("profiles, why", [
    (("grid_l40s-24c", "grid_l40s-16c", "grid_l40s-16c"), "56 GB for a 48 GB GPU"),
    (("grid_l40s-16c", "grid_l40s-16c", "grid_l40s-16c"), "48 GB fit, but 16 GB types have two placement IDs"),
])
def test_a_plan_vgpu_plan_refuses_fails_in_the_lab_too(lab, run_tasks, direct, profiles, why):
    direct.set_vgpu_mode(AI_HOST, GPU, "mixedSize")
    vms = ["ai-vm-01", "ai-vm-02", "ai-vm-03"]
    result = plan(lab, run_tasks, [{"vm": vm, "profile": p} for vm, p in zip(vms, profiles)])
    assert result["feasible"] is False, why
    assert [(u["vm"], u["reason"]) for u in result["unplaced"]] == [("ai-vm-03", "no_capacity")], why

    for vm, profile in zip(vms, profiles):
        direct.add_vgpu(vm, profile)
    direct.power_on("ai-vm-01")
    direct.power_on("ai-vm-02")
    with pytest.raises(vim.fault.InsufficientGraphicsResourcesFault) as fault:
        direct.power_on("ai-vm-03")
    assert "has no free placement for grid_l40s-16c" in fault.value.msg, why
    assert [lab.vm(vm)["power_state"] for vm in vms] == ["poweredOn", "poweredOn", "poweredOff"]
    assert sorted(lab.host(AI_HOST)["gpus"][0]["vms"]) == ["ai-vm-01", "ai-vm-02"]
