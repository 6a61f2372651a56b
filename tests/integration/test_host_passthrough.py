# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_passthrough against the lab vCenter, checked against the lab's ground truth (/lab/state)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from vsphere_direct import Direct

pyVmomi = pytest.importorskip("pyVmomi")

HPC_HOST = "esxi-31.lab.local"
HPC_GPUS = ["0000:3b:00.0", "0000:5e:00.0", "0000:86:00.0", "0000:af:00.0"]


def host_passthrough(run_tasks, check=False, expect_failure=False, **options):
    run = run_tasks([{"name": "host_passthrough", "gpuops.vgpu.host_passthrough": options}], check=check,
                    expect_failure=expect_failure)
    return run.result(0)


def passthru(lab, host=HPC_HOST):
    return dict((gpu["pci_id"], (gpu["passthru_enabled"], gpu["passthru_active"])) for gpu in lab.host(host)["gpus"])


def test_passthrough_on_by_model_check_mode_change_and_rerun(lab, run_tasks):
    before = lab.state()
    predicted = host_passthrough(run_tasks, check=True, cluster="hpc-cluster", models=["A100-40"])
    assert predicted["changed"] is True and predicted["hosts"][0]["changed_devices"] == HPC_GPUS
    assert lab.state() == before

    result = host_passthrough(run_tasks, cluster="hpc-cluster", models=["A100-40"])
    assert result["changed"] is True
    assert passthru(lab) == dict((pci_id, (True, True)) for pci_id in HPC_GPUS)
    # vSphere 8 rebinds the GPUs without a reboot: nothing waits for one.
    assert result["hosts"][0]["reboot_required"] is False

    again = host_passthrough(run_tasks, cluster="hpc-cluster", models=["A100-40"])
    assert again["changed"] is False and again["hosts"][0]["changed_devices"] == []

    off = host_passthrough(run_tasks, esxi_hostnames=[HPC_HOST], devices=["86:00.0", "0000:af:00.0"],
                           state="disabled")
    assert off["hosts"][0]["changed_devices"] == HPC_GPUS[2:]
    assert passthru(lab) == {HPC_GPUS[0]: (True, True), HPC_GPUS[1]: (True, True),
                             HPC_GPUS[2]: (False, False), HPC_GPUS[3]: (False, False)}


def test_all_gpus_not_used_for_vgpu_leaves_the_vgpu_gpus(lab, run_tasks):
    direct = Direct(lab)
    try:
        direct.shared_direct("esxi-01.lab.local")
    finally:
        direct.close()
    result = host_passthrough(run_tasks, esxi_hostnames=["esxi-01.lab.local", "esxi-02.lab.local"],
                              all_gpus_not_used_for_vgpu=True)
    assert [host["changed_devices"] for host in result["hosts"]] == [[], ["0000:3b:00.0"]]
    assert passthru(lab, "esxi-01.lab.local") == {"0000:3b:00.0": (False, False)}
    assert passthru(lab, "esxi-02.lab.local") == {"0000:3b:00.0": (True, True)}


def test_a_gpu_running_vgpus_is_refused_and_nothing_changes(lab, run_tasks):
    direct = Direct(lab)
    try:
        direct.run_vgpu("esxi-01.lab.local", "gpu-vm-01", "grid_p40-8q")
    finally:
        direct.close()
    before = lab.state()
    result = host_passthrough(run_tasks, expect_failure=True, esxi_hostnames=["esxi-02.lab.local",
                                                                              "esxi-01.lab.local"],
                              devices=["0000:3b:00.0"])
    assert "running vGPUs cannot switch to passthrough" in result["msg"]
    assert "0000:3b:00.0" in result["msg"] and "esxi-01.lab.local" in result["msg"]
    assert lab.state() == before


def test_an_unknown_pci_id_is_refused_naming_the_host_devices(lab, run_tasks):
    before = lab.state()
    result = host_passthrough(run_tasks, expect_failure=True, esxi_hostnames=[HPC_HOST],
                              devices=[HPC_GPUS[0], "0000:99:00.0"])
    assert "has no NVIDIA GPU or NVSwitch with PCI id 0000:99:00.0" in result["msg"]
    assert HPC_GPUS[3] in result["msg"]
    assert lab.state() == before
