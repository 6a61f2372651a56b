# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Thermal readings over Redfish from either schema, against a scripted BMC."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc import _thermal as ri
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.clients.redfish_fake import FakeBmc


def thermal_bmc(chassis):
    routes = {
        ("GET", "/rf/Systems/"): (200, {}, {"Members": [{"@odata.id": "/rf/Systems/1"}]}),
        ("GET", "/rf/Systems/1"): (200, {}, {"Links": {"Chassis": [{"@odata.id": "/rf/Chassis/1"}]}}),
        ("GET", "/rf/Chassis/1"): (200, {}, chassis),
        ("GET", "/rf/Chassis/1/Thermal"): (200, {}, {
            "Temperatures": [{"Name": "Inlet", "ReadingCelsius": 23, "PhysicalContext": "Intake",
                              "UpperThresholdCritical": 47, "Status": {"Health": "OK"}}],
            "Fans": [{"Name": "Fan1", "Reading": 6840, "ReadingUnits": "RPM"},
                     {"Name": "Fan2", "Reading": 24, "ReadingUnits": "Percent"}]}),
        ("GET", "/rf/Chassis/1/TS"): (200, {}, {"Fans": {"@odata.id": "/rf/Chassis/1/TS/Fans"},
                                                "ThermalMetrics": {"@odata.id": "/rf/Chassis/1/TS/TM"}}),
        ("GET", "/rf/Chassis/1/TS/TM"): (200, {}, {
            "TemperatureReadingsCelsius": [{"DataSourceUri": "/rf/Chassis/1/Sensors/Inlet", "DeviceName": "Inlet",
                                            "Reading": 24},
                                           {"DataSourceUri": "/rf/Chassis/1/Sensors/CPU1", "DeviceName": "CPU1",
                                            "Reading": 44}],
            "TemperatureSummaryCelsius": {"Intake": {"DataSourceUri": "/rf/Chassis/1/Sensors/Inlet",
                                                     "Reading": 24}}}),
        ("GET", "/rf/Chassis/1/TS/Fans"): (200, {}, {"Members": [{"@odata.id": "/rf/Chassis/1/TS/Fans/F1"}]}),
        ("GET", "/rf/Chassis/1/TS/Fans/F1"): (200, {}, {"Name": "FAN1",
                                                        "SpeedPercent": {"Reading": 35, "SpeedRPM": 4200}}),
    }
    return FakeBmc(routes)


def test_thermal_subsystem_is_preferred_when_both_schemas_are_served():
    bmc = thermal_bmc({"Thermal": {"@odata.id": "/rf/Chassis/1/Thermal"},
                       "ThermalSubsystem": {"@odata.id": "/rf/Chassis/1/TS"}})
    thermal = ri.read_thermal(bmc.client(auth="basic"))
    assert thermal["schema"] == "ThermalSubsystem"
    assert [(t["name"], t["reading_celsius"], t["context"]) for t in thermal["temperatures"]] == [
        ("Inlet", 24, "Intake"), ("CPU1", 44, None)]
    assert thermal["fans"] == [{"name": "FAN1", "health": None, "speed_rpm": 4200, "speed_percent": 35}]
    assert ("GET", "/rf/Chassis/1/Thermal") not in bmc.requests()


def test_older_thermal_schema_with_rpm_and_percent_fans():
    thermal = ri.read_thermal(thermal_bmc({"Thermal": {"@odata.id": "/rf/Chassis/1/Thermal"}}).client(auth="basic"))
    assert thermal["schema"] == "Thermal"
    assert thermal["temperatures"] == [{"name": "Inlet", "reading_celsius": 23, "context": "Intake", "health": "OK",
                                        "upper_warning": None, "upper_critical": 47}]
    assert [(f["speed_rpm"], f["speed_percent"]) for f in thermal["fans"]] == [(6840, None), (None, 24)]
