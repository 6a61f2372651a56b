#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: vgpu_vmotion
short_description: vMotion drill for running NVIDIA vGPU VMs - move live, time it, move back
version_added: 0.1.0
description:
  - Moves running vGPU VMs by vMotion to another host of their cluster and, unless O(return=false), back to where
    they ran, reporting for each VM the source, the target and the seconds each migration took.
  - Before anything moves, every VM is checked, and one VM that cannot move fails the task with nothing moved,
    naming for each VM what is missing - vCenter's C(vgpu.hotmigrate.enabled) is off; no other host of the cluster
    is connected and out of maintenance mode with a GPU of the same model that offers the profile, in Shared Direct
    and the same vGPU mode, idle or carved for this profile, with room for the VM's vGPUs; ECC differs between the
    hosts; the target's vGPU Manager does not accept the guest's driver. ECC and drivers are not in the vSphere API -
    give them in O(host_facts) and O(guest_drivers); what is not given is listed in the C(unchecked) of each entry
    of RV(vms).
  - Each move is a C(RelocateVM_Task) of the powered-on VM, the same call M(gpuops.vgpu.vm_vgpu) uses for a VM it
    moves to O(gpuops.vgpu.vm_vgpu#module:vms[].host). A VM that is not powered on is refused; no VM is ever powered
    on or off.
  - vCenter reports a migration's start and end (the task), not the stun time it took, which only the VM's
    C(vmware.log) on the hosts holds; C(stun_time_s) in RV(vms) is therefore null, and C(stun_time_estimates)
    gives vCenter's own estimate where it states one (API 8.0.2 and later, C- and Q-series profiles).
  - The guests are not checked here; the role C(gpuops.vgpu.vgpu_vmotion_drill) moves with O(return=false), checks
    each guest over SSH (license, nvidia-smi, CUDA, boot time) and then moves the VMs back.
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
    details: Checks every precondition and returns the move each VM would make; nothing moves.
  diff_mode:
    support: none
options:
  vms:
    description:
      - The running vGPU VMs to move. Empty picks the first O(sample) powered-on vGPU VMs (by name) on the hosts in
        scope.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: VM name.
        type: str
        required: true
      host:
        description: The target host; default is the host of the VM's cluster with the most room for its profile.
        type: str
  sample:
    description: How many VMs to pick when O(vms) is empty.
    type: int
    default: 1
  cluster:
    description: Only hosts of this cluster are read and used as targets (and sampled).
    type: str
  datacenter:
    description: Only hosts of this datacenter are read and used as targets (and sampled).
    type: str
  return:
    description: Move each VM back to the host it ran on once it arrived.
    type: bool
    default: true
  host_facts:
    description:
      - What vCenter does not tell, per host name - C(ecc) (bool, ECC on the host's GPUs) and C(driver) (the vGPU
        Manager version), for example from M(gpuops.vgpu.nvidia_smi_info) on the hosts. Used to refuse a target whose
        ECC differs from the source's, or whose driver does not accept the guest's.
    type: dict
    default: {}
  guest_drivers:
    description: The GRID guest driver version per VM name, checked against the target's vGPU Manager.
    type: dict
    default: {}
  parallel:
    description: Migrations started at once.
    type: int
    default: 1
  task_timeout:
    description: Seconds to wait for the migrations of one batch.
    type: int
    default: 1800
notes:
  - The reads before any move do not grow in round trips with the number of VMs or hosts.
  - A drill always moves, so a second run reports a change again; with O(return=true) each VM ends where it began.
seealso:
  - module: gpuops.vgpu.vcenter_settings
  - module: gpuops.vgpu.vm_vgpu
"""

EXAMPLES = r"""
- name: Move gpu-vm-01 to another host of its cluster and back, timing both migrations
  gpuops.vgpu.vgpu_vmotion:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    vms:
      - name: gpu-vm-01
  register: drill

- name: What two sampled VMs of gpu-cluster would do, with ECC and drivers checked
  gpuops.vgpu.vgpu_vmotion:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    cluster: gpu-cluster
    sample: 2
    host_facts:
      esxi-01.lab.local: {ecc: true, driver: 535.54.06}
      esxi-02.lab.local: {ecc: true, driver: 535.54.06}
      esxi-03.lab.local: {ecc: true, driver: 535.54.06}
    guest_drivers:
      gpu-vm-01: 535.54.03
  check_mode: true
"""

RETURN = r"""
hot_migrate:
  description: The value of vCenter's C(vgpu.hotmigrate.enabled).
  returned: always
  type: bool
  sample: true
vms:
  description:
    - Per VM - C(name), C(moid), C(profile), C(vgpus) (how many), C(source) and C(target) hosts, C(moved) and
      C(returned), C(migration_s) and C(return_s) (seconds from the task's start to its end, as vCenter states them),
      C(host) and C(power_state) where the VM is now, C(unchecked) (preconditions not known, C(ecc) or C(driver)),
      C(candidates) (per other host of the cluster why it cannot take the VM, null for one that can), C(refused)
      (what is missing), C(stun_time_s) (null - vCenter does not report it), C(stun_time_estimates) (vCenter's,
      each C(migration_bw_mbps) and C(stun_time_s)), C(stun_time_note) and C(error).
    - Returned with a refusal too, before anything moved.
  returned: always
  type: list
  elements: dict
  sample: [{"name": "gpu-vm-01", "moid": "vm-52", "profile": "grid_p40-8q", "vgpus": 1,
            "source": "esxi-01.lab.local", "target": "esxi-03.lab.local", "moved": true, "returned": true,
            "migration_s": 1.204, "return_s": 1.187, "host": "esxi-01.lab.local", "power_state": "poweredOn",
            "unchecked": ["ecc"], "candidates": {"esxi-02.lab.local": "GPU 0000:3b:00.0 is carved for grid_p40-2q
            (equal-size mode: one profile per GPU)", "esxi-03.lab.local": null}, "refused": [], "stun_time_s": null,
            "stun_time_estimates": [], "error": null}]
move_back:
  description:
    - The VMs that moved and are not back, each C(name) and C(host) (where it ran) - the O(vms) of the run that
      moves them back after their guests were checked. Empty with O(return=true) when every move back succeeded.
  returned: always
  type: list
  elements: dict
  sample: [{"name": "gpu-vm-01", "host": "esxi-01.lab.local"}]
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._vgpu_vmotion import vgpu_vmotion


def argument_spec():
    return vcenter_spec(
        vms=dict(type="list", elements="dict", default=[], options=dict(
            name=dict(type="str", required=True),
            host=dict(type="str"),
        )),
        sample=dict(type="int", default=1),
        cluster=dict(type="str"),
        datacenter=dict(type="str"),
        host_facts=dict(type="dict", default={}),
        guest_drivers=dict(type="dict", default={}),
        parallel=dict(type="int", default=1),
        task_timeout=dict(type="int", default=1800),
        **{"return": dict(type="bool", default=True)}
    )


def main():
    run_module(argument_spec(), vgpu_vmotion, client=VCenterClient.from_params, supports_check_mode=True)


if __name__ == "__main__":
    main()
