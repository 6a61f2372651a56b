# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vGPU profiles on many VMs in one go: find, validate, power down, reconfigure in parallel, power up, read back.

Round trips: a fixed number of reads whatever the number of VMs, then per VM that needs a change one
ReconfigVM_Task (plus its power operations), with tasks awaited together in batches of ``parallel``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _in_doubt
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _vm_vgpu_changes as vm_changes
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._vm_vgpu_recovery import Recovery
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients import _retry
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import (
    ApiError,
    ChangeInDoubt,
    GpuopsError,
    InputError,
    NotFound,
    TaskFailed,
)
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._cluster_lock import with_run_identity
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._inventory import VM_PROPERTIES, vgpu_devices
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._vmotion import relocate_starter

try:
    from pyVmomi import vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = None

FIND_PROPERTIES = ["name", "config.uuid", "config.instanceUuid", "parent", "customValue"]


def check_limits(params):
    """The counts and timeouts that must be positive, checked before connecting."""
    for option in ("parallel", "shutdown_timeout", "task_timeout"):
        if params[option] < 1:
            raise InputError("%s must be at least 1, got %s." % (option, params[option]))
    if params.get("run_id") is not None and not params["run_id"].strip():
        raise InputError("run_id is empty.", hint="Give a value that names this run, or leave it out.")


def vm_state(item, host_names):
    """The plain state ``_vm_vgpu_changes`` works on, from a ``VM_PROPERTIES`` read."""
    host = item.get("runtime.host")
    return {
        "host": host_names.get(host._moId) if host is not None else None,
        "vgpus": [{"key": device.key, "profile": device.backing.vgpu}
                  for device in vgpu_devices(item.get("config.hardware.device"))],
        "locked": bool(item.get("config.memoryReservationLockedToMax")),
        "reserved_mb": item.get("resourceConfig.memoryAllocation.reservation") or 0,
        "power_state": item.get("runtime.powerState"),
    }


def assign_vgpus(client, params, check_mode):
    """The ``vm_vgpu`` module: the limits checked before connecting, then one ``VgpuAssignment`` run under this
    run's identity (``with_run_identity``)."""
    check_limits(params)
    return VgpuAssignment(client, with_run_identity(params), check_mode).run()


class VgpuAssignment(Recovery):
    """One ``vm_vgpu`` run. ``run()`` returns the module result or raises a typed error."""

    def __init__(self, client, params, check_mode):
        self.client = client
        self.params = params
        self.check_mode = check_mode
        self.errors = {}
        self.start = []
        self.hosts = {}
        self.host_names = {}
        Recovery.__init__(self, client)

    # ---- reading and validating: nothing changes before all of this passed -----------------------------------

    def run(self):
        params = self.params
        requests = vm_changes.normalize_requests(params["vms"], params["profile"], params["state"])
        self.records.find_key()
        objects, found_records = self._find(requests)
        requests, objects, found = self._add_recorded(requests, objects, found_records)
        items = self.client.retrieve_objects(objects, VM_PROPERTIES + ["resourcePool"])
        self.hosts = self._read_hosts(requests, items)
        self.host_names = dict((moid, host["name"]) for moid, host in self.hosts.items())
        self._check_records(items, found)
        states = [vm_state(item, self.host_names) for item in items]
        self._validate_profiles(requests, items)
        changes = [vm_changes.vm_change(state, request, params["release_memory_reservation"])
                   if request is not None else None for state, request in zip(states, requests)]
        self._recover(items, states, changes, found)
        blocked = vm_changes.blocked_by_power(
            [triple for triple in zip(requests, states, changes) if triple[0] is not None], params["power"])
        if blocked:
            raise InputError("Nothing was changed: %d VM(s) need a vGPU change but cannot be powered off: %s."
                             % (len(blocked), "; ".join("%s %s" % pair for pair in blocked)),
                             hint="Power them off, or set power to shutdown_guest or power_off.")

        self.start = sorted(set(self.start) | set(
            index for index, (request, state) in enumerate(zip(requests, states))
            if request is not None and params["power_on"] and state["power_state"] != "poweredOn"))
        work = [index for index, change in enumerate(changes) if change is not None]
        touched = sorted(set(work) | set(self.start) | set(self.held))
        if touched and not self.check_mode:
            self._apply(work, objects, items, states, changes, requests)
            after_items = self.client.retrieve_objects([objects[index] for index in touched], VM_PROPERTIES)
            for index, item in zip(touched, after_items):
                items[index] = item
            self._clear_records(objects, items)
        return self._result(requests, items, states, changes)

    def _find(self, requests):
        """The requested VMs' objects, and ``[(obj, name, raw value)]`` of every VM in scope with a power record."""
        root = self.client.datacenter(self.params["datacenter"]) if self.params["datacenter"] else None
        found = self.client.retrieve({vim.VirtualMachine: FIND_PROPERTIES, vim.Folder: ["name", "parent"]}, root=root)
        vms = found[vim.VirtualMachine]
        if self.params["folder"]:
            vms = _in_folder(vms, found[vim.Folder], self.params["folder"])
        recorded = [(item["obj"], item.get("name"), value.value) for item in vms
                    for value in item.get("customValue") or []
                    if value.key == self.records.key and (getattr(value, "value", "") or "").strip()]
        index = {"name": {}, "uuid": {}, "moid": {}}
        for item in vms:
            index["name"].setdefault(item.get("name"), []).append(item["obj"])
            index["moid"].setdefault(item["moid"], []).append(item["obj"])
            for key in ("config.uuid", "config.instanceUuid"):
                if item.get(key):
                    index["uuid"].setdefault(item[key].lower(), []).append(item["obj"])
        objects, missing = [], []
        for request in requests:
            ident = request["ident"].lower() if request["kind"] == "uuid" else request["ident"]
            matches = index[request["kind"]].get(ident, [])
            if not matches:
                missing.append(request["label"])
            elif len(matches) > 1:
                raise InputError("%s matches %d VMs." % (request["label"], len(matches)),
                                 hint="Name it by uuid or moid, or narrow the search with datacenter or folder.")
            else:
                objects.append(matches[0])
        if missing:
            where = " in datacenter '%s'" % self.params["datacenter"] if self.params["datacenter"] else ""
            where += " in folder '%s'" % self.params["folder"] if self.params["folder"] else ""
            raise NotFound("Nothing was changed: VM(s) not found%s: %s." % (where, "; ".join(missing)),
                           hint="Check the names, uuids or moids in the vms option.")
        return objects, recorded

    def _read_hosts(self, requests, items):
        """The VMs' hosts and the requested target hosts, by moid, with name, profiles and compute resource."""
        current = dict((item["runtime.host"]._moId, item["runtime.host"]) for item in items if item.get("runtime.host"))
        found = dict((item["moid"], item) for item in self.client.retrieve_objects(
            list(current.values()), ["name", "config.sharedPassthruGpuTypes", "parent"]))
        targets = sorted(set(r["host"] for r in requests if r and r["host"]) - set(h["name"] for h in found.values()))
        if targets:
            for item in self.client.hosts(["config.sharedPassthruGpuTypes", "parent"], esxi_hostnames=targets,
                                          datacenter=self.params["datacenter"]):
                found[item["moid"]] = item
        return found

    def _host_named(self, name):
        return next(host for host in self.hosts.values() if host["name"] == name)

    def _validate_profiles(self, requests, items):
        supported = self._supported_profiles(items)
        problems = []
        for request, item in zip(requests, items):
            if request is None:
                continue
            place, profiles = supported[item["moid"]]
            if request["host"]:
                target = self._host_named(request["host"])
                place, profiles = "host %s" % target["name"], list(target.get("config.sharedPassthruGpuTypes") or [])
            unsupported = vm_changes.unsupported_profiles(request, profiles)
            if unsupported:
                problems.append("%s: %s not supported by %s (supported: %s)" % (
                    request["label"], ", ".join(unsupported), place, ", ".join(sorted(profiles)) or "none"))
        if problems:
            raise InputError("Nothing was changed: %s." % "; ".join(problems),
                             hint="Pick a profile the VM's host offers (gpuops.vgpu.gpu_info lists them).")

    def _supported_profiles(self, items):
        """Per VM moid: (where, profiles). Hosts are read in one call; a VM without a host asks its cluster."""
        supported = {}
        for item in items:
            host = item.get("runtime.host")
            if host is not None:
                host_item = self.hosts[host._moId]
                supported[item["moid"]] = ("host %s" % host_item.get("name"),
                                           list(host_item.get("config.sharedPassthruGpuTypes") or []))
            else:
                supported[item["moid"]] = self._cluster_profiles(item)
        return supported

    def _cluster_profiles(self, item):
        pool = item.get("resourcePool")
        owner = self.client.call(getattr, pool, "owner") if pool is not None else None
        if owner is None:
            return ("no host or cluster", [])
        target = self.client.call(owner.environmentBrowser.QueryConfigTarget)
        return ("cluster %s" % self.client.call(getattr, owner, "name"),
                [info.vgpu for info in getattr(target, "sharedGpuPassthroughTypes", None) or []])

    # ---- changing ---------------------------------------------------------------------------------------------

    def _apply(self, work, objects, items, states, changes, requests):
        # A running VM that only moves goes by vMotion and stays on; the others are off while they change.
        was_on = [index for index in work if states[index]["power_state"] == "poweredOn"
                  and vm_changes.needs_reconfigure(changes[index])]
        self._write_records(was_on, items, requests)
        powered_off = self._power_off(was_on, objects)
        moves = [index for index in work if changes[index]["move_to"] and index not in self.errors]
        if moves:
            outcomes = self._run([(objects[index], self._relocate_starter(objects[index], changes[index]["move_to"]))
                                  for index in moves])
            self._record(moves, outcomes, "move")
        ready = [index for index in work
                 if index not in self.errors and vm_changes.needs_reconfigure(changes[index])]
        outcomes = self._run([(objects[index], self._reconfigure_starter(objects[index], changes[index]))
                              for index in ready])
        self._record(ready, outcomes, "reconfigure")
        # A VM this run or an interrupted one took down goes back on even when its change failed.
        restore = set(powered_off) | set(index for index in self.start if index in self.held)
        power_on = sorted(restore | set(index for index in self.start if index not in self.errors))
        if power_on:
            outcomes = self._run([(objects[index], self._starter(objects[index].PowerOnVM_Task))
                                  for index in power_on])
            self._record(power_on, outcomes, "power on")

    def _run(self, jobs):
        return _in_doubt.run_tasks(self.client, jobs, self.params["parallel"], self.params["task_timeout"])

    def _power_off(self, indexes, objects):
        """Power the given VMs off per the power option; returns those now off. Failures go to ``self.errors``."""
        if not indexes:
            return []
        if self.params["power"] == "shutdown_guest":
            for index in indexes:
                try:
                    self._shutdown_guest(objects[index])
                except GpuopsError as err:
                    self.errors[index] = "guest shutdown: %s" % err.message
            asked = [index for index in indexes if index not in self.errors or self.params["hard_power_off"]]
            late = set(self.client.wait_for_values([objects[index] for index in asked], "runtime.powerState",
                                                   ["poweredOff"], self.params["shutdown_timeout"]))
            hard = [index for index in asked if objects[index]._moId in late]
            if hard and not self.params["hard_power_off"]:
                for index in hard:
                    self.errors[index] = ("the guest did not shut down within %s s (set hard_power_off to power it "
                                          "off)" % self.params["shutdown_timeout"])
                hard = []
            for index in hard:
                self.errors.pop(index, None)
        else:
            hard = list(indexes)
        if hard:
            outcomes = self._run([(objects[index], self._starter(objects[index].PowerOffVM_Task)) for index in hard])
            self._record(hard, outcomes, "power off")
        return [index for index in indexes if index not in self.errors]

    def _shutdown_guest(self, vm):
        """Asking a guest again to shut down does no harm, so a lost answer is asked again; a guest already off
        answers InvalidPowerState."""
        for attempt in range(_retry.ATTEMPTS):
            try:
                return self.client.call(vm.ShutdownGuest)
            except ChangeInDoubt:
                if attempt + 1 >= _retry.ATTEMPTS:
                    raise
            except ApiError as err:
                if attempt == 0 or err.details.get("fault") != "InvalidPowerState":
                    raise
                return None

    def _starter(self, method):
        return lambda: self.client.call(method)

    def _relocate_starter(self, vm, host_name):
        target = self._host_named(host_name)
        return relocate_starter(self.client, vm, target["obj"], pool=self._resource_pool(target))

    def _resource_pool(self, host):
        parent = host.get("parent")
        if parent is None:
            return None
        if "pool" not in host:
            host["pool"] = self.client.retrieve_objects([parent], ["resourcePool"])[0].get("resourcePool")
        return host["pool"]

    def _reconfigure_starter(self, vm, change):
        spec = config_spec(change)
        return lambda: self.client.call(vm.ReconfigVM_Task, spec=spec)

    def _record(self, indexes, outcomes, step):
        for index, outcome in zip(indexes, outcomes):
            if outcome["state"] != "success":
                message = "%s: %s" % (step, outcome["error"])
                self.errors[index] = "%s; %s" % (self.errors[index], message) if index in self.errors else message

    # ---- result -----------------------------------------------------------------------------------------------

    def _result(self, requests, items, states, changes):
        entries, diff_before, diff_after = [], {}, {}
        for index, (request, item, state, change) in enumerate(zip(requests, items, states, changes)):
            before = vm_changes.describe(state)
            wanted = vm_changes.predict(state, change, power_on=index in self.start)
            after = wanted if self.check_mode else vm_changes.describe(vm_state(item, self.host_names))
            changed = before != after or (self.check_mode and (change is not None or index in self.start))
            name = item.get("name") or request["ident"]
            entry = {"name": name, "moid": item["moid"], "changed": changed or index in self.held,
                     "before": before, "after": after, "error": self.errors.get(index)}
            if entry["error"]:
                entry["ended"] = _ended(before, after, wanted)
            entries.append(entry)
            if changed:
                diff_before[name], diff_after[name] = before, after
        results = entries[:len(self.params["vms"])]
        for recovered in self.recovered:
            entry = next(entry for entry in entries if entry["moid"] == recovered["moid"])
            recovered.update(before=entry["before"], after=entry["after"], error=entry["error"])
            recovered["summary"] = "%s: %s%s (powered off by run %s of %s at %s)" % (
                recovered["name"], recovered["ended"], ": %s" % recovered["why"] if recovered.get("why") else "",
                recovered["run"], recovered["by"], recovered["recorded_at"])
        outcome = {"changed": any(entry["changed"] for entry in entries), "vms": results,
                   "recovered": self.recovered, "diff": {"before": diff_before, "after": diff_after}}
        failed = [entry for entry in entries if entry["error"]]
        if failed:
            raise TaskFailed("vGPU changes failed on %d of %d VM(s): %s." % (
                len(failed), len(entries), "; ".join("%s (%s)" % (r["name"], r["error"]) for r in failed)),
                hint="The other VMs are as asked; each failed VM's entry in vms (or recovered) says how it ended.",
                **outcome)
        return outcome


def _ended(before, after, wanted):
    """How a VM that hit an error ended: as it was, as asked, or (only if vCenter half-applied) neither."""
    settled = dict(after, power_state=None)
    if settled == dict(before, power_state=None):
        return "as it was"
    if settled == dict(wanted, power_state=None):
        return "as asked"
    return "neither: see after"


def config_spec(change):
    """The ConfigSpec for one VM's change: removals and additions in one reconfigure, memory lock alongside."""
    device_changes = []
    for key in change["remove_keys"]:
        device_changes.append(vim.vm.device.VirtualDeviceSpec(
            operation="remove", device=vim.vm.device.VirtualPCIPassthrough(key=key)))
    for offset, profile in enumerate(change["add_profiles"]):
        device = vim.vm.device.VirtualPCIPassthrough(
            key=-100 - offset, backing=vim.vm.device.VirtualPCIPassthrough.VmiopBackingInfo(vgpu=profile))
        device_changes.append(vim.vm.device.VirtualDeviceSpec(operation="add", device=device))
    spec = vim.vm.ConfigSpec(deviceChange=device_changes)
    if change["lock_memory"] is not None:
        spec.memoryReservationLockedToMax = change["lock_memory"]
    if change["release_reservation"]:
        spec.memoryAllocation = vim.ResourceAllocationInfo(reservation=0)
    return spec


def _in_folder(vms, folders, path):
    """VMs whose parent folder is ``path`` (``a/b`` below a datacenter's VM folder, or a bare folder name)."""
    names = dict((item["moid"], item) for item in folders)
    wanted = [part for part in path.strip("/").split("/") if part]

    def chain(folder):
        parts = []
        while folder is not None and folder._moId in names:
            parts.insert(0, names[folder._moId].get("name"))
            folder = names[folder._moId].get("parent")
        return parts

    matched = [item for item in vms if item.get("parent") is not None
               and chain(item["parent"])[-len(wanted):] == wanted]
    if not matched:
        raise NotFound("No VM lives in folder '%s'." % path, hint="Give the folder path below the datacenter's VM folder.")
    return matched
