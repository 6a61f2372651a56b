# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""bmc_cooling against every vendor profile of the lab BMCs: check mode, change, re-run and refusal, judged by the
BMC's ground truth and the fan speeds its Redfish thermal resources report. iDRAC8 takes its thermal settings only
through a Server Configuration Profile import, a job."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from redfish_direct import VENDORS
# bmc_for: the bios_settings tests' fixture of a factory-fresh lab BMC per vendor.
from test_bios_settings import bmc_for  # noqa: F401 pylint: disable=unused-import

# What intent passive_gpu sets on each factory-fresh BMC, and where it shows in the BMC's state.
PASSIVE_GPU = {
    "dell_idrac8": {"ThermalSettings.1.ThermalProfile": "Maximum Performance",
                    "ThermalSettings.1.FanSpeedOffset": "Medium"},
    "dell_idrac9": {"ThermalSettings.1.ThermalProfile": "Maximum Performance",
                    "ThermalSettings.1.FanSpeedOffset": "Medium"},
    "hpe_ilo5": {"ThermalConfig": "IncreasedCooling"},
    "supermicro": {"Mode": "HeavyIO"},
}
# A value the vendor does not allow, and the words the refusal must carry (the value and what is allowed).
NOT_ALLOWED = {
    "dell_idrac8": ({"ThermalProfile": "Sound Cap"}, ["'Sound Cap'", "Default Thermal Profile Settings"]),
    "dell_idrac9": ({"MinimumFanSpeed": 5}, ["5 is not a percent from 32 to 100"]),
    "hpe_ilo5": ({"ThermalConfig": "Cold"}, ["'Cold'", "OptimalCooling, IncreasedCooling"]),
    "supermicro": ({"Mode": "Optimal"}, ["'Optimal'", "Standard, FullSpeed, HeavyIO, PUE2"]),
}


SCP_EXPORT = "POST /redfish/v1/Managers/iDRAC.Embedded.1/Actions/Oem/EID_674_Manager.ExportSystemConfiguration"
SCP_IMPORT = "POST /redfish/v1/Managers/iDRAC.Embedded.1/Actions/Oem/EID_674_Manager.ImportSystemConfiguration"


def changes_sent(bmc):
    """The BMC's write requests, but for iDRAC8's profile export: a POST that only reads."""
    return dict((key, count) for key, count in bmc.writes().items() if key != SCP_EXPORT)


def import_jobs(bmc):
    return [(job["JobState"], job["Message"]) for job in bmc.state()["jobs"] if job["JobType"] == "ImportConfiguration"]


@pytest.fixture
def cooling(lab, run_tasks):
    username, password = lab.bmc_credentials
    defaults = {"group/gpuops.vgpu.redfish": {"username": username, "password": password, "validate_certs": False}}

    def run(bmc, *steps, **kwargs):
        tasks = [dict(step, **{"gpuops.vgpu.bmc_cooling": dict(step["gpuops.vgpu.bmc_cooling"], baseuri=bmc.baseuri)})
                 if "name" in step else
                 {"name": "bmc_cooling %d" % i, "gpuops.vgpu.bmc_cooling": dict(step, baseuri=bmc.baseuri),
                  "diff": True}
                 for i, step in enumerate(steps)]
        return run_tasks(tasks, module_defaults=defaults, **kwargs)

    return run


def settings_of(bmc):
    """The cooling settings where the vendor keeps them, current and pending."""
    state = bmc.state()
    pending = state["bios"]["pending"]
    return state["cooling"]["settings"], dict((k, v) for k, v in pending.items() if k == "ThermalConfig")


def redfish_fan_readings(bmc):
    """Fan speeds as an independent client reads them from the chassis' thermal resources, as (percent, RPM) per
    fan: the newer schema where it is served, else the older one (RPM on iDRAC, percent on iLO)."""
    _status, chassis_collection = bmc.redfish("GET", "/redfish/v1/Chassis")
    _status, chassis = bmc.redfish("GET", chassis_collection["Members"][0]["@odata.id"])
    if "ThermalSubsystem" in chassis:
        _status, subsystem = bmc.redfish("GET", chassis["ThermalSubsystem"]["@odata.id"])
        _status, fans = bmc.redfish("GET", subsystem["Fans"]["@odata.id"])
        speeds = [bmc.redfish("GET", member["@odata.id"])[1]["SpeedPercent"] for member in fans["Members"]]
        return [(speed["Reading"], speed.get("SpeedRPM")) for speed in speeds]
    _status, thermal = bmc.redfish("GET", chassis["Thermal"]["@odata.id"])
    return [(fan["Reading"], None) if fan["ReadingUnits"] == "Percent" else (None, fan["Reading"])
            for fan in thermal["Fans"]]


def fan_readings(bmc):
    """The lab's fan speeds in the form ``redfish_fan_readings`` gives them."""
    schemas = bmc.state()["thermal"]["schemas"]
    fans = bmc.state()["cooling"]["fans"]
    if "ThermalSubsystem" in schemas:
        return [(fan["percent"], fan["rpm"]) for fan in fans]
    return [(None, fan["rpm"]) if fan["rpm"] is not None else (fan["percent"], None) for fan in fans]


@pytest.mark.parametrize("vendor", VENDORS)
def test_check_change_rerun(bmc_for, cooling, vendor):
    bmc = bmc_for(vendor)
    factory_settings = settings_of(bmc)
    factory_fans = bmc.state()["cooling"]["fans"]
    intent = {"intent": "passive_gpu"}
    check = {"name": "check mode", "gpuops.vgpu.bmc_cooling": intent, "check_mode": True, "diff": True}

    checked, = cooling(bmc, check).results
    assert checked["changed"] is True and checked["intent_before"] == "default"
    assert settings_of(bmc) == factory_settings and changes_sent(bmc) == {}, "check mode changed the BMC"

    first, = cooling(bmc, intent).results
    assert first["changed"] is True and first["changes"] == PASSIVE_GPU[vendor]
    assert first["diff"]["before"] == checked["diff"]["before"] and first["diff"]["after"] == checked["diff"]["after"]
    current, pending = settings_of(bmc)
    fans = bmc.state()["cooling"]["fans"]
    if vendor == "hpe_ilo5":
        # A BIOS value: pending until the server restarts, and the fans keep their speed until then.
        assert pending == PASSIVE_GPU[vendor] and current["ThermalConfig"] == "OptimalCooling"
        assert first["pending_reboot"] is True and fans == factory_fans
    else:
        assert dict((k, current[k]) for k in PASSIVE_GPU[vendor]) == PASSIVE_GPU[vendor]
        assert first["pending_reboot"] is False
    if vendor == "dell_idrac8":
        # Applied by a profile import the iDRAC ran as a job, not by a PATCH.
        assert import_jobs(bmc) == [("Completed", "Successfully imported and applied Server Configuration Profile.")]
        assert changes_sent(bmc) == {SCP_IMPORT: 1}
    if vendor == "dell_idrac9":
        # Sent where the manager links the system attributes (Links.Oem.Dell.DellAttributes), not to a fixed path.
        assert changes_sent(bmc) == {
            "PATCH /redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/System.Embedded.1": 1}
    if vendor != "hpe_ilo5":
        assert all(after["percent"] > before["percent"] for before, after in zip(factory_fans, fans)), fans
        assert redfish_fan_readings(bmc) == fan_readings(bmc)

    bmc.lab("POST", "/stats/reset")
    second, = cooling(bmc, intent).results
    assert second["changed"] is False and second["intent_before"] == "passive_gpu"
    assert changes_sent(bmc) == {}, "the re-run sent a change"

    if vendor == "hpe_ilo5":
        bmc.configure(reset_seconds=0.5)
        applied, = cooling(bmc, dict(intent, reboot="if_needed")).results
        assert applied["rebooted"] is True and applied["pending_reboot"] is False
        current, pending = settings_of(bmc)
        assert current["ThermalConfig"] == "IncreasedCooling" and pending == {}
        fans = bmc.state()["cooling"]["fans"]
        assert all(f["percent"] >= 55 for f in fans) and redfish_fan_readings(bmc) == fan_readings(bmc)

    back, = cooling(bmc, {"intent": "default"}).results
    assert back["changed"] is True and back["intent_before"] == "passive_gpu"
    if vendor != "hpe_ilo5":
        assert settings_of(bmc) == factory_settings and bmc.state()["cooling"]["fans"] == factory_fans


@pytest.mark.parametrize("vendor", VENDORS)
def test_value_not_allowed_is_refused_before_any_change(bmc_for, cooling, vendor):
    bmc = bmc_for(vendor)
    settings, words = NOT_ALLOWED[vendor]
    before = settings_of(bmc)
    bmc.lab("POST", "/stats/reset")
    run = cooling(bmc, {"name": "refused", "gpuops.vgpu.bmc_cooling": {"settings": settings}, "ignore_errors": True})
    failure, = run.results
    assert failure["failed"] is True
    for word in words:
        assert word in failure["msg"], failure["msg"]
    assert settings_of(bmc) == before and changes_sent(bmc) == {}


def test_idrac8_failed_import_job_fails_the_task_with_its_messages(bmc_for, cooling):
    bmc = bmc_for("dell_idrac8")
    before = settings_of(bmc)
    bmc.lab("POST", "/faults", {"kind": "apply_fails"})
    run = cooling(bmc, {"name": "fails", "gpuops.vgpu.bmc_cooling": {"intent": "max_cooling"}, "ignore_errors": True})
    failure, = run.results
    assert failure["failed"] is True
    assert "ended Failed: Import of Server Configuration Profile operation completed with errors." in failure["msg"]
    assert "The iDRAC could not apply the profile" in failure["msg"], failure["msg"]
    assert settings_of(bmc) == before and import_jobs(bmc)[0][0] == "Failed"


def test_explicit_settings_keep_the_others(bmc_for, cooling):
    bmc = bmc_for("dell_idrac9")
    result, = cooling(bmc, {"settings": {"MinimumFanSpeed": 60, "ThermalSettings.1.FanSpeedOffset": "Low"}}).results
    current, _pending = settings_of(bmc)
    assert result["changed"] is True and result["intent_before"] is None
    assert current["ThermalSettings.1.MinimumFanSpeed"] == 60 and current["ThermalSettings.1.FanSpeedOffset"] == "Low"
    assert current["ThermalSettings.1.ThermalProfile"] == "Default Thermal Profile Settings"
    assert all(fan["percent"] >= 60 for fan in bmc.state()["cooling"]["fans"])
