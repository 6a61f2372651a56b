# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vm_passthrough against the lab vCenter, checked against the lab's ground truth (/lab/state)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from vsphere_direct import Direct

pyVmomi = pytest.importorskip("pyVmomi")
vim = pyVmomi.vim

HOST = "esxi-31.lab.local"
GPUS = ["0000:3b:00.0", "0000:5e:00.0", "0000:86:00.0", "0000:af:00.0"]
NVLINK_SETS = {HOST: [GPUS[:2], GPUS[2:]]}


def run_module(run_tasks, name, check=False, expect_failure=False, **options):
    run = run_tasks([{"name": name, "gpuops.vgpu.%s" % name: options}], check=check, expect_failure=expect_failure)
    return run.result(0)


def prepared(lab, run_tasks, firmware="efi"):
    """The host's four A100s enabled for passthrough, the VMs on the given firmware."""
    run_module(run_tasks, "host_passthrough", esxi_hostnames=[HOST], models=["A100-40"])
    direct = Direct(lab)
    try:
        for name in ("pt-vm-01", "pt-vm-02", "pt-vm-03"):
            direct.vm(name).ReconfigVM_Task(spec=vim.vm.ConfigSpec(firmware=firmware))
    finally:
        direct.close()


def held(lab, vm):
    return sorted(d["id"] for d in lab.vm(vm)["passthrough"])


def test_two_vms_each_get_a_complete_nvlink_pair_in_one_call(lab, run_tasks):
    prepared(lab, run_tasks)
    options = dict(vms=[{"name": "pt-vm-01", "gpus": 2}, {"name": "pt-vm-02", "gpus": 2}], nvlink=True,
                   nvlink_sets=NVLINK_SETS, power_on=True)
    before = lab.state()
    predicted = run_module(run_tasks, "vm_passthrough", check=True, **options)
    assert [vm["after"]["gpus"] for vm in predicted["vms"]] == [GPUS[:2], GPUS[2:]]
    assert lab.state() == before

    result = run_module(run_tasks, "vm_passthrough", **options)
    assert result["changed"] is True and all(vm["nvlink_sets_source"] == "inventory" for vm in result["vms"])
    assert held(lab, "pt-vm-01") == GPUS[:2] and held(lab, "pt-vm-02") == GPUS[2:]
    for name, pair in (("pt-vm-01", GPUS[:2]), ("pt-vm-02", GPUS[2:])):
        vm = lab.vm(name)
        assert vm["power_state"] == "poweredOn" and vm["memory_reservation_mb"] == vm["memory_mb"]
        assert sorted(d["gpu"] for d in vm["passthrough"]) == pair
    assert run_module(run_tasks, "vm_passthrough", **options)["changed"] is False

    removed = run_module(run_tasks, "vm_passthrough", vms=[{"name": "pt-vm-01"}], state="absent", power="power_off")
    assert removed["changed"] is True and lab.vm("pt-vm-01")["passthrough"] == []
    assert [g["passthrough_vm"] for g in lab.host(HOST)["gpus"]] == [None, None, "pt-vm-02", "pt-vm-02"]


def refused(lab, run_tasks, want, **options):
    before = lab.state()
    result = run_module(run_tasks, "vm_passthrough", expect_failure=True, **options)
    assert want in result["msg"], result["msg"]
    assert lab.state() == before


def test_each_refusal_leaves_the_lab_unchanged(lab, run_tasks):
    prepared(lab, run_tasks)
    refused(lab, run_tasks, "has 4 free for passthrough", vms=[{"name": "pt-vm-01", "gpus": 5}])
    refused(lab, run_tasks, "would get half an NVLink set", vms=[{"name": "pt-vm-01", "devices": GPUS[1:3]}],
            nvlink=True, nvlink_sets=NVLINK_SETS)
    refused(lab, run_tasks, "cannot give that", vms=[{"name": "pt-vm-01", "gpus": 3}], nvlink=True,
            nvlink_sets=NVLINK_SETS)
    refused(lab, run_tasks, "has no NVIDIA GPU 0000:99:00.0", vms=[{"name": "pt-vm-01", "devices": ["99:00.0"]}])
    refused(lab, run_tasks, "already given to another VM of this request",
            vms=[{"name": "pt-vm-01", "devices": GPUS[:1]}, {"name": "pt-vm-02", "devices": GPUS[:1]}])
    refused(lab, run_tasks, "passthrough needs all of it and reserve_memory is false",
            vms=[{"name": "pt-vm-01", "gpus": 1}], reserve_memory=False)
    direct = Direct(lab)
    try:
        direct.vm("pt-vm-03").ReconfigVM_Task(spec=vim.vm.ConfigSpec(firmware="bios"))
        direct.power_on("pt-vm-02")
    finally:
        direct.close()
    refused(lab, run_tasks, "boots with bios firmware", vms=[{"name": "pt-vm-03", "gpus": 1}])
    refused(lab, run_tasks, "power is never: pt-vm-02", vms=[{"name": "pt-vm-02", "gpus": 1}])


def test_a_gpu_running_vgpus_is_refused(lab, run_tasks):
    direct = Direct(lab)
    try:
        direct.run_vgpu("esxi-12.lab.local", "mixed-vm-02", "grid_a100-4c")
    finally:
        direct.close()
    refused(lab, run_tasks, "runs vGPUs", vms=[{"name": "ml-vm-01", "devices": ["0000:3b:00.0"]}])
