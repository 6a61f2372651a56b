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

import datetime
import json
import time

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients import _retry
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._retry import ChangeInDoubt

try:
    from pyVmomi import vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = None

FIELD = "gpuops.vgpu.vm_vgpu.power"
VERSION = 1
REQUIRED = ("v", "run", "by", "vcenter", "cluster", "power", "at", "want")
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def utc_text(moment):
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return moment.strftime(TIME_FORMAT)


def parse_time(text):
    return datetime.datetime.strptime(text, TIME_FORMAT).replace(tzinfo=datetime.timezone.utc)


def new_record(run, me, vcenter, cluster, at, request):
    """The record of one VM about to be powered off: ``me`` is ``whoami()`` of the run, ``request`` the VM's
    normalized vm_vgpu request."""
    return {"v": VERSION, "run": run, "by": me["owner"], "controller": me["controller"], "pid": me["pid"],
            "vcenter": vcenter, "cluster": cluster, "power": "poweredOn", "at": utc_text(at),
            "want": {"state": request["state"], "profiles": list(request["profiles"]), "host": request.get("host")}}


def encode(record):
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


def parse(raw):
    """The record held in a custom value, None for no record (unset or empty), or a ``str`` saying why it is
    damaged."""
    if raw is None or not raw.strip():
        return None
    try:
        record = json.loads(raw)
    except ValueError:
        return "it is not a complete record (%d characters, not JSON: cut short or edited?)" % len(raw)
    if not isinstance(record, dict):
        return "it is not a record"
    missing = [key for key in REQUIRED if key not in record]
    if missing:
        return "it lacks %s" % ", ".join(missing)
    if record["v"] != VERSION:
        return "it is of version %s, this collection writes version %d" % (record["v"], VERSION)
    want = record["want"]
    if not isinstance(want, dict) or want.get("state") not in ("present", "absent") \
            or not isinstance(want.get("profiles"), list):
        return "its 'want' is not a vm_vgpu request"
    try:
        parse_time(record["at"])
    except (TypeError, ValueError):
        return "its time %r is not a time" % (record["at"],)
    return record


def foreign(record, vcenter, cluster):
    """Why a sound record is not this vCenter's and cluster's, or None when it is."""
    if record["vcenter"] != vcenter:
        return "it was taken on vCenter %s, this is vCenter %s" % (record["vcenter"], vcenter)
    if record["cluster"] != cluster:
        return "it was taken in cluster %s, the VM is now in %s" % (record["cluster"], cluster or "no cluster")
    return None


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


class PowerRecords(object):
    """The records of one vCenter: the field's key, writing and clearing records, and the person check."""

    def __init__(self, client):
        self.client = client
        self.key = None
        self.fields = {}

    def find_key(self):
        """The field's key (None: no VM ever had a record); ``fields`` keeps every field's key by name."""
        manager = self.client.content.customFieldsManager
        self.fields = dict((field.name, field.key)
                           for field in self.client.retrieve_objects([manager], ["field"])[0].get("field") or [])
        self.key = self.fields.get(FIELD)
        return self.key

    def ensure_key(self):
        """The field's key, the field made first where vCenter has none (DuplicateName: another run made it)."""
        for attempt in range(_retry.ATTEMPTS):
            if self.key is not None:
                break
            try:
                self.key = self.client.call(self.client.content.customFieldsManager.AddCustomFieldDef, name=FIELD,
                                            moType=vim.VirtualMachine).key
            except (ApiError, ChangeInDoubt) as err:
                if isinstance(err, ApiError) and err.details.get("fault") != "DuplicateName":
                    raise
                if self.find_key() is None and attempt + 1 >= _retry.ATTEMPTS:
                    raise
        return self.key

    def write(self, vm, record):
        self._set(vm, encode(record))

    def clear(self, vm):
        if self.key is not None:
            self._set(vm, "")

    def _set(self, vm, value):
        """SetField sets the same value however often it is sent, so a lost answer is simply sent again."""
        manager, key = self.client.content.customFieldsManager, self.ensure_key()
        for attempt in range(_retry.ATTEMPTS):
            try:
                return self.client.call(manager.SetField, entity=vm, key=key, value=value)
            except ChangeInDoubt:
                if attempt + 1 >= _retry.ATTEMPTS:
                    raise
                time.sleep(_retry.delay(attempt))

    def powered_on_since(self, vm, at):
        """The newest ``VmPoweredOnEvent`` of ``vm`` after ``at`` as ``(user, time text)``, or None."""
        spec = vim.event.EventFilterSpec(
            entity=vim.event.EventFilterSpec.ByEntity(entity=vm, recursion="self"),
            eventTypeId=["VmPoweredOnEvent"], time=vim.event.EventFilterSpec.ByTime(beginTime=at))
        events = self.client.call(self.client.content.eventManager.QueryEvents, filter=spec) or []
        later = [event for event in events if event.createdTime > at]
        if not later:
            return None
        newest = max(later, key=lambda event: event.createdTime)
        return newest.userName or "someone", utc_text(newest.createdTime)
