# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vlcm_remediate's real main() against a fake vCenter: scan, EULA, pre-check, apply and a host that fails."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.modules import vlcm_remediate
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.vlcm.vlcm_fake import (
    DRIVER,
    DRIVER_VERSION,
    HOSTS,
    install,
    run_module,
)

SOFTWARE = "/api/esx/settings/clusters/domain-c7/software"
APPLY = ("POST", SOFTWARE + "?action=apply&vmw-task=true")
CHECK = ("POST", SOFTWARE + "?action=check&vmw-task=true")


@pytest.fixture
def vcenter(monkeypatch):
    fake = install(monkeypatch)
    fake.image["components"] = {DRIVER: DRIVER_VERSION}
    return fake


def run(args, capsys, **kwargs):
    return run_module(vlcm_remediate, dict({"cluster": "gpu-cluster"}, **args), capsys, **kwargs)


def statuses(summary):
    return [(host["name"], host["status"]) for host in summary["hosts"]]


def test_check_mode_scans_and_names_the_hosts_to_remediate(vcenter, capsys):
    failed, result = run({}, capsys, check_mode=True, diff=True)
    assert not failed and result["changed"] is True
    assert result["pending"] == HOSTS
    assert statuses(result["compliance_before"]) == [(name, "NON_COMPLIANT") for name in HOSTS]
    assert "compliance_after" not in result and "hosts" not in result
    assert result["diff"] == {"before": dict((name, "NON_COMPLIANT") for name in HOSTS),
                              "after": dict((name, "COMPLIANT") for name in HOSTS)}
    assert result["progress"][0].endswith("scan running 0/1: Compliance scan of cluster gpu-cluster")
    assert vcenter.writes() == [] and vcenter.installed["host-1"] == {}


def test_remediates_every_host_and_a_second_run_changes_nothing(vcenter, capsys):
    failed, result = run({"accept_eula": True}, capsys)
    assert not failed and result["changed"] is True and result["pending"] == HOSTS
    assert [(h["name"], h["status"], h["message"]) for h in result["hosts"]] == [
        (name, "OK", "Host remediated.") for name in HOSTS]
    assert statuses(result["compliance_after"]) == [(name, "COMPLIANT") for name in HOSTS]
    assert result["compliance_after"]["hosts"][0]["components"][DRIVER] == {
        "status": "COMPLIANT", "current": DRIVER_VERSION, "target": DRIVER_VERSION}
    assert [line.split("] ")[1].split(" ")[0] for line in result["progress"]] == ["scan", "check", "apply"]
    assert vcenter.writes() == [APPLY] and CHECK in vcenter.calls
    assert all(installed == {DRIVER: DRIVER_VERSION} for installed in vcenter.installed.values())

    vcenter.calls = []
    failed, again = run({"accept_eula": True}, capsys, diff=True)
    assert not failed and again["changed"] is False and again["pending"] == []
    assert again["compliance_after"] == again["compliance_before"]
    assert again["diff"]["before"] == again["diff"]["after"]
    assert vcenter.writes() == [] and CHECK not in vcenter.calls


def test_check_mode_counts_the_hosts_that_do_not_run_the_components_an_earlier_task_would_put_in(vcenter, capsys):
    assert run({"accept_eula": True}, capsys)[1]["pending"] == HOSTS
    newer = {"components": {DRIVER: DRIVER_VERSION + ".1"}}
    failed, result = run(newer, capsys, check_mode=True)
    assert not failed and result["changed"] is True and result["pending"] == HOSTS
    assert statuses(result["compliance_before"]) == [(name, "COMPLIANT") for name in HOSTS]
    failed, result = run(dict(newer, hosts=["esxi-02.lab.local"]), capsys, check_mode=True)
    assert not failed and result["pending"] == ["esxi-02.lab.local"]
    failed, result = run({"components": {DRIVER: DRIVER_VERSION}}, capsys, check_mode=True)
    assert not failed and result["changed"] is False and result["pending"] == []
    vcenter.calls = []
    # Outside check mode the scan compares with the image as the earlier task left it; components add nothing.
    failed, result = run(dict(newer, accept_eula=True), capsys)
    assert not failed and result["changed"] is False and result["pending"] == [] and vcenter.writes() == []


def test_only_the_named_hosts_are_remediated(vcenter, capsys):
    failed, result = run({"accept_eula": True, "hosts": ["esxi-02.lab.local"]}, capsys)
    assert not failed and result["pending"] == ["esxi-02.lab.local"]
    assert [(h["name"], h["status"]) for h in result["hosts"]] == [("esxi-02.lab.local", "OK")]
    assert vcenter.installed == {"host-1": {}, "host-2": {DRIVER: DRIVER_VERSION}, "host-3": {}}


def test_pre_check_warnings_are_passed_on(vcenter, capsys):
    vcenter.check_issues = [(None, "WARNING", "DPM is on")]
    failed, result = run({"accept_eula": True}, capsys)
    assert not failed and result["changed"] is True
    assert vcenter.warnings == ["Remediation pre-check: cluster: DPM is on"]


def test_without_precheck_no_check_runs(vcenter, capsys):
    vcenter.check_issues = [("host-2", "ERROR", "ignored when precheck is off")]
    failed, result = run({"accept_eula": True, "precheck": False}, capsys)
    assert not failed and CHECK not in vcenter.calls and vcenter.writes() == [APPLY]


def test_without_the_eula_nothing_is_remediated(vcenter, capsys):
    failed, result = run({}, capsys)
    assert failed
    assert result["msg"] == (
        "Remediating hosts %s of cluster 'gpu-cluster' needs the VMware End User License Agreement accepted. Set "
        "accept_eula: true to accept it (https://www.vmware.com/download/eula.html). Nothing was changed."
        % ", ".join(HOSTS))
    assert result["pending"] == HOSTS and result["compliance_before"]["status"] == "NON_COMPLIANT"
    assert vcenter.writes() == [] and CHECK not in vcenter.calls


@pytest.mark.parametrize("args, words", [
    ({"hosts": ["esxi-99.lab.local"]}, "Hosts not in cluster 'gpu-cluster': esxi-99.lab.local."),
    ({"cluster": "mixed-cluster"}, "Cluster 'mixed-cluster' is not managed with a single vLCM image"),
    ({"datacenter": "other-dc"}, "Datacenter 'other-dc' was not found in vCenter vc.lab.local:443."),
])
def test_bad_input_fails_before_the_scan(vcenter, capsys, args, words):
    failed, result = run(dict(args, accept_eula=True), capsys)
    assert failed and words in result["msg"]
    assert not any("action=" in path for _method, path in vcenter.calls)


def test_a_pre_check_error_stops_before_any_host_changes(vcenter, capsys):
    vcenter.check_issues = [("host-2", "ERROR", "gpu-vm-01 cannot move: vGPU vMotion is off")]
    failed, result = run({"accept_eula": True}, capsys)
    assert failed
    assert result["msg"] == ("The remediation pre-check of cluster 'gpu-cluster' failed: esxi-02.lab.local: gpu-vm-01 "
                             "cannot move: vGPU vMotion is off Nothing was changed. Fix what it names and run again.")
    assert result["issues"] == ["esxi-02.lab.local: gpu-vm-01 cannot move: vGPU vMotion is off"]
    assert result["pending"] == HOSTS and len(result["progress"]) == 2
    assert vcenter.writes() == [] and vcenter.installed["host-1"] == {}


def test_a_host_that_fails_is_named_and_the_hosts_before_it_stay_remediated(vcenter, capsys):
    vcenter.failing_hosts = {"host-2": "Host esxi-02.lab.local cannot enter maintenance mode: gpu-vm-01"}
    failed, result = run({"accept_eula": True}, capsys)
    assert failed
    assert result["msg"] == (
        "Remediation of cluster 'gpu-cluster' failed on esxi-02.lab.local. esxi-02.lab.local: Host esxi-02.lab.local "
        "cannot enter maintenance mode: gpu-vm-01 Hosts before it were remediated, the others left as they were.")
    assert result["changed"] is True
    assert [(h["name"], h["status"]) for h in result["hosts"]] == [
        ("esxi-01.lab.local", "OK"), ("esxi-02.lab.local", "ERROR"), ("esxi-03.lab.local", "SKIPPED")]
    assert statuses(result["compliance_after"]) == [
        ("esxi-01.lab.local", "COMPLIANT"), ("esxi-02.lab.local", "NON_COMPLIANT"),
        ("esxi-03.lab.local", "NON_COMPLIANT")]
    assert vcenter.installed == {"host-1": {DRIVER: DRIVER_VERSION}, "host-2": {}, "host-3": {}}


def test_a_failure_on_the_first_host_reports_no_change(vcenter, capsys):
    vcenter.failing_hosts = {"host-1": "Host esxi-01.lab.local has no connection."}
    failed, result = run({"accept_eula": True}, capsys)
    assert failed and result["changed"] is False
    assert [h["status"] for h in result["hosts"]] == ["ERROR", "SKIPPED", "SKIPPED"]
    assert all(installed == {} for installed in vcenter.installed.values())


POLICY = ("PUT", "/api/esx/settings/clusters/domain-c7/policies/apply")


@pytest.mark.parametrize("action, vlcm_action", [("suspend", "SUSPEND_VMS"), ("power_off", "POWER_OFF_VMS"),
                                                 ("keep", "DO_NOT_CHANGE_VMS_POWER_STATE")])
def test_vm_power_action_holds_for_this_remediation_only(vcenter, capsys, action, vlcm_action):
    vcenter.policy = {"disable_dpm": True}
    failed, result = run({"accept_eula": True, "vm_power_action": action}, capsys)
    assert not failed and result["changed"] is True
    assert vcenter.policies_applied == [{"disable_dpm": True, "pre_remediation_power_action": vlcm_action}]
    assert vcenter.policy == {"disable_dpm": True}, "the cluster's own settings are back"
    assert vcenter.writes() == [POLICY, APPLY, POLICY]


def test_vm_power_action_is_put_back_when_the_remediation_fails(vcenter, capsys):
    vcenter.failing_hosts["host-2"] = "Host esxi-02.lab.local cannot enter maintenance mode."
    failed, result = run({"accept_eula": True, "vm_power_action": "suspend"}, capsys)
    assert failed and vcenter.policy == {} and vcenter.policies_applied == [
        {"pre_remediation_power_action": "SUSPEND_VMS"}]


def test_vm_power_action_changes_nothing_in_check_mode_or_when_every_host_complies(vcenter, capsys):
    failed, result = run({"accept_eula": True, "vm_power_action": "suspend"}, capsys, check_mode=True)
    assert not failed and vcenter.writes() == []
    vcenter.installed = dict((host, {DRIVER: DRIVER_VERSION}) for host in vcenter.installed)
    failed, result = run({"accept_eula": True, "vm_power_action": "suspend"}, capsys)
    assert not failed and result["changed"] is False and vcenter.writes() == []


def test_a_remediation_an_earlier_run_left_going_ends_before_the_scan(vcenter, capsys):
    """A controller killed while vLCM remediates leaves the task going in vCenter: the next run waits for it (in
    check mode too), names it, and scans what it left, so that only the hosts it did not reach are pending."""
    vcenter.running["task-9:com.vmware.esx.settings.clusters.software"] = (
        {"status": "RUNNING", "user": "ops", "start_time": "2026-11-29T08:00:00.000Z", "operation": "apply",
         "target": {"type": "ClusterComputeResource", "id": "domain-c7"}}, ["host-1"])
    failed, result = run({}, capsys, check_mode=True)
    assert not failed
    assert result["waited_for"] == [{"task": "task-9:com.vmware.esx.settings.clusters.software", "user": "ops",
                                     "started": "2026-11-29T08:00:00.000Z", "status": "SUCCEEDED", "message": None}]
    assert result["pending"] == HOSTS[1:]
    waited = vcenter.calls.index(("WAIT", "task-9:com.vmware.esx.settings.clusters.software"))
    assert waited < vcenter.calls.index(("POST", SOFTWARE + "?action=scan&vmw-task=true"))
    assert vcenter.running == {}
    failed, result = run({}, capsys, check_mode=True)
    assert result["waited_for"] == []


def test_a_failed_remediation_of_an_earlier_run_is_named_and_the_scan_says_what_it_left(vcenter, capsys):
    vcenter.running["task-8:s"] = ({"status": "RUNNING", "user": "ops", "start_time": "t", "operation": "apply",
                                    "target": {"type": "ClusterComputeResource", "id": "domain-c7"}}, [])
    vcenter.running["task-7:s"] = ({"status": "RUNNING", "operation": "apply",
                                    "target": {"type": "ClusterComputeResource", "id": "domain-c9"}}, [])
    vcenter.running["task-8:s"][0]["fails"] = "Host esxi-01 did not enter maintenance mode."
    failed, result = run({"accept_eula": True}, capsys)
    assert not failed and result["pending"] == HOSTS
    assert [(w["task"], w["status"]) for w in result["waited_for"]] == [("task-8:s", "FAILED")]
    assert "did not enter maintenance mode" in result["waited_for"][0]["message"]
    assert list(vcenter.running) == ["task-7:s"], "another cluster's remediation is not waited for"
