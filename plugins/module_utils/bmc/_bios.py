# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""BIOS logic without I/O: attribute registries, intent profiles per vendor, pending-aware diff, what to send.

Everything here works on plain dicts read from a BMC, so it is tested without one. ``_bios_access`` reads and writes;
``_bios_settings`` joins the two.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import re

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, InputError

ON = object()
ON_WORDS = ("Enabled", "Enable", "On")
OPEN_JOB_STATES = ("New", "Scheduling", "Scheduled", "Downloading", "Downloaded", "ReadyForExecution", "Waiting",
                   "Running", "Paused")
PROFILES = ("gpu_virtualization",)
GPU_INTENTS = ("cpu_virtualization", "iommu", "sriov", "mmio_above_4g", "pcie_aer")


class Registry:
    """The BIOS attribute registry: types, allowed values, read-only flags and read-only dependencies."""

    def __init__(self, attributes, dependencies=None, complete=True):
        self.attributes = attributes
        self.dependencies = dependencies or []
        self.complete = complete

    @classmethod
    def from_redfish(cls, registry):
        entries = (registry or {}).get("RegistryEntries") or {}
        attributes = {}
        for item in entries.get("Attributes") or []:
            name = item.get("AttributeName")
            if not name:
                continue
            values = [v.get("ValueName") for v in item.get("Value") or [] if isinstance(v, dict)]
            attributes[name] = {
                "type": item.get("Type") or ("Enumeration" if values else "String"),
                "values": values or None,
                "read_only": bool(item.get("ReadOnly")),
                "lower": item.get("LowerBound"),
                "upper": item.get("UpperBound"),
                "min_length": item.get("MinLength"),
                "max_length": item.get("MaxLength"),
                "pattern": item.get("ValueExpression"),
            }
        dependencies = []
        for item in entries.get("Dependencies") or []:
            dep = item.get("Dependency") or {}
            if item.get("Type", "Map") == "Map" and dep.get("MapToProperty") in ("ReadOnly", "GrayOut") \
                    and dep.get("MapToValue") is True and dep.get("MapToAttribute"):
                dependencies.append((dep["MapToAttribute"], dep.get("MapFrom") or []))
        return cls(attributes, dependencies)

    @classmethod
    def from_current(cls, current):
        """Without a registry the names of the current attributes and the types of their values are all we know."""
        attributes = {}
        for name, value in current.items():
            kind = "Boolean" if isinstance(value, bool) else "Integer" if isinstance(value, int) else "String"
            attributes[name] = {"type": kind, "values": None, "read_only": False}
        return cls(attributes, complete=False)

    def names(self):
        return sorted(self.attributes)

    def read_only_reason(self, name, effective):
        """Why ``name`` cannot be written given the effective values, or None when it can."""
        entry = self.attributes.get(name) or {}
        if entry.get("read_only"):
            return "%s is read-only" % name
        for target, terms in self.dependencies:
            if target == name and _terms_hold(terms, effective):
                return "%s is read-only while %s" % (name, _describe_terms(terms, effective))
        return None


def _compare(left, condition, right):
    try:
        return {
            "EQU": left == right, "NEQ": left != right, "GTR": left > right, "GEQ": left >= right,
            "LSS": left < right, "LEQ": left <= right,
        }[condition]
    except (KeyError, TypeError):
        return False


def _terms_hold(terms, effective):
    result = None
    for term in terms:
        if term.get("MapFromProperty", "CurrentValue") != "CurrentValue":
            return False
        holds = _compare(effective.get(term.get("MapFromAttribute")), term.get("MapFromCondition", "EQU"),
                         term.get("MapFromValue"))
        if result is None:
            result = holds
        elif (term.get("MapTerms") or "AND").upper() == "OR":
            result = result or holds
        else:
            result = result and holds
    return bool(result)


def _describe_terms(terms, effective):
    parts = []
    for term in terms:
        attr, value = term.get("MapFromAttribute"), term.get("MapFromValue")
        if term.get("MapFromCondition") == "NEQ":
            parts.append("%s is %s (writable when %s is %s)" % (attr, effective.get(attr), attr, value))
        else:
            parts.append("%s is %s" % (attr, effective.get(attr)))
    return " and ".join(parts)


def pending_values(current, shown):
    """Pending values from what the settings object shows: some BMCs show only the changes, others every value."""
    return dict((name, value) for name, value in (shown or {}).items()
                if value is not None and current.get(name) != value)


def validate_attributes(wanted, current, pending, registry, server="this server"):
    """Check names, types and values against the registry; returns the values coerced to the registry's types.

    Every problem is reported at once, before anything is sent to the BMC.
    """
    problems, result = [], {}
    for name, value in sorted(wanted.items()):
        entry = registry.attributes.get(name)
        if entry is None:
            close = difflib.get_close_matches(name, registry.names(), n=3, cutoff=0.6)
            problems.append("%s is not a BIOS attribute of %s%s" % (
                name, server, " (did you mean %s?)" % " or ".join(close) if close else ""))
            continue
        if entry["type"] == "Password":
            problems.append("%s is a write-only BIOS password, which this module does not manage as it cannot "
                            "compare it" % name)
            continue
        coerced, problem = _coerce(name, value, entry)
        if problem:
            problems.append(problem)
        else:
            result[name] = coerced
    effective = dict(current, **pending)
    effective.update(result)
    for name, value in sorted(result.items()):
        if dict(current, **pending).get(name) == value:
            continue
        reason = registry.read_only_reason(name, effective)
        if reason:
            problems.append(reason)
    if problems:
        raise InputError("BIOS attributes rejected for %s: %s." % (server, "; ".join(problems)),
                         hint="Names, values and locks come from the server's BIOS attribute registry; use "
                              "gpuops.vgpu.bmc_info to list the attributes and their current values.",
                         problems=problems)
    return result


def _coerce(name, value, entry):
    kind = entry["type"]
    if kind == "Enumeration":
        allowed = entry.get("values") or []
        if isinstance(value, bool):
            return None, ("%s: %s is not one of %s (YAML reads unquoted On/Off/Yes/No as booleans: quote the value)"
                          % (name, value, ", ".join(allowed)))
        if str(value) in allowed:
            return str(value), None
        return None, "%s: %r is not one of %s" % (name, value, ", ".join(allowed))
    if kind == "Integer":
        try:
            number = int(str(value), 10) if not isinstance(value, bool) else None
        except ValueError:
            number = None
        if number is None:
            return None, "%s: %r is not an integer" % (name, value)
        lower, upper = entry.get("lower"), entry.get("upper")
        if (lower is not None and number < lower) or (upper is not None and number > upper):
            return None, "%s: %s is outside %s..%s" % (name, number, lower, upper)
        return number, None
    if kind == "Boolean":
        if isinstance(value, bool):
            return value, None
        if str(value).lower() in ("true", "false"):
            return str(value).lower() == "true", None
        return None, "%s: %r is not a boolean" % (name, value)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None, "%s: %r is not a string" % (name, value)
    value = str(value)
    if entry.get("max_length") is not None and len(value) > entry["max_length"]:
        return None, "%s: %r is longer than %s characters" % (name, value, entry["max_length"])
    if entry.get("min_length") is not None and len(value) < entry["min_length"]:
        return None, "%s: %r is shorter than %s characters" % (name, value, entry["min_length"])
    if entry.get("pattern") and not re.match("(?:%s)\\Z" % entry["pattern"], value):
        return None, "%s: %r does not match %s" % (name, value, entry["pattern"])
    return value, None


# -- intent profiles ----------------------------------------------------------------------------------------------

class Req:
    """One attribute an intent needs: the first candidate name the BIOS exposes, set to ``value``.

    A candidate ending in ``_*`` matches the name with a per-board hex suffix (Supermicro: ``SR_IOVSupport_002C``).
    Optional requirements apply only where the BIOS exposes them and allows the value.
    """

    def __init__(self, *candidates, **kwargs):
        self.candidates = candidates
        self.value = kwargs.get("value", ON)
        self.optional = kwargs.get("optional", False)

    def find(self, names):
        for candidate in self.candidates:
            if candidate.endswith("_*"):
                pattern = re.compile("^%s_[0-9A-Fa-f]{4}$" % re.escape(candidate[:-2]))
                found = sorted(name for name in names if pattern.match(name))
                if found:
                    return found[0]
            elif candidate in names:
                return candidate
        return None


class Intent:
    def __init__(self, requirements, implied_by=None, implied_note=None):
        self.requirements = requirements
        self.implied_by = implied_by
        self.implied_note = implied_note


INTENTS = {
    "dell": {
        "cpu_virtualization": Intent([Req("ProcVirtualization")]),
        "iommu": Intent([Req("IommuSupport")], implied_by="cpu_virtualization",
                        implied_note="no separate VT-d attribute: ProcVirtualization enables VT-d on Dell Intel "
                                     "platforms"),
        "sriov": Intent([Req("SriovGlobalEnable")]),
        "mmio_above_4g": Intent([Req("MmioAbove4Gb"), Req("MemoryMappedIOH", value="56TB", optional=True)]),
        "pcie_aer": Intent([]),
    },
    "hpe": {
        "cpu_virtualization": Intent([Req("ProcVirtualization")]),
        "iommu": Intent([Req("IntelProcVtd", "ProcAmdIoVt")]),
        "sriov": Intent([Req("Sriov")]),
        "mmio_above_4g": Intent([]),
        "pcie_aer": Intent([]),
    },
    "supermicro": {
        "cpu_virtualization": Intent([Req("IntelVirtualizationTechnology_*")]),
        "iommu": Intent([Req("IntelVTforDirectedI_O_VT_d_*")]),
        "sriov": Intent([Req("SR_IOVSupport_*")]),
        "mmio_above_4g": Intent([Req("Above4GDecoding_*")]),
        "pcie_aer": Intent([Req("PCIeAERSupport_*")]),
    },
}


def _on_value(entry):
    if entry["type"] == "Boolean":
        return True
    for word in ON_WORDS:
        if word in (entry.get("values") or []):
            return word
    return None


def resolve_profile(profile, family, registry, current, pending):
    """Map a profile's intents to this BIOS's attribute names and values.

    Returns ``(wanted, intents)``: the attributes to set and, per intent, what was found. Locked attributes
    (read-only, or read-only until another attribute changes) that are not already as wanted are left out.
    """
    if profile not in PROFILES:
        raise InputError("Unknown profile %r." % profile, hint="Use one of: %s." % ", ".join(PROFILES))
    table = INTENTS.get(family)
    if table is None:
        raise InputError("Profile %s knows the BIOS attributes of Dell, HPE and Supermicro servers; this BMC "
                         "reports a %s server." % (profile, family),
                         hint="Set the attributes by name with the attributes option instead.")
    names = registry.names()
    intents, wanted = {}, {}
    for intent_name in GPU_INTENTS:
        intent = table[intent_name]
        found, note = {}, None
        for req in intent.requirements:
            name = req.find(names)
            if name is None:
                continue
            entry = registry.attributes[name]
            value = _on_value(entry) if req.value is ON else req.value
            if value is None or (entry.get("values") and value not in entry["values"]):
                if not req.optional:
                    note = "%s has no value %s (allowed: %s)" % (
                        name, "that enables it" if req.value is ON else req.value, ", ".join(entry["values"] or []))
                continue
            found[name] = value
        primary_found = any(req.find(names) for req in intent.requirements if not req.optional)
        if found and primary_found:
            intents[intent_name] = {"status": None, "attributes": found}
            wanted.update(found)
        elif intent.implied_by:
            intents[intent_name] = {"status": "implied", "attributes": {}, "via": intent.implied_by,
                                    "note": intent.implied_note}
        else:
            intents[intent_name] = {"status": "not_exposed", "attributes": {},
                                    "note": note or "not exposed by this BIOS"}
    before = dict(current, **pending)
    while True:
        effective = dict(before, **wanted)
        locked = dict((name, registry.read_only_reason(name, effective)) for name, value in wanted.items()
                      if before.get(name) != value)
        locked = dict((name, reason) for name, reason in locked.items() if reason)
        if not locked:
            break
        for name, reason in locked.items():
            del wanted[name]
            for info in intents.values():
                if name in info["attributes"]:
                    info["status"] = "read_only"
                    info["note"] = reason
    return wanted, intents


def intent_report(intents, wanted, pending_after, changed_names):
    """Per-intent status after the run: ok, pending, read_only or not_exposed; an implied intent takes the status
    of the intent that provides it. ``changed`` tells whether this run changed (in check mode: would change) it."""
    report = {}
    for name, info in intents.items():
        entry = {"status": info["status"], "attributes": dict(info["attributes"]), "changed": False}
        if info.get("note"):
            entry["note"] = info["note"]
        if info["status"] is None:
            names = [n for n in info["attributes"] if n in wanted]
            entry["status"] = "pending" if any(n in pending_after for n in names) else "ok"
            entry["changed"] = any(n in changed_names for n in names)
        report[name] = entry
    for name, entry in report.items():
        if entry["status"] == "implied":
            provider = report[intents[name]["via"]]
            entry["status"] = provider["status"]
            entry["via"] = intents[name]["via"]
            entry["attributes"] = dict(provider["attributes"])
    return report


def unmet_intents(intents):
    return dict((name, info.get("note") or info["status"]) for name, info in intents.items()
                if info["status"] in ("not_exposed", "read_only"))


# -- diff and changes to send -------------------------------------------------------------------------------------

def open_bios_job(jobs):
    """The open BIOS configuration job among Dell jobs, if any."""
    for job in jobs:
        if job.get("JobType") == "BIOSConfiguration" and job.get("JobState") in OPEN_JOB_STATES:
            return job
    return None


class BiosChanges:
    """The values to send and the requests that send them, in order.

    ``attributes``: the wanted values that differ from the pending (else current) ones. ``steps``: tuples
    (patch, attributes), (delete_job, job), (create_job,). ``pending_after``: the pending values once sent.
    """

    def __init__(self, attributes, steps, pending_after):
        self.attributes = attributes
        self.steps = steps
        self.pending_after = pending_after

    @property
    def changed(self):
        return bool(self.steps)


def bios_changes(current, pending, wanted, job_required, open_job, patch_creates_job):
    """Compare with pending values when present, else current, and decide what to send.

    Dell applies pending values only through a BIOS job and refuses new pending values while one is scheduled: a
    scheduled job is then replaced (deleting it discards its pending values, so they are sent again with the new
    ones). A job is created when wanted values wait for a reboot and none is scheduled. A second run before the
    reboot finds everything pending and sends nothing.
    """
    changes = dict((name, value) for name, value in wanted.items() if pending.get(name, current.get(name)) != value)
    pending_after = dict(pending, **changes)
    waiting = [name for name, value in wanted.items() if current.get(name) != value]
    steps = []
    if changes:
        if open_job and open_job.get("JobState") not in ("Scheduled", "New"):
            state = open_job.get("JobState")
            raise ApiError("BIOS job %s is %s; its values are being applied now." % (open_job.get("Id"), state),
                           hint="Wait until the server has finished rebooting, then run again.")
        if open_job:
            steps.append(("delete_job", open_job))
            steps.append(("patch", dict(pending, **changes)))
        else:
            steps.append(("patch", changes))
        if job_required and not patch_creates_job:
            steps.append(("create_job",))
    elif waiting and job_required and not open_job:
        steps.append(("create_job",))
    pending_after = dict((name, value) for name, value in pending_after.items() if current.get(name) != value)
    return BiosChanges(changes, steps, pending_after)


def choose_apply_time(supported):
    """Ask for OnReset only when the BMC advertises it; some BMCs reject the property altogether."""
    return "OnReset" if "OnReset" in (supported or []) else None


def diff_view(names, current, pending_before, pending_after, current_after=None):
    current_after = current if current_after is None else current_after
    return {
        "before": {"current": _pick(current, names), "pending": _pick(pending_before, names, only_present=True)},
        "after": {"current": _pick(current_after, names), "pending": _pick(pending_after, names, only_present=True)},
    }


def _pick(values, names, only_present=False):
    return dict((name, values.get(name)) for name in sorted(names) if not only_present or name in values)
