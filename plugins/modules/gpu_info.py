#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_info
short_description: GPU inventory of ESXi hosts as vCenter sees it, with vGPU profiles and free capacity
version_added: 0.1.0
description:
  - Reads, for the hosts of a cluster, a list of hosts or every host, the NVIDIA GPUs with their graphics type
    (active and configured), the vGPU VMs running on each GPU and the profile the GPU is carved to, the vGPU
    profiles the host supports with how many vGPUs of each it can hold and can still take, and the host's graphics
    configuration, and each GPU's vGPU mode (equal-size, mixed-size or MIG) on vSphere 8.0 Update 3 and later.
  - Profile facts (framebuffer, time-sliced or MIG, class) come from vCenter itself where it states them (its
    C(vgpuProfileInfo), vSphere 7.0 Update 3 and later), else from the collection's catalog; each profile says which.
  - With O(vms), also returns the vGPU devices, memory reservation, power state and host of those VMs.
  - With O(power_records), also the VMs that an interrupted M(gpuops.vgpu.vm_vgpu) run left with its power record,
    so that one read tells whether anything is left to finish.
  - The number of vCenter round trips does not depend on the number of hosts or VMs; vCenter's profile facts cost
    one C(QueryConfigTarget) per cluster or standalone host read.
author:
  - gpuops maintainers (@gpuops)
requirements:
  - pyvmomi >= 8.0.3.0
extends_documentation_fragment:
  - gpuops.vgpu.vcenter
  - gpuops.vgpu.host_scope
  - gpuops.vgpu.attributes.INFO_MODULE
  - gpuops.vgpu.attributes.ACTION_GROUP_VCENTER
options:
  vms:
    description:
      - Names of VMs whose vGPU state to return in RV(vms).
    type: list
    elements: str
    default: []
  power_records:
    description:
      - Also list in RV(power_records) the VMs that carry the power record of an interrupted
        M(gpuops.vgpu.vm_vgpu) run (custom attribute C(gpuops.vgpu.vm_vgpu.power)), that is, VMs it powered off that
        the next M(gpuops.vgpu.vm_vgpu) run powers on again.
      - Costs one more read of vCenter's custom field definitions, and where any VM may carry such a record, the
        custom values of every VM in the same call as the VM names.
    type: bool
    default: false
notes:
  - Without O(cluster) and O(esxi_hostnames), every host is read (every host of O(datacenter) when given).
  - C(free) counts only GPUs whose active graphics type is C(sharedDirect). A GPU still in C(basic) or C(shared)
    mode, or one waiting for an Xorg restart (C(xorg_restart_pending)), takes no vGPU yet.
"""

EXAMPLES = r"""
- name: GPU inventory of the vGPU cluster
  gpuops.vgpu.gpu_info:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    cluster: gpu-cluster
  register: gpus

- name: Profiles every host offers
  ansible.builtin.debug:
    msg: "{{ item.name }}: {{ item.supported_profiles | map(attribute='name') | join(', ') }}"
  loop: "{{ gpus.hosts }}"
  loop_control:
    label: "{{ item.name }}"

- name: vGPU state of two VMs, with credentials set once for the action group
  module_defaults:
    group/gpuops.vgpu.vcenter:
      hostname: "{{ vcenter_hostname }}"
      port: "{{ vcenter_port }}"
      username: "{{ vcenter_username }}"
      password: "{{ vcenter_password }}"
      validate_certs: "{{ vcenter_validate_certs }}"
  gpuops.vgpu.gpu_info:
    esxi_hostnames:
      - esxi-01.lab.local
    vms:
      - gpu-vm-01
      - gpu-vm-02
"""

RETURN = r"""
hosts:
  description: The selected hosts, sorted by name unless O(esxi_hostnames) gives the order.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: "Host name in vCenter."
      type: str
    moid:
      description: "Managed object id."
      type: str
    cluster:
      description: "Cluster of the host, null for a standalone host."
      type: str
    datacenter:
      description: "Datacenter of the host."
      type: str
    connection_state:
      description: "C(connected), C(disconnected) or C(notResponding)."
      type: str
    maintenance_mode:
      description: "Whether the host is in maintenance mode."
      type: bool
    graphics_config:
      description: The host's graphics configuration.
      type: dict
      contains:
        default_graphics_type:
          description: "C(shared) or C(sharedDirect)."
          type: str
        assignment_policy:
          description: "C(performance) or C(consolidation)."
          type: str
        devices:
          description: "Per-GPU entries (pci_id, graphics_type, vgpu_mode)."
          type: list
          elements: dict
    gpus:
      description: NVIDIA GPUs of the host.
      type: list
      elements: dict
      contains:
        pci_id:
          description: "PCI address as vSphere shows it."
          type: str
          sample: "0000:3b:00.0"
        device_name:
          description: "Device name."
          type: str
          sample: Tesla P40
        model:
          description: "Model id in the collection's catalog, null when unknown."
          type: str
          sample: P40
        memory_mib:
          description: "Framebuffer in MiB."
          type: int
        graphics_type:
          description: "Active type: C(basic), C(shared), C(direct) or C(sharedDirect)."
          type: str
        configured_graphics_type:
          description: "Type the host is configured to use for this GPU."
          type: str
        xorg_restart_pending:
          description: "The configured type differs from the active one until Xorg restarts."
          type: bool
        vgpu_mode:
          description:
            - "vGPU mode in effect as vCenter reports it (vSphere 8.0 Update 3 and later): C(none), C(sameSize),
              C(mixedSize) or C(multiInstanceGpu); null from older vCenters."
          type: str
        profile:
          description: "The profile the GPU is carved to while vGPUs run on it, else null."
          type: str
        profiles:
          description: "All profiles running on the GPU (more than one only in mixed-size mode)."
          type: list
          elements: str
        vms:
          description: "Names of the VMs running a vGPU on this GPU."
          type: list
          elements: str
        used:
          description: "vGPUs running on the GPU."
          type: int
        max:
          description:
            - "Maximum vGPUs of the carved profile on this GPU, null when idle or running several profiles. In
              mixed-size mode the number of the profile's placement IDs."
          type: int
        free:
          description: "vGPUs of the carved profile the GPU can still take, null when idle or running several profiles."
          type: int
        passthrough:
          description:
            - "DirectPath I/O state of the GPU: C(enabled) and C(active) (HostPciPassthruInfo), and C(vm) /
              C(vm_power_state), the VM of this host whose passthrough device names the GPU (null when none)."
          type: dict
    supported_profiles:
      description: vGPU profiles the host offers.
      type: list
      elements: dict
      contains:
        name:
          description: "Profile name."
          type: str
          sample: grid_p40-8q
        framebuffer_mib:
          description: "Framebuffer per vGPU (whole GiB when vCenter states it)."
          type: int
          sample: 8192
        sharing:
          description: "C(timeSliced) or C(mig)."
          type: str
        profile_class:
          description: "C(compute) (C series) or C(quadro)."
          type: str
        facts_source:
          description:
            - "Where RV(hosts[].supported_profiles[].framebuffer_mib), RV(hosts[].supported_profiles[].sharing) and
              RV(hosts[].supported_profiles[].profile_class) come from: C(vcenter) (its C(vgpuProfileInfo), vSphere
              7.0 Update 3 and later), C(catalog) (the collection's catalog, for older vCenters), or null when
              neither knows the profile."
          type: str
          sample: vcenter
        series:
          description: "Q, B, A or C."
          type: str
        cuda:
          description: "Whether the profile runs CUDA."
          type: bool
        max_per_gpu:
          description: "vGPUs of this profile one GPU holds (equal-size mode)."
          type: int
          sample: 3
        mixed_size_max:
          description:
            - "vGPUs of this profile one GPU holds in mixed-size mode (its NVIDIA placement IDs), null when the catalog
              knows no placement for it in that mode."
          type: int
        gpus:
          description: "GPUs of the host that can run the profile."
          type: int
        capacity:
          description: "vGPUs of this profile the host holds when its GPUs are free and in Shared Direct."
          type: int
        free:
          description:
            - "vGPUs of this profile the host can take now. A GPU in mixed-size mode that runs vGPUs adds none: vCenter
              does not report their placement."
          type: int
        known:
          description: "Whether the profile is in the collection's catalog."
          type: bool
vms:
  description: The VMs named in O(vms), in that order.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: "VM name."
      type: str
    moid:
      description: "Managed object id."
      type: str
    uuid:
      description: "BIOS uuid."
      type: str
    power_state:
      description: "Power state."
      type: str
    host:
      description: "Host the VM is registered on."
      type: str
    memory_mb:
      description: "Configured memory."
      type: int
    memory_reservation_locked_to_max:
      description: "Whether all memory is reserved and follows the memory size."
      type: bool
    vgpus:
      description: "vGPU devices (key, profile)."
      type: list
      elements: dict
power_records:
  description:
    - With O(power_records), the VMs on the selected hosts (or on no host) that carry the power record of an
      interrupted M(gpuops.vgpu.vm_vgpu) run, by name; empty when none does.
  returned: when O(power_records) is true
  type: list
  elements: dict
  contains:
    name:
      description: "VM name."
      type: str
    moid:
      description: "Managed object id."
      type: str
    host:
      description: "Host the VM is registered on."
      type: str
    run:
      description: "The run that powered the VM off; null when the record cannot be read."
      type: str
    by:
      description: "Who ran it, as C(user@controller)."
      type: str
    recorded_at:
      description: "vCenter's time when the record was taken (UTC)."
      type: str
    problem:
      description: "Why the record cannot be read (cut short or edited); null when it can."
      type: str
  sample: [{"name": "gpu-vm-07", "moid": "vm-61", "host": "esxi-01.lab.local", "run": "20261128T101500Z-4711",
            "by": "ops@ctl01", "recorded_at": "2026-11-28T10:15:03.120000Z", "problem": null}]
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import host_scope, vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._inventory import gpu_info


def argument_spec():
    return vcenter_spec(host_scope(), vms=dict(type="list", elements="str", default=[]),
                        power_records=dict(type="bool", default=False))


def main():
    run_module(argument_spec(), gpu_info, client=VCenterClient.from_params, supports_check_mode=True)


if __name__ == "__main__":
    main()
