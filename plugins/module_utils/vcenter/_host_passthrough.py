# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host DirectPath I/O: passthrough on or off for the NVIDIA GPUs (and NVSwitches) of ESXi hosts.

Every selected host is read in one PropertyCollector call; each host that changes gets one UpdatePassthruConfig
call naming all its devices, and one read after. ``applyNow`` is left unset, so vSphere applies the change at once
where the device can be rebound without a reboot and otherwise at the next reboot (HostPciPassthruConfig, vSphere
API 7.0.2 and later); a device whose ``passthruActive`` differs from ``passthruEnabled`` afterwards waits for a
reboot, and the result says so per host. A host that cannot rebind (``capability.deviceRebindWithoutRebootSupported``
not true) is predicted to wait. With ``reboot``, those hosts are rebooted through ``_host_reboot`` after the change
(maintenance mode in and out); hosts whose VMs would keep them from maintenance mode are refused before any change.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError, InputError, TaskFailed
from ansible_collections.gpuops.vgpu.plugins.module_utils._pci import pci_bus_address
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _host_maintenance, _host_reboot
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._cluster_lock import with_run_identity
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._maintenance_records import MaintenanceRecords
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._inventory import NVIDIA_VENDOR_ID

try:
    from pyVmomi import vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = None

HOST_PROPERTIES = [
    "runtime.connectionState", "hardware.pciDevice", "config.pciPassthruInfo", "config.graphicsInfo",
    "configManager.pciPassthruSystem", "capability.deviceRebindWithoutRebootSupported",
] + [name for name in _host_reboot.HOST_PROPERTIES if name != "runtime.connectionState"] + ["customValue"]
# Who the maintenance records of the reboots name (_maintenance_records).
OWNER = "host_passthrough"
MAINTENANCE_TIMEOUT = 1800  # seconds per host to enter or exit maintenance mode around a reboot
PCI_CLASS_3D, PCI_CLASS_VGA, PCI_CLASS_OTHER_BRIDGE = 0x0302, 0x0300, 0x0680


def nvidia_devices(item):
    """The host's NVIDIA GPUs and NVSwitches (an NVSwitch is a PCI bridge of class 0x0680), by PCI id."""
    devices = {}
    for dev in item.get("hardware.pciDevice") or []:
        if dev.vendorId & 0xFFFF != NVIDIA_VENDOR_ID:
            continue
        klass = dev.classId & 0xFFFF
        kind = "gpu" if klass in (PCI_CLASS_3D, PCI_CLASS_VGA) else "nvswitch" if klass == PCI_CLASS_OTHER_BRIDGE else None
        if kind:
            devices[dev.id] = {"pci_id": dev.id, "kind": kind, "device_name": dev.deviceName,
                               "device_id": "0x%04x" % (dev.deviceId & 0xFFFF)}
    return devices


def _model_device_ids(model):
    """PCI device ids a model name stands for: a catalog model (A100-40) or part of the device name."""
    facts = _catalog.gpu_models().get(model)
    return set([facts["pci_device_id"].lower()]) if facts else set()


def vgpu_users(item):
    """GPU PCI id -> ids of the VMs running vGPUs on it (HostGraphicsInfo.vm), for GPUs with any."""
    users = {}
    for info in item.get("config.graphicsInfo") or []:
        if info.vm:
            users[info.pciId] = [vm._moId for vm in info.vm]
    return users


def select_devices(item, params):
    """The PCI ids the request names on this host; unknown ids and models fail naming what the host has."""
    devices = nvidia_devices(item)
    listing = ", ".join("%s (%s)" % (d["pci_id"], d["device_name"]) for d in devices.values()) or "none"
    chosen = []
    for pci_id in params.get("devices") or []:
        found = pci_bus_address(pci_id)
        if found not in devices:
            raise InputError("Host %s has no NVIDIA GPU or NVSwitch with PCI id %s." % (item["name"], pci_id),
                             hint="Its NVIDIA devices: %s." % listing)
        chosen.append(found)
    for model in params.get("models") or []:
        ids = _model_device_ids(model)
        matched = [d["pci_id"] for d in devices.values() if d["kind"] == "gpu" and (
            d["device_id"] in ids or model.lower() in (d["device_name"] or "").lower())]
        if not matched:
            raise InputError("Host %s has no GPU of model %s." % (item["name"], model),
                             hint="Its NVIDIA devices: %s." % listing)
        chosen.extend(matched)
    if params.get("all_gpus_not_used_for_vgpu"):
        shared = set(info.pciId for info in item.get("config.graphicsInfo") or []
                     if info.graphicsType == "sharedDirect" or info.vm)
        chosen.extend(d["pci_id"] for d in devices.values() if d["pci_id"] not in shared)
    if params.get("include_nvswitches") and chosen:
        chosen.extend(d["pci_id"] for d in devices.values() if d["kind"] == "nvswitch")
    return sorted(set(chosen))


def describe_passthru(item, ids):
    info = dict((entry.id, entry) for entry in item.get("config.pciPassthruInfo") or [])
    names = nvidia_devices(item)
    return [{
        "pci_id": pci_id,
        "kind": names[pci_id]["kind"],
        "device_name": names[pci_id]["device_name"],
        "passthru_capable": bool(info[pci_id].passthruCapable) if pci_id in info else False,
        "passthru_enabled": bool(info[pci_id].passthruEnabled) if pci_id in info else False,
        "passthru_active": bool(info[pci_id].passthruActive) if pci_id in info else False,
    } for pci_id in ids]


class HostPassthrough:
    """One host: the devices asked for, their state before, and what changes."""

    def __init__(self, item, params):
        self.item = item
        self.name = item["name"]
        self.enable = params["state"] == "enabled"
        self.ids = select_devices(item, params)
        self.before = describe_passthru(item, self.ids)
        self.changing = [d["pci_id"] for d in self.before if d["passthru_enabled"] != self.enable]
        self.rebinds = item.get("capability.deviceRebindWithoutRebootSupported") is True
        self.rebooted = False
        self.left_in_maintenance = False  # put there for a reboot by a run that stopped (its record says so)
        self.taken_out = False

    def check(self):
        """Refusals before any change: NVSwitch boards, devices that cannot be passed through, GPUs running vGPUs."""
        switches = sorted(d["pci_id"] for d in nvidia_devices(self.item).values() if d["kind"] == "nvswitch")
        if self.enable and self.changing and switches:
            # NVIDIA AI Enterprise, vGPU features, "NVIDIA NVSwitch Limitations": "GPU passthrough is not supported on
            # NVIDIA Systems that include NVSwitch when using VMware vSphere."
            raise InputError("Host %s has an NVSwitch board (NVSwitches %s): NVIDIA does not support GPU passthrough "
                             "on systems with NVSwitch under VMware vSphere; no device was changed."
                             % (self.name, ", ".join(switches)),
                             hint="Give its GPUs to VMs as full-size time-sliced C-series vGPUs with vm_vgpu (all "
                                  "GPUs of one job in one VM; the fabric manager runs on the host; ESXi 8.0 U2 for "
                                  "Hopper, 8.0 U1 for Ampere), or leave the host out.")
        incapable = [d["pci_id"] for d in self.before if not d["passthru_capable"]]
        if incapable:
            raise InputError("Host %s: device(s) %s cannot be passed through (passthruCapable is false)."
                             % (self.name, ", ".join(incapable)),
                             hint="Check that VT-d/IOMMU is on in the host's BIOS and leave these devices out.")
        users = vgpu_users(self.item)
        busy = ["%s (vGPU VMs: %s)" % (pci_id, ", ".join(users[pci_id])) for pci_id in self.changing
                if pci_id in users and self.enable]
        if busy:
            raise InputError("Host %s: GPU(s) running vGPUs cannot switch to passthrough: %s."
                             % (self.name, "; ".join(busy)),
                             hint="Power those VMs off or move them, set the GPUs' graphics type to basic/shared "
                                  "with host_graphics, then run again.")

    def predicted(self, rebooting=False):
        state = [dict(d, passthru_enabled=self.enable,
                      passthru_active=self.enable if self.rebinds else d["passthru_active"])
                 if d["pci_id"] in self.changing else d for d in self.before]
        if rebooting and self.needs_reboot():
            state = [dict(d, passthru_active=d["passthru_enabled"]) for d in state]
        return state

    def needs_reboot(self):
        """Whether some selected device waits for a reboot once the change is made."""
        return any(d["passthru_enabled"] != d["passthru_active"] for d in self.predicted())

    def apply(self, client):
        config = [vim.host.PciPassthruConfig(id=pci_id, passthruEnabled=self.enable) for pci_id in self.changing]
        system = self.item["configManager.pciPassthruSystem"]
        client.call(system.UpdatePassthruConfig, config=config)


def _result(host, after):
    pending = [d["pci_id"] for d in after if d["passthru_enabled"] != d["passthru_active"]]
    return {
        "name": host.name,
        "changed": bool(host.changing) or host.rebooted or host.taken_out,
        "rebooted": host.rebooted,
        "devices": after,
        "changed_devices": host.changing,
        "reboot_required": bool(pending),
        "reboot_pending_devices": pending,
        "left_maintenance": host.taken_out,
    }


def configure(client, params, check_mode):
    """The ``host_passthrough`` module: passthrough on or off for the selected devices of every selected host;
    returns the result dict (``changed``, ``hosts``)."""
    items = client.hosts(HOST_PROPERTIES, cluster=params.get("cluster"), esxi_hostnames=params.get("esxi_hostnames"),
                         datacenter=params.get("datacenter"))
    offline = ["%s (%s)" % (item["name"], item.get("runtime.connectionState")) for item in items
               if item.get("runtime.connectionState") != "connected"]
    if offline:
        raise InputError("Host(s) not connected to vCenter: %s." % ", ".join(offline),
                         hint="Reconnect them or leave them out of esxi_hostnames.")
    hosts = [HostPassthrough(item, params) for item in items]
    identity = with_run_identity(params)
    records = MaintenanceRecords(client, OWNER, identity["run_id"], identity["me"])
    for host in hosts:
        host.left_in_maintenance = bool(host.item.get("runtime.inMaintenanceMode")) and records.ours(host.item)
        host.check()
    to_reboot = [host for host in hosts if host.needs_reboot()] if params.get("reboot") else []
    if to_reboot:
        _host_reboot.check_rebootable(client, [host.item for host in to_reboot], params["reboot_timeout"])
    work = [host for host in hosts if host.changing]
    finish = [host for host in hosts if host.left_in_maintenance and not host.needs_reboot()]
    if check_mode or not (work or to_reboot or finish):
        for host in to_reboot:
            host.rebooted = True
        for host in finish:
            host.taken_out = True
        return dict(changed=bool(work or to_reboot or finish),
                    hosts=[_result(host, host.predicted(rebooting=host.rebooted)) for host in hosts])
    done = []
    for host in work:
        try:
            host.apply(client)
        except GpuopsError as err:
            raise type(err)("Host %s: %s Hosts done: %s." % (host.name, err.message, ", ".join(done) or "none"),
                            hint=err.hint)
        done.append(host.name)
    states = _read_after(client, hosts, work)
    if params.get("reboot"):
        pending = [host for host in hosts if any(d["passthru_enabled"] != d["passthru_active"]
                                                 for d in states[host.name])]
        try:
            _host_reboot.reboot_hosts(client, [host.item for host in pending], {
                "reboot_timeout": params["reboot_timeout"], "timeout": MAINTENANCE_TIMEOUT}, records)
        except GpuopsError as err:
            raise type(err)("%s Passthrough was set on: %s; it takes effect when the host reboots."
                            % (err.message, ", ".join(done) or "none"), hint=err.hint, **err.details)
        for host in pending:
            host.rebooted = True
        states.update(_read_after(client, pending, pending))
    waiting = set(host.name for host in hosts if any(d["passthru_enabled"] != d["passthru_active"]
                                                     for d in states[host.name]))
    _take_out_left(client, records, [host for host in hosts if host.left_in_maintenance and not host.rebooted
                                     and host.name not in waiting])
    return dict(changed=True, hosts=[_result(host, states[host.name]) for host in hosts])


def _take_out_left(client, records, hosts):
    """Out of maintenance mode, record cleared: the hosts a stopped run left there whose reboot waits for nothing."""
    if not hosts:
        return
    done, failed = _host_maintenance.run(client, [host.item for host in hosts], False,
                                         {"timeout": MAINTENANCE_TIMEOUT, "parallel": False})
    for host in hosts:
        if host.name in done:
            records.unmark(host.item)
            host.taken_out = True
    if failed:
        raise TaskFailed("Host(s) a stopped run left in maintenance mode for a reboot did not exit it: %s."
                         % "; ".join("%s: %s" % pair for pair in sorted(failed.items())),
                         hint="Fix the cause and run again; their record stays in vCenter.")


def _read_after(client, hosts, changed):
    """Per host name, its selected devices: read again for the ``changed`` hosts (one read), as before otherwise."""
    after = dict((item["moid"], item) for item in client.retrieve_objects(
        [host.item["obj"] for host in changed], ["config.pciPassthruInfo", "hardware.pciDevice"])) if changed else {}
    states = {}
    for host in hosts:
        fresh = after.get(host.item["moid"])
        states[host.name] = describe_passthru(dict(fresh, name=host.name), host.ids) if fresh else host.before
    return states
