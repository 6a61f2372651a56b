# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""record_file and the record lookup on the controller, through ansible-playbook: the action plugin does the work in
the controller's process with the module's options and checks; the files are the ground truth."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat
import subprocess
import sys

import yaml

from conftest import ROOT


def play(tmp_path, tasks, *flags):
    playbook = tmp_path / "record.yml"
    playbook.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
               ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), str(playbook)]
                          + list(flags), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    tasks_run = json.loads(proc.stdout)["plays"][0]["tasks"]
    return dict((t["task"]["name"], t["hosts"]["localhost"]) for t in tasks_run)


def test_a_write_on_the_controller_is_the_modules_write(tmp_path):
    path = tmp_path / "reports" / "doctor.json"
    write = {"gpuops.vgpu.record_file": {"path": str(path), "data": {"findings": [], "at": 1}, "mode": "0644"}}
    results = play(tmp_path, [dict(write, name="first"), dict(write, name="again"),
                              {"name": "predicted", "gpuops.vgpu.record_file": {"path": str(path), "data": {"at": 2}},
                               "check_mode": True, "diff": True},
                              {"name": "read", "gpuops.vgpu.record_file": {"path": str(path),
                                                                           "required_keys": ["findings"]}},
                              {"name": "lookup", "ansible.builtin.debug": {"msg": "{{ query('gpuops.vgpu.record', "
                                                                                  "'%s', '%s') }}" % (
                                                                                      path, tmp_path / "none.json")}}])
    assert results["first"]["changed"] is True and results["again"]["changed"] is False
    assert json.loads(path.read_text()) == {"findings": [], "at": 1}
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert stat.S_IMODE(path.parent.stat().st_mode) & 0o755 == 0o755
    predicted = results["predicted"]
    assert predicted["changed"] is True and '"at": 2' in predicted["diff"]["after"]
    assert json.loads(path.read_text())["at"] == 1, "check mode writes nothing"
    assert results["read"]["data"] == {"findings": [], "at": 1} and results["read"]["exists"] is True
    assert results["lookup"]["msg"] == [{"findings": [], "at": 1}, None]


def test_damaged_records_and_bad_options_fail_naming_the_file(tmp_path):
    path = tmp_path / "cluster.json"
    path.write_text('{"cluster": "gpu"')
    results = play(tmp_path, [
        {"name": "read", "gpuops.vgpu.record_file": {"path": str(path)}, "ignore_errors": True},
        {"name": "lookup", "ansible.builtin.debug": {"msg": "{{ query('gpuops.vgpu.record', '%s') }}" % path},
         "ignore_errors": True},
        {"name": "both", "gpuops.vgpu.record_file": {"path": str(path), "data": {}, "content": "x"},
         "ignore_errors": True},
        {"name": "unknown", "gpuops.vgpu.record_file": {"path": str(path), "colour": "red"}, "ignore_errors": True}])
    for name in ("read", "lookup"):
        assert results[name]["failed"] is True
        assert "The record %s is damaged: it is not complete JSON" % path in results[name]["msg"], results[name]
    assert results["both"]["failed"] and "mutually exclusive: data|content" in results["both"]["msg"]
    assert results["unknown"]["failed"] and "colour" in results["unknown"]["msg"]
    assert path.read_text() == '{"cluster": "gpu"', "a failed read leaves the file as it was"
