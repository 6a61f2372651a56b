# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vLCM logic: the image diff, result summaries and the draft flow with a fake REST client."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm import _operations as vlcm
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, InputError, NotFound, TaskFailed

DRIVER, DAEMON = "NVD-VGPU-800", "nvd-gpu-mgmt-daemon"
V525, V535 = "525.105.14-1OEM.800.1.0.20613240", "535.54.06-1OEM.800.1.0.20613240"
AVAILABLE = {DRIVER: [V535, V525], DAEMON: ["525.105.14-0.0.0000"], "ESXi": ["8.0.2-0.0.22380479"]}


def test_plan_adds_and_reports_the_after_image():
    plan = vlcm.plan_image({}, {DRIVER: V525, DAEMON: None}, [], AVAILABLE)
    assert plan == {"set": {DRIVER: V525, DAEMON: "525.105.14-0.0.0000"}, "delete": [],
                    "after": {DRIVER: V525, DAEMON: "525.105.14-0.0.0000"}, "missing": []}


def test_plan_is_empty_when_the_image_already_holds_the_request():
    current = {DRIVER: V525, DAEMON: "525.105.14-0.0.0000", "other": "1"}
    plan = vlcm.plan_image(current, {DRIVER: V525, DAEMON: None}, ["absent-component"], AVAILABLE)
    assert plan["set"] == {} and plan["delete"] == [] and plan["after"] == current


def test_null_version_keeps_the_current_one_and_takes_the_newest_for_a_new_component():
    assert vlcm.plan_image({DRIVER: V525}, {DRIVER: None}, [], AVAILABLE)["set"] == {}
    assert vlcm.plan_image({}, {DRIVER: None}, [], AVAILABLE)["set"] == {DRIVER: V535}


def test_plan_updates_and_removes_only_what_is_named():
    plan = vlcm.plan_image({DRIVER: V525, DAEMON: "525.105.14-0.0.0000", "keep": "2"}, {DRIVER: V535}, [DAEMON],
                           AVAILABLE)
    assert plan["set"] == {DRIVER: V535} and plan["delete"] == [DAEMON]
    assert plan["after"] == {DRIVER: V535, "keep": "2"}


def test_plan_lists_every_unknown_component_and_version():
    with pytest.raises(InputError) as err:
        vlcm.plan_image({}, {DRIVER: "999.1", "NVD-AIE-800": None}, [], AVAILABLE)
    message = err.value.message
    assert "component NVD-AIE-800 is in no depot" in message
    assert "component NVD-VGPU-800 has no version 999.1 in the depots (they hold %s, %s)" % (V525, V535) in message
    assert "vlcm_depot" in err.value.hint and DAEMON in err.value.hint


def test_check_mode_plans_components_an_earlier_task_would_import():
    plan = vlcm.plan_image({}, {"NVD-AIE-800": "1.0", DRIVER: "999.1", DAEMON: None}, [], AVAILABLE, missing_ok=True)
    assert plan["set"] == {"NVD-AIE-800": "1.0", DRIVER: "999.1", DAEMON: "525.105.14-0.0.0000"}
    assert plan["missing"] == ["component NVD-AIE-800 is in no depot",
                               "component NVD-VGPU-800 has no version 999.1 in the depots (they hold %s, %s)"
                               % (V525, V535)]
    assert vlcm.plan_image({}, {"NVD-AIE-800": None}, [], {}, missing_ok=True)["set"] == {"NVD-AIE-800": None}


def test_a_component_already_in_the_image_needs_no_depot():
    plan = vlcm.plan_image({"old-driver": "1.0"}, {"old-driver": "1.0"}, [], {})
    assert plan["set"] == {} and plan["missing"] == []


@pytest.mark.parametrize("wanted, remove, words", [
    ({DRIVER: V525}, [DRIVER], "both in components and in remove_components"),
    ({"ESXi": "8.0.2-0.0.22380479"}, [], "base image"),
    ({}, ["ESXi"], "base image"),
])
def test_plan_refuses_contradictions(wanted, remove, words):
    with pytest.raises(InputError) as err:
        vlcm.plan_image({}, wanted, remove, AVAILABLE)
    assert words in err.value.message


COMPLIANCE = {
    "status": "NON_COMPLIANT", "impact": "REBOOT_REQUIRED", "scan_time": "t", "commit": "2",
    "host_info": {"host-2": {"name": "esxi-02"}, "host-1": {"name": "esxi-01"}, "host-9": {"name": "esxi-09"}},
    "unavailable_hosts": ["host-9"],
    "hosts": {
        "host-2": {"status": "COMPLIANT", "impact": "NO_IMPACT", "components": {
            DRIVER: {"status": "COMPLIANT", "current": {"version": V525}, "target": {"version": V525}}}},
        "host-1": {"status": "NON_COMPLIANT", "impact": "REBOOT_REQUIRED", "components": {
            DRIVER: {"status": "NON_COMPLIANT", "target": {"version": V525}}}},
    },
}


def test_compliance_summary_by_host_name():
    summary = vlcm.compliance_summary(COMPLIANCE)
    assert summary["status"] == "NON_COMPLIANT" and summary["commit"] == "2"
    assert [(h["name"], h["status"]) for h in summary["hosts"]] == [
        ("esxi-01", "NON_COMPLIANT"), ("esxi-02", "COMPLIANT"), ("esxi-09", "UNAVAILABLE")]
    assert summary["hosts"][0]["components"][DRIVER] == {"status": "NON_COMPLIANT", "current": None, "target": V525}
    assert vlcm.compliance_summary(None) is None


def test_apply_summary_carries_the_reason():
    result = {"host_info": {"host-1": {"name": "esxi-01"}, "host-2": {"name": "esxi-02"}}, "host_status": {
        "host-1": {"status": "ERROR", "notifications": {"errors": [{"message": {
            "default_message": "Host esxi-01 cannot enter maintenance mode: vm-1 (its vGPUs need vGPU vMotion)"}}]}},
        "host-2": {"status": "SKIPPED", "progress": {"message": {"default_message": "Skipped."}}},
    }}
    assert vlcm.apply_summary(result) == [
        {"name": "esxi-01", "id": "host-1", "status": "ERROR",
         "message": "Host esxi-01 cannot enter maintenance mode: vm-1 (its vGPUs need vGPU vMotion)"},
        {"name": "esxi-02", "id": "host-2", "status": "SKIPPED", "message": "Skipped."}]


def test_check_issues_name_the_host_and_tell_errors_from_warnings():
    result = {"status": "ERROR", "host_info": {"host-1": {"name": "esxi-01"}}, "entity_results": [
        {"type": "CLUSTER", "check_statuses": [
            {"status": "WARNING", "issues": [{"default_message": "DPM is on"}]}]},
        {"type": "HOST", "host": "host-1", "check_statuses": [
            {"status": "OK", "issues": []},
            {"status": "ERROR", "issues": [{"default_message": "vm-1 cannot move"}]}]}]}
    assert vlcm.check_issues(result) == {"errors": ["esxi-01: vm-1 cannot move"], "warnings": ["cluster: DPM is on"]}
    assert vlcm.check_issues({"status": "OK", "entity_results": []}) == {"errors": [], "warnings": []}
    assert vlcm.check_issues({"status": "TIMEOUT"})["errors"] == ["vLCM reports status TIMEOUT without naming an issue"]


class FakeClient:
    """Records calls; answers from ``answers`` ("METHOD path" to a value or an exception)."""

    endpoint = "vc:443"

    def __init__(self, answers):
        self.answers = answers
        self.calls = []

    def _answer(self, key):
        self.calls.append(key)
        answer = self.answers.get(key)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def get(self, path, params=None):
        return self._answer("GET " + path)

    def request(self, method, path, params=None, body=None):
        if body is not None:
            self.calls.append(("body", body))
        return self._answer("%s %s" % (method, path))

    def run_task(self, method, path, body=None, timeout=None, on_progress=None, what=None):
        return self._answer("%s %s" % (method, path))


CLUSTER = {"id": "domain-c7", "name": "gpu-cluster"}
DRAFTS = "/api/esx/settings/clusters/domain-c7/software/drafts"


def test_change_image_commits_through_a_validated_draft():
    client = FakeClient({"POST " + DRAFTS: "5", "POST %s/5?action=validate&vmw-task=true" % DRAFTS: {
        "notifications": {"errors": []}}, "POST %s/5?action=commit&vmw-task=true" % DRAFTS: "3"})
    assert vlcm.Vlcm(client).change_image(CLUSTER, {DRIVER: V525}, [DAEMON], "msg") == "3"
    assert ("body", {"components_to_set": {DRIVER: V525}, "components_to_delete": [DAEMON]}) in client.calls
    assert "DELETE %s/5" % DRAFTS not in client.calls


def test_a_refused_draft_is_deleted_and_nothing_is_committed():
    client = FakeClient({"POST " + DRAFTS: "5", "POST %s/5?action=validate&vmw-task=true" % DRAFTS: {
        "notifications": {"errors": [{"message": {"default_message": "Component X is not in any depot."}}]}}})
    with pytest.raises(InputError) as err:
        vlcm.Vlcm(client).change_image(CLUSTER, {"X": "1"}, [], "msg")
    assert "Component X is not in any depot." in err.value.message
    assert client.calls[-1] == "DELETE %s/5" % DRAFTS
    assert not any("commit" in str(call) for call in client.calls)


def test_an_existing_draft_of_the_user_is_reported_not_overwritten():
    client = FakeClient({"POST " + DRAFTS: ApiError("exists", error_type="ALREADY_EXISTS", data={"draft": "4"})})
    with pytest.raises(ApiError) as err:
        vlcm.Vlcm(client).change_image(CLUSTER, {DRIVER: V525}, [], "msg")
    assert "uncommitted image draft of this user (draft 4)" in err.value.message
    assert not any(str(call).startswith("DELETE") for call in client.calls)


def test_import_of_content_already_there_returns_the_existing_depot():
    path = "POST /api/esx/settings/depots/offline?vmw-task=true"
    client = FakeClient({path: TaskFailed("exists", error_type="ALREADY_EXISTS", data={"depot": "offline-depot-1"})})
    assert vlcm.Vlcm(client).import_depot("https://x/b.zip") == ("offline-depot-1", False)
    client = FakeClient({path: TaskFailed("Cannot download", error_type="ERROR", data=None)})
    with pytest.raises(TaskFailed):
        vlcm.Vlcm(client).import_depot("https://x/b.zip")
    client = FakeClient({path: {"depot": "offline-depot-2"}})
    assert vlcm.Vlcm(client).import_depot("https://x/b.zip") == ("offline-depot-2", True)


def test_cluster_lookup_names_the_known_clusters():
    client = FakeClient({"GET /api/vcenter/cluster": [{"cluster": "domain-c7", "name": "gpu-cluster"},
                                                      {"cluster": "domain-c9", "name": "mixed-cluster"}]})
    assert vlcm.Vlcm(client).cluster("gpu-cluster") == CLUSTER
    with pytest.raises(NotFound) as err:
        vlcm.Vlcm(client).cluster("nope")
    assert "gpu-cluster, mixed-cluster" in err.value.hint


def test_progress_log_logs_changes_and_a_heartbeat():
    lines = []
    log = vlcm.ProgressLog(lines.append, heartbeat=30)

    def info(completed, text):
        return {"operation": "apply", "status": "RUNNING",
                "progress": {"total": 3, "completed": completed, "message": {"default_message": text}}}

    log(info(0, "esxi-01 installing"), 0.5)
    log(info(0, "esxi-01 installing"), 10)
    log(info(1, "esxi-02 installing"), 12)
    log(info(1, "esxi-02 installing"), 45)
    assert lines == log.lines == ["[  0.5s] apply running 0/3: esxi-01 installing",
                                  "[ 12.0s] apply running 1/3: esxi-02 installing",
                                  "[ 45.0s] apply running 1/3: esxi-02 installing"]
