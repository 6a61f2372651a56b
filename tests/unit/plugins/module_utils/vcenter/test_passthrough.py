# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Passthrough rules that need no vCenter: BAR and MMIO sizing, device selection from real pyVmomi data objects."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _host_passthrough as hp
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _vm_passthrough as vp
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

vim = pytest.importorskip("pyVmomi").vim


def pci(pci_id, device_id, class_id=0x0302, vendor=0x10DE, name="GA100 [A100 PCIe 40GB]"):
    return vim.host.PciDevice(id=pci_id, classId=class_id, vendorId=vendor, deviceId=device_id, deviceName=name)


def host_item(devices):
    return {"name": "esxi-31", "hardware.pciDevice": devices, "config.graphicsInfo": [],
            "config.pciPassthruInfo": []}


def test_bar_sizes_round_the_framebuffer_up_to_a_power_of_two():
    assert vp.bar_gb("0x20f1") == 64  # A100 PCIe 40 GB
    assert vp.bar_gb("0x1b38") == 32  # Tesla P40, 24 GB
    assert vp.bar_gb("0xffff") is None
    assert vp.mmio_size_gb([64, 64]) == 128
    assert vp.mmio_size_gb([64, 64, 64]) == 256


def test_selection_by_model_id_and_name_and_nvswitches_come_along():
    item = host_item([pci("0000:3b:00.0", 0x20F1), pci("0000:5e:00.0", 0x20F1),
                      pci("0000:b5:00.0", 0x1AF1, class_id=0x0680, name="NVSwitch"),
                      pci("0000:03:00.0", 0x0536, class_id=0x0300, vendor=0x102B, name="G200eR2")])
    params = {"models": ["A100-40"], "include_nvswitches": True}
    assert hp.select_devices(item, params) == ["0000:3b:00.0", "0000:5e:00.0", "0000:b5:00.0"]
    assert hp.select_devices(item, {"models": ["a100 pcie"]}) == ["0000:3b:00.0", "0000:5e:00.0"]
    with pytest.raises(InputError, match="has no GPU of model L40S"):
        hp.select_devices(item, {"models": ["L40S"]})
    with pytest.raises(InputError, match="0000:3b:00.0 \\(GA100"):
        hp.select_devices(item, {"devices": ["0000:03:00.0"]})


def test_nvlink_sets_join_the_pairs_of_topo_m_named_by_pci_bus_id():
    gpus = [{"pci_bus_id": "00000000:%s:00.0" % bus} for bus in ("3B", "5E", "86", "AF")]
    pairs = [{"a": "GPU0", "b": "GPU1", "links": 12}, {"a": "GPU2", "b": "GPU3", "links": 12},
             {"a": "GPU1", "b": "GPU0", "links": 12}]
    facts = {"gpus": gpus, "topology": {"nvlink_pairs": pairs}}
    assert vp.nvlink_sets_from_smi(facts) == [["0000:3b:00.0", "0000:5e:00.0"], ["0000:86:00.0", "0000:af:00.0"]]
    board = dict(facts, topology={"nvlink_pairs": [{"a": "GPU%d" % a, "b": "GPU%d" % b, "links": 18}
                                                   for a in range(4) for b in range(a + 1, 4)]})
    assert vp.nvlink_sets_from_smi(board) == [["0000:3b:00.0", "0000:5e:00.0", "0000:86:00.0", "0000:af:00.0"]]
    assert vp.nvlink_source({"host_nvidia_smi": {"h": facts}, "nvlink_sets": {"h": [["x"]]}}, "h")[1] == \
        "host nvidia-smi"
    assert vp.nvlink_source({"nvlink_sets": {"h": [["0000:3b:00.0"]]}}, "h")[1] == "inventory"
    with pytest.raises(InputError, match="list 4 GPU"):
        vp.nvlink_sets_from_smi(dict(facts, topology={"nvlink_pairs": [{"a": "GPU4", "b": "GPU5", "links": 1}]}))


@pytest.mark.parametrize("rebinds, pending", [(True, []), (False, ["0000:3b:00.0"]), (None, ["0000:3b:00.0"])])
def test_a_host_that_cannot_rebind_is_predicted_to_wait_for_its_reboot(rebinds, pending):
    item = host_item([pci("0000:3b:00.0", 0x20F1), pci("0000:5e:00.0", 0x20F1)])
    item["config.pciPassthruInfo"] = [
        vim.host.PciPassthruInfo(id="0000:3b:00.0", passthruCapable=True, passthruEnabled=False, passthruActive=False),
        vim.host.PciPassthruInfo(id="0000:5e:00.0", passthruCapable=True, passthruEnabled=True, passthruActive=True)]
    item["capability.deviceRebindWithoutRebootSupported"] = rebinds
    host = hp.HostPassthrough(item, {"models": ["A100-40"], "state": "enabled"})
    predicted = host.predicted()
    assert [d["pci_id"] for d in predicted if d["passthru_enabled"] != d["passthru_active"]] == pending
    assert host.needs_reboot() is bool(pending)
    assert all(d["passthru_active"] for d in host.predicted(rebooting=True))


def test_a_host_with_nvswitches_is_refused_before_any_change_but_may_turn_passthrough_off():
    devices = [pci("0000:3b:00.0", 0x2330, name="GH100 [H100 SXM5 80GB]"),
               pci("0000:05:00.0", 0x22A3, class_id=0x0680, name="GH100 [H100 NVSwitch]")]

    def host(enabled):
        item = host_item(devices)
        item["config.pciPassthruInfo"] = [vim.host.PciPassthruInfo(
            id="0000:3b:00.0", passthruCapable=True, passthruEnabled=enabled, passthruActive=enabled)]
        return item

    with pytest.raises(InputError, match="NVSwitch board \\(NVSwitches 0000:05:00.0\\): NVIDIA does not support"):
        hp.HostPassthrough(host(False), {"devices": ["0000:3b:00.0"], "state": "enabled"}).check()
    hp.HostPassthrough(host(True), {"devices": ["0000:3b:00.0"], "state": "disabled"}).check()
