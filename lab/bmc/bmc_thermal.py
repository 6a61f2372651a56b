"""Thermal resources of a lab BMC's chassis in both Redfish schemas, from the vendor profile's sensors.

The older schema is one ``Thermal`` resource with ``Temperatures`` and ``Fans`` arrays; the newer one is
``ThermalSubsystem`` with a ``Fans`` collection and ``ThermalMetrics``, whose readings point at ``Sensors``.
A profile lists the schemas its BMC serves. Fan speeds are the profile's idle speeds as the BMC's cooling setting
changes them (``speeds``, see ``bmc_cooling``).
"""

import re

from bmc_errors import RedfishError


def sensor_id(name):
    return re.sub(r"[^A-Za-z0-9]", "", name)


def health(reading, warning, critical):
    if reading is None:
        return "OK"
    if critical is not None and reading >= critical:
        return "Critical"
    if warning is not None and reading >= warning:
        return "Warning"
    return "OK"


def link(path):
    return {"@odata.id": path}


class ThermalResources:
    def __init__(self, chassis, data, speeds=None):
        self.chassis = chassis
        self.temperatures = data["temperatures"]
        self.idle_fans = data["fans"]
        self.speeds = speeds or (lambda fans: fans)
        self.schemas = data["schemas"]

    @property
    def fans_data(self):
        return self.speeds(self.idle_fans)

    def resources(self):
        """Resource path -> renderer, for the schemas this BMC serves."""
        paths = {}
        if "Thermal" in self.schemas:
            paths[self.chassis + "/Thermal"] = self.thermal
        if "ThermalSubsystem" in self.schemas:
            paths[self.chassis + "/ThermalSubsystem"] = self.subsystem
            paths[self.chassis + "/ThermalSubsystem/Fans"] = self.fans
            paths[self.chassis + "/ThermalSubsystem/ThermalMetrics"] = self.metrics
            paths[self.chassis + "/Sensors"] = self.sensors
        return paths

    def collections(self):
        """Collection path -> renderer of one member by id."""
        if "ThermalSubsystem" not in self.schemas:
            return {}
        return {self.chassis + "/ThermalSubsystem/Fans": self.fan, self.chassis + "/Sensors": self.sensor}

    def links(self):
        """Links the chassis resource carries to what is served here."""
        result = {}
        if "Thermal" in self.schemas:
            result["Thermal"] = link(self.chassis + "/Thermal")
        if "ThermalSubsystem" in self.schemas:
            result["ThermalSubsystem"] = link(self.chassis + "/ThermalSubsystem")
            result["Sensors"] = link(self.chassis + "/Sensors")
        return result

    # -- older schema --------------------------------------------------------------------------------------------

    def thermal(self):
        base = self.chassis + "/Thermal"
        temperatures = [{
            "@odata.id": "%s#/Temperatures/%d" % (base, i), "MemberId": str(i), "Name": t["name"],
            "SensorNumber": i + 1, "ReadingCelsius": t["reading"], "PhysicalContext": t["context"],
            "UpperThresholdNonCritical": t.get("warning"), "UpperThresholdCritical": t.get("critical"),
            "Status": {"State": "Enabled", "Health": health(t["reading"], t.get("warning"), t.get("critical"))},
        } for i, t in enumerate(self.temperatures)]
        fans = [{
            "@odata.id": "%s#/Fans/%d" % (base, i), "MemberId": str(i), "Name": f["name"],
            "Reading": f["rpm"] if f.get("rpm") is not None else f["percent"],
            "ReadingUnits": "RPM" if f.get("rpm") is not None else "Percent", "PhysicalContext": "SystemBoard",
            "Status": {"State": "Enabled", "Health": "OK"},
        } for i, f in enumerate(self.fans_data)]
        return {"@odata.id": base, "@odata.type": "#Thermal.v1_6_0.Thermal", "Id": "Thermal", "Name": "Thermal",
                "Temperatures": temperatures, "Fans": fans}

    # -- newer schema --------------------------------------------------------------------------------------------

    def subsystem(self):
        base = self.chassis + "/ThermalSubsystem"
        return {"@odata.id": base, "@odata.type": "#ThermalSubsystem.v1_0_0.ThermalSubsystem",
                "Id": "ThermalSubsystem", "Name": "Thermal Subsystem", "Fans": link(base + "/Fans"),
                "ThermalMetrics": link(base + "/ThermalMetrics"), "Status": {"State": "Enabled", "Health": "OK"}}

    def fans(self):
        base = self.chassis + "/ThermalSubsystem/Fans"
        members = [link("%s/%s" % (base, sensor_id(f["name"]))) for f in self.fans_data]
        return {"@odata.id": base, "@odata.type": "#FanCollection.FanCollection", "Name": "Fan Collection",
                "Members@odata.count": len(members), "Members": members}

    def fan(self, fan_id):
        for f in self.fans_data:
            if sensor_id(f["name"]) == fan_id:
                speed = {"DataSourceUri": "%s/Sensors/%s" % (self.chassis, fan_id), "Reading": f["percent"]}
                if f.get("rpm") is not None:
                    speed["SpeedRPM"] = f["rpm"]
                return {"@odata.id": "%s/ThermalSubsystem/Fans/%s" % (self.chassis, fan_id),
                        "@odata.type": "#Fan.v1_3_0.Fan", "Id": fan_id, "Name": f["name"], "SpeedPercent": speed,
                        "Status": {"State": "Enabled", "Health": "OK"}}
        raise RedfishError(404, "The fan %s does not exist." % fan_id, "Base.1.8.ResourceMissingAtURI")

    def metrics(self):
        readings, summary = [], {}
        for t in self.temperatures:
            source = "%s/Sensors/%s" % (self.chassis, sensor_id(t["name"]))
            readings.append({"DataSourceUri": source, "DeviceName": t["name"], "Reading": t["reading"]})
            if t["context"] in ("Intake", "Exhaust") and t["context"] not in summary:
                summary[t["context"]] = {"DataSourceUri": source, "Reading": t["reading"]}
        return {"@odata.id": self.chassis + "/ThermalSubsystem/ThermalMetrics",
                "@odata.type": "#ThermalMetrics.v1_0_0.ThermalMetrics", "Id": "ThermalMetrics",
                "Name": "Thermal Metrics", "TemperatureReadingsCelsius": readings, "TemperatureSummaryCelsius": summary}

    def sensors(self):
        base = self.chassis + "/Sensors"
        members = [link("%s/%s" % (base, sensor_id(s["name"]))) for s in self.temperatures + self.fans_data]
        return {"@odata.id": base, "@odata.type": "#SensorCollection.SensorCollection", "Name": "Sensors",
                "Members@odata.count": len(members), "Members": members}

    def sensor(self, name):
        base = self.chassis + "/Sensors"
        for t in self.temperatures:
            if sensor_id(t["name"]) == name:
                return {
                    "@odata.id": "%s/%s" % (base, name), "@odata.type": "#Sensor.v1_2_0.Sensor", "Id": name,
                    "Name": t["name"], "ReadingType": "Temperature", "ReadingUnits": "Cel", "Reading": t["reading"],
                    "PhysicalContext": t["context"],
                    "Thresholds": {"UpperCaution": {"Reading": t.get("warning")},
                                   "UpperCritical": {"Reading": t.get("critical")}},
                    "Status": {"State": "Enabled", "Health": health(t["reading"], t.get("warning"), t.get("critical"))},
                }
        for f in self.fans_data:
            if sensor_id(f["name"]) == name:
                return {
                    "@odata.id": "%s/%s" % (base, name), "@odata.type": "#Sensor.v1_2_0.Sensor", "Id": name,
                    "Name": f["name"], "ReadingType": "Percent", "ReadingUnits": "%", "Reading": f["percent"],
                    "SpeedRPM": f.get("rpm"), "PhysicalContext": "Fan", "Status": {"State": "Enabled", "Health": "OK"},
                }
        raise RedfishError(404, "The sensor %s does not exist." % name, "Base.1.8.ResourceMissingAtURI")
