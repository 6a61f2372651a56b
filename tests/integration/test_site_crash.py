# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Crash consistency: playbooks/site.yml killed (SIGKILL, the controller dying with its workers) at a seeded task,
then run again until it succeeds: nothing half done where it stopped, and the lab ends where a clean run ends.

GPUOPS_CRASH_SEEDS chooses the seeds (default: one; make soak runs many); a failure names its seed, and
GPUOPS_CRASH_SEEDS=<seed> replays it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random

import pytest

from site_run import (half_done, kill_at_task, log_trial, not_converged, run_site, runs_until_success, seeds,
                      site_command, site_inventory)

# A clean site run on the lab shows about 200 task banners; a kill point past the end lets the run finish.
TASK_BANNERS = 200
MAX_RUNS = 3


def run_and_kill(lab, inventory, state_dir, kill_at, delay):
    """Run site.yml and SIGKILL it ``delay`` seconds into its kill_at-th task; the task's name, or None when the run
    ended first."""
    argv, env = site_command(lab, inventory, state_dir)
    return kill_at_task(argv, env, kill_at, delay)


@pytest.mark.parametrize("seed", seeds("GPUOPS_CRASH_SEEDS", "7"))
def test_site_run_killed_at_a_seeded_task_converges_on_the_next_run(lab, tmp_path, seed):
    start = lab.state()
    inventory = site_inventory(lab, tmp_path / "site.yml")
    rng = random.Random(seed)
    kill_at, delay = rng.randint(1, TASK_BANNERS), round(rng.uniform(0, 1.5), 2)
    killed = run_and_kill(lab, inventory, tmp_path, kill_at, delay)
    assert half_done(lab.state()) == [], "seed %d, killed at %s" % (seed, killed)

    runs = runs_until_success(lambda: run_site(lab, inventory, tmp_path), MAX_RUNS)
    run = runs[-1]
    log_trial("crash", seed=seed, kill_at=kill_at, delay=delay, task=killed, runs=len(runs),
              converged=run.returncode == 0)
    assert run.returncode == 0, "seed %d, killed at %s; last run:\n%s" % (seed, killed, run.stdout[-4000:])
    assert not_converged(lab, start, tmp_path) == [], "seed %d, killed at %s" % (seed, killed)


def test_drs_dpm_left_off_by_a_run_killed_after_the_cluster_layer_come_back_from_another_controller(
        lab, run_tasks, tmp_path):
    """A run from controller A dies after its cluster layer turned DRS/DPM off (their record in vCenter, written
    first); the next run, from controller B with state of its own and no VM left to change, puts them back."""
    start = lab.state()
    inventory = site_inventory(lab, tmp_path / "site.yml")
    controller_a, controller_b = tmp_path / "ctl-a", tmp_path / "ctl-b"
    controller_a.mkdir()
    controller_b.mkdir()
    first = run_site(lab, inventory, controller_a)
    assert first.returncode == 0, first.stdout[-4000:]
    run_tasks([{"name": "the cluster layer of a run that dies after it", "gpuops.vgpu.cluster_automation": {
        "cluster": "gpu-cluster", "drs_enabled": False, "dpm_enabled": False, "record": True,
        "run_id": "run-killed"}}])
    assert not_converged(lab, start, controller_b) != []

    second = run_site(lab, inventory, controller_b)
    assert second.returncode == 0, second.stdout[-4000:]
    assert "put back as run run-killed" in second.stdout
    assert not_converged(lab, start, controller_b) == []
