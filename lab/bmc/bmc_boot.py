"""A lab server's boot settings as its BMC keeps them: the boot override, the boot order over the server's boot
options, and what the server does when power comes back.

Plain state and rules; the BMC's state (``bmc_state``) owns one and tells it when the server boots, the HTTP layer
(``bmc_app``) renders it into the ComputerSystem resource and its ``BootOptions`` collection.

Sources: DMTF Redfish ComputerSystem schema (v1_6 and later): ``Boot.BootSourceOverrideEnabled`` (Disabled, Once,
Continuous; "Once: the system boots one time to the boot source override target; then the property returns to
Disabled"), ``BootSourceOverrideTarget`` with its ``@Redfish.AllowableValues``, ``BootSourceOverrideMode`` (UEFI,
Legacy), ``Boot.BootOrder`` of ``BootOptionReference`` strings and the ``BootOptions`` collection of BootOption
resources, ``PowerRestorePolicy`` (AlwaysOn, AlwaysOff, LastState). Errors are DMTF Base messages
(PropertyValueNotInList, PropertyValueFormatError, PropertyUnknown). What a vendor does with a boot order that
leaves options out, and the vendors' member ids, are not confirmed: the lab takes the order given, which must name
known options once each.
"""

import copy

from bmc_errors import RedfishError

ENABLED = ("Disabled", "Once", "Continuous")
MODES = ("UEFI", "Legacy")
RESTORE_POLICIES = ("AlwaysOn", "AlwaysOff", "LastState")
# The boot options of a server with a PXE-capable NIC, a boot disk and a virtual CD, in the UEFI order a new
# server has; a profile's ``boot`` entry may replace any of these.
DEFAULTS = {
    "targets": ["None", "Pxe", "Hdd", "Cd", "BiosSetup", "UefiHttp"],
    "restore_policy": "LastState",
    "options": [
        {"id": "Boot0000", "name": "Integrated NIC 1 Port 1 PXE IPv4", "path": "PciRoot(0x0)/Pci(0x1C,0x0)/MAC()"},
        {"id": "Boot0001", "name": "RAID Controller Disk 0", "path": "PciRoot(0x0)/Pci(0x3,0x0)/Scsi(0x0,0x0)"},
        {"id": "Boot0002", "name": "Virtual Optical Drive", "path": "PciRoot(0x0)/Pci(0x14,0x0)/USB(0x0,0x0)"},
    ],
}


def bad_value(name, value):
    return RedfishError(400, "The value %s for the property %s is not in the list of acceptable values."
                        % (value, name), "Base.1.8.PropertyValueNotInList", ["/" + name.replace(".", "/")])


class BootSettings:
    def __init__(self, profile_boot=None):
        self.profile = dict(DEFAULTS, **(profile_boot or {}))
        self.options = self.profile["options"]
        self.order = [option["id"] for option in self.options]
        self.enabled, self.target, self.mode = "Disabled", "None", "UEFI"
        self.restore_policy = self.profile["restore_policy"]
        self.boot_sources = []  # what each boot started from, oldest first

    # -- the server boots ------------------------------------------------------------------------------------------

    def booted(self):
        """Records where a boot starts from, and ends a one-time override."""
        if self.enabled != "Disabled" and self.target != "None":
            self.boot_sources.append(self.target)
        else:
            self.boot_sources.append(self.order[0] if self.order else "None")
        if self.enabled == "Once":
            self.enabled = "Disabled"

    # -- Redfish ----------------------------------------------------------------------------------------------------

    def boot_property(self, options_path):
        return {
            "BootSourceOverrideEnabled": self.enabled,
            "BootSourceOverrideTarget": self.target,
            "BootSourceOverrideTarget@Redfish.AllowableValues": list(self.profile["targets"]),
            "BootSourceOverrideMode": self.mode,
            "BootOrder": list(self.order),
            "BootOptions": {"@odata.id": options_path},
        }

    def patch(self, body):
        """Applies a PATCH of the system's ``Boot`` and ``PowerRestorePolicy``; checks all of it first."""
        boot = body.get("Boot", {})
        if not isinstance(boot, dict):
            raise RedfishError(400, "The value for the property Boot is of a different type than the property can "
                               "accept.", "Base.1.8.PropertyValueTypeError", ["/Boot"])
        known = ("BootSourceOverrideEnabled", "BootSourceOverrideTarget", "BootSourceOverrideMode", "BootOrder")
        for name in boot:
            if name not in known:
                raise RedfishError(400, "The property %s is not in the list of valid properties for the resource."
                                   % name, "Base.1.8.PropertyUnknown", ["/Boot/" + name])
        checks = (("BootSourceOverrideEnabled", ENABLED), ("BootSourceOverrideTarget", self.profile["targets"]),
                  ("BootSourceOverrideMode", MODES))
        for name, allowed in checks:
            if name in boot and boot[name] not in allowed:
                raise bad_value("Boot." + name, boot[name])
        policy = body.get("PowerRestorePolicy", self.restore_policy)
        if policy not in RESTORE_POLICIES:
            raise bad_value("PowerRestorePolicy", policy)
        order = boot.get("BootOrder", self.order)
        ids = [option["id"] for option in self.options]
        if not isinstance(order, list) or len(set(order)) != len(order) or any(ref not in ids for ref in order):
            raise RedfishError(400, "The value %s for the property BootOrder is of a different format than the "
                               "property can accept: name each of %s at most once." % (order, ", ".join(ids)),
                               "Base.1.8.PropertyValueFormatError", ["/Boot/BootOrder"])
        self.enabled = boot.get("BootSourceOverrideEnabled", self.enabled)
        self.target = boot.get("BootSourceOverrideTarget", self.target)
        self.mode = boot.get("BootSourceOverrideMode", self.mode)
        self.order = list(order)
        self.restore_policy = policy

    def option(self, option_id, options_path):
        for option in self.options:
            if option["id"] == option_id:
                return {"@odata.id": "%s/%s" % (options_path, option_id),
                        "@odata.type": "#BootOption.v1_0_3.BootOption", "Id": option_id,
                        "Name": "Boot Option", "BootOptionReference": option_id,
                        "DisplayName": option["name"], "UefiDevicePath": option["path"],
                        "BootOptionEnabled": True}
        return None

    def option_ids(self):
        return [option["id"] for option in self.options]

    def ground_truth(self):
        return {"override": {"enabled": self.enabled, "target": self.target, "mode": self.mode},
                "order": list(self.order), "power_restore_policy": self.restore_policy,
                "boot_sources": copy.copy(self.boot_sources)}


class BootResources:
    """The ``BootOptions`` collection under the system, read from the BMC's boot settings."""

    def __init__(self, system_path, bmc):
        self.path = system_path.rstrip("/") + "/BootOptions"
        self.bmc = bmc

    def resources(self):
        return {self.path: self.collection}

    def collections(self):
        return {self.path: self.member}

    def collection(self):
        with self.bmc.lock:
            ids = self.bmc.boot.option_ids()
        return {"@odata.id": self.path, "@odata.type": "#BootOptionCollection.BootOptionCollection",
                "Name": "Boot Options Collection", "Members@odata.count": len(ids),
                "Members": [{"@odata.id": "%s/%s" % (self.path, option_id)} for option_id in ids]}

    def member(self, option_id):
        with self.bmc.lock:
            return self.bmc.boot.option(option_id, self.path)

    def system_properties(self):
        with self.bmc.lock:
            return {"Boot": self.bmc.boot.boot_property(self.path),
                    "PowerRestorePolicy": self.bmc.boot.restore_policy}

    def patch(self, body):
        with self.bmc.lock:
            self.bmc.boot.patch(body)
