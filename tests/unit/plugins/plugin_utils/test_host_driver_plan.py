# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host_driver role's plan from one vlcm_info read: which bundles to import, whether the image changes, whether
the hosts are remediated and verified; and the check of the hosts after a remediation."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._host_driver_plan import host_checks, host_driver_plan

DRIVER, DRIVER_VERSION, DRIVER_535 = "NVD-VGPU-800", "525.105.14-1OEM.800.1.0.20613240", "535.54.06-1OEM.800.1.0.20613240"
DAEMON, DAEMON_VERSION = "nvd-gpu-mgmt-daemon", "525.105.14-0.0.0000"
BASE_IMAGE = "8.0.2-0.0.22380479"
HOSTS = ["esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local"]
PREFIX = "https://depot.example.com/nvidia/"
DRIVER_ZIP, DAEMON_ZIP = "NVD-VGPU-800_525.zip", "nvd-gpu-mgmt-daemon_525.zip"
LOCATIONS = [PREFIX + DRIVER_ZIP, PREFIX + DAEMON_ZIP]


def component(name, version):
    return {"name": name, "version": version}


def scanned_host(name):
    """A host of a compliance summary that complied, running the base image, the driver and the daemon."""
    running = {"ESXi": BASE_IMAGE, DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION}
    return {"name": name, "id": "host-%s" % name[5:7], "status": "COMPLIANT", "impact": "NO_IMPACT",
            "components": dict((n, {"status": "COMPLIANT", "current": v, "target": v}) for n, v in running.items())}


def converged_read():
    """vlcm_info's read of a cluster as a finished run leaves it: bundles in the depots, in the image, on every
    host."""
    return {
        "changed": False,
        "bundles": [
            {"path": "/srv/depot/" + DRIVER_ZIP, "file_name": DRIVER_ZIP, "components": [component(DRIVER, DRIVER_VERSION)]},
            {"path": "/srv/depot/" + DAEMON_ZIP, "file_name": DAEMON_ZIP, "components": [component(DAEMON, DAEMON_VERSION)]},
        ],
        "components": [component("ESXi", BASE_IMAGE), component(DRIVER, DRIVER_VERSION),
                       component(DAEMON, DAEMON_VERSION)],
        "cluster": {"id": "domain-c7", "name": "gpu-cluster", "image_managed": True},
        "hosts": [{"name": name, "id": "host-%d" % i, "connection_state": "CONNECTED"} for i, name in enumerate(HOSTS)],
        "image": {"base_image": BASE_IMAGE, "components": {DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION}},
        "compliance": {"status": "COMPLIANT", "commit": "2", "hosts": [scanned_host(name) for name in HOSTS]},
    }


def plan(read, locations=None, **options):
    return host_driver_plan(read, LOCATIONS if locations is None else locations, **options)


def steps(decided):
    return dict((step, decided[step]) for step in ("image", "remediate", "verify", "converged"))


def test_a_converged_cluster_needs_no_step():
    decided = plan(converged_read())
    assert decided["converged"] is True
    assert steps(decided) == {"image": False, "remediate": False, "verify": False, "converged": True}
    assert decided["imports"] == [] and decided["reasons"] == []
    assert decided["components"] == {DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION}
    assert list(decided["components"]) == [DRIVER, DAEMON], "in the bundles' order"
    assert [b["summary"] for b in decided["bundles"]] == [
        "%s: %s %s" % (DRIVER_ZIP, DRIVER, DRIVER_VERSION), "%s: %s %s" % (DAEMON_ZIP, DAEMON, DAEMON_VERSION)]
    assert [(b["location"], b["src"], b["import"]) for b in decided["bundles"]] == [
        (LOCATIONS[0], "/srv/depot/" + DRIVER_ZIP, False), (LOCATIONS[1], "/srv/depot/" + DAEMON_ZIP, False)]


def test_a_fresh_cluster_needs_every_step_and_the_verification_outside_check_mode():
    read = converged_read()
    read["components"] = [component("ESXi", BASE_IMAGE)]
    read["image"]["components"] = {}
    read["compliance"] = None
    decided = plan(read)
    assert steps(decided) == {"image": True, "remediate": True, "verify": True, "converged": False}
    assert [b["file_name"] for b in decided["imports"]] == [DRIVER_ZIP, DAEMON_ZIP]
    assert decided["reasons"] == [
        "import %s: no depot holds %s %s" % (DRIVER_ZIP, DRIVER, DRIVER_VERSION),
        "import %s: no depot holds %s %s" % (DAEMON_ZIP, DAEMON, DAEMON_VERSION),
        "image: %s %s (it holds none)" % (DRIVER, DRIVER_VERSION),
        "image: %s %s (it holds none)" % (DAEMON, DAEMON_VERSION),
        "remediation: the image changes"]
    assert plan(read, check_mode=True)["verify"] is False


def test_only_the_bundle_whose_content_no_depot_holds_is_imported():
    read = converged_read()
    read["bundles"][0]["components"] = [component(DRIVER, DRIVER_535)]
    decided = plan(read)
    assert [b["file_name"] for b in decided["imports"]] == [DRIVER_ZIP]
    assert decided["imports"][0]["src"] == "/srv/depot/" + DRIVER_ZIP
    assert decided["image"] is True and decided["remediate"] is True
    assert decided["components"] == {DRIVER: DRIVER_535, DAEMON: DAEMON_VERSION}


def test_bundles_by_url_are_matched_with_the_depot_of_their_location():
    read = converged_read()
    del read["bundles"], read["components"]
    urls = ["file:///depot/" + DRIVER_ZIP, "file:///depot/" + DAEMON_ZIP]
    read["depots"] = [{"id": "depot-1", "location": urls[0], "components": [component(DRIVER, DRIVER_VERSION)]},
                      {"id": "depot-2", "location": urls[1], "components": [component(DAEMON, DAEMON_VERSION)]}]
    assert plan(read, urls)["converged"] is True

    read["depots"].pop(1)
    decided = plan(read, urls)
    assert [b["location"] for b in decided["imports"]] == [urls[1]]
    assert decided["bundles"][1]["components"] is None and decided["bundles"][1]["src"] is None
    assert decided["bundles"][1]["summary"] == "%s: components known once vCenter has imported it" % DAEMON_ZIP
    assert decided["components"] == {DRIVER: DRIVER_VERSION}
    # The image holds what is known; the hosts are remediated, as nothing tells what the other bundle brings.
    assert (decided["image"], decided["remediate"]) == (False, True)
    assert decided["reasons"][-1] == "remediation: the components of %s are not known yet" % DAEMON_ZIP


def test_what_vcenter_imported_stands_for_what_the_read_said():
    read = converged_read()
    del read["bundles"], read["components"]
    read["depots"] = []
    urls = ["file:///depot/" + DRIVER_ZIP, "file:///depot/" + DAEMON_ZIP]
    first = plan(read, urls)
    imported = [{"item": first["imports"][0], "changed": True, "components": [component(DRIVER, DRIVER_535)]},
                {"item": first["imports"][1], "changed": True, "components": [component(DAEMON, DAEMON_VERSION)]}]
    decided = plan(read, urls, imported=imported)
    assert decided["components"] == {DRIVER: DRIVER_535, DAEMON: DAEMON_VERSION}
    assert decided["image"] is True and decided["remediate"] is True
    # Check mode imports nothing: what is not known stays unknown.
    decided = plan(read, urls, imported=[dict(result, components=[]) for result in imported])
    assert decided["components"] == {}


def test_an_image_without_the_bundles_versions_is_changed_and_the_hosts_remediated():
    read = converged_read()
    read["image"]["components"][DRIVER] = DRIVER_535
    decided = plan(read)
    assert steps(decided) == {"image": True, "remediate": True, "verify": True, "converged": False}
    assert decided["imports"] == []
    assert decided["reasons"] == ["image: %s %s (it holds %s)" % (DRIVER, DRIVER_VERSION, DRIVER_535),
                                  "remediation: the image changes"]


def test_without_remediation_hosts_that_differ_leave_the_cluster_converged():
    read = converged_read()
    read["compliance"] = None
    assert plan(read, remediate=False)["converged"] is True
    assert plan(read)["reasons"] == ["remediation: vLCM has not scanned the cluster yet"]


@pytest.mark.parametrize("change, reason", [
    (lambda read: read["compliance"]["hosts"][1].update(status="NON_COMPLIANT"),
     "esxi-02.lab.local is NON_COMPLIANT in vLCM's last scan"),
    (lambda read: read["compliance"]["hosts"][1].update(status="UNAVAILABLE", components={}),
     "esxi-02.lab.local is UNAVAILABLE in vLCM's last scan"),
    (lambda read: read["hosts"].append({"name": "esxi-04.lab.local", "id": "host-4", "connection_state": "CONNECTED"}),
     "esxi-04.lab.local is not in vLCM's last scan"),
    # The image moved on after the last scan: the hosts complied with the image before it.
    (lambda read: read["image"]["components"].update({"other-vendor": "1.0"}),
     "esxi-01.lab.local does not run other-vendor 1.0"),
    (lambda read: read["image"].update(base_image="8.0.3-0.0.24022510"),
     "esxi-01.lab.local does not run ESXi 8.0.3-0.0.24022510"),
])
def test_a_host_that_differs_in_or_from_the_last_scan_is_remediated(change, reason):
    read = converged_read()
    change(read)
    decided = plan(read)
    assert steps(decided) == {"image": False, "remediate": True, "verify": True, "converged": False}
    assert decided["reasons"][0] == "remediation: " + reason


def test_named_hosts_only_and_a_name_outside_the_cluster_goes_to_the_remediation():
    read = converged_read()
    read["compliance"]["hosts"][2]["status"] = "NON_COMPLIANT"
    assert plan(read, esxi_hostnames=HOSTS[:2])["converged"] is True
    assert plan(read, esxi_hostnames=[HOSTS[2]])["remediate"] is True
    # vlcm_remediate names the hosts that are not in the cluster.
    assert plan(converged_read(), esxi_hostnames=["esxi-99.lab.local"])["reasons"] == [
        "remediation: esxi-99.lab.local is not in vLCM's last scan"]


def test_a_rescan_asks_for_the_remediation_step():
    decided = plan(converged_read(), rescan=True)
    assert steps(decided) == {"image": False, "remediate": True, "verify": True, "converged": False}
    assert decided["reasons"] == ["remediation: a fresh scan is asked for"]


def test_a_cluster_without_an_image_goes_to_the_image_step_which_says_so():
    read = converged_read()
    read.update(cluster=dict(read["cluster"], image_managed=False), image=None, compliance=None)
    decided = plan(read)
    assert decided["image"] is True and decided["remediate"] is True
    assert decided["reasons"][0] == "image: the cluster has no single vLCM image to compare with"


def test_bundles_read_for_other_locations_are_refused():
    with pytest.raises(InputError, match="2 bundles were read for 1 locations"):
        plan(converged_read(), LOCATIONS[:1])


def test_host_checks_after_a_remediation():
    compliance = copy.deepcopy(converged_read()["compliance"])
    compliance["hosts"][1]["status"] = "NON_COMPLIANT"
    compliance["hosts"][1]["components"][DRIVER]["current"] = None
    components = {DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION}
    runs = "%s %s, %s %s" % (DRIVER, DRIVER_VERSION, DAEMON, DAEMON_VERSION)
    assert host_checks(compliance, components) == [
        {"name": HOSTS[0], "ok": True, "message": "Host %s runs %s." % (HOSTS[0], runs)},
        {"name": HOSTS[1], "ok": False,
         "message": "Host %s is NON_COMPLIANT; it does not run %s %s." % (HOSTS[1], DRIVER, DRIVER_VERSION)},
        {"name": HOSTS[2], "ok": True, "message": "Host %s runs %s." % (HOSTS[2], runs)}]
    assert [c["name"] for c in host_checks(compliance, components, [HOSTS[2]])] == [HOSTS[2]]
    compliance["hosts"][2]["status"] = "UNAVAILABLE"
    assert host_checks(compliance, {}, [HOSTS[2]]) == [
        {"name": HOSTS[2], "ok": False, "message": "Host %s is UNAVAILABLE." % HOSTS[2]}]
    assert host_checks(None, components) == []
