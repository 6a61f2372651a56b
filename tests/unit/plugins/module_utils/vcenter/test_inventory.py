# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""read_inventory with a client that answers with real pyVmomi data objects."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import types

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _inventory
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError, NotFound
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient

vim = pytest.importorskip("pyVmomi").vim


def _vgpu(key, profile):
    return vim.vm.device.VirtualPCIPassthrough(
        key=key, backing=vim.vm.device.VirtualPCIPassthrough.VmiopBackingInfo(vgpu=profile))


class FakeClient(VCenterClient):
    """The real client's finders over ``retrieve`` / ``retrieve_objects`` answered from a fixed inventory."""

    def __init__(self, tree, vm_props):
        self.endpoint = "vcenter.test:443"
        self.tree = tree
        self.vm_props = vm_props
        self.calls = []

    def retrieve(self, specs, root=None):
        self.calls.append(("retrieve", sorted(t.__name__ for t in specs)))
        return dict((vim_type, self.tree.get(vim_type, [])) for vim_type in specs)

    def retrieve_objects(self, objects, properties):
        self.calls.append(("retrieve_objects", sorted(obj._moId for obj in objects)))
        return [dict(self.vm_props[obj._moId], obj=obj, moid=obj._moId) for obj in objects]


@pytest.fixture
def client():
    return inventory_client()


def inventory_client():
    """Hosts esxi-01 (two vGPU VMs on its P40) and esxi-02 (P40 idle, waiting for an Xorg restart) in gpu-cluster,
    standalone esxi-sa, and VMs train-1, train-2 and idle-1."""
    dc = vim.Datacenter("datacenter-1")
    host_folder = vim.Folder("group-h4")
    cluster = vim.ClusterComputeResource("domain-c7")
    standalone = vim.ComputeResource("domain-s9")
    vm1, vm2, vm3 = vim.VirtualMachine("vm-1"), vim.VirtualMachine("vm-2"), vim.VirtualMachine("vm-3")
    p40 = vim.host.PciDevice(id="0000:3b:00.0", vendorId=0x10DE, deviceId=0x1B38, deviceName="Tesla P40")
    nic = vim.host.PciDevice(id="0000:01:00.0", vendorId=0x8086, deviceId=0x1572, deviceName="X710")
    gpu_info = vim.host.GraphicsInfo(deviceName="Tesla P40", vendorName="NVIDIA Corporation", pciId="0000:3b:00.0",
                                     graphicsType="sharedDirect", memorySizeInKB=24 * 1024 * 1024, vm=[vm1, vm2])
    nic_info = vim.host.GraphicsInfo(deviceName="Matrox", vendorName="Matrox", pciId="0000:01:00.0",
                                     graphicsType="basic", memorySizeInKB=8192)
    config = vim.host.GraphicsConfig(hostDefaultGraphicsType="sharedDirect",
                                     sharedPassthruAssignmentPolicy="performance")
    idle_info = vim.host.GraphicsInfo(deviceName="Tesla P40", vendorName="NVIDIA Corporation", pciId="0000:3b:00.0",
                                      graphicsType="basic", memorySizeInKB=24 * 1024 * 1024)
    tree = {
        vim.HostSystem: [
            {"obj": vim.HostSystem("host-2"), "moid": "host-2", "name": "esxi-02", "parent": cluster,
             "runtime.connectionState": "connected", "runtime.inMaintenanceMode": False,
             "hardware.pciDevice": [p40], "config.graphicsInfo": [idle_info],
             "config.graphicsConfig": vim.host.GraphicsConfig(
                 hostDefaultGraphicsType="shared", sharedPassthruAssignmentPolicy="performance",
                 deviceType=[vim.host.GraphicsConfig.DeviceType(deviceId="0000:3b:00.0",
                                                                graphicsType="sharedDirect")]),
             "config.sharedPassthruGpuTypes": ["grid_p40-8q", "grid_p40-4q"]},
            {"obj": vim.HostSystem("host-1"), "moid": "host-1", "name": "esxi-01", "parent": cluster,
             "runtime.connectionState": "connected", "runtime.inMaintenanceMode": False,
             "hardware.pciDevice": [p40, nic], "config.graphicsInfo": [gpu_info, nic_info],
             "config.graphicsConfig": config,
             "config.sharedPassthruGpuTypes": ["grid_p40-8q", "grid_p40-4q", "grid_p40-2b4"]},
            {"obj": vim.HostSystem("host-9"), "moid": "host-9", "name": "esxi-sa", "parent": standalone,
             "runtime.connectionState": "connected", "runtime.inMaintenanceMode": True,
             "hardware.pciDevice": [], "config.graphicsInfo": [], "config.graphicsConfig": config,
             "config.sharedPassthruGpuTypes": []},
        ],
        vim.ComputeResource: [
            {"obj": cluster, "moid": "domain-c7", "name": "gpu-cluster", "parent": host_folder},
            {"obj": standalone, "moid": "domain-s9", "name": "esxi-sa", "parent": host_folder},
        ],
        vim.Datacenter: [{"obj": dc, "moid": "datacenter-1", "name": "dc1"}],
        vim.Folder: [{"obj": host_folder, "moid": "group-h4", "parent": dc}],
        vim.VirtualMachine: [
            {"obj": vm1, "moid": "vm-1", "name": "train-1"},
            {"obj": vm2, "moid": "vm-2", "name": "train-2"},
            {"obj": vm3, "moid": "vm-3", "name": "idle-1"},
        ],
    }
    running = {"config.hardware.device": [_vgpu(13000, "grid_p40-8q")], "runtime.powerState": "poweredOn",
               "runtime.host": vim.HostSystem("host-1"), "config.hardware.memoryMB": 8192,
               "config.memoryReservationLockedToMax": True,
               "resourceConfig.memoryAllocation.reservation": 8192}
    vm_props = {
        "vm-1": dict(running, name="train-1"),
        "vm-2": dict(running, name="train-2"),
        "vm-3": {"name": "idle-1", "config.hardware.device": [], "runtime.powerState": "poweredOff",
                 "runtime.host": vim.HostSystem("host-2"), "config.hardware.memoryMB": 4096,
                 "config.memoryReservationLockedToMax": False,
                 "resourceConfig.memoryAllocation.reservation": 4096},
    }
    return FakeClient(tree, vm_props)


def test_gpus_profiles_and_capacity(client):
    inventory = _inventory.read_inventory(client, cluster="gpu-cluster")
    assert [host["name"] for host in inventory["hosts"]] == ["esxi-01", "esxi-02"]

    busy, idle = inventory["hosts"]
    assert busy["datacenter"] == "dc1" and busy["cluster"] == "gpu-cluster"
    assert len(busy["gpus"]) == 1, "only NVIDIA devices are GPUs"
    gpu = busy["gpus"][0]
    assert gpu["model"] == "P40"
    assert gpu["memory_mib"] == 24576
    assert gpu["profile"] == "grid_p40-8q"
    assert gpu["vms"] == ["train-1", "train-2"]
    assert (gpu["used"], gpu["max"], gpu["free"]) == (2, 3, 1)
    assert gpu["xorg_restart_pending"] is False

    profiles = dict((p["name"], p) for p in busy["supported_profiles"])
    assert profiles["grid_p40-8q"]["free"] == 1
    assert profiles["grid_p40-4q"]["free"] == 0
    assert profiles["grid_p40-4q"]["capacity"] == 6
    assert profiles["grid_p40-2b4"]["cuda"] is False

    idle_gpu = idle["gpus"][0]
    assert idle_gpu["configured_graphics_type"] == "sharedDirect"
    assert idle_gpu["graphics_type"] == "basic"
    assert idle_gpu["xorg_restart_pending"] is True
    assert idle_gpu["profile"] is None and idle_gpu["free"] is None
    assert dict((p["name"], p["free"]) for p in idle["supported_profiles"]) == {"grid_p40-8q": 0, "grid_p40-4q": 0}
    assert idle["graphics_config"]["devices"] == [
        {"pci_id": "0000:3b:00.0", "graphics_type": "sharedDirect", "vgpu_mode": None}]


def test_reads_whatever_the_inventory(client):
    _inventory.read_inventory(client)
    assert [call[0] for call in client.calls] == ["retrieve", "retrieve_objects"]
    assert client.calls[1][1] == ["vm-1", "vm-2"]
    client.calls[:] = []
    _inventory.read_inventory(client, vm_names=["idle-1"])
    assert [call[0] for call in client.calls] == ["retrieve", "retrieve", "retrieve_objects"]
    assert client.calls[2][1] == ["vm-1", "vm-2", "vm-3"]


def test_no_vm_read_when_nothing_runs_or_is_asked(client):
    _inventory.read_inventory(client, esxi_hostnames=["esxi-sa"])
    assert [call[0] for call in client.calls] == ["retrieve"]


def test_standalone_host_and_requested_vm(client):
    inventory = _inventory.read_inventory(client, esxi_hostnames=["esxi-sa", "esxi-01"], vm_names=["idle-1"])
    assert [host["name"] for host in inventory["hosts"]] == ["esxi-sa", "esxi-01"]
    assert inventory["hosts"][0]["cluster"] is None
    assert inventory["hosts"][0]["datacenter"] == "dc1"
    assert inventory["hosts"][0]["maintenance_mode"] is True
    vm = inventory["vms"][0]
    assert vm["host"] == "esxi-02"
    assert vm["vgpus"] == []
    assert vm["memory_reservation_locked_to_max"] is False
    assert vm["memory_fully_reserved"] is True


@pytest.mark.parametrize("kwargs, error, words", [
    ({"cluster": "nope"}, NotFound, ["nope", "gpu-cluster"]),
    ({"esxi_hostnames": ["esxi-77"]}, NotFound, ["esxi-77", "esxi-01"]),
    ({"cluster": "gpu-cluster", "esxi_hostnames": ["esxi-sa"]}, NotFound, ["esxi-sa", "gpu-cluster"]),
    ({"datacenter": "dc9"}, NotFound, ["dc9", "dc1"]),
    ({"vm_names": ["ghost"]}, NotFound, ["ghost"]),
])
def test_unknown_names(client, kwargs, error, words):
    with pytest.raises(error) as caught:
        _inventory.read_inventory(client, **kwargs)
    for word in words:
        assert word in str(caught.value)


def test_duplicate_vm_names_are_refused(client):
    client.tree[vim.VirtualMachine].append({"obj": vim.VirtualMachine("vm-4"), "moid": "vm-4", "name": "idle-1"})
    with pytest.raises(InputError, match="idle-1"):
        _inventory.read_inventory(client, vm_names=["idle-1"])


def _record(run, at="2026-11-28T09:00:00.000000Z"):
    return json.dumps({"v": 1, "run": run, "by": "ops@ctl02", "controller": "ctl02", "pid": 42, "vcenter": "vc-1",
                       "cluster": "domain-c7", "power": "poweredOn", "at": at,
                       "want": {"state": "present", "profiles": ["grid_p40-8q"], "host": None}})


def with_power_records(client, field_defined=True):
    """The power record field, and VMs that carry records: train-1 (esxi-01), idle-1 a damaged one (esxi-02),
    vm-8 on esxi-sa and vm-9 on no host."""
    manager = vim.CustomFieldsManager("CustomFieldsManager")
    client.content = types.SimpleNamespace(customFieldsManager=manager)
    fields = [vim.CustomFieldsManager.FieldDef(key=7, name="other"),
              vim.CustomFieldsManager.FieldDef(key=101, name="gpuops.vgpu.vm_vgpu.power")]
    client.vm_props["CustomFieldsManager"] = {"field": fields if field_defined else fields[:1]}

    def value(text, key=101):
        return [vim.CustomFieldsManager.StringValue(key=key, value=text)]

    tree = client.tree[vim.VirtualMachine]
    tree[0].update({"customValue": value(_record("r-1")), "runtime.host": vim.HostSystem("host-1")})
    tree[1].update({"customValue": value(_record("r-1"), key=7), "runtime.host": vim.HostSystem("host-1")})
    tree[2].update({"customValue": value('{"v": 1, "run"'), "runtime.host": vim.HostSystem("host-2")})
    tree.append({"obj": vim.VirtualMachine("vm-8"), "moid": "vm-8", "name": "batch-8",
                 "customValue": value(_record("r-2")), "runtime.host": vim.HostSystem("host-9")})
    tree.append({"obj": vim.VirtualMachine("vm-9"), "moid": "vm-9", "name": "orphan-9",
                 "customValue": value(_record("r-3")) + value("", key=7)})
    asked = []
    plain = client.retrieve

    def retrieve(specs, root=None):
        asked.append(dict((vim_type.__name__, sorted(paths)) for vim_type, paths in specs.items()))
        return plain(specs, root)

    client.retrieve = retrieve
    return asked


def test_power_records_of_the_vms_on_the_hosts_read_or_on_none(client):
    asked = with_power_records(client)
    inventory = _inventory.read_inventory(client, cluster="gpu-cluster", vm_names=["idle-1"], power_records=True)
    assert [(r["name"], r["host"], r["run"], r["by"], r["problem"] is None) for r in inventory["power_records"]] == [
        ("idle-1", "esxi-02", None, None, False), ("orphan-9", None, "r-3", "ops@ctl02", True),
        ("train-1", "esxi-01", "r-1", "ops@ctl02", True)]
    assert "cut short" in inventory["power_records"][0]["problem"]
    assert inventory["power_records"][2]["recorded_at"] == "2026-11-28T09:00:00.000000Z"
    assert asked[1]["vim.VirtualMachine"] == ["customValue", "name", "runtime.host"], "one read for names and records"
    assert [vm["name"] for vm in inventory["vms"]] == ["idle-1"]

    everywhere = _inventory.read_inventory(client, power_records=True)
    assert [r["name"] for r in everywhere["power_records"]] == ["batch-8", "idle-1", "orphan-9", "train-1"]
    assert everywhere["vms"] == []


def test_power_records_cost_one_read_where_no_vm_can_carry_one(client):
    asked = with_power_records(client, field_defined=False)
    inventory = _inventory.read_inventory(client, cluster="gpu-cluster", power_records=True)
    assert inventory["power_records"] == []
    assert [call[0] for call in client.calls] == ["retrieve", "retrieve_objects", "retrieve_objects"]
    assert len(asked) == 1, "no VM read for records that cannot exist"
    named = _inventory.read_inventory(client, cluster="gpu-cluster", vm_names=["idle-1"], power_records=True)
    assert asked[-1]["vim.VirtualMachine"] == ["name"] and named["power_records"] == []
    assert "power_records" not in _inventory.read_inventory(client, cluster="gpu-cluster")
