# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU fleet of a vCenter in one read: every host with an NVIDIA GPU and every VM that holds a vGPU or a whole
GPU, for the ``vcenter_gpu`` inventory plugin.

One PropertyCollector call reads the inventory tree, the hosts' graphics data and every VM's devices, whatever
their number; hosts and VMs are described with ``gpu_info``'s own functions, so both answer alike.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _inventory
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._vm_passthrough import static_ids

try:
    from pyVmomi import vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = None

VM_PROPERTIES = _inventory.VM_PROPERTIES + ["parent", "config.template", "guest.ipAddress"]


def read_fleet(client):
    """``{"hosts": [...], "vms": [...]}``: hosts as ``gpu_info`` describes them (those with an NVIDIA GPU), and
    per VM with a vGPU or a whole GPU ``gpu_info``'s description plus ``cluster``, ``datacenter``, ``folder`` (its
    inventory path, ``/<datacenter>/vm/...``), ``guest_ip`` (VMware Tools' address or None), ``passthrough`` (the
    host's GPUs it holds, by PCI id) and ``gpu_models``. Templates are left out."""
    hosts, tree = client.hosts_with(_inventory.HOST_PROPERTIES, {vim.VirtualMachine: VM_PROPERTIES})
    vm_items = dict((item["moid"], item) for item in tree[vim.VirtualMachine])
    described = dict((host["moid"], _inventory.describe_host(host, vm_items)) for host in hosts)
    host_names = dict((moid, host["name"]) for moid, host in described.items())
    paths = _FolderPaths(tree)
    vms = []
    for item in sorted(tree[vim.VirtualMachine], key=lambda entry: (entry.get("name") or "", entry["moid"])):
        if item.get("config.template"):
            continue
        host_ref = item.get("runtime.host")
        host = described.get(host_ref._moId) if host_ref is not None else None
        gpus = dict((gpu["pci_id"], gpu) for gpu in (host or {}).get("gpus") or [])
        passthrough = sorted(pci_id for pci_id in static_ids(item.get("config.hardware.device")) if pci_id in gpus)
        vm = _inventory.describe_vm(item, host_names)
        if not vm["vgpus"] and not passthrough:
            continue
        datacenter, folder = paths.of(item.get("parent"))
        vm.update(cluster=(host or {}).get("cluster"), datacenter=(host or {}).get("datacenter") or datacenter,
                  folder=folder, guest_ip=item.get("guest.ipAddress") or None, passthrough=passthrough,
                  gpu_models=sorted(set(model for model in [_profile_model(v["profile"]) for v in vm["vgpus"]]
                                        + [gpus[pci_id]["model"] for pci_id in passthrough] if model)))
        vms.append(vm)
    fleet = {"hosts": [described[host["moid"]] for host in hosts if described[host["moid"]]["gpus"]], "vms": vms}
    # pyVmomi's enums and strings are subclasses of str, which Ansible does not store as variables: plain data, as a
    # module's result is once it has passed through JSON.
    return json.loads(json.dumps(fleet))


def _profile_model(profile):
    try:
        return _catalog.parse_profile(profile)["model"]
    except InputError:
        return None


class _FolderPaths:
    """Inventory paths of folders (``/<datacenter>/vm/<folder>/...``) from the folders and datacenters read."""

    def __init__(self, tree):
        self.names = dict((item["moid"], item.get("name")) for item in tree[vim.Folder])
        self.parents = dict((item["moid"], item.get("parent")) for item in tree[vim.Folder])
        self.datacenters = dict((item["moid"], item["name"]) for item in tree[vim.Datacenter])

    def of(self, folder):
        """``(datacenter, path)`` of a VM's parent folder; ``(None, None)`` for a folder outside a datacenter."""
        parts = []
        obj = folder
        while obj is not None and obj._moId in self.names:
            parts.append(self.names[obj._moId])
            obj = self.parents[obj._moId]
        if obj is None or obj._moId not in self.datacenters:
            return None, None
        datacenter = self.datacenters[obj._moId]
        return datacenter, "/" + "/".join([datacenter] + parts[::-1])
