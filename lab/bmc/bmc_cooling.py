"""Cooling settings of a lab BMC and the fan speeds they lead to.

Where each vendor keeps its setting (sources in docs/bmc_cooling.md), as the profile's ``cooling.kind`` says:

- ``dell_attributes``: iDRAC's system attributes ``ThermalSettings.1.*`` on the DellAttributes resource of
  ``System.Embedded.1`` (served by ``bmc_manager``), applied at once.
- ``bios``: iLO 5's BIOS attribute ``ThermalConfig``; a PATCH stores it pending and the next server reset applies
  it (``bmc_state``'s BIOS rules), so the fans follow the current value only.
- ``supermicro_fan_mode``: ``<manager>/Oem/Supermicro/FanMode``, one ``Mode`` among
  ``Mode@Redfish.AllowableValues``, applied at once.

A BMC cannot read a passive GPU's temperature (the reason these settings exist), so the fans follow the setting,
not the GPUs. How much faster each setting runs them is the lab's own model, after what the vendors describe
(more offset, higher minimum or a fuller mode: faster fans); the exact speeds of a real server differ.
"""

import copy

from bmc_errors import RedfishError

# Speed floors (percent) and Dell's fan offset as a share of the headroom above the current speed.
DELL_PROFILE_FLOOR = {"Maximum Performance": 50}
DELL_OFFSET_SHARE = {"Off": 0, "Low": 25, "Medium": 50, "High": 75, "Max": 100}
DELL_MFS_DEFAULT = 255  # MinimumFanSpeed's value for "no minimum"
HPE_FLOOR = {"OptimalCooling": 0, "EnhancedCPUCooling": 40, "IncreasedCooling": 55, "MaxCooling": 100}
# The profile's idle speeds are those of the factory mode (Standard); the modes that let the BMC follow the
# temperatures keep them, Heavy IO holds the peripheral zone (the PCIe cards) at 75 percent, Full Speed runs all at 100.
SUPERMICRO_FLOOR = {"PUE2": 0, "Optimal": 0, "Standard": 0, "HeavyIO": 75, "FullSpeed": 100}


class Cooling:
    """The cooling setting of one BMC and its fans. ``bios_current()`` gives the BIOS's current attributes and
    ``dell_attributes()`` iDRAC's system attributes, both live."""

    def __init__(self, profile, manager_path, bios_current, dell_attributes):
        self.profile = profile or {}
        self.kind = self.profile.get("kind")
        self.manager_path = manager_path
        self.bios_current = bios_current
        self.dell_attributes = dell_attributes
        self.reset()

    def reset(self):
        self.fan_mode = copy.deepcopy(self.profile.get("fan_mode"))

    # -- what the setting is -------------------------------------------------------------------------------------

    def settings(self):
        if self.kind == "dell_attributes":
            return dict((name, value) for name, value in self.dell_attributes().items()
                        if name.startswith("ThermalSettings.1."))
        if self.kind == "bios":
            name = self.profile["attribute"]
            return {name: self.bios_current().get(name)}
        if self.kind == "supermicro_fan_mode":
            return {"Mode": self.fan_mode["Mode"]}
        return {}

    def speed(self, base):
        """The percent a fan idling at ``base`` runs at under the current setting."""
        settings = self.settings()
        if self.kind == "dell_attributes":
            speed = max(base, DELL_PROFILE_FLOOR.get(settings.get("ThermalSettings.1.ThermalProfile"), 0))
            minimum = settings.get("ThermalSettings.1.MinimumFanSpeed", DELL_MFS_DEFAULT)
            if minimum != DELL_MFS_DEFAULT:
                speed = max(speed, minimum)
            share = DELL_OFFSET_SHARE.get(settings.get("ThermalSettings.1.FanSpeedOffset"), 0)
            return min(100, int(round(speed + (100 - speed) * share / 100.0)))
        if self.kind == "bios":
            return max(base, HPE_FLOOR.get(settings[self.profile["attribute"]], 0))
        if self.kind == "supermicro_fan_mode":
            return max(base, SUPERMICRO_FLOOR.get(settings["Mode"], 0))
        return base

    def fans(self, fans):
        """The profile's fans at the speeds the setting gives: percent, and RPM in proportion where reported."""
        result = []
        for fan in fans:
            percent = self.speed(fan["percent"])
            rpm = fan.get("rpm")
            if rpm is not None:
                rpm = int(round(rpm * percent / float(fan["percent"]) / 10.0)) * 10
            result.append(dict(fan, percent=percent, rpm=rpm))
        return result

    def state(self, fans):
        return {"kind": self.kind, "settings": self.settings(),
                "fans": [{"name": f["name"], "percent": f["percent"], "rpm": f["rpm"]} for f in self.fans(fans)]}

    # -- Supermicro's fan mode resource ----------------------------------------------------------------------------

    def fan_mode_path(self):
        return self.manager_path.rstrip("/") + "/Oem/Supermicro/FanMode"

    def manager_oem(self):
        """What the manager's ``Oem`` carries to reach the setting."""
        if self.kind != "supermicro_fan_mode":
            return {}
        return {"Supermicro": {"@odata.type": "#SmcManagerExtensions.v1_0_0.Manager",
                               "FanMode": {"@odata.id": self.fan_mode_path()}}}

    def writable(self):
        """Resource path -> (renderer, patcher)."""
        if self.kind != "supermicro_fan_mode":
            return {}
        return {self.fan_mode_path(): (self.render_fan_mode, self.patch_fan_mode)}

    def render_fan_mode(self):
        return {"@odata.type": "#FanMode.v1_0_1.FanMode", "@odata.id": self.fan_mode_path(), "Id": "Fan Mode",
                "Name": "FanMode", "Mode": self.fan_mode["Mode"],
                "Mode@Redfish.AllowableValues": list(self.fan_mode["allowed"])}

    def patch_fan_mode(self, body):
        if not isinstance(body, dict) or set(body) != {"Mode"}:
            unknown = sorted(set(body or {}) - {"Mode"}) or ["Mode"]
            raise RedfishError(400, "The property %s is not in the list of valid properties for the resource."
                               % unknown[0], "Base.1.8.PropertyUnknown", ["/" + unknown[0]])
        mode = body["Mode"]
        if mode not in self.fan_mode["allowed"]:
            raise RedfishError(400, "The value %s for the property Mode is not in the list of acceptable values."
                               % (mode,), "Base.1.8.PropertyValueNotInList", ["/Mode"])
        self.fan_mode["Mode"] = mode
        return self.render_fan_mode()
