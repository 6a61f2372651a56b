# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host graphics: default graphics type, assignment policy, per-GPU graphics type and vGPU mode, Xorg restart.

Every selected host is read in one PropertyCollector call. The UpdateGraphicsConfig spec is the host's current
configuration with only the asked fields changed, so nothing the user did not mention is reset. A new graphics
type becomes active only when Xorg restarts, so the restart is part of the change.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError, InputError, keeping_warnings
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog
from ansible_collections.gpuops.vgpu.plugins.module_utils._pci import pci_bus_address
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._inventory import (
    NVIDIA_VENDOR_ID,
    describe_graphics_config,
)

try:
    from pyVmomi import vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = None

HOST_PROPERTIES = [
    "runtime.connectionState", "config.graphicsConfig", "config.graphicsInfo", "hardware.pciDevice",
    "configManager.graphicsManager", "configManager.serviceSystem",
]
AFTER_PROPERTIES = ["config.graphicsConfig", "config.graphicsInfo"]


def describe_config(config):
    """A HostGraphicsConfig as plain data; a host without one reads as nothing configured."""
    return describe_graphics_config(config) or {"default_graphics_type": None, "assignment_policy": None,
                                                "devices": []}


def configured_type(state, pci_id):
    """The graphics type ``state`` configures for one GPU: its own entry, else the host default."""
    for entry in state["devices"]:
        if entry["pci_id"] == pci_id:
            return entry["graphics_type"]
    return state["default_graphics_type"]


def configured_mode(state, pci_id):
    """The vGPU mode ``state`` configures for one GPU; no entry or no mode is vSphere's default, sameSize."""
    for entry in state["devices"]:
        if entry["pci_id"] == pci_id:
            return entry.get("vgpu_mode") or "sameSize"
    return "sameSize"


def wanted_config(current, gpu_ids, request):
    """``current`` with only what ``request`` asks changed.

    ``request`` holds ``default_graphics_type``, ``assignment_policy``, ``gpu_graphics_type`` (for every id in
    ``gpu_ids``) and ``devices`` (entries with a ``pci_id`` already in the host's spelling); None means unchanged.
    """
    wanted = {
        "default_graphics_type": request.get("default_graphics_type") or current["default_graphics_type"],
        "assignment_policy": request.get("assignment_policy") or current["assignment_policy"],
        "devices": [dict(entry) for entry in current["devices"]],
    }
    changes = {}
    if request.get("gpu_graphics_type"):
        for pci_id in gpu_ids:
            changes[pci_id] = {"graphics_type": request["gpu_graphics_type"]}
    for device in request.get("devices") or []:
        change = changes.setdefault(device["pci_id"], {})
        for field in ("graphics_type", "vgpu_mode"):
            if device.get(field):
                change[field] = device[field]
    entries = dict((entry["pci_id"], entry) for entry in wanted["devices"])
    for pci_id, change in changes.items():
        entry = entries.get(pci_id)
        if entry is None and _already(current, pci_id, change):
            # The host default already gives the GPU what is asked: an entry of its own would change nothing but
            # the configuration, and cost an Xorg restart on a host that may run vGPU VMs.
            continue
        if entry is None:
            # A new entry keeps the GPU's effective type unless a type was asked for.
            entry = {"pci_id": pci_id, "graphics_type": configured_type(current, pci_id), "vgpu_mode": None}
            wanted["devices"].append(entry)
            entries[pci_id] = entry
        entry.update(change)
    return wanted


def _already(current, pci_id, change):
    """Whether a GPU without an entry of its own already has each field of ``change``."""
    return all(change[field] == (configured_type(current, pci_id) if field == "graphics_type"
                                 else configured_mode(current, pci_id)) for field in change)


def config_spec(state):
    """The HostGraphicsConfig to send for ``state``: all of it, so no field falls back to a default."""
    entries = []
    for entry in state["devices"]:
        device = vim.host.GraphicsConfig.DeviceType(deviceId=entry["pci_id"], graphicsType=entry["graphics_type"])
        if entry.get("vgpu_mode"):
            device.vgpuMode = entry["vgpu_mode"]
        entries.append(device)
    return vim.host.GraphicsConfig(hostDefaultGraphicsType=state["default_graphics_type"],
                                   sharedPassthruAssignmentPolicy=state["assignment_policy"], deviceType=entries)


def nvidia_gpus(item):
    """The HostGraphicsInfo entries of a host's NVIDIA GPUs (other graphics devices, e.g. on-board VGA, are left)."""
    vendors = dict((dev.id, dev.vendorId & 0xFFFF) for dev in item.get("hardware.pciDevice") or [])
    gpus = []
    for info in item.get("config.graphicsInfo") or []:
        vendor = vendors.get(info.pciId)
        if vendor == NVIDIA_VENDOR_ID or (vendor is None and "nvidia" in (info.vendorName or "").lower()):
            gpus.append(info)
    return gpus


def describe_state(config_state, gpus, active=None, modes=None):
    """Configuration plus each NVIDIA GPU's configured and active type and its vGPU mode in effect (null from
    vCenters before 8.0 Update 3); ``active`` and ``modes`` override what was read."""
    described = dict(config_state)
    described["gpus"] = [{
        "pci_id": info.pciId,
        "device_name": info.deviceName,
        "configured_graphics_type": configured_type(config_state, info.pciId),
        "graphics_type": (active or {}).get(info.pciId, info.graphicsType),
        "vgpu_mode": (modes or {}).get(info.pciId, getattr(info, "vgpuMode", None) or None),
    } for info in gpus]
    return described


def mode_after_restart(state, info):
    """The vGPU mode a GPU runs after Xorg restarts: none outside Shared Direct, else its configured mode. A GPU that
    runs vGPUs keeps what it has; a vCenter that reports no mode keeps reporting none."""
    current = getattr(info, "vgpuMode", None) or None
    if current is None or info.vm:
        return current
    if configured_type(state, info.pciId) != "sharedDirect":
        return "none"
    return configured_mode(state, info.pciId)


class HostChange:
    """What one host has, what it should have, and whether Xorg restarts."""

    def __init__(self, item, request, restart_xorg):
        self.item = item
        self.name = item["name"]
        self.gpus = nvidia_gpus(item)
        self.current = describe_config(item.get("config.graphicsConfig"))
        self.wanted = wanted_config(self.current, [info.pciId for info in self.gpus], request)
        self.config_changed = self.wanted != self.current
        pending = [info.pciId for info in self.gpus if info.graphicsType != configured_type(self.wanted, info.pciId)]
        self.reason = None
        if restart_xorg == "always":
            self.reason = "restart_xorg is always"
        elif restart_xorg == "when_changed" and self.config_changed:
            self.reason = "the graphics configuration changed"
        elif restart_xorg == "when_changed" and pending:
            self.reason = ("GPU(s) %s did not run their configured graphics type yet: an earlier change was never "
                           "followed by an Xorg restart" % ", ".join(pending))
        self.restart = self.reason is not None
        self.pending = [] if self.restart else pending
        self._before = describe_state(self.current, self.gpus)
        active = modes = None
        if self.restart:
            active = dict((info.pciId, configured_type(self.wanted, info.pciId)) for info in self.gpus)
            modes = dict((info.pciId, mode_after_restart(self.wanted, info)) for info in self.gpus)
        self._predicted = describe_state(self.wanted, self.gpus, active, modes)

    @property
    def changed(self):
        return self.config_changed or self.restart

    def retyped_gpus(self):
        """GPUs whose active graphics type changes, now or at the next Xorg restart."""
        retyped = []
        for info in self.gpus:
            wanted = configured_type(self.wanted, info.pciId)
            if wanted != configured_type(self.current, info.pciId) or (self.restart and wanted != info.graphicsType):
                retyped.append(info)
        return retyped

    def remoded_gpus(self):
        """GPUs whose configured vGPU mode changes."""
        return [info for info in self.gpus
                if configured_mode(self.wanted, info.pciId) != configured_mode(self.current, info.pciId)]

    def before(self):
        return self._before

    def predicted_after(self):
        return self._predicted


def resolve_devices(devices, item):
    """The ``devices`` option for one host, with ids in the host's spelling; unknown ids fail naming the host's GPUs."""
    known = dict((pci_bus_address(info.pciId), info) for info in item.get("config.graphicsInfo") or [])
    resolved = []
    for device in devices or []:
        info = known.get(pci_bus_address(device["pci_id"]))
        if info is None:
            listing = ", ".join("%s (%s)" % (gpu.pciId, gpu.deviceName) for gpu in known.values()) or "none"
            raise InputError("Host %s has no graphics device with PCI id %s." % (item["name"], device["pci_id"]),
                             hint="Its graphics devices: %s." % listing)
        resolved.append(dict(device, pci_id=info.pciId))
    return resolved


def check_devices_option(devices):
    seen = set()
    for device in devices or []:
        pci_id = pci_bus_address(device["pci_id"])
        if pci_id in seen:
            raise InputError("PCI id %s appears more than once in devices." % device["pci_id"],
                             hint="Give one entry per GPU.")
        seen.add(pci_id)


def host_changes(items, params):
    """A HostChange per host; fails before any change on unknown ids and disconnected hosts."""
    check_devices_option(params.get("devices"))
    offline = ["%s (%s)" % (item["name"], item.get("runtime.connectionState")) for item in items
               if item.get("runtime.connectionState") != "connected"]
    if offline:
        raise InputError("Host(s) not connected to vCenter: %s." % ", ".join(offline),
                         hint="Reconnect them or leave them out of esxi_hostnames.")
    changes = []
    for item in items:
        request = dict((key, params.get(key))
                       for key in ("default_graphics_type", "assignment_policy", "gpu_graphics_type"))
        request["devices"] = resolve_devices(params.get("devices"), item)
        changes.append(HostChange(item, request, params.get("restart_xorg") or "when_changed"))
    return changes


def check_mixed_size_models(changes, devices):
    """Refuse mixedSize for a GPU whose model the catalog knows cannot run it (e.g. Pascal), before any change."""
    asked = set(pci_bus_address(d["pci_id"]) for d in devices or [] if d.get("vgpu_mode") == "mixedSize")
    capable = sorted(m for m, facts in _catalog.gpu_models().items() if facts["mixed_size_capable"])
    for change in changes:
        pci = dict((dev.id, dev) for dev in change.item.get("hardware.pciDevice") or [])
        for info in change.gpus:
            if pci_bus_address(info.pciId) not in asked:
                continue
            device = pci.get(info.pciId)
            model_id = _catalog.model_for_device(
                device_name=info.deviceName, pci_device_id=(device.deviceId & 0xFFFF) if device is not None else None)
            model = _catalog.gpu_model(model_id) if model_id else None
            if model and model["mixed_size_confirmed"] and not model["mixed_size_capable"]:
                raise InputError("Host %s GPU %s (%s) cannot run vgpu_mode mixedSize: NVIDIA's mixed-size mode does "
                                 "not support the %s." % (change.name, info.pciId, info.deviceName, model_id),
                                 hint="Leave vgpu_mode at sameSize there; models that run mixed-size mode: %s."
                                 % ", ".join(capable))


def running_vgpu_conflicts(client, changes, mode=False):
    """``[(host, gpu info, [vm names])]`` for GPUs that would change type (or, with ``mode``, vGPU mode) under
    running vGPU VMs."""
    pairs = [(change, info) for change in changes if change.changed
             for info in (change.remoded_gpus() if mode else change.retyped_gpus()) if info.vm]
    if not pairs:
        return []
    vms = dict((vm._moId, vm) for pair in pairs for vm in pair[1].vm)
    names = dict((item["moid"], item.get("name", item["moid"])) for item in client.retrieve_objects(
        list(vms.values()), ["name"]))
    return [(change.name, info, sorted(names[vm._moId] for vm in info.vm)) for change, info in pairs]


def conflict_text(conflicts):
    return "; ".join("%s GPU %s (%s): %s" % (host, info.pciId, info.deviceName, ", ".join(vms))
                     for host, info, vms in conflicts)


def apply_change(client, change, done):
    """Send the configuration, then restart Xorg, as decided; ``done`` collects the steps that succeeded."""
    if change.config_changed:
        client.call(change.item["configManager.graphicsManager"].UpdateGraphicsConfig,
                    config=config_spec(change.wanted))
        done.append("configuration updated")
    if change.restart:
        client.call(change.item["configManager.serviceSystem"].RestartService, id="xorg")
        done.append("Xorg restarted")


def configure(client, params, check_mode):
    """The ``host_graphics`` module: returns the result dict (``changed``, ``hosts``, ``diff``, ``warnings``)."""
    items = client.hosts(HOST_PROPERTIES, cluster=params.get("cluster"), esxi_hostnames=params.get("esxi_hostnames"),
                         datacenter=params.get("datacenter"))
    changes = host_changes(items, params)
    check_mixed_size_models(changes, params.get("devices"))
    busy = running_vgpu_conflicts(client, changes, mode=True)
    if busy:
        raise InputError("Refusing to change the vGPU mode of GPUs that run vGPU VMs (vCenter refuses it, force "
                         "does not apply): %s." % conflict_text(busy), hint="Power those VMs off first.")
    conflicts = running_vgpu_conflicts(client, changes)
    if conflicts and not params.get("force"):
        raise InputError("Refusing to change the graphics type of GPUs that run vGPU VMs: %s."
                         % conflict_text(conflicts), hint="Power those VMs off first, or set force: true.")
    warnings = []
    if conflicts:
        warnings.append("Changing the graphics type of GPUs that run vGPU VMs (force): %s." % conflict_text(conflicts))

    results = dict((change.name, _result(change, change.before(), change.before(), False)) for change in changes)
    with keeping_warnings(warnings):
        if not check_mode:
            _apply_all(client, changes, results)
        after = _after_states(client, changes, check_mode)
    for change in changes:
        results[change.name] = _result(change, change.before(), after.get(change.name, change.before()),
                                       change.restart)
        warnings.extend(_warnings(change, results[change.name]["after"], check_mode))
    hosts = [results[change.name] for change in changes]
    diff = {"before": dict((host["name"], host["before"]) for host in hosts if host["changed"]),
            "after": dict((host["name"], host["after"]) for host in hosts if host["changed"])}
    return dict(changed=any(host["changed"] for host in hosts), hosts=hosts, diff=diff, warnings=warnings)


def _warnings(change, after, check_mode):
    """GPUs left waiting for a restart, fields vCenter did not keep, GPUs that kept their type over a restart."""
    warnings = []
    if change.pending:
        warnings.append("Host %s: GPU(s) %s wait for an Xorg restart to run their configured graphics type."
                        % (change.name, ", ".join(change.pending)))
    ignored = not_kept(change.wanted, after) if change.config_changed and not check_mode else []
    if ignored:
        why = " (vgpu_mode needs vSphere 8.0 Update 3 or later)" if any("vgpu_mode" in text for text in ignored) else ""
        warnings.append("Host %s: vCenter did not keep %s%s." % (change.name, "; ".join(ignored), why))
    stuck = [gpu["pci_id"] for gpu in after["gpus"] if gpu["graphics_type"] != gpu["configured_graphics_type"]]
    if change.restart and stuck and not check_mode:
        warnings.append("Host %s: after the Xorg restart, GPU(s) %s still do not run their configured graphics type "
                        "(a GPU keeps its type while vGPU VMs run on it)." % (change.name, ", ".join(stuck)))
    untaken = ["%s runs %s, not %s" % (gpu["pci_id"], gpu["vgpu_mode"], configured_mode(change.wanted, gpu["pci_id"]))
               for gpu in after["gpus"] if change.restart and not check_mode and gpu["vgpu_mode"] is not None
               and gpu["graphics_type"] == "sharedDirect" and gpu["pci_id"] not in stuck
               and gpu["vgpu_mode"] != configured_mode(change.wanted, gpu["pci_id"])]
    if untaken:
        warnings.append("Host %s: the vGPU mode did not take after the Xorg restart: %s."
                        % (change.name, "; ".join(untaken)))
    return warnings


def not_kept(wanted, after):
    """What vCenter holds differently from what was sent, e.g. a field older vSphere versions drop."""
    differences = []
    for field in ("default_graphics_type", "assignment_policy"):
        if after.get(field) != wanted[field]:
            differences.append("%s %s (it has %s)" % (field, wanted[field], after.get(field)))
    held = dict((entry["pci_id"], entry) for entry in after.get("devices") or [])
    for entry in wanted["devices"]:
        for field in ("graphics_type", "vgpu_mode"):
            value = held.get(entry["pci_id"], {}).get(field)
            if value != entry[field]:
                differences.append("%s of %s %s (it has %s)" % (field, entry["pci_id"], entry[field], value))
    return differences


def _apply_all(client, changes, results):
    work = [change for change in changes if change.changed]
    for position, change in enumerate(work):
        done = []
        try:
            apply_change(client, change, done)
        except GpuopsError as err:
            raise type(err)(
                "Host %s: %s (%s). Hosts done: %s; hosts not touched: %s." % (
                    change.name, err.message, ", ".join(done) + " before that" if done else "nothing changed on it",
                    ", ".join(p.name for p in work[:position]) or "none",
                    ", ".join(p.name for p in work[position + 1:]) or "none"),
                hint=err.hint, hosts=[results[p.name] for p in changes], **err.details)
        results[change.name] = _result(change, change.before(), change.predicted_after(), change.restart)


def _after_states(client, changes, check_mode):
    changed = [change for change in changes if change.changed]
    if check_mode or not changed:
        return dict((change.name, change.predicted_after()) for change in changed)
    items = client.retrieve_objects([change.item["obj"] for change in changed], AFTER_PROPERTIES)
    after = {}
    for change, item in zip(changed, items):
        wanted = set(gpu.pciId for gpu in change.gpus)
        gpus = [info for info in item.get("config.graphicsInfo") or [] if info.pciId in wanted]
        after[change.name] = describe_state(describe_config(item.get("config.graphicsConfig")), gpus)
    return after


def _result(change, before, after, restarted):
    return {
        "name": change.name,
        "changed": before != after or restarted,
        "before": before,
        "after": after,
        "xorg_restarted": restarted,
        "xorg_restart_reason": change.reason if restarted else None,
    }
