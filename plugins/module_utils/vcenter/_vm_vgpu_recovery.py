# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vm_vgpu's side of the power records (``_vm_power_records``): what an interrupted run left is found in the same
read as the requested VMs, refused when it cannot be trusted, and finished before or with the new work."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import Busy
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _vm_power_records as power_records
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _vm_vgpu_changes as vm_changes
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._cluster_lock import (
    field_name,
    parse_holder,
    parse_time as parse_lock_time,
    playbook_running,
    stale_reason,
    utc_text,
)


class Recovery(object):
    """Mixed into ``VgpuAssignment``; uses its client, params, hosts, start and errors."""

    def __init__(self, client):
        self.records = power_records.PowerRecords(client)
        self.held = {}  # index -> the power record the VM carries (found, or written by this run)
        self.recovered = []

    def _add_recorded(self, requests, objects, recorded):
        """Requests and objects with every recorded VM the request leaves out appended (request None for now: what
        to do with it is decided once its state is read); ``{index: record or why it is damaged}``."""
        requests, objects, found = list(requests), list(objects), {}
        position = dict((obj._moId, index) for index, obj in enumerate(objects))
        for obj, name, raw in recorded:
            if obj._moId not in position:
                position[obj._moId] = len(objects)
                objects.append(obj)
                requests.append(None)
            found[position[obj._moId]] = (name, power_records.parse(raw))
        return requests, objects, found

    def _check_records(self, items, found):
        """Refuse, before any change, a record that is damaged or was taken on another vCenter or cluster."""
        vcenter = self.client.content.about.instanceUuid
        problems = []
        for index, (name, record) in sorted(found.items()):
            why = record if not isinstance(record, dict) else power_records.foreign(
                record, vcenter, self._compute_resource(items[index]))
            if why:
                problems.append((name, why))
        if problems:
            power_records.refuse(problems)

    def _compute_resource(self, item):
        host = item.get("runtime.host")
        parent = self.hosts.get(host._moId, {}).get("parent") if host is not None else None
        return parent._moId if parent is not None else None

    def _recover(self, items, states, changes, found):
        """What an interrupted run left: a VM back on loses its record; a VM off is powered on after its change
        (the one asked now, else the recorded one), unless a person has powered it on since or it is to stay off."""
        keep_off = set(self.params["keep_powered_off"] or [])
        running = self._runs_in_progress(items, found)
        for index, (name, record) in sorted(found.items()):
            entry = {"name": name, "moid": items[index]["moid"], "run": record["run"], "by": record["by"],
                     "recorded_at": record["at"]}
            if index in running:
                entry.update(ended="in progress", why=running[index])
                self.recovered.append(entry)
                continue
            self.held[index] = record
            person = None
            if states[index]["power_state"] != "poweredOn" and not keep_off.intersection((name, entry["moid"])):
                person = self.records.powered_on_since(items[index]["obj"], power_records.parse_time(record["at"]))
            if states[index]["power_state"] == "poweredOn":
                entry["ended"] = "was running"
            elif keep_off.intersection((name, entry["moid"])):
                entry.update(ended="left off", why="listed in keep_powered_off")
            elif person:
                entry.update(ended="left off", why="powered on by %s at %s and off again since the record" % person)
            else:
                entry["ended"] = "powered on"
                self.start.append(index)
                if not self._requested(index):
                    changes[index] = self._recorded_change(items[index], states[index], record, name, entry)
            self.recovered.append(entry)

    def _runs_in_progress(self, items, found):
        """``{index: why}`` for the records whose run may still be at work: it holds the lock of the record's cluster
        (``cluster_lock``, which playbooks take), or it is an ansible-playbook of this controller that still runs.
        Their VMs are left to it; one this run is asked to change stops it before any change."""
        me = self.params["me"]
        theirs = dict((index, record) for index, (_name, record) in found.items()
                      if record["run"] != self.params["run_id"])
        if not theirs:
            return {}
        locks = self._cluster_locks(items, theirs)
        running = {}
        for index, record in theirs.items():
            holder, now = locks.get(record["cluster"], (None, None))
            if holder and holder.get("run_id") == record["run"] and not stale_reason(holder, now, me["controller"], 0):
                running[index] = "run %s holds the lock of cluster %s" % (record["run"], record["cluster"])
            elif record.get("controller") == me["controller"] and record.get("pid") not in (None, me["pid"]) \
                    and playbook_running(record["pid"]):
                running[index] = "run %s is ansible-playbook %s on this controller, still running" % (
                    record["run"], record["pid"])
        busy = [(found[index][0], why) for index, why in sorted(running.items()) if self._requested(index)]
        if busy:
            raise Busy("Nothing was changed: %s." % "; ".join("VM %s is being changed by another run: %s" % pair
                                                              for pair in busy),
                       hint="Run again once that run has ended, or leave these VMs out of vms.")
        return running

    def _cluster_locks(self, items, records):
        """``{cluster moid: (lock holder or None, vCenter's time)}`` of the records' clusters, in one read."""
        clusters = {}
        for index in records:
            host = items[index].get("runtime.host")
            parent = self.hosts.get(host._moId, {}).get("parent") if host is not None else None
            if parent is not None:
                clusters[parent._moId] = parent
        keys = dict((moid, self.records.fields.get(field_name(moid))) for moid in clusters)
        locked = [clusters[moid] for moid, key in sorted(keys.items()) if key is not None]
        if not locked:
            return {}
        now = parse_lock_time(utc_text(self.client.call(self.client.si.CurrentTime)))
        locks = {}
        for item in self.client.retrieve_objects(locked, ["customValue"]):
            raw = next((value.value for value in item.get("customValue") or [] if value.key == keys[item["moid"]]),
                       None)
            locks[item["moid"]] = (parse_holder(raw), now)
        return locks

    def _recorded_change(self, item, state, record, name, entry):
        """The change an interrupted run had asked for a VM no request names now, where its host still allows it."""
        request = power_records.request_from(record, name)
        if request["host"] not in self.host_names.values():
            request["host"] = None
        host = item.get("runtime.host")
        profiles = self.hosts[host._moId].get("config.sharedPassthruGpuTypes") if host is not None else None
        if vm_changes.unsupported_profiles(request, profiles):
            entry["why"] = "its recorded profiles %s are not offered by its host: powered on as it is" % (
                ", ".join(request["profiles"]))
            return None
        return vm_changes.vm_change(state, request, self.params["release_memory_reservation"])

    def _requested(self, index):
        return index < len(self.params["vms"])

    def _write_records(self, indexes, items, requests):
        """Before a running VM goes off: the record that lets any later run put it back on."""
        if not indexes:
            return
        now = self.client.call(self.client.si.CurrentTime)
        vcenter = self.client.content.about.instanceUuid
        for index in indexes:
            record = power_records.new_record(self.params["run_id"], self.params["me"], vcenter,
                                              self._compute_resource(items[index]), now, requests[index])
            self.records.write(items[index]["obj"], record)
            self.held[index] = record

    def _clear_records(self, objects, items):
        """A record goes once its VM runs again, or when the VM is to stay off; a VM still off keeps it."""
        left_off = set(entry["moid"] for entry in self.recovered if entry["ended"] == "left off")
        for index in sorted(self.held):
            item = items[index]
            if item.get("runtime.powerState") == "poweredOn" or item["moid"] in left_off:
                self.records.clear(objects[index])
            else:
                self.errors.setdefault(index, "still %s" % item.get("runtime.powerState"))
                self.errors[index] += "; its power record stays, so the next run powers it on"
                for entry in self.recovered:
                    if entry["moid"] == item["moid"]:
                        entry["ended"] = "still off"
