# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The driver_upgrade role on the lab: gpu-cluster (three hosts, one P40 each) moves from vGPU 15.2 (R525) to
16.0 (R535) with running vGPU VMs, under each policy.

Every test starts with the R525 bundles imported, the cluster image and every host on R525, gpu-vm-01 and gpu-vm-02
(grid_p40-8q) running on esxi-01, gpu-vm-04 (grid_p40-8q) on esxi-02 and esxi-03's P40 idle in Shared Direct. The
lab's vgpu_events record every vGPU start and stop and every host image change with the host driver at that moment;
``replay`` walks it and checks that no host took an image while a vGPU ran on it and that every vGPU started under a
host driver that accepts the guests' R525 driver.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from vlcm_lab import BASE_IMAGE, DAEMON, DRIVER, GPU_HOSTS, Depot, Rest, set_image, vlcm_lab_at_start
from vsphere_direct import Direct

OLD, NEW = "525.105.14", "535.54.06"
OLD_GUEST = "525.105.17"
OLD_IMAGE = {"ESXi": BASE_IMAGE, DRIVER: OLD + "-1OEM.800.1.0.20613240", DAEMON: OLD + "-0.0.0000"}
NEW_IMAGE = {"ESXi": BASE_IMAGE, DRIVER: NEW + "-1OEM.800.1.0.20613240", DAEMON: NEW + "-0.0.0000"}
RUNNING = {"gpu-vm-01": "esxi-01.lab.local", "gpu-vm-02": "esxi-01.lab.local", "gpu-vm-04": "esxi-02.lab.local"}
ACCEPTS_R525_GUESTS = ("525.", "535.")  # the R535 manager accepts the previous branch's guests (catalog rule)


@pytest.fixture
def lab(labs, tmp_path_factory):
    return upgrade_lab(labs, tmp_path_factory, delay_ms=100)


def upgrade_lab(labs, tmp_path_factory, delay_ms):
    """The lab at the start every test of the upgrade has, vLCM taking ``delay_ms`` to install an image on a host."""
    started = vlcm_lab_at_start(labs, tmp_path_factory, delay_ms=delay_ms)
    depot, rest = Depot(started), Rest(started)
    for bundle in (depot.driver(OLD), depot.daemon(OLD)):
        info = rest.task("POST", "/api/esx/settings/depots/offline?vmw-task=true",
                         {"source_type": "PULL", "location": depot.url(bundle)})
        assert info["status"] == "SUCCEEDED", info
    set_image(rest, {DRIVER: OLD_IMAGE[DRIVER], DAEMON: OLD_IMAGE[DAEMON]})
    cluster = rest.cluster_id("gpu-cluster")
    info = rest.task("POST", "/api/esx/settings/clusters/%s/software?action=apply&vmw-task=true" % cluster,
                     {"accept_eula": True}, timeout=30 + 2 * len(GPU_HOSTS) * delay_ms / 1000.0)
    assert info["status"] == "SUCCEEDED", info
    direct = Direct(started)
    try:
        for vm, host in sorted(RUNNING.items()):
            direct.run_vgpu(host, vm, "grid_p40-8q")
        direct.shared_direct("esxi-03.lab.local")
    finally:
        direct.close()
    return started


@pytest.fixture
def bundles(lab):
    depot = Depot(lab)
    return [depot.url(depot.driver(NEW)), depot.url(depot.daemon(NEW))]


def upgrade_task(lab, bundles=(), **options):
    variables = dict(driver_upgrade_cluster="gpu-cluster", driver_upgrade_bundles=list(bundles),
                     driver_upgrade_target_host_driver=NEW, driver_upgrade_current_guest_driver=OLD_GUEST,
                     driver_upgrade_accept_eula=True, driver_upgrade_remediation_s=600,
                     vcenter_hostname=lab.connection["hostname"])
    variables.update(options)
    return {"name": "driver_upgrade", "ansible.builtin.include_role": {"name": "gpuops.vgpu.driver_upgrade"},
            "vars": variables}


def upgrade(lab, run_tasks, tmp_path, bundles=(), check=False, expect_failure=False, **options):
    return run_tasks([upgrade_task(lab, bundles, **options)], check=check, expect_failure=expect_failure)


def hot_migrate(run_tasks, value):
    run_tasks([{"name": "vGPU vMotion", "gpuops.vgpu.vcenter_settings": {"settings": {"vgpu.hotmigrate.enabled": value}}}])


def replay(state):
    """Walk the vGPU event record: no image under a running vGPU, every start under a driver that takes R525
    guests. Returns the sequence as (event, vm, host, host driver) for the test's own assertions."""
    running, sequence = {}, []
    for event in state["vgpu_events"]:
        sequence.append((event["event"], event.get("vm"), event["host"], event["host_driver"]))
        if event["event"] == "vgpu_start":
            assert event["host_driver"].startswith(ACCEPTS_R525_GUESTS), event
            running[event["vm"]] = event["host"]
        elif event["event"] == "vgpu_stop":
            running.pop(event["vm"], None)
        else:
            assert event["host"] not in running.values(), "host %s took an image under a running vGPU" % event["host"]
    return sequence


def cluster_truth(lab):
    state = lab.state()
    hosts = dict((h["name"], (h["components"], h["maintenance_mode"])) for h in state["hosts"] if h["name"] in GPU_HOSTS)
    vms = dict((vm["name"], (vm["host"], vm["power_state"])) for vm in state["vms"] if vm["name"] in RUNNING)
    cluster = [c for c in state["clusters"] if c["name"] == "gpu-cluster"][0]
    return state, hosts, vms, cluster


def upgrade_record(cluster):
    """The data of the role's record on the cluster (custom attribute gpuops.vgpu.driver_upgrade)."""
    return json.loads(cluster["custom_values"]["gpuops.vgpu.driver_upgrade"])["data"]


def changed_tasks(run):
    return [r.get("task") for r in run.results if r.get("changed")]


def test_check_mode_prints_the_plan_and_changes_nothing(lab, run_tasks, tmp_path, bundles):
    hot_migrate(run_tasks, True)
    before = lab.state()
    run = upgrade(lab, run_tasks, tmp_path, bundles, check=True)
    shown = [r for r in run.results if r.get("msg") and isinstance(r["msg"], list)]
    lines = shown[0]["msg"]
    assert lines[0] == "Target: vGPU Manager 535.54.06, guest driver 535.54.03 (vGPU 16.0)."
    assert lines[1] == "Step 1: esxi-03.lab.local from 525.105.14 to 535.54.06."
    assert any(line.startswith("  gpu-vm-04 (grid_p40-8q on esxi-02.lab.local): migrate to esxi-03.lab.local")
               for line in lines)
    assert lab.state() == before, "nothing changed, the cluster's record included"


def test_the_playbook_in_check_mode_prints_the_plan(lab, run_tasks, tmp_path, bundles):
    hot_migrate(run_tasks, True)
    before = lab.state()
    extra = {"driver_upgrade_bundles": bundles, "driver_upgrade_target_host_driver": NEW,
             "driver_upgrade_current_guest_driver": OLD_GUEST, "vgpu_clusters": ["gpu-cluster"],
             "vcenter_port": lab.connection["port"]}
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_NOCOLOR="1")
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook")] + lab.inventory_args + [
        os.path.join("playbooks", "upgrade.yml"), "--check", "--tags", "upgrade_hosts", "-e", json.dumps(extra)]
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert '"Step 3: esxi-01.lab.local from 525.105.14 to 535.54.06."' in proc.stdout
    assert lab.state()["hosts"] == before["hosts"] and lab.state()["vms"] == before["vms"]


@pytest.mark.parametrize("policy, hot, state_after", [
    ("migrate", True, "moved"), ("suspend", False, "same host"), ("shutdown", False, "same host")])
def test_upgrade_with_each_policy_keeps_every_vm_compatible(lab, run_tasks, tmp_path, bundles, policy, hot,
                                                            state_after):
    hot_migrate(run_tasks, hot)
    automation = [(c["drs"], c["dpm"]) for c in lab.state()["clusters"] if c["name"] == "gpu-cluster"][0]
    upgrade(lab, run_tasks, tmp_path, bundles, driver_upgrade_policy=policy)
    state, hosts, vms, cluster = cluster_truth(lab)
    assert hosts == dict((name, (NEW_IMAGE, False)) for name in GPU_HOSTS)
    assert cluster["image"] == NEW_IMAGE and (cluster["drs"], cluster["dpm"]) == automation, "DRS/DPM put back"
    assert all(power == "poweredOn" for _host, power in vms.values())
    if state_after == "same host":
        assert dict((vm, host) for vm, (host, _p) in vms.items()) == RUNNING
    sequence = replay(state)
    images = [host for event, _vm, host, _driver in sequence if event == "host_image" and _driver.startswith(NEW)]
    assert images == ["esxi-03.lab.local", "esxi-02.lab.local", "esxi-01.lab.local"], "the planned host order"
    restarted = [(vm, driver) for event, vm, _host, driver in sequence if event == "vgpu_start" and driver.startswith(NEW)]
    assert sorted(vm for vm, _d in restarted) == sorted(RUNNING), "every VM ran on the new driver in the end"

    second = upgrade(lab, run_tasks, tmp_path, bundles, driver_upgrade_policy=policy)
    assert changed_tasks(second) == []
    assert cluster_truth(lab)[1] == hosts


def test_migrate_without_vgpu_vmotion_is_refused_before_any_change(lab, run_tasks, tmp_path, bundles):
    before = lab.state()
    run = upgrade(lab, run_tasks, tmp_path, bundles, expect_failure=True)
    assert "vgpu.hotmigrate.enabled" in run.failed[0]["msg"]
    assert lab.state()["hosts"] == before["hosts"] and lab.state()["clusters"] == before["clusters"]


def test_a_failing_host_stops_the_rollout_a_rerun_finishes_and_rollback_goes_back(lab, run_tasks, tmp_path, bundles):
    hot_migrate(run_tasks, True)
    automation = [(c["drs"], c["dpm"]) for c in lab.state()["clusters"] if c["name"] == "gpu-cluster"][0]
    lab.add_fault(kind="fail_remediation", host="esxi-02.lab.local")
    run = upgrade(lab, run_tasks, tmp_path, bundles, expect_failure=True)
    assert "stopped" in run.failed[-1]["msg"] and "esxi-02.lab.local" in run.failed[-1]["msg"]
    state, hosts, vms, cluster = cluster_truth(lab)
    assert hosts["esxi-03.lab.local"] == (NEW_IMAGE, False)
    assert hosts["esxi-02.lab.local"] == (OLD_IMAGE, True), "the failed host keeps what it ran"
    assert hosts["esxi-01.lab.local"] == (OLD_IMAGE, False), "the rollout stopped before it"
    assert (cluster["drs"], cluster["dpm"]) == automation, "DRS/DPM put back"
    record = upgrade_record(cluster)
    assert record["state"] == "upgrading" and dict(record["previous_image"], ESXi=BASE_IMAGE) == OLD_IMAGE, \
        "the cluster in vCenter keeps the image from before, for a run from any controller"
    replay(state)

    direct = Direct(lab)
    try:
        direct.host("esxi-02.lab.local").ExitMaintenanceMode_Task(timeout=0)
    finally:
        direct.close()
    # Run again once the host is fixed: the hosts left behind are found by a scan and finished.
    upgrade(lab, run_tasks, tmp_path, bundles)
    assert cluster_truth(lab)[1] == dict((name, (NEW_IMAGE, False)) for name in GPU_HOSTS)

    assert upgrade_record(cluster_truth(lab)[3])["state"] == "upgraded"

    upgrade(lab, run_tasks, tmp_path, driver_upgrade_rollback=True)
    state, hosts, vms, cluster = cluster_truth(lab)
    assert upgrade_record(cluster)["state"] == "rolled_back"
    assert cluster["image"] == OLD_IMAGE
    assert [c["image"] for c in cluster["image_commits"]][-1] == OLD_IMAGE
    assert hosts == dict((name, (OLD_IMAGE, False)) for name in GPU_HOSTS)
    assert all(power == "poweredOn" for _host, power in vms.values())
    replay(state)
