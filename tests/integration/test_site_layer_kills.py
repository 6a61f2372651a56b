# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/site.yml killed (ansible-playbook, its workers and their modules) inside each task that takes something
away to change it: a host in maintenance mode for its BIOS or its driver, DRS/DPM off, VMs powered off for their
vGPU, and the restore of DRS/DPM; then run again until it succeeds. The lab ends where a clean run ends: no VM that
was on is off, no host left in maintenance mode, DRS/DPM as they were, no lock.

GPUOPS_LAYER_KILLS picks the layers (names of LAYERS, comma-separated, or ``all``; default ``vms,drs_restore``: make soak
runs all); GPUOPS_CRASH_SEEDS the seeds that choose how far into the task the kill comes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import random

import pytest

from site_run import (half_done, kill_at_task, log_trial, not_converged, run_site, runs_until_success, seeds,
                      site_command, site_inventory)

LAYERS = {
    "bios_reboot": "bios : Restart the server and wait until the BIOS values are current",
    "driver_remediation": "host_driver : Remediate the hosts to the image",
    "drs_off": "cluster_vgpu : Turn DRS and DPM off",
    "vms": "vgpu_assign : Put the vGPU profiles on the VMs",
    "drs_restore": "cluster_vgpu : Put DRS and DPM back",
}
MAX_RUNS = 3


def chosen_layers():
    text = os.environ.get("GPUOPS_LAYER_KILLS") or "vms,drs_restore"
    return sorted(LAYERS) if text == "all" else [name.strip() for name in text.split(",")]


@pytest.mark.parametrize("seed", seeds("GPUOPS_CRASH_SEEDS", "7"))
@pytest.mark.parametrize("layer", chosen_layers())
def test_site_run_killed_inside_a_task_that_takes_something_away_is_restored_by_the_next_run(lab, tmp_path, layer,
                                                                                             seed):
    start = lab.state()
    inventory = site_inventory(lab, tmp_path / "site.yml")
    delay = round(random.Random(seed).uniform(0.1, 2.0), 2)
    argv, env = site_command(lab, inventory, tmp_path)
    killed = kill_at_task(argv, env, LAYERS[layer], delay)
    assert killed is not None, "site.yml never reached %s" % LAYERS[layer]
    assert half_done(lab.state()) == [], "%s, seed %d" % (layer, seed)
    runs = runs_until_success(lambda: run_site(lab, inventory, tmp_path), MAX_RUNS)
    run = runs[-1]
    left = not_converged(lab, start, tmp_path)
    log_trial("layer_kill", layer=layer, seed=seed, delay=delay, task=killed, runs=len(runs),
              converged=run.returncode == 0 and not left)
    assert run.returncode == 0, "%s, seed %d; last run:\n%s" % (layer, seed, run.stdout[-4000:])
    assert left == [], "%s, seed %d" % (layer, seed)
