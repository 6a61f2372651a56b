# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/guests.yml on a lab guest container of a test's own (labctl.start_guests), reached over SSH."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import os
import subprocess
import sys
import time

from conftest import LAB_CONTROL, PORT_OFFSET, ROOT

sys.path.insert(0, os.path.join(ROOT, "lab", "guests"))
import inventory as lab_inventory  # noqa: E402  pylint: disable=wrong-import-position

GUESTS = os.path.join(ROOT, "playbooks", "guests.yml")
PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")


@contextlib.contextmanager
def lab_guest(name, port_above_lab_guests):
    """A guest container named ``name`` on its own SSH port (``port_above_lab_guests`` above the lab's guests at this
    worker's offset); yields ``{"name", "container", "inventory", "state_dir"}`` and removes the container
    afterwards."""
    state_dir = os.path.join(ROOT, ".tmp", "%s-%d" % (name, PORT_OFFSET))
    os.makedirs(state_dir, exist_ok=True)
    started = LAB_CONTROL.start_guests([{"name": name, "ssh_port": LAB_CONTROL.GUEST_SSH_PORT + port_above_lab_guests}],
                                       state_dir, PORT_OFFSET)
    container = started[name]["container"]
    inventory = lab_inventory.write_inventory(os.path.join(state_dir, "inventory.yml"), started, state_dir)
    try:
        yield {"name": name, "container": container, "inventory": inventory, "state_dir": state_dir}
    finally:
        LAB_CONTROL.stop_guests([container])


def on_guest(guest, *command):
    return LAB_CONTROL.podman("exec", guest["container"], *command, check=False)


def run_guests(guest, *args):
    """One guests.yml run on ``guest``, its output with standard error, at most 15 minutes."""
    argv, env = guests_command(guest, *args)
    return subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=900)


def wait_idle(guest, seconds=60, quiet=2.0):
    """Wait until no Ansible command runs on ``guest`` for ``quiet`` seconds: a killed controller does not stop what
    its SSH sessions already started there, nor a command its SSH control master had already passed on, whose shell
    appears a moment later; a test reads the guest once all of that has ended. Ansible's remote commands name its
    temporary directory or the module's file (``ansible-tmp-``, ``AnsiballZ_``)."""
    deadline = time.monotonic() + seconds
    quiet_since = time.monotonic()
    while time.monotonic() - quiet_since < quiet:
        if on_guest(guest, "pgrep", "-f", "ansible-tmp-|AnsiballZ_").returncode == 0:
            quiet_since = time.monotonic()
        assert time.monotonic() < deadline, "an Ansible command still runs on the guest after %d s" % seconds
        time.sleep(0.3)


def guests_command(guest, *args, **env_extra):
    """argv and environment of a guests.yml run on ``guest``."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0",
               **env_extra)
    return [PLAYBOOK, "-i", guest["inventory"], GUESTS] + list(args), env
