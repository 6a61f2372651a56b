# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_automation's real main() on a fake cluster that merges specs like vCenter."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.modules import cluster_automation
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.vcenter.test_cluster_automation import (
    FakeClient,
    _configuration,
)
from ansible_collections.gpuops.vgpu.tests.unit.plugins.modules.module_runner import CONNECTION, fake_vcenter, run_main

OFF = dict(CONNECTION, cluster="gpu-cluster", drs_enabled=False, dpm_enabled=False)
BEFORE = {"drs_enabled": True, "drs_behavior": "fullyAutomated", "dpm_enabled": True, "dpm_behavior": "automated"}


def cluster(fail=None):
    return FakeClient(_configuration(True, "fullyAutomated", True, "automated"), fail=fail)


def test_check_mode_predicts_and_sends_nothing(monkeypatch, capsys):
    client = cluster()
    sessions = fake_vcenter(monkeypatch, client)
    code, result = run_main(cluster_automation.main, OFF, capsys, check_mode=True, diff=True)
    assert code == 0 and result["changed"] is True and client.specs == []
    assert result["previous"] == BEFORE
    assert result["current"] == dict(BEFORE, drs_enabled=False, dpm_enabled=False)
    assert result["diff"] == {"before": result["previous"], "after": result["current"]}
    assert sessions[0].closed


def test_off_then_an_idempotent_rerun_then_an_exact_restore(monkeypatch, capsys):
    client = cluster()
    fake_vcenter(monkeypatch, client)
    code, result = run_main(cluster_automation.main, OFF, capsys)
    assert code == 0 and result["changed"] is True and "diff" not in result
    assert (client.specs[0].drsConfig.enabled, client.specs[0].dpmConfig.enabled) == (False, False)
    assert client.specs[0].drsConfig.defaultVmBehavior is None, "only the fields that differ are sent"
    previous = result["previous"]

    code, result = run_main(cluster_automation.main, OFF, capsys)
    assert code == 0 and result["changed"] is False and len(client.specs) == 1

    code, result = run_main(cluster_automation.main, dict(CONNECTION, cluster="gpu-cluster", restore=previous),
                            capsys)
    assert code == 0 and result["changed"] is True and result["current"] == BEFORE


def test_bad_input_fails_before_connecting(monkeypatch, capsys):
    sessions = fake_vcenter(monkeypatch, cluster())
    code, result = run_main(cluster_automation.main, dict(OFF, restore=BEFORE), capsys)
    assert code == 1 and "mutually exclusive: restore|drs_enabled" in result["msg"]
    code, result = run_main(cluster_automation.main, dict(OFF, drs_behavior="sometimes"), capsys)
    assert code == 1 and "drs_behavior must be one of" in result["msg"]
    assert sessions == []


def test_a_failed_reconfigure_returns_previous_and_current(monkeypatch, capsys):
    client = cluster(fail="The operation is not allowed in the current state.")
    fake_vcenter(monkeypatch, client)
    code, result = run_main(cluster_automation.main, OFF, capsys)
    assert code == 1 and result["msg"].startswith(
        "Reconfiguring DRS/DPM of cluster 'gpu-cluster' failed: The operation is not allowed in the current state.")
    assert result["previous"] == BEFORE and result["current"] == BEFORE and result["fault"] == "SystemError"


def test_record_then_restore_recorded_through_main(monkeypatch, capsys):
    client = cluster()
    fake_vcenter(monkeypatch, client)
    code, result = run_main(cluster_automation.main, dict(OFF, record=True, run_id="run-1"), capsys)
    assert code == 0 and result["changed"] is True and result["record"]["run"] == "run-1"
    assert result["record"]["previous"] == BEFORE and "@" in result["record"]["by"]
    assert client.log == ["add field", "set record", "reconfigure"]

    code, result = run_main(cluster_automation.main, dict(CONNECTION, cluster="gpu-cluster", restore_recorded=True),
                            capsys)
    assert code == 0 and result["changed"] is True and result["current"] == BEFORE
    assert result["record"]["run"] == "run-1" and client.record() is None


def test_restore_recorded_excludes_the_other_changes(monkeypatch, capsys):
    sessions = fake_vcenter(monkeypatch, cluster())
    for other in (dict(record=True), dict(restore=BEFORE), dict(drs_enabled=True)):
        code, result = run_main(cluster_automation.main, dict(CONNECTION, cluster="gpu-cluster",
                                                              restore_recorded=True, **other), capsys)
        assert code == 1 and "mutually exclusive: restore_recorded|%s" % list(other)[0] in result["msg"]
    code, result = run_main(cluster_automation.main, dict(OFF, adopt_previous=BEFORE), capsys)
    assert code == 1 and "adopt_previous is given without record" in result["msg"]
    assert sessions == []
