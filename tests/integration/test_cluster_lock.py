# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_lock against the lab: one run at a time, what vCenter holds is the truth (the cluster's custom values in
/lab/state); two runs at once, waiting, expiry, a killed run's lock, breaking it on purpose."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import socket
import subprocess
import threading
import time

import pytest
from pyVmomi import vim

from site_run import run_site, site_inventory
from vsphere_direct import Direct

CLUSTER = "gpu-cluster"


def lock_task(run_id, **options):
    return {"name": "lock %s" % run_id, "gpuops.vgpu.cluster_lock": dict(cluster=CLUSTER, run_id=run_id, **options)}


def holder(lab):
    """The lock of gpu-cluster as vCenter holds it: (field name, parsed value), or None."""
    cluster = next(item for item in lab.state()["clusters"] if item["name"] == CLUSTER)
    locks = dict((name, value) for name, value in cluster["custom_values"].items()
                 if name.startswith("gpuops.vgpu.lock."))
    assert len(locks) <= 1
    return json.loads(list(locks.values())[0]) if locks else None


def plant(lab, **value):
    """A lock left by another run, written with plain pyVmomi calls as that run would have."""
    direct = Direct(lab)
    try:
        cluster = direct._find(vim.ClusterComputeResource, CLUSTER)
        manager = direct.content.customFieldsManager
        field = manager.AddCustomFieldDef(name="gpuops.vgpu.lock." + cluster._moId, moType=vim.ClusterComputeResource)
        if value:
            manager.SetField(entity=cluster, key=field.key, value=json.dumps(value))
    finally:
        direct.close()


def other_run(**changes):
    value = {"owner": "awx@ctl-02", "run_id": "awx-job-17", "controller": "ctl-02", "pid": 4242,
             "since": "2026-01-01T00:00:00Z", "expires": "2099-01-01T00:00:00Z"}
    value.update(changes)
    return value


def test_take_in_check_mode_then_take_renew_and_release(lab, run_tasks):
    check = run_tasks([lock_task("run-a")], check=True)
    assert check.result(0)["changed"] is True and holder(lab) is None

    taken = run_tasks([lock_task("run-a", owner="alice@ctl-01", ttl=600)]).result(0)
    held = holder(lab)
    assert taken["changed"] is True and held == taken["lock"]
    assert held["owner"] == "alice@ctl-01" and held["run_id"] == "run-a"
    assert held["controller"] == socket.gethostname()
    assert held["expires"] > held["since"]

    renewed = run_tasks([lock_task("run-a", owner="alice@ctl-01", ttl=7200)]).result(0)
    assert renewed["changed"] is False
    assert holder(lab)["since"] == held["since"] and holder(lab)["expires"] > held["expires"]

    assert run_tasks([lock_task("run-a", state="absent")], check=True).result(0)["changed"] is True
    assert holder(lab) is not None
    assert run_tasks([lock_task("run-a", state="absent")]).result(0)["changed"] is True
    assert holder(lab) is None
    assert run_tasks([lock_task("run-a", state="absent")]).result(0)["changed"] is False


def test_two_runs_at_once_one_gets_the_lock_the_other_refuses_naming_it(lab, run_tasks):
    outcomes = {}

    def attempt(run_id):
        # The winner's play goes on after taking the lock, as a real run does: a lock whose playbook has already
        # ended on this controller is taken over, and on a loaded machine one run could end before the other starts.
        hold = {"name": "hold the lock", "ansible.builtin.pause": {"seconds": 20}}
        outcomes[run_id] = run_tasks([lock_task(run_id, owner=run_id + "@ctl", wait=0), hold],
                                     expect_failure=None, playbook_name=run_id + ".yml")

    threads = [threading.Thread(target=attempt, args=(run_id,)) for run_id in ("run-a", "run-b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [run_id for run_id, outcome in outcomes.items() if outcome.rc == 0]
    assert len(winners) == 1, dict((run_id, outcome.failed) for run_id, outcome in outcomes.items())
    winner, = winners
    loser = "run-b" if winner == "run-a" else "run-a"
    assert holder(lab)["run_id"] == winner
    message = outcomes[loser].failed[0]["msg"]
    assert message.startswith("Cluster gpu-cluster is locked by %s@ctl (run %s) since " % (winner, winner))
    assert "cluster_lock_break=true" in message


def test_the_second_run_waits_and_gets_the_lock_when_the_first_lets_go(lab, run_tasks):
    # Held by a run of another controller (a lock of this controller whose playbook has ended would be taken over).
    plant(lab, **other_run(run_id="run-a"))
    releaser = threading.Timer(4, lambda: run_tasks([lock_task("run-a", state="absent", owner="awx@ctl-02")],
                                                    playbook_name="release.yml"))
    started = time.monotonic()
    releaser.start()
    try:
        second = run_tasks([lock_task("run-b", wait=120)], playbook_name="second.yml").result(0)
    finally:
        releaser.join()
    assert second["changed"] is True and holder(lab)["run_id"] == "run-b"
    assert time.monotonic() - started >= 4


def test_a_held_lock_refuses_after_the_bounded_wait_naming_the_first_run(lab, run_tasks):
    plant(lab, **other_run())
    started = time.monotonic()
    run = run_tasks([lock_task("run-b", wait=3)], expect_failure=True)
    assert time.monotonic() - started >= 3
    message = run.failed[0]["msg"]
    assert ("Cluster gpu-cluster is locked by awx@ctl-02 (run awx-job-17) since 2026-01-01T00:00:00Z: another run "
            "is changing it, until 2099-01-01T00:00:00Z at the latest. Waited 3 seconds.") in message
    assert holder(lab)["run_id"] == "awx-job-17"
    refused = run_tasks([lock_task("run-b", state="absent")], expect_failure=True)
    assert "not by this run (run-b); it is not released" in refused.failed[0]["msg"]
    assert holder(lab)["run_id"] == "awx-job-17"


def test_an_expired_lock_is_taken_over(lab, run_tasks):
    plant(lab, **other_run(expires="2026-01-01T01:00:00Z"))
    result = run_tasks([lock_task("run-b", wait=0)]).result(0)
    assert result["broke"]["run_id"] == "awx-job-17" and result["broke"]["reason"] == "it expired at 2026-01-01T01:00:00Z"
    assert holder(lab)["run_id"] == "run-b"


def test_the_lock_of_a_killed_run_on_this_controller_is_taken_over(lab, run_tasks):
    dead = subprocess.Popen(["true"])
    dead.wait()
    plant(lab, **other_run(controller=socket.gethostname(), pid=dead.pid))
    result = run_tasks([lock_task("run-b", wait=0)]).result(0)
    assert result["broke"]["reason"] == "its ansible-playbook process %d on %s has ended" % (
        dead.pid, socket.gethostname())
    assert holder(lab)["run_id"] == "run-b"


def test_break_takes_a_live_lock_on_purpose(lab, run_tasks):
    plant(lab, **other_run())
    assert run_tasks([lock_task("run-b", wait=0)], expect_failure=True).rc != 0
    predicted = run_tasks([lock_task("run-b", wait=0, **{"break": True})], check=True).result(0)
    assert predicted["changed"] is True and holder(lab)["run_id"] == "awx-job-17"
    result = run_tasks([lock_task("run-b", wait=0, **{"break": True})]).result(0)
    assert result["broke"]["run_id"] == "awx-job-17" and result["broke"]["reason"] == "you set break"
    assert holder(lab)["run_id"] == "run-b"


def test_bad_input_is_refused_before_any_change(lab, run_tasks):
    before = lab.state()
    run = run_tasks([lock_task("run-a", ttl=5)], expect_failure=True)
    assert "ttl 5 is too short" in run.failed[0]["msg"] and "at least 60" in run.failed[0]["msg"]
    run = run_tasks([lock_task("run-a", wait=-1)], expect_failure=True)
    assert "wait -1 is negative" in run.failed[0]["msg"]
    assert lab.state() == before


@pytest.mark.parametrize("value", [None, "not json"])
def test_a_lock_whose_owner_was_never_written_is_refused_while_young(lab, run_tasks, value):
    plant(lab) if value is None else plant(lab, note=value)
    run = run_tasks([lock_task("run-b", wait=0)], expect_failure=True)
    assert "locked by a run that had not written its name yet" in run.failed[0]["msg"]


def test_a_site_run_refuses_a_cluster_another_run_holds_before_any_change(lab, tmp_path):
    plant(lab, **other_run())
    before = lab.state()
    run = run_site(lab, site_inventory(lab, tmp_path / "site.yml"), tmp_path, {"cluster_lock_wait": 0})
    assert run.returncode != 0
    assert "Cluster gpu-cluster is locked by awx@ctl-02 (run awx-job-17) since 2026-01-01T00:00:00Z" in run.stdout
    assert lab.state() == before
