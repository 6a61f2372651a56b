# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vLCM calls: compliance summary, progress log, and the draft, depot and cluster flows with a fake REST client."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm import _operations as vlcm
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, InputError, NotFound, TaskFailed

DRIVER, DAEMON = "NVD-VGPU-800", "nvd-gpu-mgmt-daemon"
V525, V535 = "525.105.14-1OEM.800.1.0.20613240", "535.54.06-1OEM.800.1.0.20613240"
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


def test_an_existing_draft_vcenter_does_not_name_is_found_by_the_session_user():
    session_user = "VSPHERE.LOCAL\\automation"
    client = FakeClient({
        "POST " + DRAFTS: ApiError("exists", error_type="ALREADY_EXISTS"),
        "GET /api/session": {"user": session_user},
        "GET " + DRAFTS: {"4": {"metadata": {"owner": session_user}}},
        "GET %s/4" % DRAFTS: {"metadata": {"owner": session_user, "creation_time": "2026-11-29T08:00:00Z"},
                              "software": {"base_image": {"version": "8.0.2"},
                                           "components": {DRIVER: {"version": "535.1"}}}},
        "GET /api/esx/settings/clusters/domain-c7/software": {"base_image": {"version": "8.0.2"}, "components": {}},
    })
    with pytest.raises(ApiError) as err:
        vlcm.Vlcm(client).change_image(CLUSTER, {DRIVER: V525}, [], "msg")
    assert err.value.message == ("Cluster 'gpu-cluster' has an uncommitted image draft of this user (draft 4), with "
                                 "changes of its own: component %s at 535.1." % DRIVER)
    assert not any(str(call).startswith("DELETE") for call in client.calls)


@pytest.mark.parametrize("draft, image, to_set, to_delete, changes", [
    ({}, {}, {"A": "2"}, [], []),
    ({"A": "2"}, {}, {"A": "2"}, [], []),
    ({"A": "2", "B": "1"}, {"B": "1"}, {"A": "2"}, ["B"], []),
    ({"A": "2"}, {"B": "1"}, {"A": "2"}, ["B"], []),
    ({"A": "3"}, {}, {"A": "2"}, [], ["component A at 3"]),
    ({}, {"B": "1"}, {"A": "2"}, [], ["component B removed"]),
])
def test_what_a_left_draft_holds_beyond_the_image_and_this_change(draft, image, to_set, to_delete, changes):
    assert vlcm.left_draft_changes({"base_image": "8", "components": image}, {"base_image": "8", "components": draft},
                                   to_set, to_delete) == changes


def test_a_left_draft_on_another_base_image_is_not_this_change():
    assert vlcm.left_draft_changes({"base_image": "8.0.2", "components": {}}, {"base_image": "8.0.3", "components": {}},
                                   {}, []) == ["base image 8.0.3 instead of 8.0.2"]


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
    log = vlcm.ProgressLog(heartbeat=30)

    def info(completed, text):
        return {"operation": "apply", "status": "RUNNING",
                "progress": {"total": 3, "completed": completed, "message": {"default_message": text}}}

    log(info(0, "esxi-01 installing"), 0.5)
    log(info(0, "esxi-01 installing"), 10)
    log(info(1, "esxi-02 installing"), 12)
    log(info(1, "esxi-02 installing"), 45)
    assert log.lines == ["[  0.5s] apply running 0/3: esxi-01 installing",
                         "[ 12.0s] apply running 1/3: esxi-02 installing",
                         "[ 45.0s] apply running 1/3: esxi-02 installing"]
