# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""bmc_info against every vendor profile of the lab BMCs, checked against ground truth and an independent client."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

import pytest

from redfish_direct import HOSTS, VENDORS, LabBmc

SCHEMA = {"dell_idrac8": "Thermal", "dell_idrac9": "ThermalSubsystem", "hpe_ilo5": "Thermal",
          "supermicro": "ThermalSubsystem"}
# A value staged as pending by a plain Redfish PATCH, so bmc_info's pending values do not come from our modules.
STAGED = {"dell_idrac8": {"SriovGlobalEnable": "Enabled"}, "dell_idrac9": {"MemoryMappedIOH": "56TB"},
          "hpe_ilo5": {"Sriov": "Enabled"}, "supermicro": {"QuietBoot": False}}


@pytest.fixture
def fresh(lab):
    def get(vendor):
        bmc = LabBmc(lab, HOSTS[vendor])
        bmc.wait_up()
        bmc.wait_settled()
        bmc.factory_reset()
        return bmc

    return get


def bmc_info_task(lab, bmc):
    username, password = lab.bmc_credentials
    return {"name": "bmc_info", "gpuops.vgpu.bmc_info": {
        "baseuri": bmc.baseuri, "username": username, "password": password, "validate_certs": False}}


def bmc_info(lab, run_tasks, bmc):
    return run_tasks([bmc_info_task(lab, bmc)]).result(0)


def stage_pending(bmc, attributes):
    """PATCH the settings object found by following links, as any Redfish client would."""
    _status, systems = bmc.redfish("GET", "/redfish/v1/Systems")
    _status, system = bmc.redfish("GET", systems["Members"][0]["@odata.id"])
    _status, bios = bmc.redfish("GET", system["Bios"]["@odata.id"])
    settings = bios["@Redfish.Settings"]["SettingsObject"]["@odata.id"]
    _status, current = bmc.redfish("GET", settings)
    status, answer = bmc.redfish("PATCH", settings, {"Attributes": attributes},
                                 {"If-Match": current["@odata.etag"]})
    assert status < 300, answer


@pytest.mark.parametrize("vendor", VENDORS)
def test_identity_bios_power_and_thermal_match_ground_truth(lab, run_tasks, fresh, vendor):
    bmc = fresh(vendor)
    stage_pending(bmc, STAGED[vendor])
    result = bmc_info(lab, run_tasks, bmc)
    truth = bmc.state()

    assert result["changed"] is False
    identity = truth["identity"]
    assert (result["manufacturer"], result["model"], result["serial_number"], result["sku"], result["uuid"],
            result["bios_version"]) == (identity["Manufacturer"], identity["Model"], identity["SerialNumber"],
                                        identity["SKU"], identity["UUID"], identity["BiosVersion"])
    assert result["vendor"]["family"] == vendor.split("_")[0]
    assert result["power_state"] == truth["power_state"] == "On"
    assert result["health"] == {"health": "OK", "rollup": "OK", "state": "Enabled"}
    assert result["bios"]["attributes"] == truth["bios"]["current"]
    assert result["bios"]["pending"] == truth["bios"]["pending"] == STAGED[vendor]

    assert result["thermal_schema"] == SCHEMA[vendor]
    sensors = truth["thermal"]
    assert [(t["name"], t["reading_celsius"]) for t in result["temperatures"]] == [
        (t["name"], t["reading"]) for t in sensors["temperatures"]]
    intake = [t["reading"] for t in sensors["temperatures"] if t["context"] == "Intake"]
    assert result["inlet_celsius"] == intake[0]
    assert [f["name"] for f in result["fans"]] == [f["name"] for f in sensors["fans"]]
    for fan, real in zip(result["fans"], sensors["fans"]):
        if SCHEMA[vendor] == "ThermalSubsystem":
            assert (fan["speed_rpm"], fan["speed_percent"]) == (real["rpm"], real["percent"])
        else:
            assert fan["speed_rpm"] == real["rpm"]
            assert fan["speed_percent"] == (real["percent"] if real["rpm"] is None else None)
    if SCHEMA[vendor] == "Thermal":
        assert [(t["context"], t["upper_critical"]) for t in result["temperatures"]] == [
            (t["context"], t["critical"]) for t in sensors["temperatures"]]
    assert truth["sessions_open"] == 0
    writes = bmc.writes()
    assert len(writes) == 1 and list(writes)[0].startswith("PATCH ") and list(writes.values()) == [1]


@pytest.mark.parametrize("vendor", VENDORS)
def test_identity_agrees_with_an_independent_client(lab, run_tasks, fresh, vendor):
    bmc = fresh(vendor)
    username, password = lab.bmc_credentials
    ours, theirs = run_tasks([dict(bmc_info_task(lab, bmc), check_mode=True), {
        "name": "independent read", "community.general.redfish_info": {
            "category": "Systems", "command": "GetSystemInventory", "baseuri": bmc.baseuri[len("https://"):],
            "username": username, "password": password, "validate_certs": False}}]).results
    assert ours["changed"] is False
    system = theirs["redfish_facts"]["system"]["entries"][0][1]
    assert (ours["manufacturer"], ours["model"], ours["serial_number"], ours["bios_version"], ours["power_state"]) == (
        system["Manufacturer"], system["Model"], system["SerialNumber"], system["BiosVersion"], system["PowerState"])


def test_power_state_follows_a_shutdown_and_power_on(lab, run_tasks, fresh):
    bmc = fresh("dell_idrac8")
    _status, systems = bmc.redfish("GET", "/redfish/v1/Systems")
    _status, system = bmc.redfish("GET", systems["Members"][0]["@odata.id"])
    reset = system["Actions"]["#ComputerSystem.Reset"]["target"]
    assert bmc.redfish("POST", reset, {"ResetType": "GracefulShutdown"})[0] == 204
    deadline = time.monotonic() + 10
    while bmc.state()["power_state"] != "Off":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert bmc_info(lab, run_tasks, bmc)["power_state"] == "Off"
    assert bmc.redfish("POST", reset, {"ResetType": "On"})[0] == 204
    bmc.wait_settled()
    assert bmc_info(lab, run_tasks, bmc)["power_state"] == "On"
