#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: host_passthrough
short_description: DirectPath I/O passthrough on or off for the NVIDIA GPUs and NVSwitches of ESXi hosts
version_added: 0.2.0
description:
  - Turns PCI passthrough (DirectPath I/O) on or off for NVIDIA GPUs of the hosts of a cluster or of named hosts,
    chosen by PCI id, by model, or as every NVIDIA GPU not used for vGPU.
  - All hosts are read in one vCenter round trip; each host that changes gets one UpdatePassthruConfig call for all
    its devices.
  - vSphere applies the change at once where the device can be rebound without a reboot (vSphere 7.0 Update 2 and
    later), otherwise at the next reboot; RV(hosts[].reboot_required) says which hosts wait for one. With
    O(reboot=true) the module reboots those hosts through vCenter, one at a time, as
    M(gpuops.vgpu.host_maintenance) with O(gpuops.vgpu.host_maintenance#module:state=rebooted) does (into
    maintenance mode, reboot, back connected, out of maintenance mode); without it, it reboots nothing.
  - Refuses, before any change, a GPU that runs vGPUs, a device that cannot be passed through, an unknown PCI id
    or model, and, with O(reboot=true), a host to reboot whose VMs keep it from maintenance mode.
  - Refuses turning passthrough on for a host with NVSwitches (an HGX board), as NVIDIA does not support GPU
    passthrough on NVSwitch systems under VMware vSphere; such GPUs serve full-size C-series vGPUs instead.
    Turning passthrough off there is allowed.
author:
  - gpuops maintainers (@gpuops)
requirements:
  - pyvmomi >= 8.0.3.0
extends_documentation_fragment:
  - gpuops.vgpu.vcenter
  - gpuops.vgpu.host_scope
  - gpuops.vgpu.attributes
  - gpuops.vgpu.attributes.ACTION_GROUP_VCENTER
attributes:
  check_mode:
    support: full
    details: Sends nothing; RV(hosts) shows the devices as they would be (waiting for a reboot on hosts whose
      C(capability.deviceRebindWithoutRebootSupported) is not true, unless O(reboot=true)).
  diff_mode:
    support: none
options:
  devices:
    description:
      - PCI ids of GPUs or NVSwitches as vSphere shows them (V(0000:3b:00.0)); V(3b:00.0) also matches. Every
        selected host must have them.
    type: list
    elements: str
  models:
    description:
      - GPU models, as the collection's catalog names them (V(A100-40)) or as part of the device name
        (V(A100-SXM4)). Every selected host must have one.
    type: list
    elements: str
  all_gpus_not_used_for_vgpu:
    description:
      - Every NVIDIA GPU that neither runs Shared Direct (vGPU) nor has vGPU VMs running.
    type: bool
    default: false
  include_nvswitches:
    description:
      - Also the hosts' NVSwitches (NVIDIA PCI bridges), which a guest would need for NVLink on an NVSwitch board.
        Under vSphere a host with NVSwitches is refused for passthrough (see above), so this only matters for
        turning passthrough off.
    type: bool
    default: true
  state:
    description: V(enabled) turns passthrough on, V(disabled) off.
    type: str
    choices: [enabled, disabled]
    default: enabled
  reboot:
    description:
      - Reboot the hosts where a selected device waits for a reboot (after this change or an earlier one), so that
        it takes effect (into maintenance mode, reboot, back connected, out of maintenance mode), one host at a
        time. Powered-on VMs on such a host must be movable by DRS (fully automated), else the module fails before
        any change.
      - V(false) reboots nothing and reports the waiting devices in RV(hosts[].reboot_pending_devices).
      - Before a host enters maintenance mode for its reboot, its custom attribute C(gpuops.vgpu.maintenance) records
        it (owner V(host_passthrough)), and the record goes when the host is out again. A host that a stopped run
        left in maintenance mode with that record is rebooted if a device still waits for it (with O(reboot=true)),
        and taken out of maintenance mode once nothing waits (RV(hosts[].left_maintenance)), by any later run.
    type: bool
    default: false
  reboot_timeout:
    description:
      - With O(reboot=true), seconds a host may take from its reboot until vCenter sees it connected again.
    type: int
    default: 1200
"""

EXAMPLES = r"""
- name: Pass the A100s of the HPC hosts through whole
  gpuops.vgpu.host_passthrough:
    hostname: "{{ vcenter_hostname }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    cluster: hpc-cluster
    models: [A100-40]

- name: Give two GPUs back to the host
  gpuops.vgpu.host_passthrough:
    hostname: "{{ vcenter_hostname }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    esxi_hostnames: [esxi-31.lab.local]
    devices: ["0000:86:00.0", "0000:af:00.0"]
    state: disabled

- name: Hosts that cannot rebind the GPUs without a reboot are rebooted
  gpuops.vgpu.host_passthrough:
    cluster: hpc-cluster
    all_gpus_not_used_for_vgpu: true
    reboot: true
    reboot_timeout: 900
"""

RETURN = r"""
hosts:
  description: One entry per selected host.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Host name in vCenter.
      type: str
    changed:
      description: Whether passthrough changed on the host (would, in check mode).
      type: bool
    devices:
      description:
        - The selected devices after the change (predicted in check mode), each with C(pci_id), C(kind) (gpu or
          nvswitch), C(device_name), C(passthru_capable), C(passthru_enabled) and C(passthru_active).
      type: list
      elements: dict
    changed_devices:
      description: PCI ids whose passthrough setting changed.
      type: list
      elements: str
    reboot_required:
      description: Whether some device's setting takes effect only after the host reboots (after the module's
        reboot, false for a host it rebooted).
      type: bool
    rebooted:
      description: Whether the module rebooted the host (would, in check mode).
      type: bool
    reboot_pending_devices:
      description: PCI ids whose passthruActive differs from passthruEnabled.
      type: list
      elements: str
    left_maintenance:
      description: Whether the module took the host out of the maintenance mode a stopped run had left it in for a
        reboot (would, in check mode).
      type: bool
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import host_scope, vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._host_passthrough import configure


def argument_spec():
    return vcenter_spec(
        host_scope(),
        devices=dict(type="list", elements="str"),
        models=dict(type="list", elements="str"),
        all_gpus_not_used_for_vgpu=dict(type="bool", default=False),
        include_nvswitches=dict(type="bool", default=True),
        state=dict(type="str", choices=["enabled", "disabled"], default="enabled"),
        reboot=dict(type="bool", default=False),
        reboot_timeout=dict(type="int", default=1200),
    )


def main():
    run_module(argument_spec(), configure, client=VCenterClient.from_params, supports_check_mode=True,
               required_one_of=[["cluster", "esxi_hostnames"], ["devices", "models", "all_gpus_not_used_for_vgpu"]])


if __name__ == "__main__":
    main()
