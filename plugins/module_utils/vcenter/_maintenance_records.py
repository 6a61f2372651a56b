# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which hosts a layer put in maintenance mode, kept in vCenter so that any later run, from any controller, takes
them out once their work is done.

Before ``host_maintenance`` (or a reboot through ``_host_reboot``) puts a host into maintenance mode for an
``owner`` (the layer: ``bios``, ``host_passthrough`` ...), it sets the host's custom attribute
``gpuops.vgpu.maintenance`` to a record: the owner, the run, who ran it, the vCenter (``about.instanceUuid``) and
vCenter's time. Taking the host out for the same owner clears it. A host that was in maintenance mode before, or
that another owner put there, carries no record of this owner and is never taken out for it.

A person who took a recorded host out of maintenance mode since the record (an ``ExitMaintenanceModeEvent`` by a
user, newer than the record: the layer's own exit clears the record in the same run) made the host theirs: a host
back in maintenance mode stays in, one out stays out, the record goes, and the result names the host, the user and
the time. vCenter's own events (vLCM, DRS: no user) do not count.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _field_records as field_records

FIELD = "gpuops.vgpu.maintenance"
VERSION = 1
REQUIRED = ("v", "owner", "run", "by", "vcenter", "at")


def parse(raw):
    """The record held in a custom value, None for no record, or a ``str`` saying why it is damaged."""
    return field_records.load(raw, REQUIRED, VERSION, check=lambda record: None if isinstance(
        record["owner"], str) and record["owner"] else "its owner is not a name")


class MaintenanceRecords(field_records.FieldRecords):
    """The maintenance records of one ``owner`` on the hosts read with ``customValue``."""

    def __init__(self, client, owner, run_id, me):
        field_records.FieldRecords.__init__(self, client, FIELD, "HostSystem")
        self.owner, self.run_id, self.me = owner, run_id, me
        self.looked_up = False
        self.people = {}  # host name: what taken_out_by_person found

    def vcenter(self):
        return self.client.content.about.instanceUuid

    def owner_of(self, item):
        """The owner of the record ``item`` carries, or None without one; a record that cannot be trusted fails
        before any change, naming the host and the fix."""
        if item.get("customValue") and not self.looked_up:
            self.find_key()  # a read of the field definitions only where some custom value is set
            self.looked_up = True
        record = parse(self.value(item))
        if isinstance(record, dict) and record["vcenter"] != self.vcenter():
            record = "it was taken on vCenter %s, this is vCenter %s" % (record["vcenter"], self.vcenter())
        if isinstance(record, str):
            raise InputError(
                "Nothing was changed: the maintenance record (custom attribute %s) of host %s cannot be trusted: %s."
                % (FIELD, item["name"], record),
                hint="Check whether the host should be in maintenance mode and set it so in vCenter, then clear its "
                     "attribute %s (vSphere Client: the host's Custom Attributes; or set it to an empty value) and "
                     "run again." % FIELD)
        return record["owner"] if record else None

    def ours(self, item):
        """Whether this owner's record is on the host and no person has taken the host out since."""
        return self.owner_of(item) == self.owner and self.taken_out_by_person(item) is None

    def taken_out_by_person(self, item):
        """For a host with this owner's record: ``{"name", "by", "at"}`` of the newest exit from maintenance mode
        that a person made since the record, or None (also for hosts without this owner's record)."""
        name = item["name"]
        if name not in self.people:
            self.people[name] = None
            record = parse(self.value(item))
            if isinstance(record, dict) and record["owner"] == self.owner:
                found = field_records.newest_event(self.client, item["obj"], ["ExitMaintenanceModeEvent"],
                                                   field_records.parse_time(record["at"]), people_only=True)
                if found:
                    self.people[name] = {"name": name, "by": found[0], "at": found[1]}
        return self.people[name]

    def mark(self, item):
        """Record the owner on the host, before it enters maintenance mode."""
        now = self.client.call(self.client.si.CurrentTime)
        self.write(item["obj"], {"v": VERSION, "owner": self.owner, "run": self.run_id, "by": self.me["owner"],
                                 "controller": self.me["controller"], "vcenter": self.vcenter(),
                                 "at": field_records.utc_text(now)})

    def unmark(self, item):
        self.clear(item["obj"])
