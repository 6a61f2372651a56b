# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A vCenter for vm_vgpu: VMs whose tasks change them as vCenter would, and a log of every read and call."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
from types import SimpleNamespace

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, GpuopsError, NotFound

vim = pytest.importorskip("pyVmomi").vim

PROFILES = ["grid_p40-4q", "grid_p40-8q", "grid_p40-24q"]
VCENTER_UUID = "7c2a4ad4-1f4e-4a1b-9c5e-3f0d2c9e1a10"


class Killed(BaseException):
    """The controller died: raised at the chosen change, outside every error handler the code under test has."""


def vgpu_device(key, profile):
    return vim.vm.device.VirtualPCIPassthrough(
        key=key, backing=vim.vm.device.VirtualPCIPassthrough.VmiopBackingInfo(vgpu=profile))


class FakeVm(vim.VirtualMachine):
    """A VM (a real managed object reference, so that specs take it); its ``*_Task`` methods return the outcome the
    client's task wait would give. Its name is ``vm_name``: ``name`` is the managed object's property."""

    def __init__(self, lab, moid, name, host, profiles=(), locked=True, power="poweredOff", guest_stops=True):
        vim.VirtualMachine.__init__(self, moid)
        self.lab, self.vm_name, self.host = lab, name, host
        self.devices = [vgpu_device(13000 + number, profile) for number, profile in enumerate(profiles)]
        self.locked, self.reservation, self.power = locked, 0, power
        self.guest_stops = guest_stops

    def item(self):
        return {
            "obj": self, "moid": self._moId, "name": self.vm_name, "parent": self.lab.folder,
            "config.uuid": "4200-%s" % self._moId, "config.instanceUuid": "5000-%s" % self._moId,
            "config.hardware.device": list(self.devices), "config.hardware.memoryMB": 16384,
            "config.memoryReservationLockedToMax": self.locked,
            "resourceConfig.memoryAllocation.reservation": self.reservation,
            "runtime.powerState": self.power, "runtime.host": self.host, "resourcePool": self.lab.pool,
            "customValue": [SimpleNamespace(key=key, value=value) for key, value in sorted(self.values.items())],
        }

    @property
    def values(self):
        return self.lab.values.setdefault(self._moId, {})

    def _task(self, method, change):
        self.lab.calls.append((method, self.vm_name))
        error = self.lab.failing.get((method, self.vm_name))
        if error:
            return {"state": "error", "result": None, "error": error, "fault": "GenericVmConfigFault"}
        self.lab.change(change)
        return {"state": "success", "result": None, "error": None, "fault": None}

    def ReconfigVM_Task(self, spec):
        self.lab.specs.append((self.vm_name, spec))
        if self.power != "poweredOff":
            self.lab.calls.append(("ReconfigVM_Task", self.vm_name))
            return {"state": "error", "result": None, "fault": "InvalidPowerState",
                    "error": "The attempted operation cannot be performed in the current state (Powered on)."}

        def change():
            removed = set(entry.device.key for entry in spec.deviceChange if entry.operation == "remove")
            self.devices = [device for device in self.devices if device.key not in removed]
            for entry in spec.deviceChange:
                if entry.operation == "add":
                    self.devices.append(vgpu_device(13000 + len(self.devices) + 10, entry.device.backing.vgpu))
            if spec.memoryReservationLockedToMax is not None:
                self.locked = spec.memoryReservationLockedToMax
            if spec.memoryAllocation is not None:
                self.reservation = spec.memoryAllocation.reservation
        return self._task("ReconfigVM_Task", change)

    def PowerOffVM_Task(self):
        return self._task("PowerOffVM_Task", lambda: setattr(self, "power", "poweredOff"))

    def PowerOnVM_Task(self):
        return self._task("PowerOnVM_Task", self.power_on)

    def power_on(self, user="gpuops"):
        self.power = "poweredOn"
        self.lab.events.append(SimpleNamespace(vm=self._moId, createdTime=self.lab.tick(), userName=user))

    def ShutdownGuest(self):
        self.lab.calls.append(("ShutdownGuest", self.vm_name))
        if self.guest_stops:
            self.lab.change(lambda: setattr(self, "power", "poweredOff"))

    def RelocateVM_Task(self, spec):
        self.lab.specs.append((self.vm_name, spec))
        return self._task("RelocateVM_Task", lambda: setattr(self, "host", spec.host))


class FakeVcenter:
    """Two hosts of one cluster offering ``PROFILES``, and the VMs added with ``vm()``.

    ``reads`` counts round trips by kind; ``calls`` lists (method, VM name) of every change sent, in order;
    ``batches`` the (task count, parallel) of every ``run_tasks``; ``failing`` maps (method, VM name) to an error.
    """

    def __init__(self):
        self.endpoint = "vcenter.test:443"
        self.folder = vim.Folder("group-v3")
        self.pool = vim.ResourcePool("resgroup-8")
        self.cluster = vim.ClusterComputeResource("domain-c7")
        self.host_items = dict(
            (moid, {"obj": vim.HostSystem(moid), "moid": moid, "name": name, "parent": self.cluster,
                    "config.sharedPassthruGpuTypes": list(PROFILES)})
            for moid, name in (("host-1", "esxi-01"), ("host-2", "esxi-02")))
        self.vms = []
        self.reads, self.calls, self.specs, self.batches = [], [], [], []
        self.failing = {}
        # Custom attributes (field definitions, values per VM moid), power-on events and vCenter's clock.
        self.fields, self.values, self.events = [], {}, []
        self.cluster_values = {}
        self.clock = datetime.datetime(2026, 11, 28, 9, 0, tzinfo=datetime.timezone.utc)
        # Every change goes through change(); kill_at=n raises Killed at the n-th, before it is made or (with
        # kill_after_change) once it is made and before its answer.
        self.changes, self.kill_at, self.kill_after_change = 0, None, False
        manager = SimpleNamespace(_moId="CustomFieldsManager", AddCustomFieldDef=self._add_field,
                                  SetField=self._set_field)
        self.content = SimpleNamespace(customFieldsManager=manager, about=SimpleNamespace(instanceUuid=VCENTER_UUID),
                                       eventManager=SimpleNamespace(QueryEvents=self._query_events),
                                       taskManager=SimpleNamespace(_moId="TaskManager"))
        self.si = SimpleNamespace(CurrentTime=self.tick)

    def tick(self):
        self.clock += datetime.timedelta(milliseconds=1)
        return self.clock

    def change(self, apply):
        self.changes += 1
        if self.changes == self.kill_at and not self.kill_after_change:
            raise Killed()
        apply()
        if self.changes == self.kill_at:
            raise Killed()

    def _add_field(self, name, moType):
        if any(field.name == name for field in self.fields):
            raise ApiError("A specified parameter was not correct", fault="DuplicateName")
        field = SimpleNamespace(key=100 + len(self.fields), name=name)
        self.change(lambda: self.fields.append(field))
        return field

    def _set_field(self, entity, key, value):
        self.change(lambda: entity.values.update({key: value}))

    def _query_events(self, filter):
        moid = filter.entity.entity._moId
        return [event for event in self.events if event.vm == moid and event.createdTime >= filter.time.beginTime]

    def lock(self, run_id, expires):
        """The cluster lock of ``cluster_lock`` held by ``run_id`` until ``expires`` (text, UTC)."""
        field = SimpleNamespace(key=100 + len(self.fields), name="gpuops.vgpu.lock.domain-c7")
        self.fields.append(field)
        self.cluster_values[field.key] = json.dumps({"run_id": run_id, "owner": "ops@ctl02", "controller": "ctl02",
                                                     "since": "2026-11-28T08:00:00Z", "expires": expires})

    def record(self, name):
        """The raw power record value of VM ``name`` ('' or None when it has none)."""
        vm = next(vm for vm in self.vms if vm.vm_name == name)
        field = next((field for field in self.fields if field.name == "gpuops.vgpu.vm_vgpu.power"), None)
        return vm.values.get(field.key) if field else None

    def vm(self, name, host="host-1", **state):
        vm = FakeVm(self, "vm-%d" % (len(self.vms) + 1), name, self.host_items[host]["obj"], **state)
        self.vms.append(vm)
        return vm

    def profiles(self, name):
        return sorted(device.backing.vgpu for device in next(vm for vm in self.vms if vm.vm_name == name).devices)

    # ---- the VCenterClient methods VgpuAssignment uses ----------------------------------------------------------

    def datacenter(self, name):
        self.reads.append("datacenter")
        if name != "lab-dc":
            raise NotFound("Datacenter '%s' was not found." % name)
        return vim.Datacenter("datacenter-2")

    def retrieve(self, specs, root=None):
        self.reads.append("retrieve")
        return {vim.VirtualMachine: [dict((key, value) for key, value in vm.item().items()
                                          if key in ("obj", "moid", "name", "config.uuid", "config.instanceUuid",
                                                     "parent", "customValue")) for vm in self.vms],
                vim.Folder: [{"obj": self.folder, "moid": "group-v3", "name": "gpu-vms", "parent": None}]}

    def retrieve_objects(self, objects, properties):
        self.reads.append("retrieve_objects")
        if objects and isinstance(objects[0], FakeVm):
            return [vm.item() for vm in objects]
        if objects and isinstance(objects[0], vim.HostSystem):
            return [dict(self.host_items[host._moId]) for host in objects]
        if objects and objects[0] is self.cluster:
            return [{"obj": self.cluster, "moid": "domain-c7", "resourcePool": self.pool, "customValue": [
                SimpleNamespace(key=key, value=value) for key, value in sorted(self.cluster_values.items())]}]
        if objects and objects[0] is self.content.customFieldsManager:
            return [{"obj": objects[0], "moid": "CustomFieldsManager", "field": list(self.fields)}]
        if objects and objects[0] is self.content.taskManager:
            return [{"obj": objects[0], "moid": "TaskManager", "recentTask": []}]
        return [{"obj": obj, "moid": obj._moId, "resourcePool": self.pool} for obj in objects]

    def hosts(self, properties, cluster=None, esxi_hostnames=None, datacenter=None):
        self.reads.append("hosts")
        by_name = dict((item["name"], dict(item)) for item in self.host_items.values())
        missing = [name for name in esxi_hostnames if name not in by_name]
        if missing:
            raise NotFound("ESXi host(s) not found: %s." % ", ".join(missing))
        return [by_name[name] for name in esxi_hostnames]

    def call(self, method, *args, **kwargs):
        return method(*args, **kwargs)

    def run_tasks(self, starters, parallel=8, timeout=3600):
        self.batches.append((len(starters), parallel))
        outcomes = []
        for starter in starters:
            try:
                outcomes.append(starter())
            except GpuopsError as err:
                outcomes.append({"state": "error", "result": None, "error": err.message, "fault": "ApiError"})
        return outcomes

    def wait_for_values(self, objects, path, wanted, timeout):
        assert path == "runtime.powerState"
        return [vm._moId for vm in objects if vm.power not in wanted]


def params(vms, **options):
    """vm_vgpu's options with their defaults."""
    values = dict(vms=vms, profile=None, state="present", datacenter=None, folder=None, power="never",
                  shutdown_timeout=300, hard_power_off=False, power_on=False, release_memory_reservation=False,
                  parallel=8, task_timeout=900, run_id="run-1", keep_powered_off=[],
                  me={"owner": "ops@ctl01", "controller": "ctl01", "pid": 4711})
    values.update(options)
    return values
