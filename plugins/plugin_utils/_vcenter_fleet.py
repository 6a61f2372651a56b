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

try:
    from urllib.parse import quote
except ImportError:  # pragma: no cover - Python 2
    from urllib import quote

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError, NotFound
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


TAGGING = "/api/cis/tagging"


def read_tags(rest, objects):
    """``{(type, moid): ["category:tag", ...]}`` of the objects (``[(managed object type, moid)]``) through vCenter's
    tagging service (the REST client ``rest``), in a number of requests that does not grow with the objects: one
    ``list-attached-tags-on-objects`` for all of them, then one read per distinct tag and per distinct category
    attached. A tag or category removed meanwhile is left out.

    Paths and shapes: vSphere Automation API, cis/tagging (``POST /api/cis/tagging/tag-association?action=
    list-attached-tags-on-objects`` with ``{"object_ids": [{"type", "id"}]}``, answering ``[{"object_id",
    "tag_ids"}]``; ``GET /api/cis/tagging/tag/{tag_id}`` and ``/category/{category_id}``), as the SDK's
    com/vmware/cis/tagging_client.py (vmware-vcenter 9.1.1.0) describes them."""
    if not objects:
        return {}
    answer = rest.request("POST", TAGGING + "/tag-association", params={"action": "list-attached-tags-on-objects"},
                          body={"object_ids": [{"type": kind, "id": moid} for kind, moid in objects]}) or []
    tags, categories = {}, {}
    for tag_id in sorted(set(tag_id for entry in answer for tag_id in entry.get("tag_ids") or [])):
        try:
            tag = rest.get("%s/tag/%s" % (TAGGING, quote(tag_id, safe=":")))
            category_id = tag["category_id"]
            if category_id not in categories:
                categories[category_id] = rest.get("%s/category/%s" % (TAGGING, quote(category_id, safe=":")))
        except NotFound:
            continue
        tags[tag_id] = "%s:%s" % (categories[category_id]["name"], tag["name"])
    found = {}
    for entry in answer:
        obj = entry.get("object_id") or {}
        found[(obj.get("type"), obj.get("id"))] = sorted(tags[tag_id] for tag_id in entry.get("tag_ids") or []
                                                         if tag_id in tags)
    return found


def add_tags(fleet, rest):
    """The fleet with each host's and VM's ``tags`` (``["category:tag", ...]``) read through ``rest``, and
    ``tags_read`` set."""
    objects = [("HostSystem", host["moid"]) for host in fleet["hosts"]] + [
        ("VirtualMachine", vm["moid"]) for vm in fleet["vms"]]
    tags = read_tags(rest, objects)
    for host in fleet["hosts"]:
        host["tags"] = tags.get(("HostSystem", host["moid"]), [])
    for vm in fleet["vms"]:
        vm["tags"] = tags.get(("VirtualMachine", vm["moid"]), [])
    fleet["tags_read"] = True
    return fleet


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
