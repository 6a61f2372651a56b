# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Thermal readings of a server's chassis over Redfish, from either schema, in one shape."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._redfish import link_of, odata_id


def read_thermal(client):
    """Temperatures and fans of the system's chassis, from ThermalSubsystem when served, else from Thermal."""
    system = client.system()
    chassis_uri = link_of(system, "Links", "Chassis", 0)
    if not chassis_uri:
        members = (client.get(link_of(client.root, "Chassis")) or {}).get("Members") if link_of(
            client.root, "Chassis") else None
        chassis_uri = odata_id(members[0]) if members else None
    if not chassis_uri:
        return {"schema": None, "temperatures": [], "fans": []}
    chassis = client.get(chassis_uri)
    if link_of(chassis, "ThermalSubsystem"):
        subsystem = client.follow(chassis, "ThermalSubsystem")
        metrics = client.follow(subsystem, "ThermalMetrics") if link_of(subsystem, "ThermalMetrics") else {}
        fans = client.members(link_of(subsystem, "Fans"), expand=True) if link_of(subsystem, "Fans") else []
        return {"schema": "ThermalSubsystem", "temperatures": thermal_metrics_temperatures(metrics),
                "fans": [subsystem_fan(fan) for fan in fans]}
    if link_of(chassis, "Thermal"):
        thermal = client.follow(chassis, "Thermal")
        return {"schema": "Thermal",
                "temperatures": [thermal_temperature(t) for t in thermal.get("Temperatures") or []],
                "fans": [thermal_fan(f) for f in thermal.get("Fans") or []]}
    return {"schema": None, "temperatures": [], "fans": []}


def _health(item):
    return (item.get("Status") or {}).get("Health")


def thermal_temperature(item):
    return {"name": item.get("Name"), "reading_celsius": item.get("ReadingCelsius"),
            "context": item.get("PhysicalContext"), "health": _health(item),
            "upper_warning": item.get("UpperThresholdNonCritical"),
            "upper_critical": item.get("UpperThresholdCritical")}


def thermal_fan(item):
    units = item.get("ReadingUnits")
    return {"name": item.get("Name") or item.get("FanName"), "health": _health(item),
            "speed_rpm": item.get("Reading") if units == "RPM" else None,
            "speed_percent": item.get("Reading") if units == "Percent" else None}


def thermal_metrics_temperatures(metrics):
    contexts = dict((odata_id(value) or value.get("DataSourceUri"), key)
                    for key, value in (metrics.get("TemperatureSummaryCelsius") or {}).items()
                    if isinstance(value, dict))
    return [{"name": item.get("DeviceName") or item.get("DataSourceUri", "").rsplit("/", 1)[-1],
             "reading_celsius": item.get("Reading"), "context": contexts.get(item.get("DataSourceUri")),
             "health": None, "upper_warning": None, "upper_critical": None}
            for item in metrics.get("TemperatureReadingsCelsius") or []]


def subsystem_fan(item):
    speed = item.get("SpeedPercent") or {}
    return {"name": item.get("Name"), "health": _health(item), "speed_rpm": speed.get("SpeedRPM"),
            "speed_percent": speed.get("Reading")}
