# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""read_fleet with a client that answers one PropertyCollector call with real pyVmomi data objects."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._vcenter_fleet import add_tags, read_fleet, read_tags

vim = pytest.importorskip("pyVmomi").vim
A100, P40 = "0000:3b:00.0", "0000:5e:00.0"


class TreeClient(VCenterClient):
    def __init__(self, tree):
        self.endpoint = "vcenter.test:443"
        self.tree = tree
        self.calls = []

    def retrieve(self, specs, root=None):
        self.calls.append(dict((t.__name__.split(".")[-1], sorted(paths)) for t, paths in specs.items()))
        return dict((vim_type, self.tree.get(vim_type, [])) for vim_type in specs)


def _vgpu(key, profile):
    return vim.vm.device.VirtualPCIPassthrough(
        key=key, backing=vim.vm.device.VirtualPCIPassthrough.VmiopBackingInfo(vgpu=profile))


def _whole(key, pci_id):
    backing = vim.vm.device.VirtualPCIPassthrough.DeviceBackingInfo(id=pci_id, deviceId="20f1", systemId="x",
                                                                    vendorId=0x10DE)
    return vim.vm.device.VirtualPCIPassthrough(key=key, backing=backing)


def _gpu(pci_id, device_id, name):
    return vim.host.PciDevice(id=pci_id, vendorId=0x10DE, deviceId=device_id, deviceName=name, classId=0x0302)


def fleet_client():
    """dc1: gpu-cluster with esxi-01 (P40 running train-1's vGPU) and hpc with esxi-31 (two A100s, one held whole
    by pt-1); VMs train-1 (vm/ml), pt-1, plain-1 (no GPU) and a template with a vGPU; host esxi-09 has no GPU."""
    dc = vim.Datacenter("datacenter-1")
    host_folder, vm_folder, ml = vim.Folder("group-h4"), vim.Folder("group-v3"), vim.Folder("group-v9")
    gpu_cluster, hpc = vim.ClusterComputeResource("domain-c7"), vim.ClusterComputeResource("domain-c8")
    host1, host31, host9 = vim.HostSystem("host-1"), vim.HostSystem("host-31"), vim.HostSystem("host-9")
    train, pt, plain, template = (vim.VirtualMachine("vm-%d" % n) for n in (1, 2, 3, 4))
    base = {"runtime.connectionState": "connected", "runtime.inMaintenanceMode": False,
            "config.graphicsConfig": vim.host.GraphicsConfig(hostDefaultGraphicsType="shared"),
            "config.sharedPassthruGpuTypes": []}
    tree = {
        vim.HostSystem: [
            dict(base, obj=host31, moid="host-31", name="esxi-31", parent=hpc, vm=[pt],
                 **{"hardware.pciDevice": [_gpu(A100, 0x20F1, "A100-PCIE-40GB"), _gpu(P40, 0x20F1, "A100-PCIE-40GB")],
                    "config.graphicsInfo": [
                        vim.host.GraphicsInfo(deviceName="A100-PCIE-40GB", pciId=pci_id, graphicsType="basic",
                                              vendorName="NVIDIA Corporation", memorySizeInKB=40 << 20)
                        for pci_id in (A100, P40)],
                    "config.pciPassthruInfo": [vim.host.PciPassthruInfo(id=A100, passthruEnabled=True,
                                                                        passthruActive=True)]}),
            dict(base, obj=host1, moid="host-1", name="esxi-01", parent=gpu_cluster, vm=[train, plain],
                 **{"hardware.pciDevice": [_gpu(A100, 0x1B38, "Tesla P40")],
                    "config.graphicsInfo": [vim.host.GraphicsInfo(
                        deviceName="Tesla P40", pciId=A100, graphicsType="sharedDirect", vgpuMode="sameSize",
                        vendorName="NVIDIA Corporation", memorySizeInKB=24 << 20, vm=[train])]}),
            dict(base, obj=host9, moid="host-9", name="esxi-09", parent=gpu_cluster, vm=[],
                 **{"hardware.pciDevice": [], "config.graphicsInfo": []}),
        ],
        vim.ComputeResource: [
            {"obj": gpu_cluster, "moid": "domain-c7", "name": "gpu-cluster", "parent": host_folder},
            {"obj": hpc, "moid": "domain-c8", "name": "hpc", "parent": host_folder},
        ],
        vim.Datacenter: [{"obj": dc, "moid": "datacenter-1", "name": "dc1"}],
        vim.Folder: [{"obj": host_folder, "moid": "group-h4", "name": "host", "parent": dc},
                     {"obj": vm_folder, "moid": "group-v3", "name": "vm", "parent": dc},
                     {"obj": ml, "moid": "group-v9", "name": "ml", "parent": vm_folder}],
        vim.VirtualMachine: [
            {"obj": train, "moid": "vm-1", "name": "train-1", "parent": ml, "runtime.host": host1,
             "runtime.powerState": "poweredOn", "guest.ipAddress": "10.0.0.11", "config.uuid": "u-1",
             "config.hardware.device": [_vgpu(13000, "grid_p40-8q")]},
            {"obj": pt, "moid": "vm-2", "name": "pt-1", "parent": vm_folder, "runtime.host": host31,
             "runtime.powerState": "poweredOff", "config.uuid": "u-2",
             "config.hardware.device": [_whole(13000, A100)]},
            {"obj": plain, "moid": "vm-3", "name": "plain-1", "parent": vm_folder, "runtime.host": host1,
             "runtime.powerState": "poweredOn", "config.hardware.device": []},
            {"obj": template, "moid": "vm-4", "name": "golden", "parent": vm_folder, "runtime.host": host1,
             "config.template": True, "config.hardware.device": [_vgpu(13000, "grid_p40-8q")]},
        ],
    }
    return TreeClient(tree)


def test_one_property_collector_call_reads_hosts_and_every_vm():
    client = fleet_client()
    read_fleet(client)
    assert len(client.calls) == 1
    specs = client.calls[0]
    assert "config.hardware.device" in specs["VirtualMachine"] and "guest.ipAddress" in specs["VirtualMachine"]
    assert "config.graphicsInfo" in specs["HostSystem"] and specs["Folder"] == ["name", "parent"]


def test_hosts_with_gpus_and_guests_with_vgpus_or_whole_gpus():
    fleet = read_fleet(fleet_client())
    json.dumps(fleet)  # plain data, as the inventory cache stores it
    assert [host["name"] for host in fleet["hosts"]] == ["esxi-01", "esxi-31"]
    p40 = fleet["hosts"][0]["gpus"][0]
    assert (p40["model"], p40["graphics_type"], p40["vgpu_mode"], p40["vms"]) == (
        "P40", "sharedDirect", "sameSize", ["train-1"])
    assert fleet["hosts"][1]["gpus"][0]["passthrough"]["vm"] == "pt-1"

    pt, train = fleet["vms"]
    assert (train["name"], train["cluster"], train["datacenter"], train["folder"], train["guest_ip"]) == (
        "train-1", "gpu-cluster", "dc1", "/dc1/vm/ml", "10.0.0.11")
    assert train["vgpus"] == [{"key": 13000, "profile": "grid_p40-8q"}] and train["passthrough"] == []
    assert train["gpu_models"] == ["P40"] and train["host"] == "esxi-01"
    assert (pt["name"], pt["folder"], pt["passthrough"], pt["vgpus"], pt["gpu_models"], pt["guest_ip"]) == (
        "pt-1", "/dc1/vm", [A100], [], ["A100-40"], None)


class TaggingRest:
    """The tagging service's answers as the REST client returns them, with the requests counted."""

    def __init__(self, attached):
        self.attached, self.requests = attached, []
        self.tags = {"t-gold": {"id": "t-gold", "name": "gold", "category_id": "c-tier"},
                     "t-ml": {"id": "t-ml", "name": "ml", "category_id": "c-team"}}
        self.categories = {"c-tier": {"id": "c-tier", "name": "gpu-tier"}, "c-team": {"id": "c-team", "name": "team"}}

    def request(self, method, path, params=None, body=None):
        self.requests.append((method, path, params))
        assert (path, params) == ("/api/cis/tagging/tag-association", {"action": "list-attached-tags-on-objects"})
        return [{"object_id": obj, "tag_ids": self.attached.get(obj["id"], [])} for obj in body["object_ids"]]

    def get(self, path, params=None):
        self.requests.append(("GET", path, params))
        kind, _sep, ident = path[len("/api/cis/tagging/"):].partition("/")
        return (self.tags if kind == "tag" else self.categories)[ident]


@pytest.mark.parametrize("count", [10, 1000])
def test_tags_are_read_in_requests_that_do_not_grow_with_the_vms(count):
    objects = [("VirtualMachine", "vm-%d" % n) for n in range(count)] + [("HostSystem", "host-1")]
    rest = TaggingRest({"vm-0": ["t-gold", "t-ml"], "vm-1": ["t-gold"], "host-1": ["t-ml"]})

    tags = read_tags(rest, objects)

    assert tags[("VirtualMachine", "vm-0")] == ["gpu-tier:gold", "team:ml"]
    assert tags[("VirtualMachine", "vm-1")] == ["gpu-tier:gold"] and tags[("VirtualMachine", "vm-2")] == []
    assert tags[("HostSystem", "host-1")] == ["team:ml"]
    # One batched association read, then each attached tag and its category once.
    assert len(rest.requests) == 5


def test_the_fleet_gets_each_objects_tags():
    fleet = read_fleet(fleet_client())
    rest = TaggingRest({"vm-1": ["t-gold"], "host-31": ["t-ml"]})
    fleet = add_tags(fleet, rest)
    assert fleet["tags_read"] is True
    assert dict((vm["name"], vm["tags"]) for vm in fleet["vms"]) == {"train-1": ["gpu-tier:gold"], "pt-1": []}
    assert dict((host["name"], host["tags"]) for host in fleet["hosts"]) == {"esxi-31": ["team:ml"], "esxi-01": []}
    assert read_tags(rest, []) == {}
