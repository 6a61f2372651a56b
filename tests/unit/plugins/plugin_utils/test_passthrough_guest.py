# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The passthrough guest checks on recorded nvidia-smi outputs (tests/fixtures/nvidia-smi), and the requests."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.tests.unit.plugins.nvidia_smi_fixtures import read
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import (
    parse_nvlink_status,
    parse_p2p,
    parse_topology,
)
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._passthrough_guest import evaluate, from_guest_read
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._passthrough_requests import requests

P2P_PAIR_OK = "\tGPU0\tGPU1\t\n GPU0\tX\tOK\t\n GPU1\tOK\tX\t\n"
P2P_PAIR_CNS = "\tGPU0\tGPU1\t\n GPU0\tX\tCNS\t\n GPU1\tCNS\tX\t\n"
TOPO_SPLIT = ("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
              "GPU0\t X \tSYS\t0-15\t0\t\tN/A\nGPU1\tSYS\t X \t16-31\t1\t\tN/A\n")


def gpus(name, count):
    return [{"index": n, "name": name, "pci_bus_id": "00000000:%02X:00.0" % (0x13 + 8 * n),
             "virtualization_mode": "Pass-Through"} for n in range(count)]


def facts(name, topo, nvlink, p2p, count=2):
    return {"present": True, "gpus": gpus(name, count), "topology": parse_topology(topo),
            "nvlink": parse_nvlink_status(nvlink), "p2p": parse_p2p(p2p), "errors": {}}


def test_a_bridged_pair_passes():
    checks = evaluate(facts("NVIDIA H100 PCIe", read("topo_m_2xH100_pcie_NV12_driver555_TABS2SPACES.txt"),
                            read("nvlink_s_2xH100_pcie_inactive_links_driver555.txt"), P2P_PAIR_OK), 2, 2)
    assert dict((name, check["status"]) for name, check in checks.items()) == {
        "passthrough_gpus": "ok", "nvlink_topology": "ok", "nvlink_status": "ok", "p2p": "ok"}
    assert checks["nvlink_topology"]["sets"] == [["GPU0", "GPU1"]]
    assert checks["nvlink_status"]["expected_gbps"] == 26.562


def test_gpus_of_different_pairs_fail_naming_the_split():
    checks = evaluate(facts("NVIDIA A100-PCIE-40GB", TOPO_SPLIT,
                            read("nvlink_s_2xA100_pcie_no_nvlink_all_inactive_driver555.txt"), P2P_PAIR_CNS), 2, 2)
    assert checks["passthrough_gpus"]["status"] == "ok"
    assert checks["nvlink_topology"]["status"] == "failed"
    assert "GPU0, GPU1 have no NVLink peer in this VM" in checks["nvlink_topology"]["message"]
    assert "GPU0-GPU1 SYS" in checks["nvlink_topology"]["message"]
    assert checks["nvlink_status"]["status"] == "failed"
    assert "all links are inActive" in checks["nvlink_status"]["message"]


def test_a_slow_link_and_a_missing_gpu_fail():
    checks = evaluate(facts("NVIDIA H100 PCIe", read("topo_m_2xH100_pcie_NV12_driver555_TABS2SPACES.txt"),
                            read("nvlink_s_2xH100_pcie_inactive_links_driver555.txt"), P2P_PAIR_OK), 4, 2, True, 50)
    assert checks["passthrough_gpus"]["status"] == "failed"
    assert "2 passthrough GPU(s), 4 expected" in checks["passthrough_gpus"]["message"]
    assert checks["nvlink_status"]["status"] == "failed"
    assert "50.0 expected" in checks["nvlink_status"]["message"]


def test_p2p_not_ok_within_a_set_fails():
    checks = evaluate(facts("NVIDIA H100 PCIe", read("topo_m_2xH100_pcie_NV12_driver555_TABS2SPACES.txt"),
                            read("nvlink_s_2xH100_pcie_inactive_links_driver555.txt"), P2P_PAIR_CNS), 2, 2)
    assert checks["p2p"]["status"] == "failed"
    assert "GPU0-GPU1 CNS" in checks["p2p"]["message"]


def test_a_bare_metal_servers_gpus_are_whole_gpus_and_vgpus_are_not():
    for mode, seen in (("None", 2), ("VGPU", 0)):
        found = dict(facts("NVIDIA H100 PCIe", read("topo_m_2xH100_pcie_NV12_driver555_TABS2SPACES.txt"),
                           read("nvlink_s_2xH100_pcie_inactive_links_driver555.txt"), P2P_PAIR_OK))
        found["gpus"] = [dict(gpu, virtualization_mode=mode) for gpu in found["gpus"]]
        assert evaluate(found, 2, 2)["passthrough_gpus"]["seen"] == seen, mode


def test_without_nvlink_only_the_gpus_are_checked_and_a_missing_driver_fails():
    checks = evaluate(facts("NVIDIA A100-PCIE-40GB", TOPO_SPLIT, "", P2P_PAIR_CNS), 2, 2, False)
    assert [checks[name]["status"] for name in ("passthrough_gpus", "nvlink_topology", "p2p")] == [
        "ok", "skipped", "skipped"]
    missing = evaluate({"present": False, "msg": "nvidia-smi is not in PATH"}, 2)
    assert missing["passthrough_gpus"]["status"] == "failed"
    assert "not in PATH" in missing["passthrough_gpus"]["message"]


def test_requests_from_the_inventory_and_refusals():
    hostvars = {"g1": {"passthrough_gpus": 2, "passthrough_vm_name": "pt-vm-01"},
                "g2": {"passthrough_gpus": ["0000:86:00.0", "0000:af:00.0"]}, "g3": {}}
    assert requests(["g1", "g2"], hostvars, [{"name": "pt-vm-03", "gpus": 1}]) == [
        {"name": "pt-vm-01", "gpus": 2}, {"name": "g2", "devices": ["0000:86:00.0", "0000:af:00.0"]},
        {"name": "pt-vm-03", "gpus": 1}]
    with pytest.raises(ValueError, match="g3: passthrough_gpus is None"):
        requests(["g3"], hostvars)
    with pytest.raises(ValueError, match="VM pt-vm-01 is asked for twice"):
        requests(["g1"], hostvars, [{"name": "pt-vm-01", "gpus": 2}])


def test_gpu_guest_infos_read_is_judged_like_nvidia_smi_infos_facts():
    smi = facts("NVIDIA H100 PCIe", read("topo_m_2xH100_pcie_NV12_driver555_TABS2SPACES.txt"),
                read("nvlink_s_2xH100_pcie_inactive_links_driver555.txt"), P2P_PAIR_OK)
    guest_read = {"gathered": ["pci", "nvidia_smi", "topology"], "errors": {},
                  "nvidia_smi": {"present": True, "gpus": smi["gpus"]},
                  "topology": {"topology": smi["topology"], "nvlink": smi["nvlink"], "p2p": smi["p2p"]}}
    assert from_guest_read(guest_read) == smi
    assert evaluate(from_guest_read(guest_read), 2, 2) == evaluate(smi, 2, 2)
    # A command that failed in the read fails its check with the read's words.
    guest_read["topology"]["p2p"] = None
    guest_read["errors"] = {"topology.p2p": {"kind": "error", "msg": "topo -p2p is not supported"}}
    checks = evaluate(from_guest_read(guest_read), 2, 2)
    assert checks["p2p"]["status"] == "failed" and "topo -p2p is not supported" in checks["p2p"]["message"]
    # Without a working driver there is no topology: the GPUs' check fails and names why.
    down = {"gathered": ["nvidia_smi", "topology"], "errors": {}, "topology": None,
            "nvidia_smi": {"present": False, "msg": "NVIDIA-SMI has failed"}}
    assert evaluate(from_guest_read(down), 2, 2)["passthrough_gpus"] == {
        "status": "failed", "message": "nvidia-smi fails: NVIDIA-SMI has failed"}
