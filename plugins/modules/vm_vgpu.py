#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: vm_vgpu
short_description: NVIDIA vGPU profiles on many VMs at once, with power handling
version_added: 0.1.0
description:
  - Adds, changes or removes NVIDIA vGPU devices on a list of VMs in one task. Changing a profile replaces the
    device in the same reconfigure, so a VM never ends with two.
  - With O(vms[].state=present), every VM also gets all its memory reserved (C(memoryReservationLockedToMax)), which
    vSphere requires to power on a vGPU VM.
  - Before anything changes, every VM is found, every requested profile is checked against what the VM's host (or,
    for a VM without a host, its cluster) offers, and the power policy is checked. Any problem fails the task with
    nothing changed.
  - Reconfigurations run O(parallel) at a time and are awaited together. VMs that were powered on are powered on
    again afterwards.
  - When some VMs fail, the others still complete, power states are restored, and the task fails naming the failed
    VMs; each VM's entry in RV(vms) says how it ended.
  - A run killed half way never leaves a running VM off for good. Before it powers off a running VM, the module
    sets the VM's custom attribute C(gpuops.vgpu.vm_vgpu.power) in vCenter to a record of the run, the vCenter
    instance and cluster, the time and the change asked; the record goes once the VM runs again. Every later run,
    from any controller and with any O(vms) (an empty list only recovers), finds the records of the VMs in its
    scope, finishes the recorded change (or the one asked now) and powers those VMs on, and lists them in
    RV(recovered). A VM that someone powered on again after the record was taken and that is off now, or that is
    listed in O(keep_powered_off), stays off and is named there too.
  - A record whose run may still be at work (it holds the cluster lock of the record's cluster, see
    M(gpuops.vgpu.cluster_lock), or it is an C(ansible-playbook) of this controller that still runs) is left to
    that run and listed as V(in progress); when O(vms) names such a VM, the task fails before any change.
  - A record that cannot be trusted (cut short or edited, or taken on another vCenter or in another cluster) fails
    the task before any change, naming the VM and the fix.
  - A task whose start request lost its answer is read back from vCenter's recent tasks and awaited, or sent again
    when vCenter never queued it; it is never sent twice.
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
    details: Predicts the change per VM and powers nothing off.
  diff_mode:
    support: full
    details: Profiles, memory lock and power state per changed VM.
options:
  vms:
    description:
      - The VMs and what they should have.
      - An empty list changes nothing but what interrupted runs left (see RV(recovered)).
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: VM name. Use O(datacenter) or O(folder) when names repeat.
        type: str
      uuid:
        description: BIOS uuid or instance uuid of the VM.
        type: str
      moid:
        description: Managed object id of the VM, for example V(vm-42).
        type: str
      profile:
        description: vGPU profile for one vGPU, for example V(grid_p40-8q). Defaults to O(profile).
        type: str
      profiles:
        description: Several vGPUs on the VM, all of one profile, for example V([grid_a100-40c, grid_a100-40c]).
        type: list
        elements: str
      state:
        description: V(present) to have the profile(s), V(absent) to have no vGPU. Defaults to O(state).
        type: str
        choices: [present, absent]
      host:
        description:
          - ESXi host the VM should be registered on, for example the one C(gpuops.vgpu.vgpu_plan) chose. A VM on
            another host that needs a vGPU change too is moved there while powered off (with the power handling of
            O(power)), so that at power-on vSphere places its vGPU on that host's GPUs.
          - A powered-on VM that only needs to move goes by vMotion and keeps running, whatever O(power) says
            (C(RelocateVM_Task), as M(gpuops.vgpu.vgpu_vmotion) moves VMs); a vGPU VM then needs
            C(vgpu.hotmigrate.enabled) and a GPU on that host carved for its profile with room, else vCenter's
            refusal fails the VM.
          - The requested profiles are checked against this host.
        type: str
  profile:
    description: Profile for the entries of O(vms) that set none.
    type: str
  state:
    description: State for the entries of O(vms) that set none.
    type: str
    choices: [present, absent]
    default: present
  datacenter:
    description: Look the VMs up in this datacenter only.
    type: str
  folder:
    description: Look the VMs up in this VM folder only (path below the datacenter's VM folder, for example V(gpu/training)).
    type: str
  power:
    description:
      - What to do with a powered-on VM that needs a change (vGPU devices can only be added or removed while a VM is off).
      - V(never) fails the task before any change, naming such VMs.
      - V(shutdown_guest) shuts the guest down and waits up to O(shutdown_timeout) seconds.
      - V(power_off) powers the VM off at once.
      - VMs powered off by the module are powered on again afterwards.
    type: str
    choices: [never, shutdown_guest, power_off]
    default: never
  shutdown_timeout:
    description: Seconds to wait for guests to shut down with O(power=shutdown_guest).
    type: int
    default: 300
  hard_power_off:
    description: With O(power=shutdown_guest), power off the VMs whose guest did not shut down in time.
    type: bool
    default: false
  power_on:
    description:
      - Power on every listed VM that is not running once its vGPUs are as asked, so vSphere places each vGPU on a
        physical GPU. A VM that cannot be placed (no GPU in Shared Direct with room for its profile) is reported
        as failed.
      - VMs power on in the order of O(vms), O(parallel) at a time. On a GPU in mixed-size mode the order decides
        where each vGPU lands; the P(gpuops.vgpu.apply_plan#filter) filter lists them in the order of the placement
        IDs that M(gpuops.vgpu.vgpu_plan) planned, and O(parallel=1) keeps that order.
    type: bool
    default: false
  release_memory_reservation:
    description: With V(absent), also unlock the memory reservation and set it to 0.
    type: bool
    default: false
  parallel:
    description: How many reconfigure or power tasks run at the same time.
    type: int
    default: 8
  task_timeout:
    description: Seconds to wait for each batch of vCenter tasks.
    type: int
    default: 900
  run_id:
    description:
      - Names this run in the power records it writes, so that a later run says which run it recovered from.
      - Playbooks pass the run's cluster lock id. Defaults to the time and the ansible-playbook process id.
    type: str
  keep_powered_off:
    description:
      - Names or moids of VMs that an interrupted run powered off and that are to stay off. Their records are
        removed and they are listed in RV(recovered) as left off. VMs without a record are not affected.
    type: list
    elements: str
    default: []
seealso:
  - module: gpuops.vgpu.gpu_info
"""

EXAMPLES = r"""
- name: One 8Q vGPU on three VMs, shutting down the ones that run
  gpuops.vgpu.vm_vgpu:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    profile: grid_p40-8q
    power: shutdown_guest
    vms:
      - name: gpu-vm-01
      - name: gpu-vm-02
      - name: gpu-vm-03
        profile: grid_p40-4q

- name: Two vGPUs on one VM and none on another, credentials set once for the action group
  module_defaults:
    group/gpuops.vgpu.vcenter:
      hostname: "{{ vcenter_hostname }}"
      port: "{{ vcenter_port }}"
      username: "{{ vcenter_username }}"
      password: "{{ vcenter_password }}"
      validate_certs: "{{ vcenter_validate_certs }}"
  gpuops.vgpu.vm_vgpu:
    power: power_off
    vms:
      - name: gpu-vm-04
        profiles: [grid_p40-12q, grid_p40-12q]
      - name: gpu-vm-05
        state: absent

- name: Finish what an interrupted run left (power VMs it took down back on), changing nothing else
  gpuops.vgpu.vm_vgpu:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    datacenter: "{{ vcenter_datacenter }}"
    vms: []
    keep_powered_off: [gpu-vm-09]
  register: recovery

- name: Remove the vGPU and release the memory reservation
  gpuops.vgpu.vm_vgpu:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    state: absent
    release_memory_reservation: true
    vms:
      - name: gpu-vm-03
"""

RETURN = r"""
vms:
  description: One entry per requested VM, in the order of O(vms).
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: VM name.
      type: str
    moid:
      description: Managed object id.
      type: str
    changed:
      description: Whether the VM changed (or would, in check mode).
      type: bool
    before:
      description: Profiles, memory lock, power state and host before.
      type: dict
      sample: {"profiles": [], "memory_reservation_locked_to_max": false, "power_state": "poweredOff", "host": "esxi-01"}
    after:
      description: The same, read back from vCenter after the change (predicted in check mode).
      type: dict
      sample: {"profiles": ["grid_p40-8q"], "memory_reservation_locked_to_max": true, "power_state": "poweredOff",
               "host": "esxi-02"}
    error:
      description: What failed for this VM, null when nothing did.
      type: str
    ended:
      description: "For a VM with an error: V(as it was), V(as asked), or V(neither: see after)."
      type: str
      returned: when error is set
recovered:
  description:
    - The VMs in scope that carried the power record of an interrupted run, whether or not O(vms) names them.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: VM name.
      type: str
    moid:
      description: Managed object id.
      type: str
    run:
      description: The run that powered the VM off (its O(run_id)).
      type: str
    by:
      description: Who ran it, as C(user@controller).
      type: str
    recorded_at:
      description: vCenter's time when the record was taken (UTC).
      type: str
    ended:
      description:
        - V(powered on) (after the recorded or asked change), V(was running) (the record was stale), V(left off)
          (see RV(recovered[].why)), V(still off) (powering on failed; the record stays for the next run), or
          V(in progress) (its run may still be at work; left to it).
      type: str
    why:
      description: Why a VM was left off or left to its run, or why its recorded change was not made.
      type: str
      returned: when there is a reason
    before:
      description: Profiles, memory lock, power state and host before.
      type: dict
    after:
      description: The same after the run (predicted in check mode).
      type: dict
    error:
      description: What failed for this VM, null when nothing did.
      type: str
    summary:
      description: One line that says all of the above.
      type: str
  sample: [{"name": "gpu-vm-07", "moid": "vm-61", "run": "20261128T101500Z-4711", "by": "ops@ctl01",
            "recorded_at": "2026-11-28T10:15:03.120000Z", "ended": "powered on", "error": null}]
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._vm_vgpu import assign_vgpus


def argument_spec():
    return vcenter_spec(
        vms=dict(type="list", elements="dict", default=[], options=dict(
            name=dict(type="str"),
            uuid=dict(type="str"),
            moid=dict(type="str"),
            profile=dict(type="str"),
            profiles=dict(type="list", elements="str"),
            state=dict(type="str", choices=["present", "absent"]),
            host=dict(type="str"),
        )),
        profile=dict(type="str"),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        datacenter=dict(type="str"),
        folder=dict(type="str"),
        power=dict(type="str", choices=["never", "shutdown_guest", "power_off"], default="never"),
        shutdown_timeout=dict(type="int", default=300),
        hard_power_off=dict(type="bool", default=False),
        power_on=dict(type="bool", default=False),
        release_memory_reservation=dict(type="bool", default=False),
        parallel=dict(type="int", default=8),
        task_timeout=dict(type="int", default=900),
        run_id=dict(type="str"),
        keep_powered_off=dict(type="list", elements="str", default=[]),
    )


def main():
    run_module(argument_spec(), assign_vgpus, client=VCenterClient.from_params, supports_check_mode=True)


if __name__ == "__main__":
    main()
