# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's passthrough view: GPUs in their NVLink sets, the VM holding each, reboots and split sets."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor import Findings, options_of
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_cluster import cluster_checks
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_infra import host_checks
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_passthrough import nvlink_sets, passthrough_checks

PCI = ["0000:3b:00.0", "0000:5e:00.0", "0000:86:00.0", "0000:af:00.0"]
SETS = [PCI[:2], PCI[2:]]


def gpu(pci, vm=None, enabled=True, active=True):
    return {"pci_id": pci, "device_name": "NVIDIA A100-PCIE-40GB", "graphics_type": "basic",
            "configured_graphics_type": "basic", "profiles": [], "vms": [], "used": 0, "max": None,
            "passthrough": {"enabled": enabled, "active": active, "vm": vm, "vm_power_state": vm and "poweredOn"}}


def host(gpus):
    return {"name": "esxi-31.lab.local", "connection_state": "connected", "maintenance_mode": False, "gpus": gpus,
            "nvlink_sets": SETS, "nvlink_sets_source": "inventory", "driver": None,
            "nvidia_smi": {"error": "nvidia-smi: not found", "kind": "not_installed", "gpus": [], "vgpus": []}}


def findings_of(gpus):
    out = Findings()
    passthrough_checks(out, host(gpus))
    return out.items


def test_whole_pairs_pass_and_name_their_vms():
    [finding] = findings_of([gpu(PCI[0], "pt-vm-01"), gpu(PCI[1], "pt-vm-01"), gpu(PCI[2]), gpu(PCI[3])])
    assert finding["status"] == "PASS"
    assert finding["message"] == (
        "4 GPU(s) in passthrough, NVLink sets from inventory: 0000:3b:00.0+0000:5e:00.0 (NVLink) -> pt-vm-01 "
        "(poweredOn); 0000:86:00.0+0000:af:00.0 (NVLink) -> free.")


def test_a_split_pair_and_a_pending_reboot_warn():
    [split] = findings_of([gpu(PCI[0], "pt-vm-01"), gpu(PCI[1], "pt-vm-02"), gpu(PCI[2]), gpu(PCI[3])])
    assert split["status"] == "WARN" and "NVLink set split between VMs: 0000:3b:00.0+0000:5e:00.0" in \
        split["message"]
    assert "nvlink: true" in split["remediation"]
    [pending] = findings_of([gpu(PCI[0], active=False), gpu(PCI[1])])
    assert pending["status"] == "WARN" and "waits for a reboot on 0000:3b:00.0" in pending["message"]


def test_a_host_with_only_passthrough_gpus_needs_no_vgpu_manager_nor_shared_direct():
    out = Findings()
    thresholds = {"gpu_temperature_warn_celsius": 80, "gpu_temperature_fail_celsius": 90}
    host_checks(out, host([gpu(pci) for pci in PCI]), {}, thresholds)
    checks = dict((f["check"], f["status"]) for f in out.items)
    assert checks["host_driver"] == "PASS" and checks["passthrough"] == "PASS"
    assert "shared_direct" not in checks and "one_profile_size" not in checks


def test_nvlink_sets_from_the_host_smi_win_over_the_inventory():
    smi = {"gpus": [{"pci_bus_id": "00000000:%s" % pci[5:].upper()} for pci in PCI],
           "topology": {"nvlink_pairs": [{"a": "GPU0", "b": "GPU1", "links": 12}]}}
    assert nvlink_sets("h", smi, {"h": SETS}) == ([PCI[:2]], "host nvidia-smi")
    assert nvlink_sets("h", None, {"h": SETS}) == (SETS, "inventory")
    assert nvlink_sets("h", None, {}) == ([], None)


def test_a_passthrough_only_cluster_needs_no_vgpu_driver_in_its_image():
    out = Findings()
    cluster_checks(out, {"hotmigrate": {"value": True}, "clusters": [{
        "name": "hpc-cluster", "vlcm_gathered": True, "image_managed": True, "image": {"ESXi": "8.0.2"}}],
        "hosts": [dict(host([gpu(pci) for pci in PCI]), cluster="hpc-cluster")]}, options_of({"now": "2026-03-01T12:00:00Z"}))
    [image] = [f for f in out.items if f["check"] == "cluster_image"]
    assert image["status"] == "PASS" and "needs no NVIDIA vGPU host driver" in image["message"]
