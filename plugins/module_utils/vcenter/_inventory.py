# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU inventory of vCenter hosts: what ``gpu_info`` returns and what the other vCenter modules build on.

Reading costs few round trips: one PropertyCollector call for the inventory tree and the hosts' graphics data, one
for the VMs that run or were asked about (plus one for VM names when VMs are asked about by name, which also reads
the VMs' power records when they are asked for, after one read of the custom field definitions), whatever their
number, and one QueryConfigTarget per cluster (or standalone host) for vCenter's own profile facts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _vm_power_records as _power_records
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError, NotFound

try:
    from pyVmomi import vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = None

NVIDIA_VENDOR_ID = 0x10DE

HOST_PROPERTIES = [
    "name", "parent", "runtime.connectionState", "runtime.inMaintenanceMode", "hardware.pciDevice",
    "config.graphicsInfo", "config.graphicsConfig", "config.sharedPassthruGpuTypes", "config.pciPassthruInfo", "vm",
]
VM_PROPERTIES = [
    "name", "config.uuid", "config.instanceUuid", "config.hardware.device", "config.hardware.memoryMB",
    "config.memoryReservationLockedToMax", "resourceConfig.memoryAllocation.reservation", "runtime.powerState",
    "runtime.host",
]


def gpu_info(client, params, check_mode):
    """The ``gpu_info`` module: ``read_inventory`` with its options."""
    return read_inventory(client, cluster=params["cluster"], esxi_hostnames=params["esxi_hostnames"],
                          datacenter=params["datacenter"], vm_names=params["vms"],
                          power_records=params["power_records"])


def read_inventory(client, cluster=None, esxi_hostnames=None, datacenter=None, vm_names=None, power_records=False):
    """Hosts (with GPUs and profiles) selected by cluster / names / all, the requested VMs, and with
    ``power_records`` the vm_vgpu power records of the VMs on those hosts or on none.

    Returns ``{"hosts": [...], "vms": [...]}`` (and ``power_records``) shaped as documented in the ``gpu_info``
    module.
    """
    hosts = client.hosts(HOST_PROPERTIES, cluster=cluster, esxi_hostnames=esxi_hostnames, datacenter=datacenter,
                         compute_properties=["environmentBrowser"])
    host_names = dict((item["moid"], item["name"]) for item in hosts)
    # No record field in vCenter means no VM carries a record: then the VMs' custom values need no reading.
    records = _power_records.PowerRecords(client) if power_records else None
    scan = records is not None and records.find_key() is not None
    wanted_vms, recorded = [], []
    if vm_names or scan:
        names = client.retrieve({vim.VirtualMachine: ["name"] + (["customValue", "runtime.host"] if scan else []),
                                 vim.HostSystem: ["name"]})
        wanted_vms = _named_vms(names[vim.VirtualMachine], vm_names) if vm_names else []
        if scan:
            in_scope = [item for item in names[vim.VirtualMachine]
                        if item.get("runtime.host") is None or item["runtime.host"]._moId in host_names]
            recorded = _power_records.listed(records, in_scope, dict(
                (item["moid"], item["name"]) for item in names[vim.HostSystem]))
        host_names.update((item["moid"], item["name"]) for item in names[vim.HostSystem])
    running = {}
    for host in hosts:
        for info in host.get("config.graphicsInfo") or []:
            for vm in info.vm or []:
                running[vm._moId] = vm
    # The VMs of hosts with a GPU in passthrough: which of them holds each GPU (static backing by PCI id).
    for host in hosts:
        if _passthru_enabled(host):
            running.update((vm._moId, vm) for vm in host.get("vm") or [])
    vm_objects = list(dict((vm._moId, vm) for vm in list(running.values()) + wanted_vms).values())
    vm_items = {}
    if vm_objects:
        vm_items = dict((item["moid"], item) for item in client.retrieve_objects(vm_objects, VM_PROPERTIES))

    facts = vcenter_profile_facts(client, hosts)
    result_hosts = [describe_host(host, vm_items, facts) for host in hosts]
    result_vms = [describe_vm(vm_items[vm._moId], host_names) for vm in wanted_vms]
    result = {"hosts": result_hosts, "vms": result_vms}
    if power_records:
        result["power_records"] = recorded
    return result


def vcenter_profile_facts(client, hosts):
    """``{profile: facts}`` as vCenter states them in ``ConfigTarget.vgpuProfileInfo`` (API 7.0.3 and later): one
    QueryConfigTarget per compute resource of ``hosts``. Older vCenters answer no such list: nothing is added then
    and the catalog stands in."""
    facts = {}
    asked = set()
    for host in hosts:
        owner = host.get("compute_resource")
        browser = owner.get("environmentBrowser") if owner else None
        if browser is None or owner["moid"] in asked:
            continue
        asked.add(owner["moid"])
        target = client.call(browser.QueryConfigTarget)
        for info in getattr(target, "vgpuProfileInfo", None) or []:
            facts[info.profileName] = {"framebuffer_mib": info.fbSizeInGib * 1024, "sharing": info.profileSharing,
                                       "profile_class": info.profileClass,
                                       "stun_time_estimates": stun_time_estimates(info)}
    return facts


def stun_time_estimates(info):
    """vCenter's vMotion stun time estimates for a profile (``VirtualMachineVgpuProfileInfo.stunTimeEstimates``,
    API 8.0.2 and later, for C- and Q-series profiles): ``[{migration_bw_mbps, stun_time_s}]``, empty when vCenter
    states none."""
    return [{"migration_bw_mbps": estimate.migrationBW, "stun_time_s": estimate.stunTime}
            for estimate in getattr(info, "stunTimeEstimates", None) or []]


def _named_vms(vms, names):
    by_name = {}
    for item in vms:
        by_name.setdefault(item["name"], []).append(item["obj"])
    missing = [name for name in names if name not in by_name]
    if missing:
        raise NotFound("VM(s) not found: %s." % ", ".join(missing), hint="Check the names in the vms option.")
    ambiguous = [name for name in names if len(by_name[name]) > 1]
    if ambiguous:
        raise InputError("VM name(s) carried by several VMs: %s." % ", ".join(ambiguous),
                         hint="Name them by uuid or moid in modules that accept it.")
    return [by_name[name][0] for name in names]


def vgpu_devices(devices):
    """The vGPU devices among a VM's ``config.hardware.device`` list."""
    return [device for device in devices or []
            if isinstance(device, vim.vm.device.VirtualPCIPassthrough)
            and isinstance(device.backing, vim.vm.device.VirtualPCIPassthrough.VmiopBackingInfo)]


def describe_vm(item, host_names):
    """A VM's vGPU-relevant state from a ``VM_PROPERTIES`` read."""
    host = item.get("runtime.host")
    memory_mb = item.get("config.hardware.memoryMB")
    reservation = item.get("resourceConfig.memoryAllocation.reservation")
    return {
        "name": item.get("name"),
        "moid": item["moid"],
        "uuid": item.get("config.uuid"),
        "instance_uuid": item.get("config.instanceUuid"),
        "power_state": item.get("runtime.powerState"),
        "host": host_names.get(host._moId) if host is not None else None,
        "memory_mb": memory_mb,
        "memory_reservation_mb": reservation,
        "memory_reservation_locked_to_max": bool(item.get("config.memoryReservationLockedToMax")),
        "memory_fully_reserved": bool(item.get("config.memoryReservationLockedToMax"))
        or (memory_mb is not None and reservation == memory_mb),
        "vgpus": [{"key": device.key, "profile": device.backing.vgpu}
                  for device in vgpu_devices(item.get("config.hardware.device"))],
    }


def _passthru_enabled(host):
    """PCI id -> (passthruEnabled, passthruActive) of the host's devices enabled for passthrough."""
    return dict((info.id, (bool(info.passthruEnabled), bool(info.passthruActive)))
                for info in host.get("config.pciPassthruInfo") or [] if info.passthruEnabled or info.passthruActive)


def _passthrough_holders(host, vm_items):
    """PCI id -> the VM of this host whose static passthrough device names it (name, power state)."""
    holders = {}
    for vm in host.get("vm") or []:
        item = vm_items.get(vm._moId) or {}
        for device in item.get("config.hardware.device") or []:
            if isinstance(device, vim.vm.device.VirtualPCIPassthrough) and isinstance(
                    device.backing, vim.vm.device.VirtualPCIPassthrough.DeviceBackingInfo):
                holders[device.backing.id] = {"vm": item.get("name"), "power_state": item.get("runtime.powerState")}
    return holders


def describe_host(host, vm_items, vcenter_facts=None):
    pci_by_id = dict((dev.id, dev) for dev in host.get("hardware.pciDevice") or [])
    passthru = _passthru_enabled(host)
    holders = _passthrough_holders(host, vm_items) if passthru else {}
    config = host.get("config.graphicsConfig")
    configured = _configured_types(config)
    gpus = []
    for info in host.get("config.graphicsInfo") or []:
        pci = pci_by_id.get(info.pciId)
        if pci is not None and (pci.vendorId & 0xFFFF) != NVIDIA_VENDOR_ID:
            continue
        gpu = _describe_gpu(info, pci, configured, config, vm_items)
        enabled, active = passthru.get(info.pciId, (False, False))
        holder = holders.get(info.pciId) or {}
        gpu["passthrough"] = {"enabled": enabled, "active": active, "vm": holder.get("vm"),
                              "vm_power_state": holder.get("power_state")}
        gpus.append(gpu)
    supported = list(host.get("config.sharedPassthruGpuTypes") or [])
    return {
        "name": host["name"],
        "moid": host["moid"],
        "cluster": host["cluster"],
        "datacenter": host["datacenter"],
        "connection_state": host.get("runtime.connectionState"),
        "maintenance_mode": bool(host.get("runtime.inMaintenanceMode")),
        "graphics_config": describe_graphics_config(config),
        "gpus": gpus,
        "supported_profiles": _profile_capacity(supported, gpus, vcenter_facts or {}),
    }


def _configured_types(config):
    types = {}
    for entry in (config.deviceType if config is not None else None) or []:
        types[entry.deviceId] = entry
    return types


def describe_graphics_config(config):
    """A HostGraphicsConfig as plain data; None when vCenter has none for the host."""
    if config is None:
        return None
    return {
        "default_graphics_type": config.hostDefaultGraphicsType,
        "assignment_policy": config.sharedPassthruAssignmentPolicy,
        "devices": [{"pci_id": entry.deviceId, "graphics_type": entry.graphicsType,
                     "vgpu_mode": getattr(entry, "vgpuMode", None) or None}
                    for entry in config.deviceType or []],
    }


def _describe_gpu(info, pci, configured, config, vm_items):
    model = _catalog.model_for_device(device_name=info.deviceName,
                                      pci_device_id=(pci.deviceId & 0xFFFF) if pci is not None else None)
    entry = configured.get(info.pciId)
    configured_type = entry.graphicsType if entry is not None else (config.hostDefaultGraphicsType if config else None)
    slots = {}
    vm_names = []
    for vm in info.vm or []:
        item = vm_items.get(vm._moId, {})
        vm_names.append(item.get("name", vm._moId))
        for device in vgpu_devices(item.get("config.hardware.device")):
            slots[device.backing.vgpu] = slots.get(device.backing.vgpu, 0) + 1
    profiles = sorted(slots)
    profile = profiles[0] if len(profiles) == 1 else None
    vgpu_mode = getattr(info, "vgpuMode", None) or None
    max_slots = _max_per_gpu(profile, vgpu_mode) if profile else None
    used = sum(slots.values())
    return {
        "pci_id": info.pciId,
        "device_name": info.deviceName,
        "vendor": info.vendorName,
        "model": model,
        "memory_mib": int(info.memorySizeInKB // 1024) if info.memorySizeInKB else None,
        "graphics_type": info.graphicsType,
        "configured_graphics_type": configured_type,
        "xorg_restart_pending": configured_type is not None and info.graphicsType != configured_type,
        "vgpu_mode": vgpu_mode,
        "profile": profile,
        "profiles": profiles,
        "vms": sorted(vm_names),
        "used": used,
        "max": max_slots,
        "free": (max_slots - used) if max_slots is not None else None,
    }


def _max_per_gpu(profile_name, vgpu_mode=None):
    """The most vGPUs of a profile one GPU runs: in mixed-size mode the number of its placement IDs."""
    try:
        facts = _catalog.parse_profile(profile_name)
    except InputError:
        return None
    if vgpu_mode == "mixedSize":
        return facts["mixed_size_max"] or 0
    return facts.get("max_per_gpu")


def _profile_capacity(supported, gpus, vcenter_facts):
    """Per supported profile: its facts (vCenter's where it states them, else the catalog's), how many vGPUs of it
    the host could hold and can take now. A GPU in mixed-size mode that runs vGPUs counts as taking none: vCenter
    does not report at which placement IDs they run."""
    result = []
    for name in supported:
        facts = _profile_facts(name)
        stated = vcenter_facts.get(name)
        matching = [gpu for gpu in gpus if _gpu_takes(gpu, facts)]
        per_gpu = facts.get("max_per_gpu")
        free = None
        if per_gpu is not None:
            free = 0
            for gpu in matching:
                if gpu["graphics_type"] != "sharedDirect":
                    continue
                mixed = gpu["vgpu_mode"] == "mixedSize"
                if not gpu["profiles"]:
                    free += (facts.get("mixed_size_max") or 0) if mixed else per_gpu
                elif gpu["profile"] == name and not mixed:
                    free += per_gpu - gpu["used"]
        result.append({
            "name": name,
            "framebuffer_mib": (stated or facts).get("framebuffer_mib"),
            "sharing": (stated or facts).get("sharing"),
            "profile_class": (stated or facts).get("profile_class"),
            "facts_source": "vcenter" if stated else ("catalog" if facts.get("known") else None),
            "series": facts.get("series"),
            "cuda": facts.get("cuda"),
            "max_per_gpu": per_gpu,
            "mixed_size_max": facts.get("mixed_size_max"),
            "gpus": len(matching),
            "capacity": per_gpu * len(matching) if per_gpu is not None else None,
            "free": free,
            "known": facts.get("known", False),
        })
    return result


def _profile_facts(name):
    try:
        return _catalog.parse_profile(name)
    except InputError:
        return {"name": name, "known": False}


def _gpu_takes(gpu, facts):
    if facts.get("model") and gpu["model"]:
        return facts["model"] == gpu["model"]
    return True
