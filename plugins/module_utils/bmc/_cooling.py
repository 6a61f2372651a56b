# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``bmc_cooling`` does to one server: a cooling intent mapped to the vendor's own settings, checked against
the values the vendor allows before anything is sent, and applied where the vendor keeps them.

- Dell iDRAC: the system attributes ``ThermalSettings.1.*``, applied at once. iDRAC9: on the DellAttributes resource
  of ``System.Embedded.1`` linked from the manager, set by a PATCH. iDRAC7/8 serve no DellAttributes: read by a
  Server Configuration Profile export and set by an import, each a job (``_dell_scp``).
- HPE iLO: the BIOS attribute ``ThermalConfig`` (and the BIOS's other fan settings), pending until the next reboot:
  sent through ``bios_settings``' logic, so pending values, the registry check and the reboot are the same.
- Supermicro: ``Mode`` of the manager's ``Oem/Supermicro/FanMode``, among the modes that resource allows; applied
  at once.

Sources of names and values: docs/bmc_cooling.md.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc._bios_settings import apply_bios_settings
from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc._dell_scp import (
    export_system_attributes, import_system_attributes, scp_actions)
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._redfish import link_of, odata_id

# From least to most airflow; the temperature curve moves along this order.
INTENTS = ("default", "passive_gpu", "max_cooling")

DELL_PREFIX = "ThermalSettings.1."
DELL_MFS_DEFAULT = 255  # MinimumFanSpeed: no minimum, the iDRAC's own curve
DELL_VALUES = {
    DELL_PREFIX + "ThermalProfile": ["Default Thermal Profile Settings", "Maximum Performance", "Minimum Power",
                                     "Sound Cap"],
    DELL_PREFIX + "FanSpeedOffset": ["Off", "Low", "Medium", "High", "Max"],
    DELL_PREFIX + "ThirdPartyPCIFanResponse": ["Enabled", "Disabled"],
    DELL_PREFIX + "MinimumFanSpeed": None,  # a percent between the MFS limits the iDRAC reports, or 255
}
DELL_INTEGERS = tuple(DELL_PREFIX + name for name in ("MinimumFanSpeed", "MFSMinimumLimit", "MFSMaximumLimit"))
DELL_INTENTS = {
    "default": {"ThermalProfile": "Default Thermal Profile Settings", "FanSpeedOffset": "Off",
                "MinimumFanSpeed": DELL_MFS_DEFAULT, "ThirdPartyPCIFanResponse": "Enabled"},
    # The third-party PCIe card response stays on: it is what gives a card the iDRAC cannot read extra airflow.
    "passive_gpu": {"ThermalProfile": "Maximum Performance", "FanSpeedOffset": "Medium",
                    "MinimumFanSpeed": DELL_MFS_DEFAULT, "ThirdPartyPCIFanResponse": "Enabled"},
    "max_cooling": {"ThermalProfile": "Maximum Performance", "FanSpeedOffset": "Max",
                    "MinimumFanSpeed": DELL_MFS_DEFAULT, "ThirdPartyPCIFanResponse": "Enabled"},
}
HPE_BIOS_SETTINGS = ("ThermalConfig", "ThermalShutdown", "FanFailPolicy", "FanInstallReq")
HPE_INTENTS = {"default": {"ThermalConfig": "OptimalCooling"}, "passive_gpu": {"ThermalConfig": "IncreasedCooling"},
               "max_cooling": {"ThermalConfig": "MaxCooling"}}
# Per intent, the first mode the board offers (boards differ: Optimal is missing where PUE2 is offered).
SUPERMICRO_INTENTS = {"default": ["Standard", "Optimal"], "passive_gpu": ["HeavyIO"], "max_cooling": ["FullSpeed"]}


def bmc_cooling(client, params, check_mode):
    """The ``bmc_cooling`` module: ``apply_cooling`` with its options."""
    return apply_cooling(client, params["baseuri"], intent=params["intent"], settings=params["settings"],
                         reboot=params["reboot"], reboot_timeout=params["reboot_timeout"], check_mode=check_mode)


def apply_cooling(client, baseuri, intent=None, settings=None, reboot="never", reboot_timeout=1800,
                  check_mode=False):
    """Set ``intent`` or the vendor ``settings`` on the server behind ``client``; returns bmc_cooling's result."""
    if settings is not None and not settings:
        raise InputError("settings is empty.", hint="Name at least one cooling setting, or use intent.")
    vendor = client.vendor()
    backend = BACKENDS.get(vendor["family"])
    if backend is None:
        raise ApiError("The BMC at %s is a %s BMC; bmc_cooling knows the cooling settings of Dell iDRAC, HPE iLO and "
                       "Supermicro BMCs." % (baseuri, vendor["manufacturer"] or "generic"),
                       hint="Set the server's fan policy with its vendor's tools.")
    result = backend(client, baseuri, vendor, intent, settings, reboot, reboot_timeout, check_mode)
    before = result["diff"]["before"]
    result.update(vendor=vendor, intent=intent, intent_before=intent_of(
        vendor["family"], dict(before["current"], **before["pending"])) if intent else None)
    return result


def intent_of(family, values):
    """The intent whose settings ``values`` (current, or pending where pending) hold; None for other settings."""
    for intent in INTENTS:
        if family == "supermicro":
            if values.get("Mode") in SUPERMICRO_INTENTS[intent]:
                return intent
            continue
        table = dell_wanted(intent, None) if family == "dell" else HPE_INTENTS[intent]
        if all(values.get(name) == value for name, value in table.items()):
            return intent
    return None


def immediate_result(wanted, current, send, check_mode):
    """The result where values apply at once: ``send(changes)`` unless in check mode."""
    changes = dict((name, value) for name, value in wanted.items() if current.get(name) != value)
    if changes and not check_mode:
        send(changes)
    before = dict((name, current.get(name)) for name in sorted(wanted))
    after = dict(before, **changes)
    return dict(changed=bool(changes), wanted=dict(sorted(wanted.items())), changes=changes, pending={},
                pending_reboot=False, rebooted=False,
                diff={"before": {"current": before, "pending": {}}, "after": {"current": after, "pending": {}}})


# -- Dell ------------------------------------------------------------------------------------------------------------

def dell_attributes_uri(manager):
    dell = ((manager.get("Links") or {}).get("Oem") or {}).get("Dell") or {}
    for item in dell.get("DellAttributes") or []:
        if "System.Embedded.1" in (odata_id(item) or ""):
            return odata_id(item)
    return None


def dell_wanted(intent, settings):
    if settings is None:
        return dict((DELL_PREFIX + name, value) for name, value in DELL_INTENTS[intent].items())
    return dict((name if name.startswith(DELL_PREFIX) else DELL_PREFIX + name, value)
                for name, value in settings.items())


def dell_allowed(name, current, generation):
    """The values ``name`` takes on this iDRAC, as a list, or a ``(lower, upper)`` range for MinimumFanSpeed."""
    if name == DELL_PREFIX + "MinimumFanSpeed":
        return (current.get(DELL_PREFIX + "MFSMinimumLimit", 0), current.get(DELL_PREFIX + "MFSMaximumLimit", 100))
    values = DELL_VALUES[name]
    if generation == "idrac8":  # Sound Cap came with 14G servers
        values = [value for value in values if value != "Sound Cap"]
    return values


def dell_validate(wanted, current, generation, server):
    problems = []
    for name, value in sorted(wanted.items()):
        if name not in DELL_VALUES:
            problems.append("%s is not a thermal setting this module sets (it sets %s)" % (
                name, ", ".join(sorted(DELL_VALUES))))
            continue
        if name not in current:
            problems.append("%s is not among the system attributes of %s" % (name, server))
            continue
        allowed = dell_allowed(name, current, generation)
        if isinstance(allowed, tuple):
            if isinstance(value, bool) or not isinstance(value, int) or (
                    value != DELL_MFS_DEFAULT and not allowed[0] <= value <= allowed[1]):
                problems.append("%s: %r is not a percent from %s to %s, nor %s (no minimum)" % (
                    name, value, allowed[0], allowed[1], DELL_MFS_DEFAULT))
        elif value not in allowed:
            problems.append("%s: %r is not one of %s%s" % (
                name, value, ", ".join(allowed),
                " (quote Off: YAML reads it as a boolean)" if isinstance(value, bool) else ""))
    if problems:
        raise InputError("Cooling settings rejected for %s: %s." % (server, "; ".join(problems)),
                         hint="Use the values listed; docs/bmc_cooling.md gives their sources.", problems=problems)


def dell_cooling(client, baseuri, vendor, intent, settings, reboot, reboot_timeout, check_mode):
    manager = client.manager()
    uri, scp = dell_attributes_uri(manager), scp_actions(manager)
    if scp and (vendor["generation"] == "idrac8" or not uri):
        current = dell_integers(export_system_attributes(client, scp))

        def send(changes):
            import_system_attributes(client, scp, changes)
    elif uri:
        current = client.get(uri).get("Attributes") or {}

        def send(changes):
            client.request("PATCH", uri, {"Attributes": changes})
    else:
        raise ApiError("The iDRAC at %s links no system attributes (DellAttributes of System.Embedded.1) from its "
                       "manager, where the thermal settings are, and advertises no Server Configuration Profile "
                       "import." % baseuri,
                       hint="Update the iDRAC firmware, or set the fan settings in the iDRAC's web interface.")
    wanted = dell_wanted(intent, settings)
    dell_validate(wanted, current, vendor["generation"], "the %s at %s" % (vendor["model"] or "server", baseuri))
    return immediate_result(wanted, current, send, check_mode)


def dell_integers(values):
    """An export's text values, with the integer attributes as integers."""
    return dict((name, int(value) if name in DELL_INTEGERS and value.isdigit() else value)
                for name, value in values.items())


# -- HPE -------------------------------------------------------------------------------------------------------------

def hpe_cooling(client, baseuri, vendor, intent, settings, reboot, reboot_timeout, check_mode):
    wanted = dict(HPE_INTENTS[intent]) if settings is None else dict(settings)
    other = sorted(set(wanted) - set(HPE_BIOS_SETTINGS))
    if other:
        raise InputError("%s %s not among the iLO cooling settings this module sets (%s)." % (
            ", ".join(other), "is" if len(other) == 1 else "are", ", ".join(HPE_BIOS_SETTINGS)),
            hint="Set other BIOS attributes with gpuops.vgpu.bios_settings.")
    bios = apply_bios_settings(client, baseuri, attributes=wanted, reboot=reboot, reboot_timeout=reboot_timeout,
                               check_mode=check_mode)
    keys = ("changed", "wanted", "changes", "pending", "pending_reboot", "rebooted", "diff")
    return dict((key, bios[key]) for key in keys)


# -- Supermicro ------------------------------------------------------------------------------------------------------

def supermicro_cooling(client, baseuri, vendor, intent, settings, reboot, reboot_timeout, check_mode):
    uri = link_of(client.manager(), "Oem", "Supermicro", "FanMode")
    if not uri:
        raise ApiError("The Supermicro BMC at %s links no Oem/Supermicro/FanMode from its manager." % baseuri,
                       hint="Update the BMC firmware, or set the fan mode in the BMC's web interface.")
    resource = client.get(uri)
    allowed = resource.get("Mode@Redfish.AllowableValues") or []
    server = "the %s at %s" % (vendor["model"] or "server", baseuri)
    if settings is None:
        offered = [mode for mode in SUPERMICRO_INTENTS[intent] if mode in allowed]
        if not offered:
            raise InputError("Intent %s needs fan mode %s, which %s does not offer (it offers %s)." % (
                intent, " or ".join(SUPERMICRO_INTENTS[intent]), server, ", ".join(allowed)),
                hint="Give the mode with settings: {Mode: ...}.")
        wanted = {"Mode": offered[0]}
    else:
        wanted = dict(settings)
        problems = ["%s is not a fan mode setting (only Mode is)" % name for name in sorted(wanted) if name != "Mode"]
        if "Mode" in wanted and wanted["Mode"] not in allowed:
            problems.append("Mode: %r is not one of %s" % (wanted["Mode"], ", ".join(allowed)))
        if problems:
            raise InputError("Cooling settings rejected for %s: %s." % (server, "; ".join(problems)),
                             hint="The allowed modes are the ones the BMC lists in Mode@Redfish.AllowableValues.",
                             problems=problems)

    def send(changes):
        client.request("PATCH", uri, changes)
    return immediate_result(wanted, {"Mode": resource.get("Mode")}, send, check_mode)


BACKENDS = {"dell": dell_cooling, "hpe": hpe_cooling, "supermicro": supermicro_cooling}
