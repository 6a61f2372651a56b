# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What vm_vgpu took away, kept in vCenter so that any later run, from any controller, gives it back.

Before vm_vgpu powers off a running VM to change its vGPUs, it sets the VM's custom attribute
``gpuops.vgpu.vm_vgpu.power`` (one SetField, atomic in vCenter) to a record: the run, who ran it, the vCenter
(``about.instanceUuid``) and cluster (MoRef) it was taken on, vCenter's time, and the change asked for the VM. The
value goes (set to the empty string) only once the VM runs again. A later run finds the records in its one read of
the VMs, powers those VMs on after finishing the recorded change (or the one it is asked for), and names them.

A VM that a person powered on again after the record was taken (a ``VmPoweredOnEvent`` newer than the record; a
person's power-off needs a power-on first, since the run's own power-off came after the record) and that is off
now was left off on purpose: it stays off and is named. So is a VM the user lists in ``keep_powered_off``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _field_records as field_records
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._field_records import utc_text

FIELD = "gpuops.vgpu.vm_vgpu.power"
VERSION = 1
REQUIRED = ("v", "run", "by", "vcenter", "cluster", "power", "at", "want")
parse_time = field_records.parse_time


def new_record(run, me, vcenter, cluster, at, request):
    """The record of one VM about to be powered off: ``me`` is ``whoami()`` of the run, ``request`` the VM's
    normalized vm_vgpu request."""
    return {"v": VERSION, "run": run, "by": me["owner"], "controller": me["controller"], "pid": me["pid"],
            "vcenter": vcenter, "cluster": cluster, "power": "poweredOn", "at": utc_text(at),
            "want": {"state": request["state"], "profiles": list(request["profiles"]), "host": request.get("host")}}


def parse(raw):
    """The record held in a custom value, None for no record (unset or empty), or a ``str`` saying why it is
    damaged."""
    return field_records.load(raw, REQUIRED, VERSION, check=_want_problem)


def _want_problem(record):
    want = record["want"]
    if not isinstance(want, dict) or want.get("state") not in ("present", "absent") \
            or not isinstance(want.get("profiles"), list):
        return "its 'want' is not a vm_vgpu request"
    return None


def foreign(record, vcenter, cluster):
    """Why a sound record is not this vCenter's and cluster's, or None when it is."""
    return field_records.foreign(record, vcenter, cluster, "the VM is now in %s" % (cluster or "no cluster"))


def refuse(problems):
    """Nothing changes while a record cannot be trusted: ``problems`` is ``[(vm name, why)]``."""
    raise InputError(
        "Nothing was changed: the power record (custom attribute %s) of %d VM(s) cannot be trusted: %s."
        % (FIELD, len(problems), "; ".join("VM %s: %s" % pair for pair in problems)),
        hint="Check each VM's power state and vGPUs in vCenter and set them as they should be, then clear its "
             "attribute %s (vSphere Client: the VM's Custom Attributes; or set it to an empty value) and run again."
             % FIELD)


def request_from(record, name):
    """A vm_vgpu request that finishes the change a record names."""
    want = record["want"]
    return {"kind": "name", "ident": name, "label": "%s (recorded by run %s)" % (name, record["run"]),
            "state": want["state"], "profiles": list(want["profiles"]), "host": want.get("host")}


def listed(records, items, host_names):
    """The records among ``items`` (VM reads with ``name``, ``customValue`` and ``runtime.host``) as ``gpu_info``
    lists them, by VM name: who left each and when, or why it cannot be read."""
    found = []
    for item in items:
        record = parse(records.value(item))
        if record is None:
            continue
        host = item.get("runtime.host")
        damaged = isinstance(record, str)
        found.append({"name": item.get("name"), "moid": item["moid"],
                      "host": host_names.get(host._moId) if host is not None else None,
                      "run": None if damaged else record["run"], "by": None if damaged else record["by"],
                      "recorded_at": None if damaged else record["at"], "problem": record if damaged else None})
    return sorted(found, key=lambda entry: (entry["name"] or "", entry["moid"]))


class PowerRecords(field_records.FieldRecords):
    """The records of one vCenter: the field's key, writing and clearing records, and the person check."""

    def __init__(self, client):
        field_records.FieldRecords.__init__(self, client, FIELD, "VirtualMachine")

    def powered_on_since(self, vm, at):
        """The newest ``VmPoweredOnEvent`` of ``vm`` after ``at`` as ``(user, time text)``, or None."""
        return field_records.newest_event(self.client, vm, ["VmPoweredOnEvent"], at)
