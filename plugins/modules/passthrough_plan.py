#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: passthrough_plan
short_description: What host_passthrough and vm_passthrough would change for a list of VMs, read in one go
version_added: 0.1.0
description:
  - Reads the VMs and the hosts once and says what M(gpuops.vgpu.host_passthrough) (with O(state=enabled)) would
    change on the hosts and what M(gpuops.vgpu.vm_passthrough) would change on the VMs, with the same options. Changes
    nothing.
  - The hosts are O(esxi_hostnames), else the hosts the VMs are on. A host differs when a device the options select
    is not enabled for passthrough, when one waits for a reboot (its enabled and active settings differ), and where
    M(gpuops.vgpu.host_passthrough) would refuse it (not connected, an unknown model, a GPU that runs vGPUs, an
    NVSwitch board).
  - While a host differs, every VM waits for it (what a VM can have depends on its host). Otherwise a VM differs
    where M(gpuops.vgpu.vm_passthrough) would give it other GPUs or settings (memory reservation, 64-bit MMIO), and
    where it would refuse the request (no complete NVLink set free, a GPU not enabled, a VM without a host).
  - Each side is judged by its module's own rules, so empty RV(host_differences) and RV(vm_differences) mean that
    both modules would change nothing; the C(gpu_passthrough) role runs them only where these lists name something.
  - Two vCenter reads whatever the number of hosts and VMs.
author:
  - gpuops maintainers (@gpuops)
requirements:
  - pyvmomi >= 8.0.3.0
extends_documentation_fragment:
  - gpuops.vgpu.vcenter
  - gpuops.vgpu.attributes.INFO_MODULE
  - gpuops.vgpu.attributes.ACTION_GROUP_VCENTER
options:
  vms:
    description: The VMs and their GPUs, as M(gpuops.vgpu.vm_passthrough) takes them.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: VM name.
        type: str
        required: true
      gpus:
        description: Number of whole GPUs of the VM's host.
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
    description: V(present) to have the GPUs, V(absent) to have no static passthrough device.
    type: str
    choices: [present, absent]
    default: present
  esxi_hostnames:
    description: The hosts whose GPUs go to passthrough; empty for the hosts the VMs are on.
    type: list
    elements: str
    default: []
  datacenter:
    description: The hosts are looked up in this datacenter only.
    type: str
  models:
    description:
      - As O(gpuops.vgpu.host_passthrough#module:models). Without it and without O(all_gpus_not_used_for_vgpu), no
        device of the hosts is selected, and only the VMs are judged.
    type: list
    elements: str
  all_gpus_not_used_for_vgpu:
    description: As O(gpuops.vgpu.host_passthrough#module:all_gpus_not_used_for_vgpu).
    type: bool
    default: false
  include_nvswitches:
    description: As O(gpuops.vgpu.host_passthrough#module:include_nvswitches).
    type: bool
    default: true
  nvlink:
    description: As O(gpuops.vgpu.vm_passthrough#module:nvlink).
    type: bool
    default: false
  nvlink_sets:
    description: As O(gpuops.vgpu.vm_passthrough#module:nvlink_sets).
    type: dict
  host_nvidia_smi:
    description: As O(gpuops.vgpu.vm_passthrough#module:host_nvidia_smi).
    type: dict
  nvlink_from_hosts:
    description:
      - Hosts whose NVLink sets the caller reads from their own nvidia-smi after this plan, for
        M(gpuops.vgpu.vm_passthrough) (the C(gpu_passthrough) role does, for the hosts in its inventory). With
        O(nvlink), the VMs on those hosts that O(host_nvidia_smi) does not cover are listed in RV(vm_differences),
        left to M(gpuops.vgpu.vm_passthrough), since their sets are not known yet.
    type: list
    elements: str
    default: []
  reserve_memory:
    description: As O(gpuops.vgpu.vm_passthrough#module:reserve_memory).
    type: bool
    default: true
seealso:
  - module: gpuops.vgpu.host_passthrough
  - module: gpuops.vgpu.vm_passthrough
"""

EXAMPLES = r"""
- name: What the passthrough layer would change
  gpuops.vgpu.passthrough_plan:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    vms:
      - name: pt-vm-01
        gpus: 2
    all_gpus_not_used_for_vgpu: true
    nvlink: true
    nvlink_sets:
      esxi-31.lab.local:
        - ["0000:3b:00.0", "0000:5e:00.0"]
        - ["0000:86:00.0", "0000:af:00.0"]
  register: passthrough

- name: Hand the GPUs to passthrough only where a host differs
  gpuops.vgpu.host_passthrough:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    esxi_hostnames: "{{ passthrough.hosts | map(attribute='name') | list }}"
    all_gpus_not_used_for_vgpu: true
  when: passthrough.host_differences | length > 0
"""

RETURN = r"""
hosts:
  description: One entry per host whose GPUs go to passthrough.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Host name in vCenter.
      type: str
    changing_devices:
      description: PCI ids of the selected devices that M(gpuops.vgpu.host_passthrough) would turn on.
      type: list
      elements: str
    reboot_pending_devices:
      description: PCI ids of the selected devices whose setting waits for a reboot.
      type: list
      elements: str
    problem:
      description: Why M(gpuops.vgpu.host_passthrough) would refuse the host; null when it would not.
      type: str
vms:
  description: One entry per VM of O(vms), in that order.
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
    gpus:
      description: PCI ids of the GPUs the VM holds.
      type: list
      elements: str
    wanted:
      description: PCI ids of the GPUs M(gpuops.vgpu.vm_passthrough) would leave it with; null where the plan
        cannot tell (see RV(vms[].why)).
      type: list
      elements: str
    power_state:
      description: The VM's power state.
      type: str
    why:
      description: What differs for the VM; null when nothing does.
      type: str
host_differences:
  description: One line per host that differs, naming it; empty when M(gpuops.vgpu.host_passthrough) would change
    nothing.
  returned: always
  type: list
  elements: str
  sample: ["esxi-31.lab.local: 0000:3b:00.0, 0000:5e:00.0 to passthrough"]
vm_differences:
  description: One line per VM that differs, naming it; empty when M(gpuops.vgpu.vm_passthrough) would change nothing.
  returned: always
  type: list
  elements: str
  sample: ["pt-vm-01: gets 0000:3b:00.0, 0000:5e:00.0; needs memoryReservationLockedToMax"]
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._passthrough_plan import plan


def argument_spec():
    return vcenter_spec(
        vms=dict(type="list", elements="dict", required=True, options=dict(
            name=dict(type="str", required=True),
            gpus=dict(type="int"),
            devices=dict(type="list", elements="str"),
            state=dict(type="str", choices=["present", "absent"]),
        ), mutually_exclusive=[["gpus", "devices"]]),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        esxi_hostnames=dict(type="list", elements="str", default=[]),
        datacenter=dict(type="str"),
        models=dict(type="list", elements="str"),
        all_gpus_not_used_for_vgpu=dict(type="bool", default=False),
        include_nvswitches=dict(type="bool", default=True),
        nvlink=dict(type="bool", default=False),
        nvlink_sets=dict(type="dict"),
        host_nvidia_smi=dict(type="dict"),
        nvlink_from_hosts=dict(type="list", elements="str", default=[]),
        reserve_memory=dict(type="bool", default=True),
    )


def main():
    run_module(argument_spec(), plan, client=VCenterClient.from_params, supports_check_mode=True)


if __name__ == "__main__":
    main()
