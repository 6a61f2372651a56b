#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: vm_passthrough
short_description: Give VMs whole NVIDIA GPUs over DirectPath I/O, NVLink sets kept together
version_added: 0.2.0
description:
  - Gives each VM of O(vms) a number of GPUs (O(vms[].gpus)) or named GPUs (O(vms[].devices)) of its host as
    static-backed PCI passthrough devices, or takes them away (O(state=absent)), leaving no stale device.
  - With O(nvlink=true) only complete NVLink sets are given, never half a set. The sets come from the host's own
    nvidia-smi (O(host_nvidia_smi), read through the ESXi host shell) or, where none is given, from O(nvlink_sets);
    RV(vms[].nvlink_sets_source) says which.
  - Reserves the VM's whole memory and sets C(pciPassthru.use64bitMMIO) and C(pciPassthru.64bitMMIOSizeGB) when
    the GPUs' BARs exceed 16 GB (the size is the BAR1 sizes added up and rounded up to a power of two; see
    docs/passthrough.md for the rule and its source).
  - Every refusal comes before any change; VMs are reconfigured in parallel.
author:
  - gpuops maintainers (@gpuops)
requirements:
  - pyvmomi >= 8.0.3.0
extends_documentation_fragment:
  - gpuops.vgpu.vcenter
  - gpuops.vgpu.attributes
  - gpuops.vgpu.attributes.ACTION_GROUP_VCENTER
attributes:
  check_mode:
    support: full
    details: Changes nothing; RV(vms) shows the GPUs each VM would hold.
  diff_mode:
    support: none
options:
  vms:
    description: The VMs, by name, each with O(vms[].gpus) or O(vms[].devices).
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: VM name.
        type: str
        required: true
      gpus:
        description: Number of whole GPUs of the VM's host to give it.
        type: int
      devices:
        description: PCI ids of GPUs of the VM's host (V(0000:3b:00.0)).
        type: list
        elements: str
      state:
        description: Overrides O(state) for this VM.
        type: str
        choices: [present, absent]
  state:
    description: V(present) gives the GPUs, V(absent) removes every static passthrough device of the VMs.
    type: str
    choices: [present, absent]
    default: present
  nvlink:
    description: Give only complete NVLink sets; a request that cannot be met so fails naming the free sets.
    type: bool
    default: false
  nvlink_sets:
    description:
      - Host name to its NVLink sets, each a list of PCI ids (an inventory variable). Needed with O(nvlink=true).
    type: dict
  host_nvidia_smi:
    description:
      - Host name to the RV(gpuops.vgpu.nvidia_smi_info#module:nvidia_smi) facts that C(gpuops.vgpu.nvidia_smi_info)
        returned on that ESXi host over its shell, gathered with V(topology). Its C(topo -m) NVLink pairs, named by
        the GPUs' PCI bus ids, make the host's NVLink sets; it wins over O(nvlink_sets).
    type: dict
  reserve_memory:
    description: Reserve the VM's whole memory; with V(false) a VM without a full reservation is refused.
    type: bool
    default: true
  power:
    description: V(power_off) powers a running VM off for its change and on again after; V(never) refuses it.
    type: str
    choices: [never, power_off]
    default: never
  power_on:
    description: Power the changed VMs on after their change.
    type: bool
    default: false
  parallel:
    description: Tasks run at a time.
    type: int
    default: 8
  task_timeout:
    description: Seconds to wait for each batch of tasks.
    type: int
    default: 900
"""

EXAMPLES = r"""
- name: Two training VMs, each with one NVLink pair of A100s
  gpuops.vgpu.vm_passthrough:
    hostname: "{{ vcenter_hostname }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    vms:
      - {name: pt-vm-01, gpus: 2}
      - {name: pt-vm-02, gpus: 2}
    nvlink: true
    nvlink_sets: "{{ passthrough_nvlink_sets }}"

- name: NVLink sets read from the host's own nvidia-smi over its shell
  gpuops.vgpu.nvidia_smi_info:
    gather: [topology]
  delegate_to: esxi-31.lab.local
  register: esxi_31_smi

- name: One VM with an NVLink pair
  gpuops.vgpu.vm_passthrough:
    hostname: "{{ vcenter_hostname }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    vms: [{name: pt-vm-03, gpus: 2}]
    nvlink: true
    host_nvidia_smi: {esxi-31.lab.local: "{{ esxi_31_smi.nvidia_smi }}"}
"""

RETURN = r"""
vms:
  description: One entry per VM of O(vms).
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: VM name.
      type: str
    host:
      description: The VM's host.
      type: str
    changed:
      description: Whether the VM changed (would, in check mode).
      type: bool
    before:
      description: C(gpus) (PCI ids of its static passthrough devices) and C(power_state) before.
      type: dict
    after:
      description: The same read back after the change (predicted in check mode).
      type: dict
    settings:
      description: Memory reservation and advanced settings the change sets.
      type: dict
    nvlink_sets_source:
      description: Where the host's NVLink sets came from, V(host nvidia-smi) or V(inventory); null when none.
      type: str
    error:
      description: Why this VM's change failed, null when it did not.
      type: str
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._vm_passthrough import assign_passthrough


def argument_spec():
    return vcenter_spec(
        vms=dict(type="list", elements="dict", required=True, options=dict(
            name=dict(type="str", required=True),
            gpus=dict(type="int"),
            devices=dict(type="list", elements="str"),
            state=dict(type="str", choices=["present", "absent"]),
        ), mutually_exclusive=[["gpus", "devices"]]),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        nvlink=dict(type="bool", default=False),
        nvlink_sets=dict(type="dict"),
        host_nvidia_smi=dict(type="dict"),
        reserve_memory=dict(type="bool", default=True),
        power=dict(type="str", choices=["never", "power_off"], default="never"),
        power_on=dict(type="bool", default=False),
        parallel=dict(type="int", default=8),
        task_timeout=dict(type="int", default=900),
    )


def main():
    run_module(argument_spec(), assign_passthrough, client=VCenterClient.from_params, supports_check_mode=True)


if __name__ == "__main__":
    main()
