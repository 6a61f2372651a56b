# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whole GPUs for many VMs in one go: choose, validate, power down, reconfigure in parallel, power up, read back.

Round trips: one read of all VMs and one of their hosts, then per VM that changes one ReconfigVM_Task (plus its
power operations), awaited together in batches of ``parallel``, and one read after. Every refusal comes before the
first change. GPUs are given by the static backing (the PCI id on the VM's host), so each VM holds exactly the
GPUs chosen, and an NVLink set stays with one VM.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError, NotFound, TaskFailed
from ansible_collections.gpuops.vgpu.plugins.module_utils._pci import pci_bus_address
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._host_passthrough import nvidia_devices, vgpu_users

try:
    from pyVmomi import vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = None

VM_PROPERTIES = [
    "name", "config.hardware.device", "config.hardware.memoryMB", "config.memoryReservationLockedToMax",
    "resourceConfig.memoryAllocation.reservation", "config.firmware", "config.extraConfig", "runtime.powerState",
    "runtime.host",
]
HOST_PROPERTIES = ["name", "hardware.pciDevice", "config.pciPassthruInfo", "config.graphicsInfo",
                   "hardware.systemInfo.uuid"]
LARGE_BAR_GB = 16
MMIO, MMIO_SIZE = "pciPassthru.use64bitMMIO", "pciPassthru.64bitMMIOSizeGB"


def power_of_two(value):
    size = 1
    while size < value:
        size *= 2
    return size


def bar_gb(device_id):
    """A GPU's BAR1 in GB: its framebuffer rounded up to a power of two (docs/passthrough.md); None if unknown."""
    for facts in _catalog.gpu_models().values():
        if facts["pci_device_id"].lower() == device_id:
            return power_of_two((facts["framebuffer_mib"] + 1023) // 1024)
    return None


def mmio_size_gb(bars):
    """pciPassthru.64bitMMIOSizeGB for GPUs with these BAR1 sizes: their sum rounded up to a power of two."""
    return power_of_two(sum(bars))


def static_ids(devices):
    """PCI id -> device key of a VM's static-backed passthrough devices."""
    return dict((d.backing.id, d.key) for d in devices or []
                if isinstance(d, vim.vm.device.VirtualPCIPassthrough)
                and isinstance(d.backing, vim.vm.device.VirtualPCIPassthrough.DeviceBackingInfo))


def extra(item, key):
    for option in item.get("config.extraConfig") or []:
        if option.key == key:
            return str(option.value)
    return None


def nvlink_sets_from_smi(facts):
    """NVLink sets from a host's ``nvidia_smi_info`` facts: ``topology.nvlink_pairs`` (GPU indexes of ``topo -m``)
    joined into connected sets and named by the PCI ids of ``gpus`` (nvidia-smi's order is its index order)."""
    gpus = facts.get("gpus") or []
    pairs = (facts.get("topology") or {}).get("nvlink_pairs")
    if pairs is None:
        raise InputError("The nvidia-smi facts given for NVLink have no topology.",
                         hint="Run gpuops.vgpu.nvidia_smi_info on the host with gather including topology.")
    index = dict(("GPU%d" % i, pci_bus_address(gpu["pci_bus_id"])) for i, gpu in enumerate(gpus))
    groups = []
    for pair in pairs:
        if pair["a"] not in index or pair["b"] not in index:
            raise InputError("The nvidia-smi facts given for NVLink name %s and %s in topo -m but list %d GPU(s)."
                             % (pair["a"], pair["b"], len(gpus)), hint="Gather them again, with list and topology.")
        ends = set([index[pair["a"]], index[pair["b"]]])
        joined = [group for group in groups if group & ends]
        groups = [group for group in groups if not group & ends] + [ends.union(*joined)]
    return sorted(sorted(group) for group in groups)


def nvlink_source(params, host_name):
    """The host's NVLink sets and where they came from: its own nvidia-smi (through the host shell) first, else
    the inventory, else none."""
    facts = (params.get("host_nvidia_smi") or {}).get(host_name)
    if facts:
        return nvlink_sets_from_smi(facts), "host nvidia-smi"
    sets = (params.get("nvlink_sets") or {}).get(host_name)
    if sets:
        return sets, "inventory"
    return [], None


class HostPool:
    """A host's passthrough GPUs: which are enabled, which run vGPUs, which VMs hold which, the NVLink sets."""

    def __init__(self, item, vm_items, params):
        self.item = item
        self.name = item["name"]
        self.gpus = dict((pci_id, d) for pci_id, d in nvidia_devices(item).items() if d["kind"] == "gpu")
        info = dict((entry.id, entry) for entry in item.get("config.pciPassthruInfo") or [])
        self.enabled = set(pci_id for pci_id in self.gpus if pci_id in info and info[pci_id].passthruEnabled)
        self.vgpu = vgpu_users(item)
        self.held = {}
        for vm in vm_items:
            for pci_id in static_ids(vm.get("config.hardware.device")):
                self.held[pci_id] = vm["name"]
        sets, self.nvlink_source = nvlink_source(params, self.name)
        self.sets = [sorted(pci_bus_address(p) for p in group) for group in sets]

    def set_of(self, pci_id):
        return next((group for group in self.sets if pci_id in group), [pci_id])

    def free(self, vm_name, taken):
        return sorted(p for p in self.enabled if self.held.get(p) in (None, vm_name) and p not in taken
                      and p not in self.vgpu)


class VmRequest:
    """One VM's request resolved against its host: the GPUs it should hold and the spec to get there."""

    def __init__(self, entry, item, pool, params, taken):
        self.name, self.item, self.pool = entry["name"], item, pool
        self.current = static_ids(item.get("config.hardware.device"))
        state = entry.get("state") or params["state"]
        self.wanted = [] if state == "absent" else self._choose(entry, params, taken)
        taken.update(self.wanted)
        self.remove = [p for p in self.current if p not in self.wanted]
        self.add = [p for p in self.wanted if p not in self.current]
        self.settings = self._settings(params) if self.wanted else {}
        self.changed = bool(self.remove or self.add or self.settings)

    def _choose(self, entry, params, taken):
        pool = self.pool
        if entry.get("devices"):
            ids = [pci_bus_address(p) for p in entry["devices"]]
            for pci_id in ids:
                self._check_device(pci_id, taken)
        else:
            count = entry.get("gpus") or 0
            keep = sorted(self.current)[:count] if len(self.current) >= count else None
            free = pool.free(self.name, taken)
            if params["nvlink"]:
                ids = self._whole_sets(count, free)
            elif keep is not None and not any(p in taken for p in keep):
                ids = keep
            elif len(free) < count:
                raise InputError("Nothing was changed: %s asks for %d GPU(s); host %s has %d free for passthrough "
                                 "(%s)." % (self.name, count, pool.name, len(free), ", ".join(free) or "none"),
                                 hint="Free GPUs (host_passthrough, or power off the VMs holding them) or ask "
                                      "for fewer.")
            else:
                ids = (sorted(p for p in self.current if p in free) + [p for p in free if p not in self.current])[:count]
        if params["nvlink"]:
            half = [p for p in ids if any(q not in ids for q in pool.set_of(p))]
            if half:
                raise InputError("Nothing was changed: %s would get half an NVLink set (%s)." % (
                    self.name, ", ".join(half)), hint="NVLink sets on %s: %s." % (pool.name, self._sets(taken)))
        return sorted(ids)

    def _whole_sets(self, count, free):
        chosen = []
        for group in self.pool.sets:
            if len(chosen) < count and all(p in free or p in self.current for p in group):
                chosen.extend(group)
        if len(chosen) != count:
            raise InputError("Nothing was changed: %s asks for %d GPU(s) as whole NVLink sets; host %s cannot give "
                             "that." % (self.name, count, self.pool.name),
                             hint="NVLink sets on %s: %s." % (self.pool.name, self._sets(set())))
        return chosen

    def _sets(self, taken):
        pool = self.pool
        return "; ".join("%s (%s)" % ("+".join(group), "free" if all(
            p in pool.free(self.name, taken) for p in group) else "in use") for group in pool.sets) or "none known"

    def _check_device(self, pci_id, taken):
        pool = self.pool
        if pci_id not in pool.gpus:
            raise InputError("Nothing was changed: host %s of %s has no NVIDIA GPU %s." % (pool.name, self.name, pci_id),
                             hint="Its GPUs: %s." % ", ".join(sorted(pool.gpus)))
        if pci_id in pool.vgpu:
            raise InputError("Nothing was changed: GPU %s of host %s runs vGPUs (%s); %s cannot have it." % (
                pci_id, pool.name, ", ".join(pool.vgpu[pci_id]), self.name))
        if pci_id not in pool.enabled:
            raise InputError("Nothing was changed: GPU %s of host %s is not enabled for passthrough." % (
                pci_id, pool.name), hint="Enable it with gpuops.vgpu.host_passthrough first.")
        holder = pool.held.get(pci_id)
        if pci_id in taken or holder not in (None, self.name):
            raise InputError("Nothing was changed: GPU %s of host %s is asked for %s and already given to %s." % (
                pci_id, pool.name, self.name, holder or "another VM of this request"),
                hint="Give each GPU to one VM.")

    def _settings(self, params):
        """Memory reservation and 64-bit MMIO the wanted GPUs need; refusals where the option forbids them."""
        item, settings = self.item, {}
        memory = item.get("config.hardware.memoryMB") or 0
        if not item.get("config.memoryReservationLockedToMax") and (
                item.get("resourceConfig.memoryAllocation.reservation") or 0) < memory:
            if not params["reserve_memory"]:
                raise InputError("Nothing was changed: %s reserves %s of %s MB; passthrough needs all of it and "
                                 "reserve_memory is false." % (self.name, item.get(
                                     "resourceConfig.memoryAllocation.reservation") or 0, memory),
                                 hint="Set reserve_memory to true or reserve the VM's memory.")
            settings["memoryReservationLockedToMax"] = True
        bars = [bar_gb(self.pool.gpus[p]["device_id"]) for p in self.wanted]
        if None in bars:
            raise InputError("Nothing was changed: the catalog does not know the BAR size of a GPU for %s." % self.name)
        if sum(bars) > LARGE_BAR_GB:
            if item.get("config.firmware") != "efi":
                raise InputError("Nothing was changed: %s boots with %s firmware; its GPUs map %d GB of BARs, which "
                                 "needs EFI." % (self.name, item.get("config.firmware"), sum(bars)),
                                 hint="Use a VM with EFI firmware (changing the firmware of an installed guest "
                                      "breaks its boot).")
            size = mmio_size_gb(bars)
            if (extra(item, MMIO) or "").upper() != "TRUE":
                settings[MMIO] = "TRUE"
            current = extra(item, MMIO_SIZE)
            if not current or not current.isdigit() or int(current) < size:
                settings[MMIO_SIZE] = str(size)
        return settings

    def spec(self):
        host = self.pool.item
        changes = [vim.vm.device.VirtualDeviceSpec(
            operation="remove", device=vim.vm.device.VirtualPCIPassthrough(key=self.current[p])) for p in self.remove]
        for position, pci_id in enumerate(self.add):
            gpu = self.pool.gpus[pci_id]
            backing = vim.vm.device.VirtualPCIPassthrough.DeviceBackingInfo(
                id=pci_id, deviceId=gpu["device_id"][2:], vendorId=0x10DE, deviceName=gpu["device_name"],
                systemId=host.get("hardware.systemInfo.uuid") or "")
            changes.append(vim.vm.device.VirtualDeviceSpec(operation="add", device=vim.vm.device.VirtualPCIPassthrough(
                key=-(position + 1), backing=backing)))
        spec = vim.vm.ConfigSpec(deviceChange=changes)
        if self.settings.get("memoryReservationLockedToMax"):
            spec.memoryReservationLockedToMax = True
        spec.extraConfig = [vim.option.OptionValue(key=k, value=v) for k, v in self.settings.items() if k != (
            "memoryReservationLockedToMax")]
        return spec


def describe(item):
    return {"gpus": sorted(static_ids(item.get("config.hardware.device"))),
            "power_state": item.get("runtime.powerState")}


def assign_passthrough(client, params, check_mode):
    """The ``vm_passthrough`` module: one ``PassthroughAssignment`` run."""
    return PassthroughAssignment(client, params, check_mode).run()


class PassthroughAssignment:
    """One ``vm_passthrough`` run. ``run()`` returns the module result or raises a typed error."""

    def __init__(self, client, params, check_mode):
        self.client, self.params, self.check_mode = client, params, check_mode

    def run(self):
        params = self.params
        names = [entry["name"] for entry in params["vms"]]
        if len(set(names)) != len(names):
            raise InputError("A VM appears more than once in vms.", hint="Give one entry per VM.")
        all_vms = self.client.retrieve({vim.VirtualMachine: VM_PROPERTIES})[vim.VirtualMachine]
        by_name = dict((item["name"], item) for item in all_vms)
        missing = [name for name in names if name not in by_name]
        if missing:
            raise NotFound("Nothing was changed: VM(s) not found: %s." % ", ".join(missing))
        items = [by_name[name] for name in names]
        host_refs = dict((item["runtime.host"]._moId, item["runtime.host"]) for item in items)
        hosts = dict((h["moid"], h) for h in self.client.retrieve_objects(list(host_refs.values()), HOST_PROPERTIES))
        pools, taken, requests = {}, set(), []
        for entry, item in zip(params["vms"], items):
            moid = item["runtime.host"]._moId
            if moid not in pools:
                host_vms = [vm for vm in all_vms if vm.get("runtime.host") is not None
                            and vm["runtime.host"]._moId == moid]
                pools[moid] = HostPool(hosts[moid], host_vms, params)
            requests.append(VmRequest(entry, item, pools[moid], params, taken))
        work = [r for r in requests if r.changed]
        blocked = [r.name for r in work if r.item["runtime.powerState"] != "poweredOff" and params["power"] == "never"]
        if blocked:
            raise InputError("Nothing was changed: powered-on VM(s) need a passthrough change and power is never: "
                             "%s." % ", ".join(blocked), hint="Power them off, or set power to power_off.")
        if work and not self.check_mode:
            self._apply(work)
        return self._result(requests, work)

    def _apply(self, work):
        def run(starters):
            return self.client.run_tasks(starters, parallel=self.params["parallel"], timeout=self.params["task_timeout"])

        running = [r for r in work if r.item["runtime.powerState"] == "poweredOn"]
        errors = {}
        self._record(errors, running, run([self._starter(r.item["obj"].PowerOffVM_Task) for r in running]), "power off")
        ready = [r for r in work if r.name not in errors]
        self._record(errors, ready, run([self._reconfigure(r) for r in ready]), "reconfigure")
        start = [r for r in ready if r.name not in errors and r.wanted and (
            self.params["power_on"] or r in running)]
        self._record(errors, start, run([self._starter(r.item["obj"].PowerOnVM_Task) for r in start]), "power on")
        self.errors = errors

    def _starter(self, method):
        return lambda: self.client.call(method)

    def _reconfigure(self, request):
        spec = request.spec()
        return lambda: self.client.call(request.item["obj"].ReconfigVM_Task, spec=spec)

    @staticmethod
    def _record(errors, requests, outcomes, step):
        for request, outcome in zip(requests, outcomes):
            if outcome["state"] != "success":
                errors[request.name] = "%s: %s" % (step, outcome["error"])

    def _result(self, requests, work):
        after = {}
        if work and not self.check_mode:
            for item in self.client.retrieve_objects([r.item["obj"] for r in work], VM_PROPERTIES):
                after[item["name"]] = describe(item)
        errors = getattr(self, "errors", {})
        vms = []
        for r in requests:
            before = describe(r.item)
            predicted = dict(before, gpus=r.wanted)
            vms.append({"name": r.name, "host": r.pool.name, "changed": r in work, "before": before,
                        "after": after.get(r.name, predicted), "settings": r.settings,
                        "nvlink_sets_source": r.pool.nvlink_source, "error": errors.get(r.name)})
        outcome = {"changed": bool(work), "vms": vms}
        if errors:
            raise TaskFailed("Passthrough changes failed on %d VM(s): %s." % (len(errors), "; ".join(
                "%s (%s)" % pair for pair in sorted(errors.items()))), **outcome)
        return outcome
