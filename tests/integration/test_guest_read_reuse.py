# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_guest_info with reuse on a lab guest over SSH: a read that the play's earlier read covers is answered on the
controller without reading the guest again while the guest is as it was read (a file that no read covers, created in
between, does not matter), the first read also covers what the play's gpu_guest_info_reads names, a read that asks
for more reads only what is missing, and the guest is read again after a task of a role that knows nothing of the
read changed what it reports (a file created, then rewritten in place at the same size by a task that says it
changed nothing), after gpu_guest_info_changes moved, and always without reuse; a later play of the same run reuses
the read until the guest changes. A blacklist placed in /run/modprobe.d, which only modprobe reads, counts too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess

import pytest

from conftest import run_playbook
from guest_run import PLAYBOOK, ROOT, lab_guest, on_guest

GUEST = "reuse-guest"
PROBE = "/etc/gpuops-reuse-probe"
# A file a later read of the play asks for (gpu_guest_info_reads).
LATER = "/etc/os-release"
# A file that no read covers.
ELSEWHERE = "/var/tmp/gpuops-reuse-elsewhere"
CALLBACKS = os.path.join(ROOT, "tests", "callback_plugins")


def read(name, **options):
    args = dict({"gather": ["os"], "files": [PROBE], "reuse": True}, **options)
    return {"name": "Read (%s)" % name, "gpuops.vgpu.gpu_guest_info": args, "register": name}


# A role of someone else's that changes what the reads report and never says so: the next read sees it all the same.
UNTOLD_ROLE = [
    {"name": "Write the probe", "ansible.builtin.copy": {"dest": PROBE, "content": "a", "mode": "0644"}},
    {"name": "Read the guest after the write", "gpuops.vgpu.gpu_guest_info": {
        "gather": ["os"], "files": [PROBE], "reuse": True}, "register": "after_role"},
    {"name": "Rewrite the probe in place, as large as before, saying nothing changed",
     "ansible.builtin.shell": "printf b > %s" % PROBE, "changed_when": False},
]


PLAYBOOK_TEXT = [
    {"name": "One play", "hosts": "all", "gather_facts": False, "vars": {"gpu_guest_info_reads": [{"files": [LATER]}]},
     "tasks": [
        read("first"),
        {"name": "Create a file no read covers", "ansible.builtin.file": {"path": ELSEWHERE, "state": "touch"}},
        read("covered", gather=["os", "cuda"], files=[PROBE, LATER]),
        read("more", services=["ssh"]),
        {"name": "Change the guest in a role that does not say so", "ansible.builtin.include_role": {
            "name": "untold"}},
        read("after_rewrite"),
        {"name": "Say that the guest changed", "ansible.builtin.set_fact": {
            "gpu_guest_info_changes": "{{ gpu_guest_info_changes | default(0) | int + 1 }}"}},
        read("after_bump"),
        {"name": "Remove the probe", "ansible.builtin.file": {"path": PROBE, "state": "absent"}},
        read("plain", reuse=False),
        {"name": "Create the probe again", "ansible.builtin.file": {"path": PROBE, "state": "touch"}},
        read("last"),
        {"name": "Keep the answers", "ansible.builtin.copy": {
            "dest": "{{ answers }}/one.json", "content": "{{ {'first': first, 'covered': covered, 'more': more,"
            " 'after_role': after_role, 'after_rewrite': after_rewrite, 'after_bump': after_bump, 'plain': plain}"
            " | to_json }}"}, "delegate_to": "localhost"},
    ]},
    {"name": "Another play", "hosts": "all", "gather_facts": False, "tasks": [
        read("next_play_unchanged"),
        {"name": "Remove the probe", "ansible.builtin.file": {"path": PROBE, "state": "absent"}},
        read("next_play"),
        {"name": "Keep the answer", "ansible.builtin.copy": {
            "dest": "{{ answers }}/two.json", "content": "{{ {'unchanged': next_play_unchanged, 'changed': next_play}"
            " | to_json }}"}, "delegate_to": "localhost"},
    ]},
]


@pytest.fixture(scope="module")
def guest():
    with lab_guest(GUEST, 110) as started:
        yield started


def probe_seen(answer):
    return answer["gpu_guest"]["files"][PROBE]["exists"]


def test_a_covered_read_is_not_read_again_in_the_run_and_any_change_reads_again(guest):
    playbook = os.path.join(guest["state_dir"], "reuse.yml")
    with open(playbook, "w") as handle:
        json.dump(PLAYBOOK_TEXT, handle)
    os.makedirs(os.path.join(guest["state_dir"], "roles", "untold", "tasks"), exist_ok=True)
    with open(os.path.join(guest["state_dir"], "roles", "untold", "tasks", "main.yml"), "w") as handle:
        json.dump(UNTOLD_ROLE, handle)
    report = os.path.join(guest["state_dir"], "remote-tasks-reuse.json")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACK_PLUGINS=CALLBACKS, ANSIBLE_CALLBACKS_ENABLED="remote_tasks",
               GPUOPS_REMOTE_TASKS_FILE=report)
    proc = subprocess.run([PLAYBOOK, "-i", guest["inventory"], playbook, "-e", "answers=" + guest["state_dir"]],
                          cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    assert proc.returncode == 0, proc.stdout[-6000:]
    with open(os.path.join(guest["state_dir"], "one.json")) as handle:
        one = json.load(handle)
    with open(os.path.join(guest["state_dir"], "two.json")) as handle:
        two = json.load(handle)

    assert not one["first"]["reused"] and not probe_seen(one["first"])
    # Every probe was read the first time and nothing it covers changed since, so this read is answered from it.
    assert one["covered"]["reused"] and not probe_seen(one["covered"]) and "cuda" in one["covered"]["gpu_guest"]
    assert one["covered"]["gpu_guest"]["files"][LATER]["exists"] is True
    # A service not read before: the guest is read for it alone; the rest is the kept read.
    assert not one["more"]["reused"] and not probe_seen(one["more"]) and "cuda" in one["more"]["gpu_guest"]
    assert one["more"]["gpu_guest"]["services"]["ssh"]["active"] is True
    # The role never said it changed the guest: its write is seen, and so is the rewrite that claimed no change.
    assert not one["after_role"]["reused"] and probe_seen(one["after_role"])
    assert not one["after_rewrite"]["reused"] and probe_seen(one["after_rewrite"])
    before, after = (one[name]["gpu_guest"]["files"][PROBE] for name in ("after_role", "after_rewrite"))
    assert before["size"] == after["size"] == 1 and before["checksum"] != after["checksum"]
    # gpu_guest_info_changes is still honoured.
    assert not one["after_bump"]["reused"]
    assert "reused" not in one["plain"] and not probe_seen(one["plain"])
    # A later play of the same run reuses the read while the guest is as it was read, and reads again once not.
    assert two["unchanged"]["reused"] and probe_seen(two["unchanged"])
    assert not two["changed"]["reused"] and not probe_seen(two["changed"])
    with open(report) as handle:
        counted = json.load(handle)
    assert on_guest(guest, "test", "-e", PROBE).returncode == 1
    # first, more, after_role, after_rewrite, after_bump, plain, last and next_play reached the guest, as did the six
    # file and shell tasks; covered and next_play_unchanged did not.
    assert counted["remote_tasks"][GUEST] == 14, counted["tasks"][GUEST]


RUNTIME_MODPROBE = "/run/modprobe.d/gpuops-reuse-test.conf"


def test_a_blacklist_placed_where_only_modprobe_looks_at_runtime_reads_the_driver_again(guest, tmp_path):
    """modprobe also reads /run/modprobe.d: a task that puts a blacklist there, and says nothing changed, makes the
    next read of the driver go to the guest and report it."""
    playbook = tmp_path / "runtime-modprobe.yml"
    playbook.write_text(json.dumps([{"name": "Blacklist at runtime", "hosts": "all", "gather_facts": False, "tasks": [
        {"name": "Read the driver", "gpuops.vgpu.gpu_guest_info": {"gather": ["driver"], "reuse": True}},
        {"name": "Blacklist nouveau under /run, saying nothing changed", "changed_when": False,
         "ansible.builtin.shell": "mkdir -p %s && printf 'blacklist nouveau\\n' > %s"
                                  % (os.path.dirname(RUNTIME_MODPROBE), RUNTIME_MODPROBE)},
        {"name": "Read the driver again", "gpuops.vgpu.gpu_guest_info": {"gather": ["driver"], "reuse": True}},
    ]}]))
    try:
        rc, results, output = run_playbook(guest["inventory"], playbook)
    finally:
        on_guest(guest, "rm", "-f", RUNTIME_MODPROBE)
    assert rc == 0, output[-6000:]
    before, after = (results[GUEST][name] for name in ("Read the driver", "Read the driver again"))
    assert RUNTIME_MODPROBE not in before["gpu_guest"]["driver"]["nouveau"]["blacklist_files"]
    nouveau = after["gpu_guest"]["driver"]["nouveau"]
    assert not after["reused"] and nouveau["blacklisted"] is True
    assert RUNTIME_MODPROBE in nouveau["blacklist_files"]
