# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Records held in a vCenter custom attribute, so that any later run, from any controller, finds them.

Each purpose has one custom field definition (CustomFieldsManager.AddCustomFieldDef; vCenter answers DuplicateName
when it exists, made by another run first). A record is JSON set on an entity with SetField: one call, atomic in
vCenter, which sets the same value however often it is sent, so a lost answer (ChangeInDoubt) is simply sent again.
A record is cleared by setting the empty string. Records name the vCenter (``about.instanceUuid``) and the cluster
(MoRef) they were taken on, so that a record copied elsewhere is refused instead of trusted.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import time

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, ChangeInDoubt
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients import _retry

try:
    from pyVmomi import vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = None

TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def utc_text(moment, time_format=TIME_FORMAT):
    """``moment`` in UTC as text (vCenter's times come with their zone)."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return moment.strftime(time_format)


def parse_time(text):
    return datetime.datetime.strptime(text, TIME_FORMAT).replace(tzinfo=datetime.timezone.utc)


def encode(record):
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


def load(raw, required, version, check=None):
    """The record held in a custom value, None for no record (unset or empty), or a ``str`` saying why it is
    damaged: not JSON, not an object, keys of ``required`` missing, another version, what ``check(record)`` finds
    wrong with its content, or an ``at`` that is not a time."""
    if raw is None or not raw.strip():
        return None
    try:
        record = json.loads(raw)
    except ValueError:
        return "it is not a complete record (%d characters, not JSON: cut short or edited?)" % len(raw)
    if not isinstance(record, dict):
        return "it is not a record"
    missing = [key for key in required if key not in record]
    if missing:
        return "it lacks %s" % ", ".join(missing)
    if record["v"] != version:
        return "it is of version %s, this collection writes version %d" % (record["v"], version)
    why = check(record) if check else None
    if why:
        return why
    try:
        parse_time(record["at"])
    except (TypeError, ValueError):
        return "its time %r is not a time" % (record["at"],)
    return record


def foreign(record, vcenter, cluster, where=None):
    """Why a sound record is not this vCenter's and cluster's, or None when it is; ``where`` says where the entity
    is now (default: in ``cluster``)."""
    if record["vcenter"] != vcenter:
        return "it was taken on vCenter %s, this is vCenter %s" % (record["vcenter"], vcenter)
    if record["cluster"] != cluster:
        return "it was taken in cluster %s, %s" % (record["cluster"], where or "this is cluster %s" % cluster)
    return None


def newest_event(client, entity, type_ids, since, people_only=False):
    """The newest event of ``entity`` (itself, not its children) of the types ``type_ids`` created after ``since``
    (vCenter's time of a record) as ``(user, time text)``, or None. vCenter filters by type, entity and time
    (EventFilterSpec.time.beginTime; the lab vCenter too); ``people_only`` leaves out vCenter's own events
    (EventFilterSpec.userName with systemUser false and no user list: "all regular user events"). An event at the
    record's very time is older than the record's own change, so only later ones count."""
    spec = vim.event.EventFilterSpec(
        entity=vim.event.EventFilterSpec.ByEntity(entity=entity, recursion="self"), eventTypeId=list(type_ids),
        time=vim.event.EventFilterSpec.ByTime(beginTime=since))
    if people_only:
        spec.userName = vim.event.EventFilterSpec.ByUsername(systemUser=False)
    events = client.call(client.content.eventManager.QueryEvents, filter=spec) or []
    later = [event for event in events if event.createdTime > since]
    if not later:
        return None
    newest = max(later, key=lambda event: event.createdTime)
    return newest.userName or "someone", utc_text(newest.createdTime)


class FieldRecords(object):
    """The records of one purpose: the custom field ``name`` on entities of the vim type named ``mo_type``."""

    def __init__(self, client, name, mo_type):
        self.client, self.name, self.mo_type = client, name, mo_type
        self.key = None
        self.fields = {}

    def find_key(self):
        """The field's key (None: no run has made it yet); ``fields`` keeps every field's key by name, from the
        same read of the CustomFieldsManager."""
        manager = self.client.content.customFieldsManager
        self.fields = dict((field.name, field.key)
                           for field in self.client.retrieve_objects([manager], ["field"])[0].get("field") or [])
        self.key = self.fields.get(self.name)
        return self.key

    def ensure_key(self):
        """The field's key, the field made first where vCenter has none (DuplicateName: another run made it)."""
        for attempt in range(_retry.ATTEMPTS):
            if self.key is not None:
                break
            try:
                self.key = self.client.call(self.client.content.customFieldsManager.AddCustomFieldDef,
                                            name=self.name, moType=getattr(vim, self.mo_type)).key
            except (ApiError, ChangeInDoubt) as err:
                if isinstance(err, ApiError) and err.details.get("fault") != "DuplicateName":
                    raise
                if self.find_key() is None and attempt + 1 >= _retry.ATTEMPTS:
                    raise
        return self.key

    def value(self, item):
        """The raw value of the field in ``item`` (a read with ``customValue``), None when it has none."""
        if self.key is None:
            return None
        return next((getattr(value, "value", None) for value in item.get("customValue") or []
                     if value.key == self.key), None)

    def write(self, entity, record):
        self._set(entity, encode(record))

    def clear(self, entity):
        if self.key is not None:
            self._set(entity, "")

    def _set(self, entity, value):
        """SetField sets the same value however often it is sent, so a lost answer is simply sent again."""
        manager, key = self.client.content.customFieldsManager, self.ensure_key()
        for attempt in range(_retry.ATTEMPTS):
            try:
                return self.client.call(manager.SetField, entity=entity, key=key, value=value)
            except ChangeInDoubt:
                if attempt + 1 >= _retry.ATTEMPTS:
                    raise
                time.sleep(_retry.delay(attempt))
