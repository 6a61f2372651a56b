"""Power supplies of a lab BMC's chassis in both Redfish schemas, from the vendor profile's ``power`` entry.

The older schema is one ``Power`` resource with ``PowerControl`` (the chassis' consumption and capacity) and a
``PowerSupplies`` array; the newer one is ``PowerSubsystem`` with a ``PowerSupplies`` collection. A profile lists
the schemas its BMC serves. While the server is off the supplies idle and the chassis draws its standby power.

Sources: DMTF Redfish Power (v1_7) and PowerSubsystem/PowerSupply (v1_5) schemas; community.general's
redfish_info GetPsuInventory (PowerSupplies of ``Power``, skipping ``Status.State`` Absent) and GetChassisPower
(``PowerControl``).
"""

from bmc_errors import RedfishError


def link(path):
    return {"@odata.id": path}


class PowerResources:
    def __init__(self, chassis, data, power_state):
        self.chassis = chassis.rstrip("/")
        self.slash = "/" if chassis.endswith("/") else ""
        self.data = data or {"schemas": [], "supplies": []}
        self.schemas = self.data["schemas"]
        self.power_state = power_state

    def path(self, *parts):
        return "/".join((self.chassis,) + parts) + self.slash

    def consumed_watts(self):
        return self.data["consumed_watts"] if self.power_state() == "On" else self.data["standby_watts"]

    def supply_output(self):
        """Each present supply's share of the load, in watts."""
        present = [s for s in self.data["supplies"] if s.get("state", "Enabled") != "Absent"]
        return dict((s["id"], round(self.consumed_watts() / len(present))) for s in present)

    def ground_truth(self):
        output = self.supply_output()
        return {"consumed_watts": self.consumed_watts(), "capacity_watts": self.data.get("capacity_watts"),
                "supplies": [dict(s, output_watts=output.get(s["id"])) for s in self.data["supplies"]]}

    def resources(self):
        paths = {}
        if "Power" in self.schemas:
            paths[self.path("Power")] = self.power
        if "PowerSubsystem" in self.schemas:
            paths[self.path("PowerSubsystem")] = self.subsystem
            paths[self.path("PowerSubsystem", "PowerSupplies")] = self.supplies
        return paths

    def collections(self):
        if "PowerSubsystem" not in self.schemas:
            return {}
        return {self.path("PowerSubsystem", "PowerSupplies"): self.supply}

    def links(self):
        result = {}
        if "Power" in self.schemas:
            result["Power"] = link(self.path("Power"))
        if "PowerSubsystem" in self.schemas:
            result["PowerSubsystem"] = link(self.path("PowerSubsystem"))
        return result

    @staticmethod
    def status(supply):
        state = supply.get("state", "Enabled")
        return {"State": state} if state == "Absent" else {"State": state, "Health": supply.get("health", "OK")}

    # -- older schema --------------------------------------------------------------------------------------------

    def power(self):
        base = self.path("Power")
        output = self.supply_output()
        supplies = []
        for i, s in enumerate(self.data["supplies"]):
            entry = {"@odata.id": "%s#/PowerSupplies/%d" % (base, i), "MemberId": str(i), "Name": s["name"],
                     "Status": self.status(s)}
            if s.get("state", "Enabled") != "Absent":
                entry.update({"Manufacturer": s["manufacturer"], "Model": s["model"], "SerialNumber": s["serial"],
                              "PartNumber": s["part"], "FirmwareVersion": s["firmware"],
                              "PowerCapacityWatts": s["capacity_watts"], "PowerSupplyType": "AC",
                              "LineInputVoltage": s["line_input_voltage"], "LineInputVoltageType": "ACMidLine",
                              "LastPowerOutputWatts": output[s["id"]]})
            supplies.append(entry)
        control = {"@odata.id": "%s#/PowerControl/0" % base, "MemberId": "0", "Name": "System Power Control",
                   "PowerConsumedWatts": self.consumed_watts(), "PowerCapacityWatts": self.data.get("capacity_watts"),
                   "PowerMetrics": {"IntervalInMin": 1, "MinConsumedWatts": self.data["standby_watts"],
                                    "MaxConsumedWatts": self.data["consumed_watts"],
                                    "AverageConsumedWatts": self.consumed_watts()},
                   "Status": {"State": "Enabled", "Health": "OK"}}
        return {"@odata.id": base, "@odata.type": "#Power.v1_7_0.Power", "Id": "Power", "Name": "Power",
                "PowerControl": [control], "PowerSupplies": supplies}

    # -- newer schema --------------------------------------------------------------------------------------------

    def subsystem(self):
        return {"@odata.id": self.path("PowerSubsystem"), "@odata.type": "#PowerSubsystem.v1_1_0.PowerSubsystem",
                "Id": "PowerSubsystem", "Name": "Power Subsystem",
                "CapacityWatts": self.data.get("capacity_watts"),
                "PowerSupplies": link(self.path("PowerSubsystem", "PowerSupplies")),
                "Status": {"State": "Enabled", "Health": "OK"}}

    def supplies(self):
        base = self.path("PowerSubsystem", "PowerSupplies")
        members = [link(self.path("PowerSubsystem", "PowerSupplies", s["id"])) for s in self.data["supplies"]]
        return {"@odata.id": base, "@odata.type": "#PowerSupplyCollection.PowerSupplyCollection",
                "Name": "Power Supply Collection", "Members@odata.count": len(members), "Members": members}

    def supply(self, supply_id):
        for s in self.data["supplies"]:
            if s["id"] == supply_id:
                body = {"@odata.id": self.path("PowerSubsystem", "PowerSupplies", s["id"]),
                        "@odata.type": "#PowerSupply.v1_5_0.PowerSupply", "Id": s["id"], "Name": s["name"],
                        "Status": self.status(s)}
                if s.get("state", "Enabled") != "Absent":
                    body.update({"Manufacturer": s["manufacturer"], "Model": s["model"], "SerialNumber": s["serial"],
                                 "PartNumber": s["part"], "FirmwareVersion": s["firmware"],
                                 "PowerCapacityWatts": s["capacity_watts"], "PowerSupplyType": "AC"})
                return body
        raise RedfishError(404, "The power supply %s does not exist." % supply_id, "Base.1.8.ResourceMissingAtURI")
