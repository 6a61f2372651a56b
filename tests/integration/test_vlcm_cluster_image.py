# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vlcm_cluster_image against the lab vCenter: the desired image, checked against the lab's ground truth."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from vlcm_lab import (
    BASE_IMAGE,
    DAEMON,
    DAEMON_VERSION,
    DRIVER,
    DRIVER_VERSION,
    Depot,
    Rest,
    cluster_state,
    host_components,
    open_draft,
    routes_called,
    set_image,
    vlcm_lab_at_start,
)

DRIVER_535 = "535.54.06-1OEM.800.1.0.20613240"


@pytest.fixture
def lab(labs, tmp_path_factory):
    started = vlcm_lab_at_start(labs, tmp_path_factory)
    depot, rest = Depot(started), Rest(started)
    for bundle in (depot.driver(), depot.driver("535.54.06"), depot.daemon()):
        info = rest.task("POST", "/api/esx/settings/depots/offline?vmw-task=true",
                         {"source_type": "PULL", "location": depot.url(bundle)})
        assert info["status"] == "SUCCEEDED", info
    return started


@pytest.fixture
def driver_in_the_image(lab):
    """gpu-cluster's image with the driver and the daemon, committed directly."""
    set_image(Rest(lab), {DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION})


def image(run_tasks, check=False, diff=False, expect_failure=False, **options):
    options.setdefault("cluster", "gpu-cluster")
    run = run_tasks([{"name": "vlcm_cluster_image", "gpuops.vgpu.vlcm_cluster_image": options}], check=check,
                    diff=diff, expect_failure=expect_failure)
    return run.result(0)


def test_check_mode_shows_the_diff_and_changes_nothing(lab, run_tasks):
    before = lab.state()
    lab.reset_stats()
    result = image(run_tasks, check=True, diff=True, components={DRIVER: DRIVER_VERSION, DAEMON: None})
    assert result["changed"] is True
    assert result["changes"] == {"set": {DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION}, "delete": []}
    assert result["diff"] == {"before": {"components": {}},
                              "after": {"components": {DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION}}}
    assert lab.state() == before
    assert routes_called(lab) == {} and routes_called(lab, "PATCH") == {}


def test_set_components_then_a_rerun_changes_nothing(lab, run_tasks):
    result = image(run_tasks, components={DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION})
    assert result["changed"] is True
    assert result["cluster"]["name"] == "gpu-cluster" and result["cluster"]["id"].startswith("domain-c")
    assert result["commit"]
    truth = cluster_state(lab)
    assert truth["image"] == {"ESXi": BASE_IMAGE, DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION}
    assert result["image"] == {"base_image": BASE_IMAGE, "components": {DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION}}
    assert all(components == {"ESXi": BASE_IMAGE} for components in host_components(lab).values()), \
        "changing the image changes no host"
    assert Rest(lab).drafts("gpu-cluster") == {}, "the draft is gone once committed"

    lab.reset_stats()
    again = image(run_tasks, components={DRIVER: DRIVER_VERSION, DAEMON: None})
    assert again["changed"] is False
    assert again["changes"] == {"set": {}, "delete": []}
    assert routes_called(lab) == {}, "no draft for an image that is already as asked"
    assert cluster_state(lab)["image"] == truth["image"]


def test_null_version_keeps_the_version_in_the_image(lab, run_tasks, driver_in_the_image):
    result = image(run_tasks, components={DRIVER: None})
    assert result["changed"] is False
    assert cluster_state(lab)["image"][DRIVER] == DRIVER_VERSION


def test_update_one_component_leaves_the_others(lab, run_tasks, driver_in_the_image):
    result = image(run_tasks, diff=True, components={DRIVER: DRIVER_535})
    assert result["changed"] is True
    assert result["diff"]["before"]["components"][DRIVER] == DRIVER_VERSION
    assert cluster_state(lab)["image"] == {"ESXi": BASE_IMAGE, DRIVER: DRIVER_535, DAEMON: DAEMON_VERSION}
    image(run_tasks, components={DRIVER: DRIVER_VERSION})
    assert cluster_state(lab)["image"][DRIVER] == DRIVER_VERSION


def test_remove_and_add_back(lab, run_tasks, driver_in_the_image):
    removed = image(run_tasks, remove_components=[DAEMON, "never-there"])
    assert removed["changed"] is True and removed["changes"]["delete"] == [DAEMON]
    assert cluster_state(lab)["image"] == {"ESXi": BASE_IMAGE, DRIVER: DRIVER_VERSION}
    assert image(run_tasks, remove_components=[DAEMON])["changed"] is False
    image(run_tasks, components={DAEMON: DAEMON_VERSION})
    assert cluster_state(lab)["image"][DAEMON] == DAEMON_VERSION


def test_version_not_in_the_depots_fails_before_any_change(lab, run_tasks):
    before = cluster_state(lab)["image"]
    lab.reset_stats()
    result = image(run_tasks, expect_failure=True, components={DRIVER: "550.54.10-1OEM.800.1.0.20613240"})
    assert ("component NVD-VGPU-800 has no version 550.54.10-1OEM.800.1.0.20613240 in the depots (they hold %s, %s)"
            % (DRIVER_VERSION, DRIVER_535)) in result["msg"]
    assert "vlcm_depot" in result["msg"]
    assert cluster_state(lab)["image"] == before
    assert routes_called(lab) == {}, "no draft was created"


def test_component_in_no_depot_fails_and_lists_what_is_there(lab, run_tasks):
    result = image(run_tasks, expect_failure=True, components={"NVD-AIE-800": None})
    assert "component NVD-AIE-800 is in no depot" in result["msg"]
    assert "Components in the depots: ESXi, NVD-VGPU-800, nvd-gpu-mgmt-daemon" in result["msg"]


def test_cluster_without_image_management(lab, run_tasks):
    before = lab.state()
    result = image(run_tasks, expect_failure=True, cluster="mixed-cluster", components={DRIVER: DRIVER_VERSION})
    assert "Cluster 'mixed-cluster' is not managed with a single vLCM image" in result["msg"]
    assert cluster_state(lab, "mixed-cluster")["image_managed"] is False
    assert lab.state() == before


def test_unknown_cluster_lists_the_clusters(lab, run_tasks):
    result = image(run_tasks, expect_failure=True, cluster="no-such-cluster", components={DRIVER: None})
    assert "Cluster 'no-such-cluster' was not found" in result["msg"]
    assert "Known clusters: %s." % ", ".join(sorted(c["name"] for c in lab.state()["clusters"])) in result["msg"]


def test_contradicting_options_fail(lab, run_tasks):
    result = image(run_tasks, expect_failure=True, components={DRIVER: None}, remove_components=[DRIVER])
    assert "both in components and in remove_components" in result["msg"]


def test_depot_in_use_by_the_image_cannot_be_removed(lab, run_tasks, driver_in_the_image):
    depot = Depot(lab)
    result = run_tasks([{"name": "vlcm_depot", "gpuops.vgpu.vlcm_depot": {
        "location": depot.url(depot.driver()), "state": "absent"}}], expect_failure=True).result(0)
    assert "desired image of cluster gpu-cluster uses" in result["msg"]
    assert len(lab.state()["depots"]) == 3


# The draft a run killed between creating and committing it leaves (vCenter's draft is the module's whole trace):
# empty when killed before the PATCH, with the change when killed before the commit.
@pytest.mark.parametrize("patched", [False, True], ids=["killed-before-patch", "killed-before-commit"])
def test_a_draft_a_killed_run_left_is_discarded_and_the_change_made(lab, run_tasks, patched):
    rest = Rest(lab)
    draft = open_draft(rest, {DRIVER: DRIVER_VERSION} if patched else None)
    result = image(run_tasks, components={DRIVER: DRIVER_VERSION})
    assert result["changed"] is True and any(
        warning.startswith("Discarded image draft %s of cluster gpu-cluster" % draft)
        for warning in result.get("warnings", [])), result
    assert cluster_state(lab)["image"] == {"ESXi": BASE_IMAGE, DRIVER: DRIVER_VERSION}
    assert rest.drafts("gpu-cluster") == {}


def test_a_draft_with_changes_of_its_own_is_refused_and_kept(lab, run_tasks):
    rest = Rest(lab)
    draft = open_draft(rest, {DAEMON: DAEMON_VERSION})
    result = image(run_tasks, components={DRIVER: DRIVER_VERSION}, expect_failure=True)
    assert "has an uncommitted image draft of this user (draft %s), with changes of its own: component %s at %s." % (
        draft, DAEMON, DAEMON_VERSION) in result["msg"]
    assert list(rest.drafts("gpu-cluster")) == [draft]
    assert cluster_state(lab)["image"] == {"ESXi": BASE_IMAGE}
