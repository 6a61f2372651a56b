# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``vm_vgpu`` must change on each VM: pure logic on plain data, no vCenter calls.

A VM's state is ``{"vgpus": [{"key": int, "profile": str}], "locked": bool, "power_state": str}``; a request is
``{"state": "present"|"absent", "profiles": [str, ...]}``. The change keeps vGPU devices that already match, removes
the rest and adds what is missing, so a profile change replaces the device instead of adding a second one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

IDENTIFIERS = ("name", "uuid", "moid")


def normalize_requests(vms, default_profile=None, default_state="present"):
    """Check the ``vms`` option and fill in the defaults; raises InputError naming the entry at fault."""
    requests = []
    seen = set()
    for index, entry in enumerate(vms):
        label = "vms[%d]" % index
        given = [key for key in IDENTIFIERS if entry.get(key)]
        if len(given) != 1:
            raise InputError("%s must name the VM by exactly one of name, uuid or moid (got %s)."
                             % (label, ", ".join(given) or "none"))
        kind = given[0]
        ident = entry[kind]
        label = "%s (%s %s)" % (label, kind, ident)
        if (kind, ident) in seen:
            raise InputError("%s is listed twice." % label, hint="Give each VM once.")
        seen.add((kind, ident))
        state = entry.get("state") or default_state
        profiles = _requested_profiles(entry, default_profile, state, label)
        requests.append({"kind": kind, "ident": ident, "label": label, "state": state, "profiles": profiles,
                         "host": entry.get("host")})
    return requests


def _requested_profiles(entry, default_profile, state, label):
    if entry.get("profile") and entry.get("profiles"):
        raise InputError("%s sets both profile and profiles." % label, hint="Use one of them.")
    if state == "absent":
        if entry.get("profile") or entry.get("profiles"):
            raise InputError("%s has state absent and a profile." % label,
                             hint="state absent removes every vGPU; drop the profile.")
        return []
    profiles = entry.get("profiles") or ([entry.get("profile") or default_profile] if (
        entry.get("profile") or default_profile) else [])
    if not profiles:
        raise InputError("%s has state present but no profile." % label,
                         hint="Set profile on the entry or the top-level profile option.")
    if len(set(profiles)) != 1:
        raise InputError("%s asks for different profiles (%s)." % (label, ", ".join(profiles)),
                         hint="Several vGPUs on one VM must all use the same profile.")
    return list(profiles)


def unsupported_profiles(request, supported):
    """The requested profiles that are not in ``supported`` (the VM's host or cluster list)."""
    return sorted(set(request["profiles"]) - set(supported or []))


def vm_change(current, request, release_memory_reservation=False):
    """The change for one VM: devices to remove (keys), vGPUs to add, memory lock; None when nothing to do."""
    wanted = list(request["profiles"])
    matching = [device for device in current["vgpus"] if wanted and device["profile"] == wanted[0]]
    keep = matching[:len(wanted)]
    remove = [device for device in current["vgpus"] if device not in keep]
    add = wanted[len(keep):]
    lock = None
    if request["state"] == "present" and not current["locked"]:
        lock = True
    elif request["state"] == "absent" and release_memory_reservation and (current["locked"] or current.get("reserved_mb")):
        lock = False
    move_to = request.get("host") if request.get("host") and request.get("host") != current.get("host") else None
    if not remove and not add and lock is None and move_to is None:
        return None
    return {
        "remove_keys": [device["key"] for device in remove],
        "add_profiles": add,
        "lock_memory": lock,
        "release_reservation": lock is False,
        "move_to": move_to,
    }


def needs_reconfigure(change):
    """Whether the change touches devices or memory (a change may only move the VM to another host)."""
    return bool(change["remove_keys"] or change["add_profiles"] or change["lock_memory"] is not None)


def describe(current):
    """The part of a VM's state that ``vm_vgpu`` reports as before / after."""
    return {
        "profiles": sorted(device["profile"] for device in current["vgpus"]),
        "memory_reservation_locked_to_max": bool(current["locked"]),
        "power_state": current["power_state"],
        "host": current.get("host"),
    }


def predict(current, change, power_on=False):
    """The state ``change`` leads to, for check mode and for comparing with what vCenter reports afterwards."""
    power_state = "poweredOn" if power_on else current["power_state"]
    if change is None:
        return dict(describe(current), power_state=power_state)
    kept = [device["profile"] for device in current["vgpus"] if device["key"] not in change["remove_keys"]]
    locked = current["locked"] if change["lock_memory"] is None else change["lock_memory"]
    return {
        "profiles": sorted(kept + change["add_profiles"]),
        "memory_reservation_locked_to_max": bool(locked),
        "power_state": power_state,
        "host": change.get("move_to") or current.get("host"),
    }


def blocked_by_power(requests_and_states, power):
    """VMs that need a change but cannot get one under the power policy, as ``[(label, reason)]``."""
    blocked = []
    for request, current, change in requests_and_states:
        if change is None:
            continue
        if current["power_state"] == "poweredOn" and not needs_reconfigure(change):
            continue  # a move alone: by vMotion, the VM keeps running
        if current["power_state"] == "suspended":
            blocked.append((request["label"], "is suspended; resume and shut it down, or power it off first"))
        elif current["power_state"] == "poweredOn" and power == "never":
            blocked.append((request["label"], "is powered on and power is 'never'"))
    return blocked
