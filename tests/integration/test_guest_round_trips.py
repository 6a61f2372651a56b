# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guest layer (playbooks/guests.yml: grid_driver, grid_license, cuda_toolkit, cudnn, gpu_validate) on a lab
guest reached over SSH: a converged guest costs at most 12 remote task executions, and a guest that lost its
license token gets only the token, the restart and the verification.

The guest is a lab guest container of its own (labctl.start_guests), not the default lab's; the counts come from
the test tree's remote_tasks callback (tests/callback_plugins), the end state from the guest itself.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from conftest import LAB_CONTROL, PORT_OFFSET, ROOT

sys.path.insert(0, os.path.join(ROOT, "lab", "guests"))
import inventory as lab_inventory  # noqa: E402  pylint: disable=wrong-import-position

MAX_CONVERGED_REMOTE_TASKS = 12
GUEST = "roundtrip-guest"
TOKEN = "/etc/nvidia/ClientConfigToken/client_configuration_token_05-26-2022-00-08-28.tok"
STATE_DIR = os.path.join(ROOT, ".tmp", "guest-round-trips-%d" % PORT_OFFSET)


@pytest.fixture(scope="module")
def guest():
    os.makedirs(STATE_DIR, exist_ok=True)
    # Its own port range: 100 above the lab's guests at the same offset.
    started = LAB_CONTROL.start_guests([{"name": GUEST, "ssh_port": LAB_CONTROL.GUEST_SSH_PORT + 100}], STATE_DIR,
                                       PORT_OFFSET)
    container = started[GUEST]["container"]
    inventory = lab_inventory.write_inventory(os.path.join(STATE_DIR, "inventory.yml"), started, STATE_DIR)
    yield {"container": container, "inventory": inventory}
    LAB_CONTROL.stop_guests([container])


def on_guest(guest, *command):
    return LAB_CONTROL.podman("exec", guest["container"], *command, check=False)


def converge(guest, name, *args):
    """Runs playbooks/guests.yml on the guest; returns the callback's report with the recap line."""
    report = os.path.join(STATE_DIR, "remote-tasks-%s.json" % name)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"),
               ANSIBLE_CALLBACK_PLUGINS=os.path.join(ROOT, "tests", "callback_plugins"),
               ANSIBLE_CALLBACKS_ENABLED="remote_tasks", GPUOPS_REMOTE_TASKS_FILE=report, ANSIBLE_NOCOLOR="1",
               ANSIBLE_RETRY_FILES_ENABLED="0")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", guest["inventory"],
                           os.path.join(ROOT, "playbooks", "guests.yml")] + list(args),
                          cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          check=False)
    assert proc.returncode == 0, proc.stdout[-6000:]
    with open(report) as handle:
        result = json.load(handle)
    result["recap"] = [line for line in proc.stdout.splitlines() if line.startswith(GUEST + " ")][-1]
    result["output"] = proc.stdout
    return result


def test_converged_guest_costs_at_most_12_remote_tasks_and_a_lost_token_only_its_repair(guest):
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
    assert repaired["remote_tasks"][GUEST] <= MAX_CONVERGED_REMOTE_TASKS + len(repair) + 1, repaired["tasks"][GUEST]
    assert "License Status                    : Licensed" in on_guest(guest, "nvidia-smi", "-q").stdout
    token = on_guest(guest, "stat", "-c", "%a %U %G", TOKEN).stdout.split()
    assert token == ["744", "root", "root"]
