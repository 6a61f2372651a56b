# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vlcm_info against the lab vCenter: depots, depot content, image and compliance as the lab holds them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from vlcm_lab import BASE_IMAGE, DAEMON, DAEMON_VERSION, DRIVER, DRIVER_VERSION, Depot, Rest, vlcm_lab_at_start


@pytest.fixture
def lab(labs, tmp_path_factory):
    started = vlcm_lab_at_start(labs, tmp_path_factory)
    depot, rest = Depot(started), Rest(started)
    for bundle in (depot.driver(), depot.daemon()):
        info = rest.task("POST", "/api/esx/settings/depots/offline?vmw-task=true",
                         {"source_type": "PULL", "location": depot.url(bundle)})
        assert info["status"] == "SUCCEEDED", info
    return started


def info(run_tasks, check=False, expect_failure=False, **options):
    run = run_tasks([{"name": "vlcm_info", "gpuops.vgpu.vlcm_info": options}], check=check,
                    expect_failure=expect_failure)
    return run.result(0)


def test_depots_and_their_components(lab, run_tasks):
    result = info(run_tasks)
    assert result["changed"] is False
    truth = dict((d["id"], d) for d in lab.state()["depots"])
    assert sorted(d["id"] for d in result["depots"]) == sorted(truth)
    for depot in result["depots"]:
        assert depot["location"] == truth[depot["id"]]["location"]
        assert dict((c["name"], c["version"]) for c in depot["components"]) == truth[depot["id"]]["components"]
    available = dict(((c["name"], c["version"]), c) for c in result["components"])
    assert set(available) == {("ESXi", BASE_IMAGE), ("ESXi", "8.0.1-0.0.21495797"), ("ESXi", "7.0.3-0.95.22348816"),
                              (DRIVER, DRIVER_VERSION), (DAEMON, DAEMON_VERSION)}
    driver = available[(DRIVER, DRIVER_VERSION)]
    assert (driver["vendor"], driver["display_version"], driver["release_date"]) == (
        "NVIDIA", "525.105.14", "2023-03-28T00:00:00.000Z")
    assert "cluster" not in result and "image" not in result


def test_image_and_compliance_of_a_cluster(lab, run_tasks):
    before = info(run_tasks, cluster="gpu-cluster", gather=["image", "compliance"])
    assert before["cluster"]["image_managed"] is True
    assert before["image"] == {"base_image": BASE_IMAGE, "components": {}}
    assert before["compliance"] is None, "never scanned"
    assert "depots" not in before and "components" not in before

    run_tasks([
        {"name": "image", "gpuops.vgpu.vlcm_cluster_image": {"cluster": "gpu-cluster",
                                                             "components": {DRIVER: None, DAEMON: None}}},
        {"name": "scan", "gpuops.vgpu.vlcm_remediate": {"cluster": "gpu-cluster"}, "check_mode": True},
    ])
    after = info(run_tasks, check=True, cluster="gpu-cluster")
    image = next(c for c in lab.state()["clusters"] if c["name"] == "gpu-cluster")["image"]
    assert dict(after["image"]["components"], ESXi=after["image"]["base_image"]) == image
    compliance = after["compliance"]
    assert compliance["status"] == "NON_COMPLIANT"
    assert [h["name"] for h in compliance["hosts"]] == ["esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local"]
    hosts = dict((h["name"], h["components"]) for h in lab.state()["hosts"])
    for host in compliance["hosts"]:
        assert host["components"][DRIVER]["current"] == hosts[host["name"]].get(DRIVER)
        assert host["components"][DRIVER]["target"] == DRIVER_VERSION


def test_cluster_without_image_management(lab, run_tasks):
    result = info(run_tasks, cluster="mixed-cluster", gather=["image", "compliance"])
    assert result["cluster"]["image_managed"] is False
    assert result["image"] is None and result["compliance"] is None


def test_image_without_cluster_is_refused(lab, run_tasks):
    result = info(run_tasks, expect_failure=True, gather=["image"])
    assert "gather image needs the cluster option" in result["msg"]


def test_bundles_on_the_controller_and_the_hosts_in_one_read(lab, run_tasks):
    depot = Depot(lab)
    bundles = [depot.driver("535.54.06"), depot.daemon()]
    lab.reset_stats()
    result = info(run_tasks, cluster="gpu-cluster", bundles=bundles, gather=["components", "hosts"])
    assert [(b["path"], [(c["name"], c["version"]) for c in b["components"]]) for b in result["bundles"]] == [
        (bundles[0], [(DRIVER, "535.54.06-1OEM.800.1.0.20613240")]), (bundles[1], [(DAEMON, DAEMON_VERSION)])]
    held = [(c["name"], c["version"]) for c in result["components"]]
    assert (DAEMON, DAEMON_VERSION) in held and (DRIVER, "535.54.06-1OEM.800.1.0.20613240") not in held
    truth = sorted((h["name"], h["connection_state"]) for h in lab.state()["hosts"] if h["cluster"] == "gpu-cluster")
    assert [(h["name"], h["connection_state"].lower()) for h in result["hosts"]] == [
        (name, state.lower()) for name, state in truth]
    assert lab.stats()["soap_requests"] == 0
