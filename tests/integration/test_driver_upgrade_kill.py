# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The driver_upgrade role killed (ansible-playbook, its workers and their modules) while the upgrade has VMs away:
suspended on a host that is being remediated, or moved off it by DRS; then one more run. Every VM that ran before
runs again, on the host the plan wanted, no host is left in maintenance mode, DRS/DPM are as they were, every host
runs the target, and the run names the interrupted upgrade it finished.

The lab is the one of test_role_driver_upgrade (gpu-cluster, gpu-vm-01 and gpu-vm-02 on esxi-01, gpu-vm-04 on
esxi-02), with vLCM taking 15 s to install the image on a host, so that the VMs stay away long enough for the test
to see them away and kill the run then, and the next run comes while vLCM still works on the host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys
import time

import pytest
import yaml

from conftest import ROOT
from site_run import kill_tree
from test_role_driver_upgrade import (GPU_HOSTS, NEW_IMAGE, RUNNING, Depot, cluster_truth, hot_migrate, replay,
                                      upgrade, upgrade_lab, upgrade_record, upgrade_task)


FIELD = "gpuops.vgpu.driver_upgrade"


@pytest.fixture
def lab(labs, tmp_path_factory):
    return upgrade_lab(labs, tmp_path_factory, delay_ms=15000)


@pytest.fixture
def bundles(lab):
    depot = Depot(lab)
    return [depot.url(depot.driver("535.54.06")), depot.url(depot.daemon("535.54.06"))]


def role_command(lab, tmp_path, task):
    """argv and environment of an ansible-playbook run of ``task`` against the lab, as run_tasks makes them."""
    play = [{"name": "driver upgrade", "hosts": "localhost", "gather_facts": False,
             "module_defaults": {"group/gpuops.vgpu.vcenter": lab.connection}, "tasks": [task]}]
    playbook = tmp_path / "killed.yml"
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook")] + lab.inventory_args + [str(playbook)]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0")
    return argv, env


def away(state, policy):
    """The VMs of RUNNING that are away now: suspended, or (migrate) running off their host while a host is in
    maintenance mode."""
    vms = dict((vm["name"], vm) for vm in state["vms"] if vm["name"] in RUNNING)
    if policy == "suspend":
        return sorted(name for name, vm in vms.items() if vm["power_state"] == "suspended")
    out = [host["name"] for host in state["hosts"] if host["name"] in GPU_HOSTS and host["maintenance_mode"]]
    return sorted(name for name, vm in vms.items() if out and vm["host"] != RUNNING[name])


def kill_when_away(lab, argv, env, policy, timeout=300):
    """Run ``argv`` and SIGKILL its whole process tree as soon as the lab shows VMs away; the VMs seen away, or []
    when the run ended first."""
    output = open(os.devnull, "w")
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    seen, deadline = [], time.monotonic() + timeout
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            seen = away(lab.state(), policy)
            if seen:
                kill_tree(proc.pid)
                break
            time.sleep(0.1)
    finally:
        if proc.poll() is None and not seen:
            kill_tree(proc.pid)
        proc.wait()
        output.close()
    return seen


def recovery_lines(run):
    """What the run said it recovered (the messages of its debug tasks)."""
    lines = []
    for result in run.results:
        msg = result.get("msg")
        if isinstance(msg, str) and "interrupted" in msg:
            lines.append(msg)
    return lines


@pytest.mark.parametrize("policy, hot", [("suspend", False), ("migrate", True)])
def test_an_upgrade_killed_while_vms_are_away_is_finished_by_one_more_run(lab, run_tasks, tmp_path, bundles,
                                                                          policy, hot):
    hot_migrate(run_tasks, hot)
    start = lab.state()
    automation = [(c["drs"], c["dpm"]) for c in start["clusters"] if c["name"] == "gpu-cluster"][0]
    planned = upgrade(lab, run_tasks, tmp_path, bundles, check=True, driver_upgrade_policy=policy)
    plan = [r for r in planned.results if isinstance(r.get("vms"), list) and "steps" in r][0]
    end_hosts = dict((vm["vm"], vm["host"]) for vm in plan["vms"])

    argv, env = role_command(lab, tmp_path, upgrade_task(lab, bundles, driver_upgrade_policy=policy))
    seen = kill_when_away(lab, argv, env, policy)
    assert seen, "the upgrade never had a VM away"
    killed = lab.state()  # vLCM's remediation of the step goes on in vCenter; the next run comes at once
    raw = [c for c in killed["clusters"] if c["name"] == "gpu-cluster"][0]["custom_values"][FIELD]
    record = json.loads(raw)
    assert record["data"]["state"] == "upgrading", "the kill came inside the rollout"

    run = upgrade(lab, run_tasks, tmp_path, bundles, driver_upgrade_policy=policy)
    state, hosts, vms, cluster = cluster_truth(lab)
    assert hosts == dict((name, (NEW_IMAGE, False)) for name in GPU_HOSTS), "every host on the target, none in " \
        "maintenance mode"
    assert dict((name, power) for name, (_host, power) in vms.items()) == dict((name, "poweredOn") for name in RUNNING)
    placed = dict((name, host) for name, (host, _power) in vms.items())
    if policy == "suspend":
        assert placed == end_hosts == RUNNING, "on the hosts the plan wanted: their own"
    else:
        # vLCM's remediation leaves the choice of target to DRS, in an uninterrupted run too: the plan's end hosts
        # are its forecast. Every VM runs on a host of the cluster that is on the target.
        assert set(placed.values()) <= set(GPU_HOSTS) and set(end_hosts) == set(placed)
    assert (cluster["drs"], cluster["dpm"]) == automation, "DRS/DPM as they were"
    assert upgrade_record(cluster)["state"] == "upgraded"
    replay(state)
    waited = [r["waited_for"] for r in run.results if r.get("waited_for")]
    assert waited and waited[0][0]["status"] == "SUCCEEDED", "the next run waited for vLCM's remediation to end"
    said = recovery_lines(run)
    assert said and any(record["run"] in line and waited[0][0]["task"] in line for line in said), \
        json.dumps(run.results, indent=1)[:4000]
