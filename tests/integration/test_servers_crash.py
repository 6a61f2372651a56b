# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Crash consistency on the bare-metal GPU servers: playbooks/servers.yml killed (SIGKILL, the controller dying with
its workers and its SSH connections) at a seeded task of the servers' first converge, from no driver, then run again
until it succeeds: each server ends as a clean run leaves it (the driver installed and loaded at its version, Fabric
Manager of that version running the program its package installed with the HGX fabric completed, the CUDA toolkit,
NCCL and nccl-tests), and a further run changes nothing.

The kill may come inside the driver's reboot, between a package's install and its service's restart, or in a build:
the seeds choose. GPUOPS_SERVERS_CRASH_SEEDS chooses them (default: one; make soak runs more);
GPUOPS_SERVERS_CRASH_SEEDS=<seed> replays one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import random
import subprocess
import sys

import pytest

from conftest import LAB_CONTROL, PORT_OFFSET, ROOT, lab_servers
from site_run import kill_at_task, log_trial, runs_until_success, seeds

sys.path.insert(0, os.path.join(ROOT, ".tmp", "collections"))
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import parse_query  # noqa: E402

HGX, PCIE = "hgx-01.lab.local", "pcie-01.lab.local"
STATE_DIR = os.path.join(ROOT, ".tmp", "servers-crash-%d" % PORT_OFFSET)
# The servers' first converge shows about 126 task banners; a kill point past the end lets the run finish.
TASK_BANNERS = 130
MAX_RUNS = 3
DRIVER, CUDA = "535.161.08", "/usr/local/cuda-12.1"
NCCL = ["libnccl-dev 2.21.5-1+cuda12.1", "libnccl2 2.21.5-1+cuda12.1"]


@pytest.fixture
def servers(lab):
    with lab_servers(lab, STATE_DIR, 290) as started:
        yield started


def on(server, *command):
    return LAB_CONTROL.podman("exec", server["container"], *command, check=False).stdout


def servers_command(tmp_path):
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
            "-i", os.path.join(STATE_DIR, "inventory.yml"), os.path.join(ROOT, "playbooks", "servers.yml"),
            "-e", "bios_maintenance_record=%s" % (tmp_path / "bios.json")]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0",
               ANSIBLE_FORCE_COLOR="0")
    return argv, env


def run(tmp_path):
    argv, env = servers_command(tmp_path)
    return subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)


# On the server: whether the unit is active and became active after its program (ExecStart's path) was put in place,
# its inode's change time; systemd's monotonic start taken to the wall clock with the server's own clocks.
STARTED_AFTER_PROGRAM = """
import os, re, subprocess, sys, time
show = subprocess.run(["systemctl", "show", "-p", "ActiveState,ActiveEnterTimestampMonotonic,ExecStart", sys.argv[1]],
                      stdout=subprocess.PIPE, universal_newlines=True).stdout
props = dict(line.split("=", 1) for line in show.splitlines() if "=" in line)
program = re.search(r"path=([^ ;]+)", props.get("ExecStart", "")).group(1)
started = time.time() - (time.monotonic() - int(props["ActiveEnterTimestampMonotonic"]) / 1e6)
print(props["ActiveState"] == "active" and started > os.stat(program).st_ctime)
"""


def service_runs_its_program(server, unit):
    """Whether ``unit`` runs the program its package put in place: a daemon started before a package replaced its
    program still runs the old one."""
    return on(server, "python3", "-c", STARTED_AFTER_PROGRAM, unit).strip() == "True"


def left_behind(servers):
    """What a clean run never leaves on a server, per server."""
    problems, reports = [], {}
    for name, server in servers.items():
        text = on(server, "nvidia-smi", "-q")
        if "==============NVSMI LOG==============" not in text:
            problems.append("%s: nvidia-smi fails: %s" % (name, text[-300:]))
            continue
        reports[name] = parse_query(text)
        if reports[name]["driver_version"] != DRIVER:
            problems.append("%s: driver %s" % (name, reports[name]["driver_version"]))
    for name, server in servers.items():
        if on(server, "readlink", "/usr/local/cuda").strip() != CUDA:
            problems.append("%s: /usr/local/cuda is not %s" % (name, CUDA))
        installed = on(server, "sh", "-c", "dpkg-query -W -f '${Package} ${Version}\\n' libnccl2 libnccl-dev "
                                           "2>/dev/null; true")
        if sorted(installed.splitlines()) != NCCL:
            problems.append("%s: NCCL %s" % (name, installed.splitlines()))
        if "all_reduce_perf" not in on(server, "ls", "/opt/nccl-tests/bin").split():
            problems.append("%s: nccl-tests not built" % name)
        broken = on(server, "sh", "-c", "dpkg -l | awk '$1 !~ /^(ii|rc)$/ && NR > 5 {print $1, $2}'").strip()
        if broken:
            problems.append("%s: packages half installed: %s" % (name, broken))
    fabric = [(gpu["fabric_state"], gpu["fabric_status"]) for gpu in (reports.get(HGX) or {}).get("gpus", [])]
    if fabric != [("Completed", "Success")] * 8:
        problems.append("HGX fabric: %s" % fabric)
    if not service_runs_its_program(servers[HGX], "nvidia-fabricmanager"):
        problems.append("HGX: Fabric Manager not running the program its package installed")
    return problems


@pytest.mark.parametrize("seed", seeds("GPUOPS_SERVERS_CRASH_SEEDS", "1"))
def test_servers_converge_killed_at_a_seeded_task_converges_on_the_next_run(servers, tmp_path, seed):
    rng = random.Random(seed)
    kill_at, delay = rng.randint(1, TASK_BANNERS), round(rng.uniform(0, 1.5), 2)
    killed = kill_at_task(*servers_command(tmp_path), kill_at=kill_at, delay=delay)

    runs = runs_until_success(lambda: run(tmp_path), MAX_RUNS)
    result = runs[-1]
    log_trial("servers_crash", seed=seed, kill_at=kill_at, delay=delay, task=killed, runs=len(runs),
              converged=result.returncode == 0)
    assert result.returncode == 0, "seed %d, killed at %s; last run:\n%s" % (seed, killed, result.stdout[-6000:])
    assert left_behind(servers) == [], "seed %d, killed at %s" % (seed, killed)

    again = run(tmp_path)
    recap = [line for line in again.stdout.splitlines() if line.startswith((HGX + " ", PCIE + " "))]
    assert again.returncode == 0 and len(recap) == 2 and all("changed=0" in line for line in recap), (
        "seed %d, killed at %s:\n%s" % (seed, killed, again.stdout[-6000:]))
