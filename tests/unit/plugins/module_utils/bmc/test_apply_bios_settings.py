# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What bios_settings does to one server, against a Redfish server with state: Dell jobs, restarts, verification."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, TaskFailed
from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc._bios_settings import apply_bios_settings
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.clients.redfish_fake import (
    BASE,
    DELL_CURRENT as CURRENT,
    DELL_REGISTRY as REGISTRY,
    JOBS,
    MANAGER,
    RESET,
    SETTINGS,
    FakeServer,
    dell_server as dell,
)

SRIOV = {"SriovGlobalEnable": "Enabled"}


def apply(server, attributes, **options):
    with server.client() as client:
        return apply_bios_settings(client, BASE, attributes=attributes, **options)


def writes(server):
    return [(method, path) for method, path in server.requests() if method != "GET" and "/Sessions/" not in path]


def resets(server):
    return [body["ResetType"] for method, path, body, _headers in server.log if (method, path) == ("POST", RESET)]


def test_dell_scheduled_job_is_replaced_and_earlier_pending_values_sent_again():
    server = dell()
    apply(server, {"ProcCStates": "Disabled"})
    assert list(server.jobs) == [JOBS + "/JID_1"]
    del server.log[:]
    result = apply(server, SRIOV)
    assert writes(server) == [("DELETE", JOBS + "/JID_1"), ("PATCH", SETTINGS), ("POST", JOBS)]
    patch = [entry for entry in server.log if entry[0] == "PATCH"][0]
    assert patch[2] == {"Attributes": {"ProcCStates": "Disabled", "SriovGlobalEnable": "Enabled"}}
    assert server.requests().count(("GET", SETTINGS)) == 2, "the ETag is read again after the job is deleted"
    assert patch[3]["If-Match"]
    assert server.pending == {"ProcCStates": "Disabled", "SriovGlobalEnable": "Enabled"}
    assert result["changes"] == SRIOV and result["job"] == JOBS + "/JID_1"


def test_dell_patch_with_apply_time_creates_the_job_itself():
    server = dell(apply_times=["OnReset"])
    result = apply(server, SRIOV)
    assert writes(server) == [("PATCH", SETTINGS)] and result["job"] == JOBS + "/JID_1"


def test_dell_patch_that_creates_no_job_is_followed_by_one():
    server = dell(apply_times=["OnReset"])
    server.patch_creates_job = False
    result = apply(server, SRIOV)
    assert writes(server) == [("PATCH", SETTINGS), ("POST", JOBS)] and result["job"] == JOBS + "/JID_1"


def test_dell_without_a_job_queue_cannot_apply_values():
    server = dell()
    del server.routes[("GET", MANAGER)][2]["Links"]
    with pytest.raises(ApiError, match="links no job queue from its manager"):
        apply(server, SRIOV)
    assert writes(server) == []


def test_a_bmc_without_bios_settings_object_cannot_change_attributes():
    server = FakeServer(REGISTRY, CURRENT)
    server.settings_object = False
    with pytest.raises(ApiError, match="does not advertise a BIOS settings object"):
        apply(server, SRIOV)


@pytest.mark.parametrize("reset_types, force, expected", [
    (None, False, ["GracefulRestart"]),
    (None, True, ["ForceRestart"]),
    (["On", "ForceOff", "GracefulShutdown"], False, ["GracefulShutdown", "On"]),
    (["On", "ForceOff"], True, ["ForceOff", "On"]),
])
def test_restart_uses_what_the_bmc_offers(reset_types, force, expected):
    server = FakeServer(REGISTRY, CURRENT, **({"reset_types": reset_types} if reset_types else {}))
    result = apply(server, SRIOV, reboot="if_needed", reset_type="force" if force else "graceful")
    assert resets(server) == expected
    assert result["rebooted"] is True and server.current["SriovGlobalEnable"] == "Enabled"


def test_a_server_that_is_off_is_powered_on():
    server = FakeServer(REGISTRY, CURRENT)
    server.power_state = "Off"
    apply(server, SRIOV, reboot="if_needed")
    assert resets(server) == ["On"] and server.power_state == "On"


def test_no_usable_reset_type_fails_before_the_restart():
    server = FakeServer(REGISTRY, CURRENT, reset_types=["On", "Nmi"])
    offers = r"offers none of GracefulRestart, or GracefulShutdown and On \(it offers On, Nmi\)"
    with pytest.raises(ApiError, match=offers):
        apply(server, SRIOV, reboot="if_needed")
    assert resets(server) == [] and server.pending == SRIOV


def test_a_failed_dell_job_fails_the_run_with_its_message():
    server = dell()
    server.job_outcome = ("Failed", "Invalid attribute value")
    with pytest.raises(TaskFailed, match="BIOS job JID_1 on %s ended Failed: Invalid attribute value" % BASE):
        apply(server, SRIOV, reboot="if_needed")


def test_check_mode_with_reboot_predicts_the_restart_without_one():
    server = FakeServer(REGISTRY, CURRENT)
    result = apply(server, SRIOV, reboot="if_needed", check_mode=True)
    assert result["changed"] is True and result["rebooted"] is False and result["pending_reboot"] is False
    assert result["diff"]["after"] == {"current": SRIOV, "pending": {}}
    assert writes(server) == [] and server.boots == 0
