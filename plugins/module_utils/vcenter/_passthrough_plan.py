# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``host_passthrough`` and ``vm_passthrough`` would change for a list of VMs, from one read; nothing changes.

Two PropertyCollector calls, whatever the number of hosts and VMs: every VM (which VM holds which GPU, as
``vm_passthrough`` reads them) and the hosts with what both modules read. Each side is judged by the module's own
logic: the hosts by ``HostPassthrough`` (the devices it selects, those it would turn on, those waiting for a reboot,
its refusals), the VMs by ``HostPool`` and ``VmRequest`` (the GPUs each VM would hold, the settings they need). So the
plan names a host or VM exactly where its module would act, or refuse: run for it, the module then refuses with its
own message. The VMs' side waits while a host differs, since what the VMs can have depends on the hosts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError, NotFound
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _host_passthrough as host_side
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _vm_passthrough as vm_side

try:
    from pyVmomi import vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = None

# What HostPassthrough's selection and refusals and HostPool read; the reboot and change handles are left out.
HOST_PROPERTIES = sorted(set(vm_side.HOST_PROPERTIES) | {"runtime.connectionState"})


def plan(client, params, check_mode):
    """The ``passthrough_plan`` module's result (a read: the same in check mode): ``hosts`` and ``vms`` as they
    are and what would change, and one line per difference in ``host_differences`` and ``vm_differences``."""
    names = [entry["name"] for entry in params["vms"]]
    all_vms = client.retrieve({vim.VirtualMachine: vm_side.VM_PROPERTIES})[vim.VirtualMachine]
    by_name = dict((item["name"], item) for item in all_vms)
    missing = [name for name in names if name not in by_name]
    if missing:
        raise NotFound("VM(s) not found: %s." % ", ".join(missing), hint="Check the names in the vms option.")
    hosts = dict((item["moid"], item) for item in client.hosts(HOST_PROPERTIES))
    items = [by_name[name] for name in names]
    vm_hosts = [hosts.get(item["runtime.host"]._moId) if item.get("runtime.host") is not None else None
                for item in items]
    chosen = params.get("esxi_hostnames") or sorted(set(host["name"] for host in vm_hosts if host is not None))
    host_plans = [_host_plan(name, hosts, params) for name in chosen]
    host_differences = [line for entry in host_plans for line in _host_lines(entry)]
    if host_differences:
        vm_plans = [_vm_entry(entry, item, host, "after the hosts' GPUs go to passthrough")
                    for entry, item, host in zip(params["vms"], items, vm_hosts)]
    else:
        vm_plans = _vm_plans(params, all_vms, items, vm_hosts)
    return {"changed": False, "hosts": host_plans, "vms": vm_plans, "host_differences": host_differences,
            "vm_differences": ["%s: %s" % (entry["name"], entry["why"]) for entry in vm_plans if entry["why"]]}


def _host_plan(name, hosts, params):
    entry = {"name": name, "changing_devices": [], "reboot_pending_devices": [], "problem": None}
    item = next((host for host in hosts.values() if host["name"] == name and (
        not params.get("datacenter") or host["datacenter"] == params["datacenter"])), None)
    if item is None:
        entry["problem"] = "not found%s" % (" in datacenter %s" % params["datacenter"] if params.get("datacenter") else "")
        return entry
    if item.get("runtime.connectionState") != "connected":
        entry["problem"] = "is %s" % item.get("runtime.connectionState")
        return entry
    try:
        host = host_side.HostPassthrough(item, dict(params, state="enabled", devices=None))
        host.check()
    except InputError as err:
        entry["problem"] = err.message
        return entry
    entry["changing_devices"] = host.changing
    entry["reboot_pending_devices"] = [device["pci_id"] for device in host.before
                                       if device["passthru_enabled"] != device["passthru_active"]]
    return entry


def _host_lines(entry):
    lines = []
    if entry["problem"]:
        lines.append("%s: %s" % (entry["name"], entry["problem"]))
    if entry["changing_devices"]:
        lines.append("%s: %s to passthrough" % (entry["name"], ", ".join(entry["changing_devices"])))
    if entry["reboot_pending_devices"]:
        lines.append("%s: %s wait for a reboot" % (entry["name"], ", ".join(entry["reboot_pending_devices"])))
    return lines


def _vm_plans(params, all_vms, items, vm_hosts):
    """Each VM judged as vm_passthrough judges it, in the order of ``vms`` (a GPU one VM is given is taken for the
    next)."""
    pools, taken, plans = {}, set(), []
    read_later = set(params.get("nvlink_from_hosts") or []) - set(params.get("host_nvidia_smi") or {})
    for entry, item, host in zip(params["vms"], items, vm_hosts):
        if host is None:
            plans.append(_vm_entry(entry, item, host, "has no host"))
            continue
        if params["nvlink"] and host["name"] in read_later:
            plans.append(_vm_entry(entry, item, host, "its host's NVLink sets come from the host's nvidia-smi"))
            continue
        if host["moid"] not in pools:
            on_host = [vm for vm in all_vms if vm.get("runtime.host") is not None
                       and vm["runtime.host"]._moId == host["moid"]]
            pools[host["moid"]] = vm_side.HostPool(host, on_host, params)
        try:
            request = vm_side.VmRequest(entry, item, pools[host["moid"]], params, taken)
        except InputError as err:
            plans.append(_vm_entry(entry, item, host, err.message))
            continue
        plans.append(_vm_entry(entry, item, host, _change(request) if request.changed else None, request.wanted))
    return plans


def _vm_entry(entry, item, host, why, wanted=None):
    """``wanted``: the GPUs vm_passthrough would leave the VM with; None where the plan could not tell."""
    return {"name": entry["name"], "host": host["name"] if host is not None else None,
            "gpus": sorted(vm_side.static_ids(item.get("config.hardware.device"))), "wanted": wanted,
            "power_state": item.get("runtime.powerState"), "why": why}


def _change(request):
    parts = []
    if request.add:
        parts.append("gets %s" % ", ".join(request.add))
    if request.remove:
        parts.append("gives up %s" % ", ".join(request.remove))
    if request.settings:
        parts.append("needs %s" % ", ".join(sorted(request.settings)))
    return "; ".join(parts)
