# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vlcm_depot against the lab vCenter: offline bundles imported by URL, checked against the lab's depots."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from vlcm_lab import DAEMON, DAEMON_VERSION, DRIVER, DRIVER_VERSION, Depot, Rest, routes_called

IMPORT = "POST /api/esx/settings/depots/offline?vmw-task=true"


def depot_task(run_tasks, check=False, expect_failure=False, diff=False, **options):
    run = run_tasks([{"name": "vlcm_depot", "gpuops.vgpu.vlcm_depot": options}], check=check,
                    expect_failure=expect_failure, diff=diff)
    return run.result(0)


@pytest.fixture
def depot(lab):
    return Depot(lab)


@pytest.fixture(autouse=True)
def no_depots_left(lab):
    """Every test starts from a vCenter without offline depots."""
    yield
    Rest(lab).remove_depots()
    assert lab.state()["depots"] == []


def test_check_mode_reads_the_bundle_and_imports_nothing(lab, run_tasks, depot):
    path = depot.driver()
    lab.reset_stats()
    result = depot_task(run_tasks, check=True, diff=True, src=path, location=depot.url(path))
    assert result["changed"] is True
    assert result["depot"] is None
    assert [(c["name"], c["version"]) for c in result["components"]] == [(DRIVER, DRIVER_VERSION)]
    assert result["bundle"]["vendors"] == ["NVIDIA"]
    assert result["diff"] == {"before": {"location": depot.url(path), "present": False},
                              "after": {"location": depot.url(path), "present": True}}
    assert lab.state()["depots"] == []
    assert routes_called(lab) == {}


def test_import_returns_the_components_and_a_rerun_changes_nothing(lab, run_tasks, depot):
    driver, daemon = depot.driver(), depot.daemon()
    first = depot_task(run_tasks, src=driver, location=depot.url(driver), description="vGPU 15 host driver")
    assert first["changed"] is True
    truth = lab.state()["depots"]
    assert [(d["id"], d["location"], d["components"]) for d in truth] == [
        (first["depot"]["id"], depot.url(driver), {DRIVER: DRIVER_VERSION})]
    assert [(c["name"], c["version"], c["vendor"]) for c in first["components"]] == [(DRIVER, DRIVER_VERSION, "NVIDIA")]
    assert first["depot"]["description"] == "vGPU 15 host driver"
    assert first["depot"]["owner"] == lab.vcenter_vars["vcenter_username"]
    assert any("create succeeded" in line for line in first["progress"])
    assert "warnings" not in first

    daemon_result = depot_task(run_tasks, location=depot.url(daemon))
    assert [(c["name"], c["version"]) for c in daemon_result["components"]] == [(DAEMON, DAEMON_VERSION)]
    assert len(lab.state()["depots"]) == 2

    lab.reset_stats()
    again = depot_task(run_tasks, src=driver, location=depot.url(driver))
    assert again["changed"] is False
    assert again["depot"]["id"] == first["depot"]["id"]
    assert again["components"] == first["components"]
    assert routes_called(lab) == {}, "an imported bundle is not imported again"
    assert len(lab.state()["depots"]) == 2


def test_same_content_from_another_location_is_not_imported_twice(lab, run_tasks, depot):
    driver = depot.driver()
    first = depot_task(run_tasks, location=depot.url(driver))
    renamed = depot.copy(driver, "driver-copy.zip")
    again = depot_task(run_tasks, location=depot.url(renamed))
    assert again["changed"] is False
    assert again["depot"]["id"] == first["depot"]["id"]
    assert again["depot"]["location"] == depot.url(driver)
    assert "already holds the content" in again["warnings"][0]
    assert [d["location"] for d in lab.state()["depots"]] == [depot.url(driver)]


def test_file_url_on_the_vcenter(lab, run_tasks, depot):
    daemon = depot.daemon()
    result = depot_task(run_tasks, location="file://" + daemon)
    assert result["changed"] is True
    assert lab.state()["depots"][0]["location"] == "file://" + daemon


def test_unreachable_url_fails_with_the_reason(lab, run_tasks):
    location = "https://127.0.0.1:9/nvidia/NVD-VGPU-800.zip"
    result = depot_task(run_tasks, expect_failure=True, location=location)
    assert "Importing the offline bundle %s failed: Cannot download the offline bundle" % location in result["msg"]
    assert lab.state()["depots"] == []


def test_missing_file_on_the_depot_server(lab, run_tasks, depot):
    result = depot_task(run_tasks, expect_failure=True, location=depot.url_prefix + "no-such-bundle.zip")
    assert "404 Not Found" in result["msg"]
    assert lab.state()["depots"] == []


def test_corrupt_zip_is_refused_by_vcenter(lab, run_tasks, depot):
    corrupt = depot.corrupt()
    result = depot_task(run_tasks, expect_failure=True, location=depot.url(corrupt))
    assert "is not a valid offline bundle: it is not a zip archive" in result["msg"]
    assert lab.state()["depots"] == []


def test_corrupt_src_fails_before_vcenter_is_asked(lab, run_tasks, depot):
    corrupt = depot.corrupt()
    lab.reset_stats()
    result = depot_task(run_tasks, expect_failure=True, src=corrupt, location=depot.url(corrupt))
    assert "%s is not a valid ESXi offline bundle" % corrupt in result["msg"]
    assert "complete offline bundle" in result["msg"]
    assert lab.stats()["rest_requests"] == 0
    assert lab.state()["depots"] == []


def test_src_that_differs_from_the_location_is_reported(lab, run_tasks, depot):
    driver, daemon = depot.driver(), depot.daemon()
    result = depot_task(run_tasks, src=daemon, location=depot.url(driver))
    assert result["changed"] is True
    assert "differ" in result["warnings"][0] and DAEMON in result["warnings"][0]


def test_absent_removes_the_depot_and_its_content(lab, run_tasks, depot):
    driver = depot.driver()
    depot_task(run_tasks, location=depot.url(driver))
    checked = depot_task(run_tasks, check=True, location=depot.url(driver), state="absent")
    assert checked["changed"] is True and len(lab.state()["depots"]) == 1
    removed = depot_task(run_tasks, location=depot.url(driver), state="absent")
    assert removed["changed"] is True and removed["depot"] is None
    assert lab.state()["depots"] == []
    again = depot_task(run_tasks, location=depot.url(driver), state="absent")
    assert again["changed"] is False


def test_wrong_password_is_a_clear_failure(lab, run_tasks, depot):
    run = run_tasks([{"name": "vlcm_depot", "gpuops.vgpu.vlcm_depot": {"location": depot.url_prefix + "x.zip"}}],
                    module_defaults={"group/gpuops.vgpu.vcenter": dict(lab.connection, password="wrong")},
                    expect_failure=True)
    assert "refused the login of user '%s'" % lab.vcenter_vars["vcenter_username"] in run.result(0)["msg"]
