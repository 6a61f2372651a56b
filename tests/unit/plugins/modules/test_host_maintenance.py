# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_maintenance's real main() on fake hosts that enter and leave maintenance mode."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.modules import host_maintenance
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.vcenter.test_host_maintenance import FakeLab
from ansible_collections.gpuops.vgpu.tests.unit.plugins.modules.module_runner import CONNECTION, fake_vcenter, run_main


class Lab(FakeLab):
    """FakeLab whose hosts end in the mode their task asked for when it succeeds."""

    def run_tasks(self, starters, parallel=8, timeout=3600):
        outcomes = FakeLab.run_tasks(self, starters, parallel, timeout)
        by_name = dict((item["name"], item) for item in self.items)
        for started, outcome in zip(self.started[-len(starters):], outcomes):
            if outcome["state"] == "success":
                by_name[started[1]]["runtime.inMaintenanceMode"] = started[0] == "enter"
        return outcomes


ENTER = dict(CONNECTION, esxi_hostnames=["esxi-02", "esxi-03"], timeout=900)


def test_check_mode_predicts_and_starts_nothing(monkeypatch, capsys):
    lab = Lab(drs_enabled=True)
    sessions = fake_vcenter(monkeypatch, lab)
    code, result = run_main(host_maintenance.main, ENTER, capsys, check_mode=True, diff=True)
    assert code == 0 and result["changed"] is True and lab.started == []
    assert [(host["name"], host["after"]) for host in result["hosts"]] == [
        ("esxi-02", {"maintenance_mode": True}), ("esxi-03", {"maintenance_mode": True})]
    assert sorted(result["diff"]["after"]) == ["esxi-02", "esxi-03"]
    assert sessions[0].closed


def test_hosts_enter_one_at_a_time_then_an_idempotent_rerun_then_exit_together(monkeypatch, capsys):
    lab = Lab(drs_enabled=True)
    fake_vcenter(monkeypatch, lab)
    code, result = run_main(host_maintenance.main, ENTER, capsys)
    assert code == 0 and result["changed"] is True and "diff" not in result
    assert lab.started == [("enter", "esxi-02", 900, False), ("enter", "esxi-03", 900, False)]
    assert lab.waits == [(1, 1, 960), (1, 1, 960)]

    code, result = run_main(host_maintenance.main, ENTER, capsys)
    assert code == 0 and result["changed"] is False and len(lab.started) == 2

    code, result = run_main(host_maintenance.main, dict(ENTER, state="absent", parallel=True), capsys)
    assert code == 0 and [host["changed"] for host in result["hosts"]] == [True, True]
    assert lab.started[2:] == [("exit", "esxi-02", 900), ("exit", "esxi-03", 900)] and lab.waits[2] == (2, 2, 960)


def test_bad_input_fails_before_any_host_changes(monkeypatch, capsys):
    lab = Lab(drs_enabled=False)
    sessions = fake_vcenter(monkeypatch, lab)
    code, result = run_main(host_maintenance.main, dict(CONNECTION, state="present"), capsys)
    assert code == 1 and "one of the following is required: cluster, esxi_hostnames" in result["msg"]
    code, result = run_main(host_maintenance.main, dict(ENTER, timeout=0), capsys)
    assert code == 1 and result["msg"].startswith("timeout must be at least 1 second, not 0.")
    assert sessions == [], "the timeout is checked before the first round trip"

    code, result = run_main(host_maintenance.main, dict(CONNECTION, esxi_hostnames=["esxi-01", "esxi-03"]), capsys)
    assert code == 1 and "esxi-01: gpu-vm-01" in result["msg"] and "no host was changed" in result["msg"]
    assert lab.started == []


def test_a_host_that_does_not_enter_is_reported_with_its_vms(monkeypatch, capsys):
    lab = Lab(drs_enabled=True, failing=("esxi-02",))
    fake_vcenter(monkeypatch, lab)
    code, result = run_main(host_maintenance.main, dict(ENTER, esxi_hostnames=["esxi-02", "esxi-03"]), capsys)
    assert code == 1
    assert "esxi-02: the VMs cannot be moved (powered-on VMs on it: gpu-vm-03)" in result["msg"]
    assert "Hosts done: none; not started: esxi-03" in result["msg"]
    assert result["blocking_vms"] == {"esxi-02": ["gpu-vm-03"]}
    assert [host["changed"] for host in result["hosts"]] == [False, False]
    assert lab.started == [("enter", "esxi-02", 900, False)]
