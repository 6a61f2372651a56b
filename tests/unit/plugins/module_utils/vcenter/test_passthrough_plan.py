# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""passthrough_plan: what host_passthrough and vm_passthrough would change, judged from one read of real pyVmomi
data objects."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import NotFound
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._passthrough_plan import plan

vim = pytest.importorskip("pyVmomi").vim

GPUS = ["0000:3b:00.0", "0000:5e:00.0", "0000:86:00.0", "0000:af:00.0"]
PAIRS = [GPUS[:2], GPUS[2:]]
HOST = "esxi-31.lab.local"


class FakeClient(object):
    """Answers the plan's two reads and counts them."""

    def __init__(self, hosts, vms):
        self.host_items, self.vm_items, self.reads = hosts, vms, []

    def retrieve(self, specs, root=None):
        self.reads.append("vms")
        return dict((vim_type, self.vm_items) for vim_type in specs)

    def hosts(self, properties, **scope):
        self.reads.append("hosts")
        return self.host_items


def a100_host(enabled=None, active=None, moid="host-31", name=HOST):
    """esxi-31's four A100s, each enabled for passthrough (and active) unless ``enabled`` (``active``) leaves it out."""
    enabled = GPUS if enabled is None else enabled
    active = enabled if active is None else active
    return {"obj": vim.HostSystem(moid), "moid": moid, "name": name, "datacenter": "lab-dc",
            "runtime.connectionState": "connected", "config.graphicsInfo": [],
            "hardware.pciDevice": [vim.host.PciDevice(id=pci_id, classId=0x0302, vendorId=0x10DE, deviceId=0x20F1,
                                                      deviceName="GA100 [A100 PCIe 40GB]") for pci_id in GPUS],
            "config.pciPassthruInfo": [vim.host.PciPassthruInfo(
                id=pci_id, passthruCapable=True, passthruEnabled=pci_id in enabled, passthruActive=pci_id in active)
                for pci_id in GPUS]}


def vm(name, gpus=(), moid=None, host="host-31", power="poweredOn", mmio=True):
    devices = [vim.vm.device.VirtualPCIPassthrough(
        key=13000 + n, backing=vim.vm.device.VirtualPCIPassthrough.DeviceBackingInfo(id=pci_id))
        for n, pci_id in enumerate(gpus)]
    extra = [vim.option.OptionValue(key="pciPassthru.use64bitMMIO", value="TRUE"),
             vim.option.OptionValue(key="pciPassthru.64bitMMIOSizeGB", value="128")] if mmio else []
    return {"obj": vim.VirtualMachine(moid or "vm-" + name), "moid": moid or "vm-" + name, "name": name,
            "config.hardware.device": devices, "config.hardware.memoryMB": 16384,
            "config.memoryReservationLockedToMax": True, "resourceConfig.memoryAllocation.reservation": 16384,
            "config.firmware": "efi", "config.extraConfig": extra, "runtime.powerState": power,
            "runtime.host": vim.HostSystem(host) if host else None}


def params(**changes):
    base = {"vms": [{"name": "pt-vm-01", "gpus": 2, "devices": None, "state": None},
                    {"name": "pt-vm-02", "gpus": 2, "devices": None, "state": None}],
            "state": "present", "esxi_hostnames": [], "datacenter": None, "models": None,
            "all_gpus_not_used_for_vgpu": True, "include_nvswitches": True, "nvlink": True,
            "nvlink_sets": {HOST: PAIRS}, "host_nvidia_smi": None, "nvlink_from_hosts": [], "reserve_memory": True}
    base.update(changes)
    return base


def converged():
    return FakeClient([a100_host()], [vm("pt-vm-01", PAIRS[0]), vm("pt-vm-02", PAIRS[1]), vm("other", host=None)])


def test_nothing_differs_where_both_modules_would_change_nothing_in_two_reads():
    client = converged()
    result = plan(client, params(), False)
    assert (result["host_differences"], result["vm_differences"], result["changed"]) == ([], [], False)
    assert client.reads == ["vms", "hosts"]
    assert result["hosts"] == [{"name": HOST, "changing_devices": [], "reboot_pending_devices": [], "problem": None}]
    assert [(v["name"], v["host"], v["gpus"], v["wanted"], v["why"]) for v in result["vms"]] == [
        ("pt-vm-01", HOST, PAIRS[0], PAIRS[0], None), ("pt-vm-02", HOST, PAIRS[1], PAIRS[1], None)]


def test_a_host_that_differs_holds_the_vms_back():
    client = FakeClient([a100_host(enabled=GPUS[:3])], converged().vm_items)
    result = plan(client, params(), False)
    assert result["host_differences"] == ["%s: 0000:af:00.0 to passthrough" % HOST]
    assert result["vm_differences"] == ["pt-vm-01: after the hosts' GPUs go to passthrough",
                                        "pt-vm-02: after the hosts' GPUs go to passthrough"]
    assert result["vms"][0]["wanted"] is None


def test_a_device_waiting_for_a_reboot_is_a_host_difference():
    client = FakeClient([a100_host(active=GPUS[:3])], converged().vm_items)
    assert plan(client, params(), False)["host_differences"] == ["%s: 0000:af:00.0 wait for a reboot" % HOST]


@pytest.mark.parametrize("changes, problem", [
    ({"esxi_hostnames": ["esxi-77"]}, "esxi-77: not found"),
    ({"datacenter": "other-dc"}, "%s: not found in datacenter other-dc" % HOST),
    ({"models": ["L40S"], "all_gpus_not_used_for_vgpu": False}, "%s: Host %s has no GPU of model L40S." % (HOST, HOST)),
])
def test_where_host_passthrough_would_refuse_the_host_differs(changes, problem):
    assert plan(converged(), params(**changes), False)["host_differences"] == [problem]


def test_a_disconnected_host_differs():
    client = converged()
    client.host_items[0]["runtime.connectionState"] = "disconnected"
    assert plan(client, params(), False)["host_differences"] == ["%s: is disconnected" % HOST]


def test_what_vm_passthrough_would_give_or_refuse_is_named_per_vm():
    client = FakeClient([a100_host()], [vm("pt-vm-01", mmio=False), vm("pt-vm-02", PAIRS[1])])
    result = plan(client, params(), False)
    assert result["vm_differences"] == [
        "pt-vm-01: gets 0000:3b:00.0, 0000:5e:00.0; needs pciPassthru.64bitMMIOSizeGB, pciPassthru.use64bitMMIO"]
    assert result["vms"][0]["wanted"] == PAIRS[0]
    refused = plan(converged(), params(vms=[{"name": "pt-vm-01", "gpus": 3, "devices": None, "state": None}]), False)
    assert refused["vm_differences"] == [
        "pt-vm-01: Nothing was changed: pt-vm-01 asks for 3 GPU(s) as whole NVLink sets; host %s cannot give that."
        % HOST]


def test_vms_whose_nvlink_sets_are_read_later_are_left_to_vm_passthrough():
    result = plan(converged(), params(nvlink_from_hosts=[HOST, "esxi-01"]), False)
    assert result["vm_differences"] == ["pt-vm-01: its host's NVLink sets come from the host's nvidia-smi",
                                        "pt-vm-02: its host's NVLink sets come from the host's nvidia-smi"]
    facts = {"gpus": [{"pci_bus_id": "00000000:%s:00.0" % bus} for bus in ("3B", "5E", "86", "AF")],
             "topology": {"nvlink_pairs": [{"a": "GPU0", "b": "GPU1", "links": 12},
                                           {"a": "GPU2", "b": "GPU3", "links": 12}]}}
    assert plan(converged(), params(nvlink_from_hosts=[HOST], host_nvidia_smi={HOST: facts}), False)["vm_differences"] == []
    assert plan(converged(), params(nvlink_from_hosts=[HOST], nvlink=False), False)["vm_differences"] == []


def test_a_vm_without_a_host_differs_and_a_missing_vm_fails():
    client = FakeClient([a100_host()], [vm("pt-vm-01", host=None), vm("pt-vm-02", PAIRS[0])])
    assert plan(client, params(), False)["vm_differences"] == ["pt-vm-01: has no host"]
    with pytest.raises(NotFound, match="VM.s. not found: pt-vm-01, pt-vm-02"):
        plan(FakeClient([a100_host()], []), params(), False)
