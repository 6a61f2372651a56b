# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""record_file's real main() on real files: damaged records refused, writes atomic and idempotent."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils import _records
from ansible_collections.gpuops.vgpu.plugins.modules import record_file
from ansible_collections.gpuops.vgpu.tests.unit.plugins.modules.module_runner import run_main

RECORD = {"cluster": "gpu-cluster", "state": "prepared", "previous": {"drs_enabled": True, "dpm_enabled": False}}


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "records" / "vc_gpu-cluster.json")


def write(path, text):
    if not os.path.isdir(os.path.dirname(path)):
        os.makedirs(os.path.dirname(path))
    with open(path, "w") as handle:
        handle.write(text)


def test_a_report_anyone_may_read_gets_a_directory_anyone_may_search(capsys, path):
    code, result = run_main(record_file.main, {"path": path, "data": RECORD, "mode": "0644"}, capsys)
    assert code == 0 and result["changed"] is True
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) & 0o755 == 0o755


def test_a_write_creates_the_directory_and_file_and_a_rerun_changes_nothing(capsys, path):
    code, result = run_main(record_file.main, {"path": path, "data": RECORD}, capsys, diff=True)
    assert code == 0 and result["changed"] is True
    with open(path) as handle:
        assert json.load(handle) == RECORD
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    assert result["diff"]["before"] == "" and json.loads(result["diff"]["after"]) == RECORD
    assert os.listdir(os.path.dirname(path)) == ["vc_gpu-cluster.json"], "no temporary file is left"

    code, again = run_main(record_file.main, {"path": path, "data": RECORD}, capsys)
    assert code == 0 and again["changed"] is False


def test_check_mode_predicts_a_write_and_writes_nothing(capsys, path):
    code, result = run_main(record_file.main, {"path": path, "data": RECORD}, capsys, check_mode=True)
    assert code == 0 and result["changed"] is True
    assert not os.path.exists(path) and not os.path.exists(os.path.dirname(path))


def test_a_read_returns_the_record_or_nothing(capsys, path):
    code, result = run_main(record_file.main, {"path": path}, capsys)
    assert code == 0 and result == dict(result, changed=False, exists=False, data={})
    code, result = run_main(record_file.main, {"path": path, "missing": "fail", "fix": "Run prepare first."}, capsys)
    assert code == 1 and result["msg"] == "There is no record %s. Run prepare first." % path
    write(path, json.dumps(RECORD))
    code, result = run_main(record_file.main, {"path": path, "required_keys": ["state"]}, capsys)
    assert code == 0 and result["exists"] is True and result["data"] == RECORD


@pytest.mark.parametrize("text, reason", [
    ('{\n    "cluster": "gpu-cluster",\n    "previous": {\n        "drs_en', "it is not complete JSON"),
    ("", "the file is empty"),
    ("\n  \n", "the file is empty"),
    ("[1, 2]", "it holds a JSON list where a JSON object was written"),
    ('{"cluster": "gpu-cluster"}', "it lacks the keys state, previous"),
])
def test_a_damaged_record_is_refused_naming_the_file_and_the_fix(capsys, path, text, reason):
    write(path, text)
    fix = "Check DRS/DPM in vCenter, then delete %s."
    code, result = run_main(record_file.main, {"path": path, "required_keys": ["state", "previous"], "fix": fix},
                            capsys)
    assert code == 1
    assert result["msg"].startswith("The record %s is damaged: %s" % (path, reason))
    assert result["msg"].endswith("Check DRS/DPM in vCenter, then delete %s." % path)
    assert result["path"] == path


def test_the_default_fix_says_to_move_the_record_aside(capsys, path):
    write(path, '{"state": ')
    code, result = run_main(record_file.main, {"path": path}, capsys)
    assert code == 1 and "Move it aside (for example to %s.damaged) and run again" % path in result["msg"]


def test_a_write_replaces_a_damaged_record(capsys, path):
    write(path, '{"state": ')
    code, result = run_main(record_file.main, {"path": path, "data": RECORD}, capsys)
    assert code == 0 and result["changed"] is True
    with open(path) as handle:
        assert json.load(handle) == RECORD


def test_text_content_and_mode(capsys, path):
    code, result = run_main(record_file.main, {"path": path, "content": "<html></html>\n", "mode": "0644"}, capsys)
    assert code == 0 and result["changed"] is True
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    os.chmod(path, 0o600)
    code, result = run_main(record_file.main, {"path": path, "content": "<html></html>\n", "mode": "0644"}, capsys)
    assert result["changed"] is True and stat.S_IMODE(os.stat(path).st_mode) == 0o644


def test_a_bad_mode_is_refused_before_any_write(capsys, path):
    code, result = run_main(record_file.main, {"path": path, "data": RECORD, "mode": "rw-"}, capsys)
    assert code == 1 and "mode 'rw-' is not an octal file mode" in result["msg"] and "'0600'" in result["msg"]
    assert not os.path.exists(path)


def test_a_write_that_fails_half_way_keeps_the_old_record_and_leaves_no_temporary_file(monkeypatch, path):
    _records.write_atomically(path, _records.render_json(RECORD))

    def power_cut(*args):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(_records.os, "fsync", power_cut)
    with pytest.raises(OSError):
        _records.write_atomically(path, _records.render_json(dict(RECORD, state="restored")))
    assert _records.read_record(path) == RECORD
    assert os.listdir(os.path.dirname(path)) == ["vc_gpu-cluster.json"]


def test_the_record_is_renamed_into_place_after_it_is_synced(monkeypatch, path):
    calls = []
    real_fsync, real_rename = _records.os.fsync, _records.os.rename
    monkeypatch.setattr(_records.os, "fsync", lambda fd: calls.append("fsync") or real_fsync(fd))
    monkeypatch.setattr(_records.os, "rename", lambda a, b: calls.append("rename") or real_rename(a, b))
    _records.write_atomically(path, "{}\n")
    assert calls == ["fsync", "rename", "fsync"], "file synced, renamed, then the directory synced"
