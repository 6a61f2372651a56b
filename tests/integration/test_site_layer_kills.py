# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/site.yml killed (ansible-playbook, its workers and their modules) inside each task that takes something
away to change it: a host in maintenance mode for its BIOS or its driver, DRS/DPM off, VMs powered off for their
vGPU, and the restore of DRS/DPM; then run again until it succeeds. The lab ends where a clean run ends: no VM that
was on is off, no host left in maintenance mode, DRS/DPM as they were, no lock.

GPUOPS_LAYER_KILLS picks the layers (names of LAYERS, comma-separated, or ``all``; default ``vms,drs_restore``: make soak
runs all); GPUOPS_CRASH_SEEDS the seeds that choose how far into the task the kill comes.

Two controllers at once: a run on one controller killed inside the VM layer holds the lock it took in vCenter; a run
on a second controller refuses, naming it, then, told to wait, takes it over once it expires and restores the lab.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import getpass
import os
import random
import subprocess
import time

import pytest

from site_run import (ROOT, half_done, kill_at_task, log_trial, not_converged, run_site, runs_until_success, seeds,
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


def on_controller(name, argv):
    """``argv`` as another controller runs it: in a UTS namespace of its own whose hostname is ``name``, the name
    cluster_lock records and goes by to tell whether the run that holds a lock is one of its own processes."""
    namespace = ["unshare", "--uts"] if os.geteuid() == 0 else ["unshare", "--user", "--map-root-user", "--uts"]
    return namespace + ["sh", "-c", 'hostname "$0" && exec "$@"', name] + argv


def settled_state(lab, timeout=60):
    """/lab/state once a vCenter task the killed run started has ended on its own: two reads a second apart agree."""
    deadline, state = time.monotonic() + timeout, lab.state()
    while time.monotonic() < deadline:
        time.sleep(1)
        again = lab.state()
        if again == state:
            return state
        state = again
    raise AssertionError("the lab's state still changed %d s after the kill" % timeout)


def site_on_controller(lab, inventory, state_dir, name, extra):
    argv, env = site_command(lab, inventory, state_dir, extra)
    return subprocess.run(on_controller(name, argv), cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False, timeout=900)


def test_two_controllers_one_killed_the_other_refuses_naming_it_then_takes_over_its_expired_lock(lab, tmp_path):
    start = lab.state()
    inventory = site_inventory(lab, tmp_path / "site.yml")
    ttl = 60  # the shortest cluster_lock takes
    argv, env = site_command(lab, inventory, tmp_path, {"cluster_lock_ttl": ttl})
    killed = kill_at_task(on_controller("ctl-a", argv), env, LAYERS["vms"], 0.5)
    assert killed is not None, "site.yml never reached %s" % LAYERS["vms"]
    left = settled_state(lab)

    refused = site_on_controller(lab, inventory, tmp_path, "ctl-b", {"cluster_lock_wait": 0})
    assert refused.returncode != 0
    assert "Cluster gpu-cluster is locked by %s@ctl-a (run " % getpass.getuser() in refused.stdout, refused.stdout[-3000:]
    assert lab.state() == left

    waited = site_on_controller(lab, inventory, tmp_path, "ctl-b", {"cluster_lock_wait": 3 * ttl})
    assert waited.returncode == 0, waited.stdout[-4000:]
    assert "Took over the lock of cluster gpu-cluster from %s@ctl-a" % getpass.getuser() in waited.stdout
    assert "it expired at" in waited.stdout
    assert not_converged(lab, start, tmp_path) == []
