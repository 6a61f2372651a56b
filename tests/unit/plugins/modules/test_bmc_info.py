# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""bmc_info's real main() against a Redfish server with state: what it reads, in check mode too, and failures."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.modules import bios_settings, bmc_info
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.clients.redfish_fake import (
    BASE,
    PASSWORD,
    FakeServer,
    registry_entry,
)
from ansible_collections.gpuops.vgpu.tests.unit.plugins.modules.module_runner import run_main

REGISTRY = [registry_entry("SR_IOVSupport_002C", ["Disabled", "Enabled"]), registry_entry("QuietBoot", kind="Boolean")]
CURRENT = {"SR_IOVSupport_002C": "Disabled", "QuietBoot": True}


@pytest.fixture
def run(monkeypatch, capsys):
    def run_on(server, check_mode=False, **options):
        server.serve_modules(monkeypatch)
        args = dict(options, baseuri=BASE, username="root", password=PASSWORD, validate_certs=False)
        return run_main(bmc_info.main, args, capsys, check_mode=check_mode)

    return run_on


@pytest.mark.parametrize("check_mode", [False, True])
def test_identity_bios_with_pending_values_power_and_thermal(run, check_mode):
    server = FakeServer(REGISTRY, CURRENT, apply_times=["OnReset"])
    server.pending = {"SR_IOVSupport_002C": "Enabled", "QuietBoot": True}
    code, result = run(server, check_mode=check_mode)
    assert code == 0 and result["changed"] is False
    assert result["vendor"]["family"] == "supermicro"
    assert (result["manufacturer"], result["model"], result["serial_number"]) == ("Supermicro", "GPU Server 1", "SN-1")
    assert result["power_state"] == "On"
    assert result["health"] == {"health": "OK", "rollup": "OK", "state": "Enabled"}
    assert result["bios"] == {"attributes": CURRENT, "pending": {"SR_IOVSupport_002C": "Enabled"},
                              "registry": "BiosAttributeRegistry.v1", "supported_apply_times": ["OnReset"]}
    assert result["thermal_schema"] == "Thermal" and result["inlet_celsius"] == 23
    assert result["fans"] == [{"name": "Fan1", "health": "OK", "speed_rpm": 6840, "speed_percent": None}]
    assert [method for method, _path in server.requests()].count("GET") == len(server.requests()) - 2, \
        "only reads, besides opening and closing the session"


def test_a_server_without_bios_resource_reports_an_empty_bios(run):
    server = FakeServer(REGISTRY, CURRENT)
    del server.system_doc["Bios"]
    code, result = run(server)
    assert code == 0
    assert result["bios"] == {"attributes": {}, "pending": {}, "registry": None, "supported_apply_times": []}


def test_wrong_credentials_fail_without_the_password(run):
    server = FakeServer(REGISTRY, CURRENT)
    server.routes[("POST", "/rf/SessionService/Sessions/")] = (401, {}, {"error": {"message": "bad"}})
    code, result = run(server)
    assert code == 1
    assert result["msg"].startswith("The BMC at %s rejected the credentials of user 'root' (HTTP 401)." % BASE)
    assert PASSWORD not in result["msg"] and result["status"] == 401


def test_a_baseuri_with_a_path_fails_before_any_request(monkeypatch, capsys):
    server = FakeServer(REGISTRY, CURRENT)
    server.serve_modules(monkeypatch)
    code, result = run_main(bmc_info.main, {"baseuri": BASE + "/redfish/v1", "username": "root", "password": PASSWORD},
                            capsys)
    assert code == 1 and "has a path; the module finds the Redfish service root itself." in result["msg"]
    assert server.log == []


@pytest.mark.parametrize("check_mode", [False, True])
def test_the_bios_profile_is_compared_as_bios_settings_in_check_mode_does_sending_only_reads(
        monkeypatch, capsys, run, check_mode):
    server = FakeServer(REGISTRY, CURRENT, apply_times=["OnReset"])
    code, result = run(server, check_mode=check_mode, bios_profile="gpu_virtualization")
    assert code == 0 and result["changed"] is False and result["bios_profile_error"] is None
    writes = [(method, path) for method, path in server.requests() if method not in ("GET",)]
    assert len(writes) == 2, "only opening and closing the session: %s" % writes

    alone = FakeServer(REGISTRY, CURRENT, apply_times=["OnReset"])
    alone.serve_modules(monkeypatch)
    code, compared = run_main(bios_settings.main, dict(baseuri=BASE, username="root", password=PASSWORD,
                                                       validate_certs=False, profile="gpu_virtualization"),
                              capsys, check_mode=True)
    assert code == 0
    for key in ("invocation", "diff"):
        compared.pop(key, None)
    assert result["bios_profile"] == compared
    assert result["bios_profile"]["changes"] == {"SR_IOVSupport_002C": "Enabled"}
    assert result["bios_profile"]["intents"]["sriov"]["status"] == "pending"


def test_a_bios_that_cannot_be_compared_leaves_identity_and_thermal(run):
    server = FakeServer(REGISTRY, CURRENT)
    del server.system_doc["Bios"]
    code, result = run(server, bios_profile="gpu_virtualization")
    assert code == 0 and result["bios_profile"] is None
    assert "BIOS" in result["bios_profile_error"] or "Bios" in result["bios_profile_error"]
    assert result["model"] == "GPU Server 1" and result["inlet_celsius"] == 23
