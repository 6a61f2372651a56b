# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_info's real main() on the fake inventory of the inventory tests."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.modules import gpu_info
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.vcenter.test_inventory import inventory_client
from ansible_collections.gpuops.vgpu.tests.unit.plugins.modules.module_runner import CONNECTION, fake_vcenter, run_main


@pytest.fixture
def client():
    return inventory_client()


@pytest.mark.parametrize("check_mode", [False, True])
def test_reads_hosts_gpus_and_vms_and_never_changes(monkeypatch, capsys, client, check_mode):
    sessions = fake_vcenter(monkeypatch, client)
    code, result = run_main(gpu_info.main, dict(CONNECTION, cluster="gpu-cluster", vms=["idle-1"]), capsys,
                            check_mode=check_mode, diff=True)
    assert code == 0 and result["changed"] is False and "diff" not in result
    assert [host["name"] for host in result["hosts"]] == ["esxi-01", "esxi-02"]
    gpu = result["hosts"][0]["gpus"][0]
    assert (gpu["pci_id"], gpu["profile"], gpu["vms"], gpu["free"]) == (
        "0000:3b:00.0", "grid_p40-8q", ["train-1", "train-2"], 1)
    assert [(vm["name"], vm["host"], vm["power_state"]) for vm in result["vms"]] == [
        ("idle-1", "esxi-02", "poweredOff")]
    assert [call[0] for call in client.calls] == ["retrieve", "retrieve", "retrieve_objects"]
    assert sessions[0].params == dict(CONNECTION, cluster="gpu-cluster", esxi_hostnames=None, datacenter=None,
                                      vms=["idle-1"], power_records=False)
    assert "power_records" not in result
    assert sessions[0].closed


def test_hosts_come_in_the_order_asked(monkeypatch, capsys, client):
    fake_vcenter(monkeypatch, client)
    code, result = run_main(gpu_info.main, dict(CONNECTION, esxi_hostnames=["esxi-sa", "esxi-01"]), capsys)
    assert code == 0 and [host["name"] for host in result["hosts"]] == ["esxi-sa", "esxi-01"]
    assert result["vms"] == []


def test_an_unknown_cluster_fails_naming_the_known_ones(monkeypatch, capsys, client):
    fake_vcenter(monkeypatch, client)
    code, result = run_main(gpu_info.main, dict(CONNECTION, cluster="nope"), capsys)
    assert code == 1 and "Cluster 'nope' was not found" in result["msg"] and "gpu-cluster" in result["msg"]


def test_bad_options_fail_before_connecting(monkeypatch, capsys, client):
    sessions = fake_vcenter(monkeypatch, client)
    code, result = run_main(gpu_info.main, dict(CONNECTION, vms="idle-1", clusters="gpu"), capsys)
    assert code == 1 and "clusters" in result["msg"] and sessions == []
