# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host_driver role against the lab: bundles read, imported, put in the image and installed, checked on hosts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from vlcm_lab import (
    BASE_IMAGE,
    DAEMON,
    DAEMON_VERSION,
    DRIVER,
    DRIVER_VERSION,
    GPU_HOSTS,
    Depot,
    Rest,
    cluster_state,
    host_components,
    routes_called,
    set_image,
    vlcm_lab_at_start,
)

IMAGE = {"ESXi": BASE_IMAGE, DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION}
DRIVER_535, DAEMON_535 = "535.54.06-1OEM.800.1.0.20613240", "535.54.06-0.0.0000"
# What a converged cluster costs: the one read and the plan made from it.
READ_AND_PLAN = ["Read the bundles and the cluster's vLCM state", "Decide which steps the cluster needs"]
# The read's REST requests: the session, the datacenter and the cluster, whether it has an image, its hosts, image
# and last compliance scan, the depots' content, the logout.
MAX_CONVERGED_REST_REQUESTS = 9
SCAN = "POST /api/esx/settings/clusters/{cluster}/software?action=scan&vmw-task=true"


@pytest.fixture
def lab(labs, tmp_path_factory):
    return vlcm_lab_at_start(labs, tmp_path_factory, delay_ms=100)


@pytest.fixture
def bundles(lab):
    depot = Depot(lab)
    return {"paths": [depot.driver(), depot.daemon()], "prefix": depot.url_prefix, "depot": depot}


def role(lab, run_tasks, check=False, expect_failure=False, **role_vars):
    """The role in a play that sets the vCenter connection once, for the role too."""
    task = {"name": "host_driver role", "ansible.builtin.include_role": {"name": "gpuops.vgpu.host_driver"},
            "vars": role_vars}
    return run_tasks([task], check=check, expect_failure=expect_failure)


def by_task(run):
    """Results by task name (without the role prefix); a loop's result keeps its items in ``results``."""
    return dict((r["_task"].split(" : ", 1)[-1], r) for r in run.results)


def items(run, task):
    return by_task(run)[task].get("results", [])


def executed(run):
    """The role's tasks that ran (not skipped), argument validation aside, in order."""
    return [r["_task"].split(" : ", 1)[1] for r in run.results
            if " : " in r["_task"] and not r.get("skipped") and "Validating arguments" not in r["_task"]]


def test_check_mode_lists_the_components_and_changes_nothing(lab, run_tasks, bundles):
    before = lab.state()
    run = role(lab, run_tasks, check=True, host_driver_bundles=bundles["paths"],
               host_driver_bundle_url_prefix=bundles["prefix"], host_driver_accept_eula=True)
    shown = [r["msg"] for r in items(run, "Show the components each bundle carries")]
    assert shown == ["%s: %s %s" % (bundles["paths"][0].rsplit("/", 1)[1], DRIVER, DRIVER_VERSION),
                     "%s: %s %s" % (bundles["paths"][1].rsplit("/", 1)[1], DAEMON, DAEMON_VERSION)]
    tasks = by_task(run)
    assert tasks["Put the components into the cluster image"]["changed"] is True
    # The scan compares the hosts with today's image; the module counts those that do not run the components.
    assert sorted(tasks["Remediate the hosts to the image"]["pending"]) == sorted(GPU_HOSTS)
    would = tasks["Name the hosts a real run would remediate"]
    assert would["msg"] == ", ".join(GPU_HOSTS) and would["changed"] is True
    assert lab.state() == before


def test_remediation_without_the_eula_stops_before_any_change(lab, run_tasks, bundles):
    before = lab.state()
    run = role(lab, run_tasks, expect_failure=True, host_driver_bundles=bundles["paths"],
               host_driver_bundle_url_prefix=bundles["prefix"])
    assert "set host_driver_accept_eula to true" in run.failed[0]["msg"]
    assert lab.state() == before


def test_a_corrupt_bundle_stops_the_role_before_any_import(lab, run_tasks, bundles):
    corrupt = bundles["depot"].corrupt()
    run = role(lab, run_tasks, expect_failure=True, host_driver_bundles=[bundles["paths"][0], corrupt],
               host_driver_bundle_url_prefix=bundles["prefix"], host_driver_accept_eula=True)
    [read] = run.failed
    assert read["_task"].endswith("Read the bundles and the cluster's vLCM state")
    assert read["msg"].startswith("%s is not a valid ESXi offline bundle" % corrupt)
    assert lab.state()["depots"] == []


def test_missing_bundles_are_refused_by_the_argument_spec(lab, run_tasks):
    run = role(lab, run_tasks, expect_failure=True, host_driver_accept_eula=True)
    assert "host_driver_bundles" in run.failed[0]["msg"]


def test_bundles_by_url_and_no_remediation(lab, run_tasks, bundles):
    urls = ["file://" + path for path in bundles["paths"]]
    run = role(lab, run_tasks, host_driver_bundles=urls, host_driver_remediate=False)
    assert cluster_state(lab)["image"] == IMAGE
    assert sorted(d["location"] for d in lab.state()["depots"]) == sorted(urls)
    assert all(components == {"ESXi": BASE_IMAGE} for components in host_components(lab).values())
    assert by_task(run)["Remediate the hosts to the image"].get("skipped") is True


def test_full_run_installs_the_driver_on_every_host(lab, run_tasks, bundles):
    role(lab, run_tasks, host_driver_bundles=["file://" + path for path in bundles["paths"]],
         host_driver_remediate=False)
    run = role(lab, run_tasks, host_driver_bundles=bundles["paths"], host_driver_bundle_url_prefix=bundles["prefix"],
               host_driver_accept_eula=True)
    tasks = by_task(run)
    assert tasks["Put the components into the cluster image"]["changed"] is False, "the image already holds them"
    assert tasks["Remediate the hosts to the image"]["changed"] is True
    assert host_components(lab) == dict((name, IMAGE) for name in GPU_HOSTS)
    assert not any(h["maintenance_mode"] for h in lab.state()["hosts"])
    checks = items(run, "Check that every host complies and runs each component at its version")
    runs = "%s %s, %s %s" % (DRIVER, DRIVER_VERSION, DAEMON, DAEMON_VERSION)
    assert [r["msg"] for r in checks] == ["Host %s runs %s." % (name, runs) for name in GPU_HOSTS]
    assert items(run, "Import the offline bundles into vLCM") == [], "vLCM already holds their content (file URLs)"
    assert sorted(d["location"] for d in lab.state()["depots"]) == sorted("file://" + p for p in bundles["paths"])


def test_a_second_run_changes_nothing(lab, run_tasks, bundles):
    role(lab, run_tasks, host_driver_bundles=bundles["paths"], host_driver_bundle_url_prefix=bundles["prefix"],
         host_driver_accept_eula=True)
    before = lab.state()
    run = role(lab, run_tasks, host_driver_bundles=bundles["paths"], host_driver_bundle_url_prefix=bundles["prefix"],
               host_driver_accept_eula=True)
    assert [r["_task"] for r in run.results if r.get("changed")] == []
    assert not any(item.get("changed") for r in run.results for item in r.get("results", []))
    assert lab.state()["hosts"] == before["hosts"]
    assert lab.state()["depots"] == before["depots"]


def test_a_converged_cluster_costs_one_read_in_real_runs_and_check_mode(lab, run_tasks, bundles):
    asked = dict(host_driver_bundles=bundles["paths"], host_driver_bundle_url_prefix=bundles["prefix"],
                 host_driver_accept_eula=True)
    role(lab, run_tasks, **asked)
    before = lab.state()
    for check in (False, True):
        lab.reset_stats()
        run = role(lab, run_tasks, check=check, **asked)
        assert executed(run) == READ_AND_PLAN, "check mode %s" % check
        assert not any(r.get("changed") for r in run.results)
        stats = lab.stats()
        assert stats["soap_requests"] == 0
        assert stats["rest_requests"] <= MAX_CONVERGED_REST_REQUESTS, stats["rest_by_route"]
        assert routes_called(lab) == {}, "no import, image draft, scan or remediation"
    assert lab.state() == before


def test_an_image_changed_after_the_last_scan_gets_the_hosts_remediated(lab, run_tasks, bundles):
    role(lab, run_tasks, host_driver_bundles=bundles["paths"], host_driver_bundle_url_prefix=bundles["prefix"],
         host_driver_accept_eula=True)
    depot, rest = bundles["depot"], Rest(lab)
    newer = [depot.driver("535.54.06"), depot.daemon("535.54.06")]
    for path in newer:
        info = rest.task("POST", "/api/esx/settings/depots/offline?vmw-task=true",
                         {"source_type": "PULL", "location": depot.url(path)})
        assert info["status"] == "SUCCEEDED", info
    # The image moves on outside the role; vLCM's last scan, from the role's remediation, still shows every host
    # complying, running the 525 driver.
    set_image(rest, {DRIVER: DRIVER_535, DAEMON: DAEMON_535})
    run = role(lab, run_tasks, host_driver_bundles=newer, host_driver_bundle_url_prefix=bundles["prefix"],
               host_driver_accept_eula=True)
    assert executed(run) == READ_AND_PLAN + [
        "Import, set the image, remediate and verify where the cluster differs",
        "Show the components each bundle carries", "Remediate the hosts to the image",
        "Check that every host complies and runs each component at its version"]
    assert sorted(by_task(run)["Remediate the hosts to the image"]["pending"]) == GPU_HOSTS
    newer_image = {"ESXi": BASE_IMAGE, DRIVER: DRIVER_535, DAEMON: DAEMON_535}
    assert host_components(lab) == dict((name, newer_image) for name in GPU_HOSTS)


def test_a_rescan_scans_a_converged_cluster_and_changes_nothing(lab, run_tasks, bundles):
    asked = dict(host_driver_bundles=bundles["paths"], host_driver_bundle_url_prefix=bundles["prefix"],
                 host_driver_accept_eula=True)
    role(lab, run_tasks, **asked)
    before = lab.state()
    lab.reset_stats()
    run = role(lab, run_tasks, host_driver_rescan=True, **asked)
    assert executed(run) == READ_AND_PLAN + [
        "Import, set the image, remediate and verify where the cluster differs",
        "Show the components each bundle carries", "Remediate the hosts to the image",
        "Check that every host complies and runs each component at its version"]
    assert not any(r.get("changed") for r in run.results)
    assert list(routes_called(lab)) == [SCAN]
    assert lab.state()["hosts"] == before["hosts"]
