# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guest layer (playbooks/guests.yml: grid_driver, grid_license, cuda_toolkit, cudnn, gpu_monitoring,
gpu_validate) on a lab guest reached over SSH: a converged guest costs 2 remote task executions (the shared read
and gpu_validate's commands; the issue's floor is 12) and at most 30 task executions in all, and a guest that lost
its license token gets only the token, the restart and the verification.

The guest is a lab guest container of its own (labctl.start_guests), not the default lab's; the counts come from
the test tree's remote_tasks callback (tests/callback_plugins), the end state from the guest itself.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import time

import pytest

from conftest import systemd_drop_in
from guest_run import ROOT, guests_command, lab_guest, on_guest

# The play's one read of the guest (gpu_guest_info, covering every role's files and services) and gpu_validate's
# commands in one command_batch task.
MAX_CONVERGED_REMOTE_TASKS = 2
# The six roles decide once after the read and include their change steps, with the check that a rule is broken,
# only where the guest differs or a rule is broken.
MAX_CONVERGED_TASK_EXECUTIONS = 30
GUEST = "roundtrip-guest"
CONVERGED_GUEST = "roundtrip-converged"
TOKEN = "/etc/nvidia/ClientConfigToken/client_configuration_token_05-26-2022-00-08-28.tok"
CALLBACKS = os.path.join(ROOT, "tests", "callback_plugins")


@pytest.fixture
def guest():
    """A new guest: the test asserts what a first run on a new guest changes."""
    with lab_guest(GUEST, 100) as started:
        yield started


@pytest.fixture(scope="module")
def converged_guest():
    """A guest converged once for the tests that start from a converged guest; each leaves it converged."""
    with lab_guest(CONVERGED_GUEST, 105) as started:
        converge(started, "converged")
        yield started


def converge(guest, name, *args, **kwargs):
    """Runs playbooks/guests.yml on the guest, handing each line it prints to ``on_line`` (a keyword argument) as it
    comes; returns the callback's report with the recap line."""
    on_line = kwargs.get("on_line") or (lambda line: None)
    report = os.path.join(guest["state_dir"], "remote-tasks-%s.json" % name)
    argv, env = guests_command(guest, *args, ANSIBLE_CALLBACK_PLUGINS=CALLBACKS,
                               ANSIBLE_CALLBACKS_ENABLED="remote_tasks", GPUOPS_REMOTE_TASKS_FILE=report)
    lines = []
    with subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True) as proc:
        for line in proc.stdout:
            lines.append(line)
            on_line(line)
    output = "".join(lines)
    assert proc.returncode == 0, output[-6000:]
    with open(report) as handle:
        result = json.load(handle)
    result["recap"] = [line for line in output.splitlines() if line.startswith(guest["name"] + " ")][-1]
    result["output"] = output
    return result


def test_converged_guest_costs_2_remote_tasks_and_a_lost_token_only_its_repair(guest):
    first = converge(guest, "first")
    assert "changed=0" not in first["recap"]
    # The guest is as asked: driver package, license, toolkit, cuDNN.
    assert "ii  nvidia-linux-grid-510" in on_guest(guest, "dpkg", "-l", "nvidia-linux-grid-510").stdout
    assert "License Status                    : Licensed" in on_guest(guest, "nvidia-smi", "-q").stdout
    assert on_guest(guest, "readlink", "/usr/local/cuda").stdout.strip() == "/usr/local/cuda-11.6"
    assert "#define CUDNN_MAJOR 8" in on_guest(guest, "cat", "/usr/local/cuda-11.6/include/cudnn_version.h").stdout

    check = converge(guest, "check", "--check", "--diff")
    assert "changed=0" in check["recap"], check["changed"]

    second = converge(guest, "second")
    assert "changed=0" in second["recap"], second["changed"]
    assert second["remote_tasks"][GUEST] <= MAX_CONVERGED_REMOTE_TASKS, second["tasks"][GUEST]
    # Every task the controller evaluates for a converged guest (ok and skipped, one fork each) counts too.
    executions = sum(int(second["recap"].split(key + "=")[1].split()[0]) for key in ("ok", "skipped"))
    assert executions <= MAX_CONVERGED_TASK_EXECUTIONS, second["recap"]

    # A lost token: the check run predicts exactly the repair, the real run does only that and the verification.
    on_guest(guest, "rm", TOKEN)
    on_guest(guest, "systemctl", "restart", "nvidia-gridd")
    assert "Unlicensed" in on_guest(guest, "nvidia-smi", "-q").stdout
    predicted = converge(guest, "token-check", "--check", "--tags", "grid_license")
    repaired = converge(guest, "token")
    repair = ["gpuops.vgpu.grid_license : Place the client configuration token",
              "gpuops.vgpu.grid_license : Restart nvidia-gridd after a change"]
    assert predicted["changed"][GUEST] == repair
    assert repaired["changed"][GUEST] == repair
    # The repair, the wait for the license, and the read of the changed guest for the roles after grid_license.
    assert repaired["remote_tasks"][GUEST] <= MAX_CONVERGED_REMOTE_TASKS + len(repair) + 2, repaired["tasks"][GUEST]
    assert "License Status                    : Licensed" in on_guest(guest, "nvidia-smi", "-q").stdout
    token = on_guest(guest, "stat", "-c", "%a %U %G", TOKEN).stdout.split()
    assert token == ["744", "root", "root"]


COLLECTOR = "gpuops-gpu-metrics.service"
RELEASE = "/run/gpuops-release-collector"


def collector_state(guest):
    return on_guest(guest, "systemctl", "show", "--property=ActiveState", "--value", COLLECTOR).stdout.strip()


def test_a_collector_run_of_its_timer_during_a_converged_run_costs_no_second_read(converged_guest):
    """gpu_monitoring's collector is a oneshot service its timer starts: one run that is under way at the play's
    first read and over by the later reads changes nothing the roles read, so the guest is read once."""
    guest = converged_guest
    # The collector's next run waits for RELEASE, which is given while the play runs (at grid_license's first task).
    on_guest(guest, "rm", "-f", RELEASE)
    hold = "[Service]\nExecStartPre=/bin/sh -c \"until [ -e %s ]; do sleep 0.1; done\"\n" % RELEASE
    seen = {}

    def release(line):
        if line.startswith("TASK [gpuops.vgpu.grid_license") and "released" not in seen:
            seen["released"] = collector_state(guest)
            on_guest(guest, "touch", RELEASE)
        elif line.startswith("TASK [gpuops.vgpu.gpu_validate") and "at_validate" not in seen:
            seen["at_validate"] = collector_state(guest)

    with systemd_drop_in(guest["container"], COLLECTOR, hold):
        try:
            on_guest(guest, "systemctl", "start", "--no-block", COLLECTOR)
            deadline = time.monotonic() + 30
            while collector_state(guest) != "activating":
                assert time.monotonic() < deadline, on_guest(guest, "systemctl", "status", COLLECTOR).stdout
                time.sleep(0.2)
            run = converge(guest, "collector", on_line=release)
        finally:
            on_guest(guest, "touch", RELEASE)
    # The run went as meant: the collector ran through the first read and had ended before gpu_validate's.
    assert seen == {"released": "activating", "at_validate": "inactive"}, seen
    assert "changed=0" in run["recap"], run["changed"]
    assert run["remote_tasks"][guest["name"]] <= MAX_CONVERGED_REMOTE_TASKS, run["tasks"][guest["name"]]


GRIDD = "nvidia-gridd.service"
# Seconds the lab's nvidia-gridd takes to acquire its license after it starts: longer than a run takes to its
# first read, shorter than grid_license's wait.
ACQUIRE_SECONDS = 40


def test_a_license_still_on_its_way_at_the_first_read_is_waited_for_and_not_taken_from_that_read(converged_guest):
    """nvidia-gridd restarted just before the run (as a boot or another tool leaves it) acquires its license while
    the play runs, with no trace on the guest but nvidia-smi's answer: grid_license waits for it, and the roles
    after it read the license again rather than take the first read's Unlicensed."""
    guest = converged_guest
    slow = "[Service]\nEnvironment=GRIDD_ACQUIRE_SECONDS=%d\n" % ACQUIRE_SECONDS
    with systemd_drop_in(guest["container"], GRIDD, slow):
        on_guest(guest, "systemctl", "restart", GRIDD)
        assert "License Status                    : Unlicensed" in on_guest(guest, "nvidia-smi", "-q").stdout
        run = converge(guest, "license-on-its-way")
    # The run went as meant: grid_license found no license and waited for it.
    assert "FAILED - RETRYING: [%s]: Wait until nvidia-smi reports every GPU licensed" % guest["name"] \
        in run["output"], run["output"][-6000:]
    assert "changed=0" in run["recap"], run["changed"]
    assert "License Status                    : Licensed" in on_guest(guest, "nvidia-smi", "-q").stdout
