# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Registered results as the doctor role collects them, for a healthy three-host P40 cluster after the job."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import copy
import json

HOSTS = ("esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local")
NOW = "2026-03-01T12:00:00Z"
DRIVER = "525.105.14-1OEM.800.1.0.20613240"
DAEMON = "525.105.14-0.0.0000"
INTENTS_OK = {
    "cpu_virtualization": {"status": "ok", "attributes": {"ProcVirtualization": "Enabled"}, "changed": False},
    "iommu": {"status": "ok", "attributes": {"ProcVirtualization": "Enabled"}, "changed": False,
              "via": "cpu_virtualization", "note": "no separate VT-d attribute"},
    "sriov": {"status": "ok", "attributes": {"SriovGlobalEnable": "Enabled"}, "changed": False},
    "mmio_above_4g": {"status": "ok", "attributes": {"MmioAbove4Gb": "Enabled"}, "changed": False},
    "pcie_aer": {"status": "not_exposed", "attributes": {}, "changed": False, "note": "not exposed by this BIOS"},
}


def gpu(vms=(), profile="grid_p40-8q"):
    used = len(vms)
    return {"pci_id": "0000:3b:00.0", "device_name": "Tesla P40", "model": "P40", "memory_mib": 24576,
            "graphics_type": "sharedDirect", "configured_graphics_type": "sharedDirect",
            "xorg_restart_pending": False, "vgpu_mode": None, "profile": profile if used else None,
            "profiles": [profile] if used else [], "vms": list(vms), "used": used, "max": 3 if used else None,
            "free": 3 - used if used else None}


def host_smi(name):
    """nvidia_smi_info facts of a host: -q -x and vgpu -q, with gpu-vm-01's vGPU running on esxi-01."""
    vgpus = [{"vm_name": "gpu-vm-01", "vgpu_name": "GRID P40-8Q"}] if name == HOSTS[0] else []
    return {"present": True, "driver_version": "525.105.14", "errors": {},
            "gpus": [{"pci_bus_id": "00000000:3B:00.0", "name": "Tesla P40", "temperature_gpu_c": 41,
                      "ecc_mode_current": True, "ecc_mode_pending": True}],
            "vgpu": {"gpus": [{"pci_bus_id": "00000000:3B:00.0", "active_vgpus": len(vgpus), "vgpus": vgpus}]}}


def healthy():
    """A symmetric three-host P40 cluster after the job: one guest on esxi-01, every layer as it should be."""
    hosts = []
    for index, name in enumerate(HOSTS):
        vms = ["gpu-vm-01"] if index == 0 else []
        hosts.append({"name": name, "cluster": "gpu-cluster", "connection_state": "connected",
                      "maintenance_mode": False, "gpus": [gpu(vms)],
                      "supported_profiles": [{"name": "grid_p40-8q", "max_per_gpu": 3, "capacity": 3,
                                              "free": 3 - len(vms), "cuda": True}]})
    compliance_hosts = [{"name": name, "status": "COMPLIANT", "components": {
        "ESXi": {"current": "8.0.2", "target": "8.0.2", "status": "COMPLIANT"},
        "NVD-VGPU-800": {"current": DRIVER, "target": DRIVER, "status": "COMPLIANT"},
        "nvd-gpu-mgmt-daemon": {"current": DAEMON, "target": DAEMON, "status": "COMPLIANT"}}} for name in HOSTS]
    guest_smi = {"present": True, "driver_version": "525.105.17", "cuda_version": "12.0", "gpus": [{
        "name": "GRID P40-8Q", "license_product": "NVIDIA RTX Virtual Workstation", "license_status": "Licensed",
        "licensed": True, "license_expiry": "2026-03-03T12:00:00Z"}]}
    return {
        "vcenter": "vc.example.com",
        "clusters": ["gpu-cluster"],
        "gpu_info": {"changed": False, "hosts": hosts, "vms": [{
            "name": "gpu-vm-01", "host": "esxi-01.lab.local", "power_state": "poweredOn",
            "vgpus": [{"key": 13000, "profile": "grid_p40-8q"}], "memory_fully_reserved": True}]},
        "settings": {"changed": False, "settings": {"before": {"vgpu.hotmigrate.enabled": True}}},
        "automation": {"gpu-cluster": {"changed": False, "previous": {
            "drs_enabled": True, "drs_behavior": "fullyAutomated", "dpm_enabled": True, "dpm_behavior": "automated"}}},
        "vlcm": {"gpu-cluster": {"cluster": {"image_managed": True}, "image": {
            "base_image": "8.0.2", "components": {"NVD-VGPU-800": DRIVER, "nvd-gpu-mgmt-daemon": DAEMON}},
            "compliance": {"status": "COMPLIANT", "scan_time": "2026-03-01T10:00:00Z", "hosts": compliance_hosts}}},
        "cluster_vgpu_records": {"gpu-cluster": {"state": "restored"}},
        "bmc": dict((name, {"address": "https://10.0.0.%d" % (21 + i), "info": {
            "vendor": {"family": "dell"}, "model": "PowerEdge R730", "bios_version": "2.17.0", "inlet_celsius": 23,
            "temperatures": [{"name": "Inlet", "context": "Intake", "reading_celsius": 23}],
            "bios": {"attributes": {"ProcVirtualization": "Enabled", "SriovGlobalEnable": "Enabled",
                                    "MmioAbove4Gb": "Enabled"}, "pending": {}}},
            "bios": {"changed": False, "intents": copy.deepcopy(INTENTS_OK)}}) for i, name in enumerate(HOSTS)),
        "host_nvidia_smi": dict((name, {"nvidia_smi": host_smi(name)}) for name in HOSTS),
        "guests_group": "gpu_guests",
        "guests": [{"name": "trainer.example.com", "vm": "gpu-vm-01", "profile": "grid_p40-8q",
                    "nvidia_smi": {"changed": False, "nvidia_smi": guest_smi},
                    "cuda": {"content": base64.b64encode(json.dumps(
                        {"cuda": {"name": "CUDA SDK", "version": "12.0.1"}}).encode()).decode()}}],
    }
