# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Crash consistency on a guest: playbooks/guests.yml killed (SIGKILL, the controller dying with its workers and its
SSH connections) at a seeded task of a guest's first converge, then run again until it succeeds: the guest ends as a
clean run leaves it, with one license token, a whole gridd.conf and nothing left behind by the killed run, and a
further run changes nothing.

GPUOPS_GUEST_CRASH_SEEDS chooses the seeds (default: one; make soak runs more); GPUOPS_GUEST_CRASH_SEEDS=<seed>
replays one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import random
import re

import pytest

from guest_run import guests_command, lab_guest, on_guest, run_guests, wait_idle
from site_run import kill_at_task, log_trial, runs_until_success, seeds

GUEST = "crash-guest"
# A guest's first converge shows about 90 task banners; a kill point past the end lets the run finish.
TASK_BANNERS = 90
MAX_RUNS = 3
KILL_ATTEMPTS = 3
TOKEN_DIR = "/etc/nvidia/ClientConfigToken"
GRIDD_CONF = "/etc/nvidia/gridd.conf"
# The lab's token of another license server (lab/guests/standins/build.py).
OTHER_TOKEN = "client_configuration_token_01-03-2022-09-15-00.tok"
SETTING = re.compile(r"^\s*(#.*)?$|^[A-Za-z][A-Za-z0-9]*=\S*$")


@pytest.fixture
def guest():
    with lab_guest(GUEST, 110) as started:
        yield started


def run_and_kill(guest, kill_at, delay):
    """guests.yml killed ``delay`` seconds into its kill_at-th task; the task's banner, or None when it ended first."""
    argv, env = guests_command(guest)
    return kill_at_task(argv, env, kill_at, delay)


def run(guest, *args):
    return run_guests(guest, *args)


def leftovers(guest):
    """What a clean run never leaves on the guest: a second token, a gridd.conf cut short or with a line that is not
    a setting, Ansible's temporary files beside the files it wrote."""
    problems = []
    tokens = on_guest(guest, "sh", "-c", "ls %s/*.tok 2>/dev/null" % TOKEN_DIR).stdout.split()
    if len(tokens) != 1:
        problems.append("%d license tokens in %s: %s" % (len(tokens), TOKEN_DIR, tokens))
    conf = on_guest(guest, "cat", GRIDD_CONF).stdout
    if "FeatureType=1" not in conf.splitlines() or not conf.endswith("\n"):
        problems.append("%s is not whole: %r" % (GRIDD_CONF, conf[-200:]))
    problems.extend("%s: not a setting: %r" % (GRIDD_CONF, line) for line in conf.splitlines()
                    if not SETTING.match(line))
    temporary = on_guest(guest, "find", "/etc/nvidia", "/etc/modprobe.d", "/etc/environment", "/usr/local",
                         "-maxdepth", "2", "-name", ".ansible_tmp*").stdout.split()
    if temporary:
        problems.append("temporary files left: %s" % temporary)
    return problems


@pytest.mark.parametrize("seed", seeds("GPUOPS_GUEST_CRASH_SEEDS", "4"))
def test_guest_converge_killed_at_a_seeded_task_converges_on_the_next_run(guest, seed):
    rng = random.Random(seed)
    kill_at, delay = rng.randint(1, TASK_BANNERS), round(rng.uniform(0, 1.5), 2)
    killed = run_and_kill(guest, kill_at, delay)

    runs = runs_until_success(lambda: run(guest), MAX_RUNS)
    result = runs[-1]
    log_trial("guest_crash", seed=seed, kill_at=kill_at, delay=delay, task=killed, runs=len(runs),
              converged=result.returncode == 0)
    assert result.returncode == 0, "seed %d, killed at %s; last run:\n%s" % (seed, killed, result.stdout[-4000:])

    assert leftovers(guest) == [], "seed %d, killed at %s" % (seed, killed)
    assert "License Status                    : Licensed" in on_guest(guest, "nvidia-smi", "-q").stdout
    assert on_guest(guest, "systemctl", "is-active", "nvidia-gridd").stdout.strip() == "active"
    assert "ii  nvidia-linux-grid-510" in on_guest(guest, "dpkg", "-l", "nvidia-linux-grid-510").stdout
    assert on_guest(guest, "readlink", "/usr/local/cuda").stdout.strip() == "/usr/local/cuda-11.6"
    assert "#define CUDNN_MAJOR 8" in on_guest(guest, "cat", "/usr/local/cuda-11.6/include/cudnn_version.h").stdout
    again = run(guest)
    recap = [line for line in again.stdout.splitlines() if line.startswith(GUEST + " ")]
    assert again.returncode == 0 and recap and "changed=0" in recap[-1], "seed %d, killed at %s:\n%s" % (
        seed, killed, again.stdout[-4000:])


def held_license(guest):
    """What the nvidia-gridd stand-in holds: the server and the token it read when it started."""
    return json.loads(on_guest(guest, "cat", "/run/nvidia-gridd/license.json").stdout or "{}")


def gridd_invocation(guest):
    """systemd's id of nvidia-gridd's current run: a restart changes it."""
    return on_guest(guest, "systemctl", "show", "--property=InvocationID", "--value", "nvidia-gridd").stdout.strip()


def test_a_token_placed_by_a_run_killed_before_the_restart_is_taken_up_by_the_next_run(guest):
    """Killed after the new token is placed and the old one removed, before nvidia-gridd restarts: the daemon still
    holds the old license, the files say converged. The next run sees the files newer than the daemon's start,
    restarts it and says so; the run after changes nothing."""
    other = ("-e", "grid_license_token_src={{ lab_standins }}/%s" % OTHER_TOKEN)
    argv, env = guests_command(guest, *other)
    for _attempt in range(KILL_ATTEMPTS):
        first = run(guest)
        assert first.returncode == 0, first.stdout[-4000:]
        assert held_license(guest)["server"] == "dls.gpuops.lab"
        started = gridd_invocation(guest)
        # The moment the old token is removed: a kill at the restart's banner can come after its systemctl is on its
        # way. Even so, the run may have passed the restart on to the guest before the kill, while this test read
        # the line: then the restart takes place and the kill is tried again.
        killed = kill_at_task(argv, env, "Remove older tokens", 0, when_done=True)
        assert killed, "the run ended before it removed the old token"
        wait_idle(guest)
        tokens = on_guest(guest, "sh", "-c", "ls %s" % TOKEN_DIR).stdout.split()
        assert tokens == [OTHER_TOKEN], tokens
        if gridd_invocation(guest) == started:
            break
    else:
        pytest.fail("each of %d kills came after the restart had reached the guest" % KILL_ATTEMPTS)
    assert held_license(guest)["server"] == "dls.gpuops.lab", held_license(guest)

    again = run(guest, *other)
    assert again.returncode == 0, again.stdout[-4000:]
    assert held_license(guest)["server"] == "dls-old.gpuops.lab"
    assert "%s/%s changed (a run stopped before restarting it): restarted it" % (TOKEN_DIR, OTHER_TOKEN) in again.stdout, \
        again.stdout[-4000:]
    last = run(guest, *other)
    recap = [line for line in last.stdout.splitlines() if line.startswith(GUEST + " ")]
    assert last.returncode == 0 and recap and "changed=0" in recap[-1], last.stdout[-4000:]
    assert "had been running since before" not in last.stdout
