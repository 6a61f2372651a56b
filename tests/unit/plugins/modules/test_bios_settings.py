# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""bios_settings' real main() against a Redfish server with state: check mode, changes, re-runs, bad input,
failures."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.modules import bios_settings
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.clients.redfish_fake import (
    BASE,
    DELL_CURRENT,
    DELL_REGISTRY,
    JOBS,
    PASSWORD,
    SETTINGS,
    FakeServer,
    dell_server as dell,
)
from ansible_collections.gpuops.vgpu.tests.unit.plugins.modules.module_runner import run_main

WRITES = ("PATCH", "POST", "DELETE")


def arguments(**options):
    return dict(options, baseuri=BASE, username="root", password=PASSWORD, validate_certs=False)


def changes_sent(server):
    """Requests other than reads and the session's own."""
    return [(method, path) for method, path in server.requests() if method in WRITES and "/Sessions/" not in path]


@pytest.fixture
def run(monkeypatch, capsys):
    def run_on(server, check_mode=False, diff=False, **options):
        server.serve_modules(monkeypatch)
        return run_main(bios_settings.main, arguments(**options), capsys, check_mode=check_mode, diff=diff)

    return run_on


def test_check_mode_predicts_the_change_and_sends_nothing(run):
    server = dell()
    code, result = run(server, check_mode=True, diff=True, attributes={"SriovGlobalEnable": "Enabled"})
    assert code == 0 and result["changed"] is True
    assert result["changes"] == {"SriovGlobalEnable": "Enabled"} and result["pending_reboot"] is True
    assert result["diff"] == {
        "before": {"current": {"SriovGlobalEnable": "Disabled"}, "pending": {}},
        "after": {"current": {"SriovGlobalEnable": "Disabled"}, "pending": {"SriovGlobalEnable": "Enabled"}},
        "wanted": {"SriovGlobalEnable": "Enabled"}}
    assert changes_sent(server) == [] and server.pending == {} and server.jobs == {}
    assert server.requests()[-1] == ("DELETE", "/rf/SessionService/Sessions/7"), "the session is closed"


def test_profile_on_dell_stores_pending_values_with_one_job_and_a_rerun_changes_nothing(run):
    server = dell()
    code, first = run(server, profile="gpu_virtualization")
    assert code == 0 and first["changed"] is True
    assert first["vendor"]["family"] == "dell" and first["vendor"]["generation"] == "idrac8"
    assert first["changes"] == {"SriovGlobalEnable": "Enabled", "MmioAbove4Gb": "Enabled"}
    assert server.pending == first["changes"] and server.current == DELL_CURRENT
    assert changes_sent(server) == [("PATCH", SETTINGS), ("POST", JOBS)]
    assert first["job"] == JOBS + "/JID_1" and first["apply_time"] is None and first["pending_reboot"] is True
    assert dict((name, intent["status"]) for name, intent in first["intents"].items()) == {
        "cpu_virtualization": "ok", "iommu": "ok", "sriov": "pending", "mmio_above_4g": "pending",
        "pcie_aer": "not_exposed"}
    assert "diff" not in first, "the diff is returned only with --diff"

    del server.log[:]
    code, second = run(server, profile="gpu_virtualization")
    assert code == 0 and second["changed"] is False and second["changes"] == {}
    assert second["job"] == JOBS + "/JID_1" and second["pending_reboot"] is True
    assert changes_sent(server) == [] and list(server.jobs) == [JOBS + "/JID_1"]


def test_reboot_if_needed_applies_the_values_and_verifies_them(run):
    server = FakeServer(DELL_REGISTRY, DELL_CURRENT, apply_times=["OnReset"])
    code, result = run(server, attributes={"SriovGlobalEnable": "Enabled"}, reboot="if_needed")
    assert code == 0 and result["changed"] is True and result["rebooted"] is True
    assert result["pending_reboot"] is False and result["apply_time"] == "OnReset"
    assert server.current["SriovGlobalEnable"] == "Enabled" and server.pending == {} and server.boots == 1
    assert server.log[[m for m, _p, _b, _h in server.log].index("PATCH")][2] == {
        "Attributes": {"SriovGlobalEnable": "Enabled"}, "@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"}}

    code, again = run(server, attributes={"SriovGlobalEnable": "Enabled"}, reboot="if_needed")
    assert code == 0 and again["changed"] is False and again["rebooted"] is False and server.boots == 1


@pytest.mark.parametrize("options, message", [
    ({"attributes": {"SriovGlobalEnabled": "Enabled"}},
     "SriovGlobalEnabled is not a BIOS attribute of the GPU Server 1 at %s (did you mean SriovGlobalEnable?)" % BASE),
    ({"attributes": {"SriovGlobalEnable": True}}, "YAML reads unquoted On/Off/Yes/No as booleans: quote the value"),
    ({"attributes": {"SystemServiceTag": "ABCDEFG"}}, "SystemServiceTag is read-only"),
    ({"attributes": {}}, "attributes is empty. Name at least one BIOS attribute, or use profile."),
    ({"profile": "gpu_virtualization", "strict": True},
     "Profile gpu_virtualization cannot be met on this GPU Server 1: pcie_aer: not exposed by this BIOS."),
])
def test_bad_input_fails_before_any_change(run, options, message):
    server = dell()
    code, result = run(server, **options)
    assert code == 1 and result["failed"] is True
    assert message in result["msg"]
    assert changes_sent(server) == [] and server.pending == {}


def test_options_that_exclude_each_other_fail_before_any_request(run):
    server = dell()
    code, result = run(server, attributes={"SriovGlobalEnable": "Enabled"}, profile="gpu_virtualization")
    assert code == 1 and "mutually exclusive: attributes|profile" in result["msg"]
    assert server.log == []


def test_a_bios_that_drops_a_value_at_the_restart_fails_the_run(run):
    server = FakeServer(DELL_REGISTRY, DELL_CURRENT)
    server.drops.add("MmioAbove4Gb")
    code, result = run(server, attributes={"SriovGlobalEnable": "Enabled", "MmioAbove4Gb": "Enabled"},
                       reboot="if_needed")
    assert code == 1
    assert result["msg"] == (
        "The server at %s restarted but its BIOS did not apply MmioAbove4Gb (values now: MmioAbove4Gb=Disabled). "
        "Check the server's console or system event log for a BIOS setup error." % BASE)
    assert server.current["SriovGlobalEnable"] == "Enabled" and server.boots == 1
    assert server.requests()[-1] == ("DELETE", "/rf/SessionService/Sessions/7")


def test_a_refused_patch_fails_with_the_bmc_message_and_its_id(run):
    server = dell()
    server.routes[("PATCH", SETTINGS)] = (400, {}, {"error": {"@Message.ExtendedInfo": [
        {"MessageId": "Base.1.8.PropertyValueNotInList", "Message": "The value Enabled is not acceptable."}]}})
    code, result = run(server, attributes={"SriovGlobalEnable": "Enabled"})
    assert code == 1
    assert "PATCH %s on the BMC at %s failed with HTTP 400: The value Enabled is not acceptable." % (
        SETTINGS, BASE) in result["msg"]
    assert result["message_ids"] == ["Base.1.8.PropertyValueNotInList"] and result["status"] == 400
    assert server.jobs == {} and PASSWORD not in str(result)
