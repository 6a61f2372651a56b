# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vm_passthrough with the NVLink sets read from the host's own nvidia-smi, over its ESXi host shell."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from test_vm_passthrough import GPUS, HOST, held, prepared, refused, run_module
from vlcm_lab import driver_topology

pytest.importorskip("pyVmomi")


@pytest.fixture
def lab(labs, tmp_path_factory):
    """The default lab with the vGPU manager installed on the passthrough host, so that its shell has nvidia-smi."""
    topology = driver_topology(tmp_path_factory.getbasetemp(), HOST, "passthrough-topology.json")
    return labs(topology, extra=("--no-bmc",))


def test_nvlink_sets_come_from_the_hosts_own_nvidia_smi(lab, run_tasks):
    prepared(lab, run_tasks)
    smi = run_tasks([{"name": "nvidia_smi_info", "gpuops.vgpu.nvidia_smi_info": {"gather": ["topology"]}}],
                    hosts=HOST).result(0)["nvidia_smi"]
    assert [pair["links"] > 0 for pair in smi["topology"]["nvlink_pairs"]] == [True, True]
    result = run_module(run_tasks, "vm_passthrough", vms=[{"name": "pt-vm-03", "devices": GPUS[2:]}], nvlink=True,
                        host_nvidia_smi={HOST: smi}, nvlink_sets={HOST: [GPUS]})
    assert result["vms"][0]["nvlink_sets_source"] == "host nvidia-smi"
    assert held(lab, "pt-vm-03") == GPUS[2:]
    refused(lab, run_tasks, "would get half an NVLink set", vms=[{"name": "pt-vm-01", "devices": GPUS[:1]}],
            nvlink=True, host_nvidia_smi={HOST: smi})
