# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the doctor's checks share: the BIOS intents, words for off, remediation texts, driver branch labels, times."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _compatibility
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

OFF_WORDS = ("Disabled", "Disable", "Off", "False", "false")
BIOS_INTENTS = (
    ("cpu_virtualization", "CPU virtualisation (VT-x/AMD-V)"),
    ("iommu", "IOMMU (VT-d/AMD-Vi)"),
    ("sriov", "SR-IOV"),
    ("mmio_above_4g", "MMIO above 4 GB"),
    ("pcie_aer", "PCIe AER"),
)

FIX = {
    "bios": "Run playbooks/bios.yml (gpuops.vgpu.bios_settings, profile: gpu_virtualization) and reboot the host "
            "in maintenance mode.",
    "bios_pending": "Reboot the host in maintenance mode to apply the pending BIOS values (playbooks/bios.yml "
                    "with reboot enabled).",
    "driver": "Add the vGPU host driver and GPU management daemon to the cluster image and remediate the hosts "
              "(playbooks/hosts.yml, role gpuops.vgpu.host_driver).",
    "graphics": "Set the GPU to Shared Direct and restart Xorg with the host's vGPU VMs off (role "
                "gpuops.vgpu.host_graphics).",
    "license": "Put a current client configuration token in place, set FeatureType=1 and restart nvidia-gridd "
               "(role gpuops.vgpu.grid_license); check the license server has free licenses.",
    "airflow": "Check fans and airflow (passive GPUs such as the P40 depend on server airflow) and the room's "
               "cooling.",
    "host_smi": "Give the esxi_hosts SSH connection variables (ESXi Shell and SSH on, root's key in "
                "/etc/ssh/keys-root/authorized_keys) so the doctor runs nvidia-smi on them, or pass "
                "doctor_host_nvidia_smi.",
}


def branch_label(version):
    try:
        info = _compatibility.driver_branch(version)
    except InputError:
        return ""
    release = ", vGPU %s" % info["vgpu_release"] if info["vgpu_release"] else ""
    return ", %s%s" % (info["branch"], release)


def parse_time(value):
    if isinstance(value, datetime.datetime):
        return value.replace(tzinfo=None)
    text = str(value).strip().replace("Z", "").split("+", 1)[0].split(".", 1)[0]
    return datetime.datetime.strptime(text.replace(" ", "T"), "%Y-%m-%dT%H:%M:%S")
