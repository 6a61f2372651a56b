# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An HGX H100 8-GPU board (four NVSwitches) in the lab: what the host's nvidia-smi shows, and host_passthrough's
refusal (NVIDIA does not support GPU passthrough on NVSwitch systems under vSphere)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from vlcm_lab import DRIVER, DRIVER_VERSION, host_variant_topology

pytest.importorskip("pyVmomi")

HOST = "esxi-31.lab.local"
SWITCHES = ["0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"]


@pytest.fixture
def lab(labs, tmp_path_factory):
    """The default lab with esxi-31 an HGX H100 host running the vGPU manager, so its shell has nvidia-smi."""
    path = host_variant_topology(tmp_path_factory.getbasetemp(), "hgx-topology.json", HOST,
                                 gpus=[{"model": "H100-SXM5-80", "count": 8}], nvswitches=4, nvlink=[list(range(8))],
                                 components={DRIVER: DRIVER_VERSION})
    return labs(path, extra=("--no-bmc",))


def test_the_hosts_nvidia_smi_links_every_gpu_to_every_other_over_18_links(lab, run_tasks):
    host = lab.host(HOST)
    assert [switch["pci_id"] for switch in host["nvswitches"]] == SWITCHES
    assert set(switch["device_name"] for switch in host["nvswitches"]) == {"GH100 [H100 NVSwitch]"}
    smi = run_tasks([{"name": "nvidia_smi_info", "gpuops.vgpu.nvidia_smi_info": {"gather": ["topology", "nvlink"]}}],
                    hosts=HOST).result(0)["nvidia_smi"]
    pairs = smi["topology"]["nvlink_pairs"]
    assert len(pairs) == 28 and set(pair["links"] for pair in pairs) == {18}
    assert [len(gpu["links"]) for gpu in smi["nvlink"]["gpus"]] == [18] * 8


def test_host_passthrough_refuses_the_board_and_changes_nothing(lab, run_tasks):
    before = lab.state()
    result = run_tasks([{"name": "host_passthrough", "gpuops.vgpu.host_passthrough": {
        "esxi_hostnames": [HOST], "all_gpus_not_used_for_vgpu": True}}], expect_failure=True).result(0)
    assert "Host %s has an NVSwitch board (NVSwitches %s)" % (HOST, ", ".join(SWITCHES)) in result["msg"]
    assert "NVIDIA does not support GPU passthrough on systems with NVSwitch under VMware vSphere" in result["msg"]
    assert "C-series vGPUs" in result["msg"]
    assert lab.state() == before
