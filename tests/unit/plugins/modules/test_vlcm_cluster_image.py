# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vlcm_cluster_image's real main() against a fake vCenter: the image changed through a draft, check mode, refusals."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.modules import vlcm_cluster_image
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.vlcm.vlcm_fake import (
    BASE_IMAGE,
    DAEMON,
    DAEMON_VERSION,
    DRIVER,
    DRIVER_535,
    DRIVER_VERSION,
    install,
    run_module,
)

DRAFTS = "/api/esx/settings/clusters/domain-c7/software/drafts"
DRAFT_FLOW = [("POST", DRAFTS), ("PATCH", DRAFTS + "/1/software/components"),
              ("POST", DRAFTS + "/1?action=validate&vmw-task=true"), ("POST", DRAFTS + "/1?action=commit&vmw-task=true")]


@pytest.fixture
def vcenter(monkeypatch):
    fake = install(monkeypatch)
    fake.add_depot("https://depot/driver.zip", [(DRIVER, DRIVER_VERSION), (DRIVER, DRIVER_535)])
    fake.add_depot("https://depot/daemon.zip", [(DAEMON, DAEMON_VERSION)])
    return fake


def run(args, capsys, **kwargs):
    return run_module(vlcm_cluster_image, dict({"cluster": "gpu-cluster"}, **args), capsys, **kwargs)


def test_sets_components_through_a_draft_and_a_second_run_changes_nothing(vcenter, capsys):
    failed, result = run({"components": {DRIVER: DRIVER_VERSION, DAEMON: None}, "commit_message": "driver 525"},
                         capsys, diff=True)
    assert not failed and result["changed"] is True
    assert result["cluster"] == {"id": "domain-c7", "name": "gpu-cluster"}
    assert result["changes"] == {"set": {DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION}, "delete": []}
    assert result["commit"] == "1"
    assert result["image"] == {"base_image": BASE_IMAGE, "components": {DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION}}
    assert result["diff"] == {"before": {"components": {}},
                              "after": {"components": {DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION}}}
    assert len(result["progress"]) == 2
    assert vcenter.image["components"] == {DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION}
    assert vcenter.writes() == DRAFT_FLOW and vcenter.drafts == {}

    vcenter.calls = []
    failed, again = run({"components": {DRIVER: DRIVER_VERSION, DAEMON: None}}, capsys)
    assert not failed and again["changed"] is False
    assert again["changes"] == {"set": {}, "delete": []} and "commit" not in again and "progress" not in again
    assert vcenter.writes() == [] and vcenter.commits == 1


def test_updates_and_removes_only_what_is_named(vcenter, capsys):
    vcenter.image["components"] = {DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION, "other": "1.0"}
    failed, result = run({"components": {DRIVER: DRIVER_535}, "remove_components": [DAEMON, "never-there"]}, capsys)
    assert not failed and result["changed"] is True
    assert result["changes"] == {"set": {DRIVER: DRIVER_535}, "delete": [DAEMON]}
    assert vcenter.image["components"] == {DRIVER: DRIVER_535, "other": "1.0"}


def test_a_null_version_takes_the_newest_the_depots_hold(vcenter, capsys):
    failed, result = run({"components": {DRIVER: None}}, capsys)
    assert not failed and vcenter.image["components"] == {DRIVER: DRIVER_535}


def test_check_mode_warns_about_what_no_depot_holds_yet_and_changes_nothing(vcenter, capsys):
    failed, result = run({"components": {"NVD-AIE-800": None, DRIVER: "999.1"}}, capsys, check_mode=True, diff=True)
    assert not failed and result["changed"] is True
    assert result["changes"]["set"] == {"NVD-AIE-800": None, DRIVER: "999.1"}
    assert result["diff"]["after"]["components"] == {"NVD-AIE-800": None, DRIVER: "999.1"}
    assert vcenter.warnings == [
        "Check mode: component NVD-AIE-800 is in no depot yet. The real run fails unless an earlier task imports it.",
        "Check mode: component %s has no version 999.1 in the depots (they hold %s, %s) yet. The real run fails "
        "unless an earlier task imports it." % (DRIVER, DRIVER_VERSION, DRIVER_535)]
    assert "commit" not in result and vcenter.writes() == [] and vcenter.image["components"] == {}


def test_a_component_in_no_depot_fails_before_anything_changes(vcenter, capsys):
    failed, result = run({"components": {"NVD-AIE-800": "1.0"}}, capsys)
    assert failed
    assert result["msg"].startswith("The cluster image cannot be changed: component NVD-AIE-800 is in no depot. "
                                    "Import the offline bundle that carries it first (gpuops.vgpu.vlcm_depot).")
    assert "Components in the depots: ESXi, %s, %s." % (DRIVER, DAEMON) in result["msg"]
    assert vcenter.writes() == []


@pytest.mark.parametrize("args, words", [
    ({"components": {DRIVER: DRIVER_VERSION}, "remove_components": [DRIVER]},
     "both in components and in remove_components"),
    ({"components": {"ESXi": BASE_IMAGE}}, "Component ESXi is the image's base image"),
    ({"cluster": "mixed-cluster", "components": {DRIVER: DRIVER_VERSION}}, "is not managed with a single vLCM image"),
    ({"cluster": "nope"}, "Cluster 'nope' was not found. Known clusters: gpu-cluster, mixed-cluster."),
])
def test_bad_input_fails_and_changes_nothing(vcenter, capsys, args, words):
    failed, result = run(args, capsys)
    assert failed and words in result["msg"]
    assert vcenter.writes() == [] and vcenter.image["components"] == {}


def test_a_draft_vlcm_refuses_is_discarded_and_the_image_stays(vcenter, capsys):
    vcenter.image["components"] = {DAEMON: DAEMON_VERSION}
    vcenter.validation_errors = ["Component NVD-VGPU-800 conflicts with the base image."]
    failed, result = run({"components": {DRIVER: DRIVER_VERSION}}, capsys)
    assert failed
    assert result["msg"] == ("vLCM refused the new image of cluster 'gpu-cluster': Component NVD-VGPU-800 conflicts "
                             "with the base image. Nothing was changed.")
    assert vcenter.writes()[-1] == ("DELETE", DRAFTS + "/1")
    assert vcenter.drafts == {} and vcenter.image["components"] == {DAEMON: DAEMON_VERSION} and vcenter.commits == 0


def test_a_draft_of_the_user_with_changes_of_its_own_is_left_alone(vcenter, capsys):
    vcenter.drafts["7"] = {DAEMON: DAEMON_VERSION}
    vcenter.draft_count = 7
    failed, result = run({"components": {DRIVER: DRIVER_VERSION}}, capsys)
    assert failed and result["error_type"] == "ALREADY_EXISTS"
    assert ("Cluster 'gpu-cluster' has an uncommitted image draft of this user (draft 7), with changes of its own: "
            "component %s at %s." % (DAEMON, DAEMON_VERSION)) in result["msg"]
    assert vcenter.drafts == {"7": {DAEMON: DAEMON_VERSION}} and vcenter.image["components"] == {}
    assert [call for call in vcenter.writes() if call[0] != "POST"] == []


@pytest.mark.parametrize("left", [{}, {DRIVER: DRIVER_VERSION}], ids=["killed-before-patch", "killed-before-commit"])
def test_a_draft_an_interrupted_change_left_is_discarded_and_the_change_made(vcenter, capsys, left):
    vcenter.drafts["3"] = dict(left)
    vcenter.draft_count = 3
    failed, result = run({"components": {DRIVER: DRIVER_VERSION}}, capsys)
    assert not failed and result["changed"] is True
    assert vcenter.image["components"] == {DRIVER: DRIVER_VERSION} and vcenter.drafts == {}
    assert vcenter.warnings == ["Discarded image draft 3 of cluster gpu-cluster (created 2026-11-29T08:00:00.000Z by "
                                "administrator@vsphere.local): an interrupted change left it, holding no change "
                                "beyond this one."]
    assert vcenter.writes()[:3] == [("POST", DRAFTS), ("DELETE", DRAFTS + "/3"), ("POST", DRAFTS)]
