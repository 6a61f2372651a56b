# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vlcm_remediate against the lab vCenter: hosts brought to the image one at a time, checked on the lab's hosts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest

from vlcm_lab import (
    BASE_IMAGE,
    DAEMON,
    DAEMON_VERSION,
    DRIVER,
    DRIVER_VERSION,
    GPU_HOSTS,
    Depot,
    Rest,
    host_components,
    routes_called,
    set_image,
    vlcm_lab_at_start,
)
from vsphere_direct import Direct

DELAY_MS = 400
APPLY = "POST /api/esx/settings/clusters/{cluster}/software?action=apply&vmw-task=true"
CHECK = "POST /api/esx/settings/clusters/{cluster}/software?action=check&vmw-task=true"
SCAN = "POST /api/esx/settings/clusters/{cluster}/software?action=scan&vmw-task=true"
IMAGE = {"ESXi": BASE_IMAGE, DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION}


@pytest.fixture
def lab(labs, tmp_path_factory):
    started = vlcm_lab_at_start(labs, tmp_path_factory, delay_ms=DELAY_MS)
    depot, rest = Depot(started), Rest(started)
    for bundle in (depot.driver(), depot.driver("535.54.06"), depot.daemon()):
        info = rest.task("POST", "/api/esx/settings/depots/offline?vmw-task=true",
                         {"source_type": "PULL", "location": depot.url(bundle)})
        assert info["status"] == "SUCCEEDED", info
    set_image(rest, {DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION})
    return started


def remediate(run_tasks, check=False, expect_failure=False, diff=False, **options):
    options.setdefault("cluster", "gpu-cluster")
    run = run_tasks([{"name": "vlcm_remediate", "gpuops.vgpu.vlcm_remediate": options}], check=check,
                    expect_failure=expect_failure, diff=diff)
    return run.result(0)


def hosts_state(lab):
    return dict((h["name"], (h["components"], h["maintenance_mode"])) for h in lab.state()["hosts"]
                if h["name"] in GPU_HOSTS)


def test_check_mode_scans_and_changes_no_host(lab, run_tasks):
    before = hosts_state(lab)
    lab.reset_stats()
    result = remediate(run_tasks, check=True, diff=True, accept_eula=True)
    assert result["changed"] is True
    assert result["pending"] == GPU_HOSTS
    assert result["compliance_before"]["status"] == "NON_COMPLIANT"
    first = result["compliance_before"]["hosts"][0]
    assert first["name"] == "esxi-01.lab.local" and first["impact"] == "REBOOT_REQUIRED"
    assert first["components"][DRIVER] == {"status": "NON_COMPLIANT", "current": None, "target": DRIVER_VERSION}
    assert result["diff"]["after"] == dict((name, "COMPLIANT") for name in GPU_HOSTS)
    assert "compliance_after" not in result and "hosts" not in result
    assert hosts_state(lab) == before
    assert routes_called(lab) == {SCAN: 1}


def test_without_the_eula_nothing_is_remediated(lab, run_tasks):
    before = hosts_state(lab)
    lab.reset_stats()
    result = remediate(run_tasks, expect_failure=True)
    assert "needs the VMware End User License Agreement accepted" in result["msg"]
    assert "accept_eula: true" in result["msg"]
    assert hosts_state(lab) == before
    assert APPLY not in routes_called(lab)


def test_unknown_host_lists_the_hosts_of_the_cluster(lab, run_tasks):
    result = remediate(run_tasks, expect_failure=True, accept_eula=True, esxi_hostnames=["esxi-99.lab.local"])
    assert "Hosts not in cluster 'gpu-cluster': esxi-99.lab.local" in result["msg"]
    assert ", ".join(GPU_HOSTS) in result["msg"]


def test_one_host_only(lab, run_tasks):
    result = remediate(run_tasks, accept_eula=True, hosts=["esxi-02.lab.local"])
    assert result["changed"] is True
    assert result["pending"] == ["esxi-02.lab.local"]
    assert [(h["name"], h["status"]) for h in result["hosts"]] == [("esxi-02.lab.local", "OK")]
    components = host_components(lab)
    assert components["esxi-02.lab.local"] == IMAGE
    assert components["esxi-01.lab.local"] == components["esxi-03.lab.local"] == {"ESXi": BASE_IMAGE}
    assert not any(state[1] for state in hosts_state(lab).values()), "no host left in maintenance mode"


@pytest.fixture
def vgpu_vm_on_esxi_03(lab):
    """gpu-vm-07 runs a vGPU on esxi-03 and vGPU vMotion is off, so DRS cannot move it."""
    direct = Direct(lab)
    try:
        direct.shared_direct("esxi-03.lab.local")
        direct.add_vgpu("gpu-vm-07", "grid_p40-8q")
        direct.power_on("gpu-vm-07")
    finally:
        direct.close()
    assert lab.state()["settings"]["vgpu.hotmigrate.enabled"] is False
    return "gpu-vm-07"


def test_precheck_stops_before_any_host_changes(lab, run_tasks, vgpu_vm_on_esxi_03):
    before = hosts_state(lab)
    lab.reset_stats()
    result = remediate(run_tasks, expect_failure=True, accept_eula=True)
    assert "The remediation pre-check of cluster 'gpu-cluster' failed" in result["msg"]
    assert "esxi-03.lab.local: Host esxi-03.lab.local cannot enter maintenance mode" in result["msg"]
    assert "gpu-vm-07 (its vGPUs need vGPU vMotion: vgpu.hotmigrate.enabled is false)" in result["msg"]
    assert "Nothing was changed" in result["msg"]
    assert result["changed"] is False
    assert hosts_state(lab) == before
    assert CHECK in routes_called(lab) and APPLY not in routes_called(lab)


def test_a_host_that_cannot_evacuate_fails_with_the_reason(lab, run_tasks, vgpu_vm_on_esxi_03):
    remediate(run_tasks, accept_eula=True, hosts=["esxi-02.lab.local"])
    result = remediate(run_tasks, expect_failure=True, accept_eula=True, precheck=False)
    assert "Remediation of cluster 'gpu-cluster' failed on esxi-03.lab.local" in result["msg"]
    assert "gpu-vm-07 (its vGPUs need vGPU vMotion: vgpu.hotmigrate.enabled is false)" in result["msg"]
    assert result["changed"] is True, "esxi-01 was remediated before esxi-03 failed"
    assert [(h["name"], h["status"]) for h in result["hosts"]] == [
        ("esxi-01.lab.local", "OK"), ("esxi-02.lab.local", "OK"), ("esxi-03.lab.local", "ERROR")]
    assert "already runs the desired image" in result["hosts"][1]["message"]
    after = dict((h["name"], h["status"]) for h in result["compliance_after"]["hosts"])
    assert after == {"esxi-01.lab.local": "COMPLIANT", "esxi-02.lab.local": "COMPLIANT",
                     "esxi-03.lab.local": "NON_COMPLIANT"}
    truth = hosts_state(lab)
    assert truth["esxi-01.lab.local"] == (IMAGE, False)
    assert truth["esxi-03.lab.local"] == ({"ESXi": BASE_IMAGE}, False), "a failed host stays as it was"
    vm = lab.vm("gpu-vm-07")
    assert (vm["host"], vm["power_state"]) == ("esxi-03.lab.local", "poweredOn")


def test_remediation_completes_once_the_vm_is_off(lab, run_tasks, vgpu_vm_on_esxi_03):
    remediate(run_tasks, accept_eula=True, hosts=["esxi-01.lab.local", "esxi-02.lab.local"])
    direct = Direct(lab)
    try:
        direct.power_off(vgpu_vm_on_esxi_03)
    finally:
        direct.close()
    result = remediate(run_tasks, diff=True, accept_eula=True)
    assert result["changed"] is True
    assert result["pending"] == ["esxi-03.lab.local"]
    assert result["diff"] == {"before": {"esxi-01.lab.local": "COMPLIANT", "esxi-02.lab.local": "COMPLIANT",
                                         "esxi-03.lab.local": "NON_COMPLIANT"},
                              "after": dict((name, "COMPLIANT") for name in GPU_HOSTS)}
    assert result["compliance_after"]["status"] == "COMPLIANT"
    assert hosts_state(lab) == dict((name, (IMAGE, False)) for name in GPU_HOSTS)


@pytest.mark.parametrize("action, stopped", [("suspend", "suspended"), ("power_off", "poweredOff")])
def test_vm_power_action_stops_and_restarts_the_vm_for_this_remediation_only(lab, run_tasks, vgpu_vm_on_esxi_03,
                                                                             action, stopped):
    rest = Rest(lab)
    policy = "/api/esx/settings/clusters/%s/policies/apply" % rest.cluster_id("gpu-cluster")
    configured = rest.call("GET", policy)
    result = remediate(run_tasks, accept_eula=True, vm_power_action=action)
    assert result["compliance_after"]["status"] == "COMPLIANT"
    assert hosts_state(lab) == dict((name, (IMAGE, False)) for name in GPU_HOSTS)
    vm = lab.vm(vgpu_vm_on_esxi_03)
    assert (vm["host"], vm["power_state"]) == ("esxi-03.lab.local", "poweredOn")
    events = [(e["event"], e["host_driver"]) for e in lab.state()["vgpu_events"] if e.get("vm") == vm["name"]]
    assert events == [("vgpu_start", ""), ("vgpu_stop", ""), ("vgpu_start", DRIVER_VERSION)], \
        "the VM was %s while esxi-03 took the image and ran again on the new driver" % stopped
    assert rest.call("GET", policy) == configured, "the cluster's own remediation settings are back"


def test_a_rerun_changes_nothing(lab, run_tasks):
    remediate(run_tasks, accept_eula=True)
    lab.reset_stats()
    result = remediate(run_tasks, accept_eula=True)
    assert result["changed"] is False
    assert result["pending"] == []
    assert result["compliance_after"]["status"] == "COMPLIANT"
    assert routes_called(lab) == {SCAN: 1}


def test_progress_is_reported_host_by_host(lab, run_tasks):
    set_image(Rest(lab), {DRIVER: "535.54.06-1OEM.800.1.0.20613240"})
    result = remediate(run_tasks, accept_eula=True)
    applying = [line for line in result["progress"] if " apply " in line]
    done = [int(m.group(1)) for m in (re.search(r" (\d)/3", line) for line in applying) if m]
    # Polls are spaced out as the wait grows, so not every step is seen; the counts only ever grow.
    assert done == sorted(done) and done[0] == 0 and done[-1] == 3 and set(done) & {1, 2}
    elapsed = [float(re.match(r"\[\s*([\d.]+)s\]", line).group(1)) for line in applying]
    assert elapsed[-1] >= 3 * DELAY_MS / 1000.0 * 0.9, "the lab takes DELAY_MS per host"
    assert any(re.search(r"Host esxi-0\d\.lab\.local \(\d of 3\): installing the image", line) for line in applying)
    assert all(components[DRIVER] == "535.54.06-1OEM.800.1.0.20613240"
               for components in host_components(lab).values())


def test_cluster_without_image_management(lab, run_tasks):
    result = remediate(run_tasks, expect_failure=True, cluster="mixed-cluster", accept_eula=True)
    assert "Cluster 'mixed-cluster' is not managed with a single vLCM image" in result["msg"]
