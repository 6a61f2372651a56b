# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_graphics against the lab vCenter, checked against the lab's ground truth.

The tests of this file run in order on one lab: each starts from what the previous ones left.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from vsphere_direct import Direct

pyVmomi = pytest.importorskip("pyVmomi")
vim = pyVmomi.vim

CLUSTER_HOSTS = ["esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local"]
P40 = "0000:3b:00.0"


def host_graphics(run_tasks, check=False, diff=False, expect_failure=False, **options):
    run = run_tasks([{"name": "host_graphics", "gpuops.vgpu.host_graphics": options}], check=check, diff=diff,
                    expect_failure=expect_failure)
    return run.result(0)


def restarts(lab):
    return dict((host["name"], host["xorg_restarts"]) for host in lab.state()["hosts"])


def gpu(lab, host_name):
    return lab.host(host_name)["gpus"][0]


@pytest.fixture
def shared_direct_cluster(lab):
    """The cluster's P40s configured and running as Shared Direct, as host_graphics leaves them."""
    for host in CLUSTER_HOSTS:
        _running_as(lab, host, "sharedDirect")


def test_check_mode_predicts_the_change_and_changes_nothing(lab, run_tasks):
    before = lab.state()
    result = host_graphics(run_tasks, check=True, cluster="gpu-cluster", default_graphics_type="sharedDirect",
                           gpu_graphics_type="sharedDirect")
    assert result["changed"] is True
    assert [host["name"] for host in result["hosts"]] == CLUSTER_HOSTS
    for host in result["hosts"]:
        assert host["changed"] is True and host["xorg_restarted"] is True
        assert host["after"]["gpus"][0]["graphics_type"] == "sharedDirect"
        assert host["before"]["gpus"][0]["graphics_type"] == "basic"
    assert lab.state() == before


def test_only_the_assignment_policy_changes_when_only_it_is_given(lab, run_tasks):
    before = lab.host("esxi-11.lab.local")
    others = restarts(lab)
    result = host_graphics(run_tasks, esxi_hostnames=["esxi-11.lab.local"], assignment_policy="consolidation")
    assert result["changed"] is True
    after = lab.host("esxi-11.lab.local")
    assert after["graphics_config"] == dict(before["graphics_config"], assignment_policy="consolidation")
    assert after["graphics_config"]["default_graphics_type"] == "shared"
    assert after["graphics_config"]["device_types"] == []
    expected = dict(others, **{"esxi-11.lab.local": others["esxi-11.lab.local"] + 1})
    assert restarts(lab) == expected, "Xorg restarts exactly where the configuration changed"


def test_shared_direct_on_the_cluster_restarts_xorg_where_changed_and_a_rerun_changes_nothing(lab, run_tasks):
    start = restarts(lab)
    options = dict(cluster="gpu-cluster", default_graphics_type="sharedDirect", gpu_graphics_type="sharedDirect")
    result = host_graphics(run_tasks, **options)
    assert result["changed"] is True
    assert [host["xorg_restart_reason"] for host in result["hosts"]] == ["the graphics configuration changed"] * 3
    for name in CLUSTER_HOSTS:
        truth = lab.host(name)
        assert truth["graphics_config"]["default_graphics_type"] == "sharedDirect"
        assert truth["graphics_config"]["assignment_policy"] == "performance"
        assert truth["graphics_config"]["device_types"] == [
            {"device_id": P40, "graphics_type": "sharedDirect", "vgpu_mode": ""}]
        assert truth["gpus"][0]["graphics_type"] == truth["gpus"][0]["configured_graphics_type"] == "sharedDirect"
    changed = dict(start, **dict((name, start[name] + 1) for name in CLUSTER_HOSTS))
    assert restarts(lab) == changed

    again = host_graphics(run_tasks, **options)
    assert again["changed"] is False
    assert [host["changed"] for host in again["hosts"]] == [False] * 3
    assert [host["xorg_restarted"] for host in again["hosts"]] == [False] * 3
    assert restarts(lab) == changed


def test_soap_requests_with_nothing_to_change_are_a_small_constant(lab, run_tasks, shared_direct_cluster):
    lab.reset_stats()
    result = host_graphics(run_tasks, cluster="gpu-cluster", default_graphics_type="sharedDirect",
                           gpu_graphics_type="sharedDirect", assignment_policy="performance")
    stats = lab.stats()
    assert result["changed"] is False and len(result["hosts"]) == 3
    # Login and logout, then one container view read for all hosts; nothing per host.
    assert stats["by_method"] == {"RetrieveServiceContent": 3, "Login": 1, "CreateContainerView": 1,
                                  "RetrievePropertiesEx": 1, "DestroyView": 1, "Logout": 1}
    assert stats["soap_requests"] == 8


def test_diff_shows_before_and_after(lab, run_tasks, shared_direct_cluster):
    result = host_graphics(run_tasks, diff=True, esxi_hostnames=["esxi-01.lab.local"],
                           assignment_policy="consolidation")
    assert result["diff"]["before"]["esxi-01.lab.local"]["assignment_policy"] == "performance"
    assert result["diff"]["after"]["esxi-01.lab.local"]["assignment_policy"] == "consolidation"
    assert result["diff"]["after"]["esxi-01.lab.local"]["gpus"] == [{
        "pci_id": P40, "device_name": "Tesla P40", "configured_graphics_type": "sharedDirect",
        "graphics_type": "sharedDirect", "vgpu_mode": gpu(lab, "esxi-01.lab.local")["vgpu_mode"]}]
    assert gpu(lab, "esxi-01.lab.local")["vgpu_mode"] == "sameSize"
    assert lab.host("esxi-01.lab.local")["graphics_config"]["assignment_policy"] == "consolidation"

    host_graphics(run_tasks, esxi_hostnames=["esxi-01.lab.local"], assignment_policy="performance")
    assert lab.host("esxi-01.lab.local")["graphics_config"]["assignment_policy"] == "performance"


def test_a_device_entry_changes_only_that_gpu(lab, run_tasks):
    host = "esxi-11.lab.local"
    before = lab.host(host)
    assert [gpu["pci_id"] for gpu in before["gpus"]] == [P40, "0000:5e:00.0"]
    result = host_graphics(run_tasks, esxi_hostnames=[host],
                           devices=[{"pci_id": "5e:00.0", "graphics_type": "sharedDirect"}])
    assert result["changed"] is True
    after = lab.host(host)
    assert after["graphics_config"] == dict(before["graphics_config"], device_types=[
        {"device_id": "0000:5e:00.0", "graphics_type": "sharedDirect", "vgpu_mode": ""}])
    assert [(gpu["configured_graphics_type"], gpu["graphics_type"]) for gpu in after["gpus"]] == [
        ("shared", "shared"), ("sharedDirect", "sharedDirect")]
    assert after["xorg_restarts"] == before["xorg_restarts"] + 1


def test_vgpu_mode_is_kept_by_vcenter_8_0_3_and_read_back(lab, run_tasks, shared_direct_cluster):
    """The lab speaks API 8.0.3, where HostGraphicsConfigDeviceType.vgpuMode exists: the mode is stored and read
    back, and the module warns about nothing (the warning for older vCenters that drop it is a unit test). A P40
    runs equal-size only, so it is given sameSize explicitly; mixedSize is in test_vgpu_mixed_size.py."""
    host = "esxi-02.lab.local"
    before = lab.host(host)
    result = host_graphics(run_tasks, esxi_hostnames=[host],
                           devices=[{"pci_id": "00000000:3B:00.0", "vgpu_mode": "sameSize"}])
    after = lab.host(host)
    assert after["graphics_config"]["default_graphics_type"] == before["graphics_config"]["default_graphics_type"]
    assert after["graphics_config"]["assignment_policy"] == before["graphics_config"]["assignment_policy"]
    assert [entry["graphics_type"] for entry in after["graphics_config"]["device_types"]] == ["sharedDirect"]
    assert after["graphics_config"]["device_types"][0]["vgpu_mode"] == "sameSize"
    assert not [warning for warning in result.get("warnings", []) if "did not" in warning]
    assert result["hosts"][0]["after"]["devices"][0]["vgpu_mode"] == "sameSize"
    assert result["hosts"][0]["after"]["gpus"][0]["vgpu_mode"] == after["gpus"][0]["vgpu_mode"] == "sameSize"


def _configure_without_restart(lab, host_name, graphics_type):
    """An earlier change that was never followed by an Xorg restart."""
    direct = Direct(lab)
    try:
        manager = direct.host(host_name).configManager.graphicsManager
        manager.UpdateGraphicsConfig(vim.host.GraphicsConfig(
            hostDefaultGraphicsType=graphics_type, sharedPassthruAssignmentPolicy="performance",
            deviceType=[vim.host.GraphicsConfig.DeviceType(deviceId=P40, graphicsType=graphics_type)]))
    finally:
        direct.close()


def _running_as(lab, host_name, graphics_type):
    """The host's P40 configured as graphics_type, then Xorg restarted so that it runs as such."""
    _configure_without_restart(lab, host_name, graphics_type)
    direct = Direct(lab)
    try:
        direct.host(host_name).configManager.serviceSystem.RestartService(id="xorg")
    finally:
        direct.close()


def test_a_pending_graphics_type_gets_its_xorg_restart(lab, run_tasks, shared_direct_cluster):
    host = "esxi-03.lab.local"
    _configure_without_restart(lab, host, "shared")
    pending = gpu(lab, host)
    assert (pending["graphics_type"], pending["configured_graphics_type"]) == ("sharedDirect", "shared")
    count = lab.host(host)["xorg_restarts"]

    result = host_graphics(run_tasks, esxi_hostnames=[host])
    assert result["changed"] is True
    assert result["hosts"][0]["before"]["devices"] == result["hosts"][0]["after"]["devices"]
    assert "never followed by an Xorg restart" in result["hosts"][0]["xorg_restart_reason"]
    assert gpu(lab, host)["graphics_type"] == "shared"
    assert lab.host(host)["xorg_restarts"] == count + 1

    assert host_graphics(run_tasks, esxi_hostnames=[host])["changed"] is False
    assert lab.host(host)["xorg_restarts"] == count + 1


def test_restart_xorg_never_leaves_the_restart_and_warns(lab, run_tasks):
    host = "esxi-03.lab.local"
    _running_as(lab, host, "shared")
    count = lab.host(host)["xorg_restarts"]
    result = host_graphics(run_tasks, esxi_hostnames=[host], gpu_graphics_type="sharedDirect",
                           default_graphics_type="sharedDirect", restart_xorg="never")
    assert result["changed"] is True
    assert result["hosts"][0]["xorg_restarted"] is False
    assert any(P40 in warning and "Xorg restart" in warning for warning in result["warnings"])
    truth = gpu(lab, host)
    assert (truth["graphics_type"], truth["configured_graphics_type"]) == ("shared", "sharedDirect")
    assert lab.host(host)["xorg_restarts"] == count

    applied = host_graphics(run_tasks, esxi_hostnames=[host])
    assert applied["hosts"][0]["xorg_restarted"] is True
    assert gpu(lab, host)["graphics_type"] == "sharedDirect"
    assert lab.host(host)["xorg_restarts"] == count + 1


def test_a_gpu_with_a_running_vgpu_vm_changes_type_only_with_force(lab, run_tasks, shared_direct_cluster):
    host = "esxi-01.lab.local"
    direct = Direct(lab)
    try:
        direct.add_vgpu("gpu-vm-01", "grid_p40-8q")
        direct.power_on("gpu-vm-01")
    finally:
        direct.close()
    assert gpu(lab, host)["vms"] == ["gpu-vm-01"]
    before = lab.state()

    run = run_tasks([{"name": "host_graphics", "gpuops.vgpu.host_graphics": {
        "esxi_hostnames": [host], "gpu_graphics_type": "shared"}}], expect_failure=True)
    message = run.result(0)["msg"]
    for word in (host, P40, "Tesla P40", "gpu-vm-01", "force"):
        assert word in message
    assert lab.state() == before

    forced = host_graphics(run_tasks, esxi_hostnames=[host], gpu_graphics_type="shared", force=True)
    assert forced["changed"] is True
    assert any("gpu-vm-01" in warning for warning in forced["warnings"])
    truth = gpu(lab, host)
    assert truth["configured_graphics_type"] == "shared"
    assert truth["graphics_type"] == "sharedDirect", "the lab keeps a GPU's type while a vGPU runs on it"
    assert any("still do not run" in warning for warning in forced["warnings"])

    direct = Direct(lab)
    try:
        direct.power_off("gpu-vm-01")
    finally:
        direct.close()
    host_graphics(run_tasks, esxi_hostnames=[host], gpu_graphics_type="sharedDirect")
    truth = gpu(lab, host)
    assert truth["graphics_type"] == truth["configured_graphics_type"] == "sharedDirect"


@pytest.mark.parametrize("options, words", [
    ({"cluster": "no-such-cluster", "assignment_policy": "consolidation"}, ["no-such-cluster", "gpu-cluster"]),
    ({"esxi_hostnames": ["esxi-99.lab.local"], "assignment_policy": "consolidation"},
     ["esxi-99.lab.local", "esxi-01.lab.local"]),
    ({"cluster": "gpu-cluster", "assignment_policy": "consolidation",
      "devices": [{"pci_id": "0000:af:00.0", "graphics_type": "sharedDirect"}]},
     ["esxi-01.lab.local", "0000:af:00.0", "0000:3b:00.0 (Tesla P40)"]),
    ({"esxi_hostnames": ["esxi-11.lab.local", "esxi-12.lab.local"], "assignment_policy": "consolidation",
      "devices": [{"pci_id": "0000:5e:00.0", "vgpu_mode": "sameSize"}]},
     ["Host esxi-12.lab.local has no graphics device with PCI id 0000:5e:00.0", "0000:3b:00.0"]),
    ({"cluster": "gpu-cluster", "default_graphics_type": "direct"}, ["default_graphics_type", "shared, sharedDirect"]),
    ({"cluster": "gpu-cluster", "devices": [{"pci_id": "3b:00.0"}]}, ["graphics_type", "vgpu_mode"]),
    ({"default_graphics_type": "sharedDirect"}, ["cluster", "esxi_hostnames"]),
])
def test_bad_input_fails_clearly_and_changes_nothing(lab, run_tasks, options, words):
    before = lab.state()
    run = run_tasks([{"name": "host_graphics", "gpuops.vgpu.host_graphics": options}], expect_failure=True)
    message = run.result(0)["msg"]
    for word in words:
        assert word in message
    assert lab.state() == before
