#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: vgpu_plan
short_description: Plan which VM goes on which host and GPU, how each GPU is carved, and what does not fit
version_added: 0.1.0
description:
  - Plans vGPU placements from the GPU inventory that M(gpuops.vgpu.gpu_info) returns and a list of requests
    (VM, profile, optionally a host and a number of vGPUs). Returns where each VM goes, the profile each GPU is carved
    to, the requests that do not fit with the reason, the free capacity per profile and suggestions.
  - In equal-size mode a physical GPU runs vGPUs of one profile only, so carving must be planned. The planner first
    places as many VMs as possible, then uses as few GPUs as possible. The method, what it guarantees and where it
    stops are in the planner guide (see below).
  - Needs no connection to vCenter and changes nothing. Run it where the play's vCenter tasks run (usually
    C(localhost)). M(gpuops.vgpu.vm_vgpu) and the C(vgpu_assign) role apply the plan.
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.vgpu.attributes.INFO_MODULE
attributes:
  action_group:
    description: Use C(group/gpuops.vgpu.planning) in C(module_defaults) to set options such as O(mode) once.
    support: full
    membership:
      - gpuops.vgpu.planning
options:
  inventory:
    description:
      - The RV(gpuops.vgpu.gpu_info#module:hosts) list that M(gpuops.vgpu.gpu_info) returns.
      - Hosts that are not connected or are in maintenance mode, and GPUs that are not in Shared Direct or whose
        model the catalog does not know, are left out and listed in RV(excluded).
      - A host entry without C(supported_profiles) offers every profile the catalog lists for its GPUs, so an
        inventory written by hand can plan a datacenter that is not built yet.
    type: list
    elements: dict
    required: true
  requests:
    description:
      - The VMs to place. Each VM appears once.
    type: list
    elements: dict
    required: true
    suboptions:
      vm:
        description:
          - VM name. A VM that already runs where its request allows keeps its place (see O(respect_current)).
        type: str
        required: true
      profile:
        description:
          - vGPU profile, as vSphere names it (V(grid_p40-8q)); C(GRID P40-8Q) and V(p40-8q) are read too.
        type: str
        required: true
      host:
        description:
          - Pin the VM to this host.
        type: str
      count:
        description:
          - Number of vGPUs of O(requests[].profile) the VM gets. All of them run on one host, on one or more of its
            GPUs.
        type: int
        default: 1
  mode:
    description:
      - V(equal_size) carves each GPU for one profile.
      - V(mixed_size) lets vGPUs of different sizes share a GPU, on GPUs whose model has NVIDIA's mixed-size
        placement table in the catalog (A100, H100, L4, L40S) on hosts that report a vGPU mode (vSphere 8.0 Update 3
        and later, vGPU 17 and later). Each vGPU starts at a free placement ID of its type (fixed offsets), so some
        types have lower maxima than in equal-size mode; types without a placement in that mode (for example the 1,
        2 and 3 GB types of an L4) and other GPUs are still carved for one profile. See RV(placements[].placement_ids)
        and RV(notes).
    type: str
    choices: [equal_size, mixed_size]
    default: equal_size
  assignment_policy:
    description:
      - How VMs spread, mirroring vSphere's GPU assignment policy. V(performance) spreads VMs over the GPUs carved for
        their profile and carves GPUs on the hosts with the most idle GPUs; V(consolidation) fills one GPU before the
        next and packs carves onto few hosts.
      - When not set, each host is planned with the policy in its inventory entry (vSphere's default,
        V(performance), when the entry has none).
    type: str
    choices: [performance, consolidation]
  symmetric:
    description:
      - Keep hosts alike so that vMotion and HA find a GPU carved the same way. Hosts of one cluster with the same
        number of GPUs of a model and the same supported profiles form a group, and every host of a group gets the
        same number of GPUs per profile, as far as idle GPUs allow. Carved GPUs that get no VM are kept for their
        profile (RV(stats.gpus_reserved)).
      - Hosts whose running vGPUs keep them apart are named in RV(suggestions).
    type: bool
    default: false
  headroom:
    description:
      - "vGPU slots to keep free, for example for HA or vMotion. An integer applies to every profile that is
        requested or runs; a dict gives slots per profile, for example C({grid_p40-8q: 2})."
      - Headroom comes before requests. What cannot be kept is in RV(stats.headroom_shortfall).
    type: raw
    default: 0
  respect_current:
    description:
      - Running vGPUs keep their GPUs, which keep their profile; requested VMs that already run where their request
        allows keep their place, and requested VMs that must change release their slots.
      - V(false) plans as if no vGPU ran, which needs every running vGPU VM powered off to apply.
    type: bool
    default: true
notes:
  - vSphere picks the GPU within a host when a VM powers on, by the host's assignment policy; the plan predicts that
    choice. On a host with the V(performance) policy that gets new vGPUs of several profiles, vSphere can carve a GPU
    differently than planned; RV(suggestions) names such hosts.
  - MIG-backed profiles are planned one type per GPU.
seealso:
  - module: gpuops.vgpu.gpu_info
  - module: gpuops.vgpu.vm_vgpu
  - name: The vGPU placement planner
    description: Method, guarantees and limits of the planner.
    link: https://github.com/gpuops/vgpu/blob/main/docs/planner.md
"""

EXAMPLES = r"""
- name: GPU inventory of the vGPU cluster
  gpuops.vgpu.gpu_info:
    hostname: "{{ vcenter_hostname }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    cluster: gpu-cluster
  register: gpus

- name: Plan light and large VMs on the P40 cluster, every host carved alike, one 8Q slot kept free
  gpuops.vgpu.vgpu_plan:
    inventory: "{{ gpus.hosts }}"
    requests:
      - {vm: gpu-vm-01, profile: grid_p40-3q}
      - {vm: gpu-vm-02, profile: grid_p40-3q}
      - {vm: gpu-vm-03, profile: grid_p40-3q}
      - {vm: gpu-vm-04, profile: grid_p40-8q}
      - {vm: gpu-vm-05, profile: grid_p40-8q, host: esxi-02.lab.local}
    assignment_policy: consolidation
    symmetric: true
    headroom: {grid_p40-8q: 1}
  register: plan

- name: Stop when something does not fit
  ansible.builtin.assert:
    that: plan.feasible
    fail_msg: "{{ plan.unplaced | map(attribute='message') | join(' ') }} {{ plan.suggestions | join(' ') }}"

- name: One request per guest of the gpu_guests group
  ansible.builtin.set_fact:
    vgpu_requests: "{{ vgpu_requests | default([]) + [{'vm': hostvars[item].vgpu_vm_name | default(item),
                                                       'profile': hostvars[item].vgpu_profile}] }}"
  loop: "{{ groups['gpu_guests'] }}"

- name: Plan them as if the cluster were empty, with two free slots of every profile
  gpuops.vgpu.vgpu_plan:
    inventory: "{{ gpus.hosts }}"
    requests: "{{ vgpu_requests }}"
    respect_current: false
    headroom: 2
  register: plan

- name: Where each VM goes
  ansible.builtin.debug:
    msg: "{{ item.vm }} -> {{ item.host }} GPU {{ item.gpu }} ({{ item.profile }})"
  loop: "{{ plan.placements }}"
  loop_control:
    label: "{{ item.vm }}"
"""

RETURN = r"""
feasible:
  description: Whether every request was placed.
  returned: always
  type: bool
placements:
  description:
    - Where the placed VMs go, in request order. A VM whose vGPUs are on several GPUs of its host has one entry per
      GPU.
  returned: always
  type: list
  elements: dict
  contains:
    vm:
      description: VM name.
      type: str
    profile:
      description: vGPU profile, as vSphere names it.
      type: str
      sample: grid_p40-8q
    host:
      description: Host the VM goes on.
      type: str
    gpu:
      description: PCI id of the GPU, as vSphere shows it.
      type: str
      sample: "0000:3b:00.0"
    count:
      description: vGPUs of the VM on this GPU.
      type: int
    current:
      description: The VM already runs there; nothing needs to change for it.
      type: bool
    placement_ids:
      description:
        - On a GPU in mixed-size mode, the placement IDs (GB offsets in the GPU's framebuffer) its vGPUs start at;
          null otherwise. vSphere places a vGPU when its VM powers on, at the lowest free placement ID as the plan
          assumes, so power a GPU's VMs on in the order of their placement IDs.
      type: list
      elements: int
      sample: [0, 16]
gpus:
  description: Every GPU of the plan after it, sorted by host (inventory order) and PCI id.
  returned: always
  type: list
  elements: dict
  contains:
    host:
      description: Host name.
      type: str
    pci_id:
      description: PCI id.
      type: str
    model:
      description: Model id in the catalog.
      type: str
      sample: P40
    vgpu_mode:
      description: C(sameSize) for a GPU carved for one profile, C(mixedSize) for several sizes, null when idle.
      type: str
    profile:
      description: The profile the GPU is carved for, null when idle or when it holds several sizes.
      type: str
    profiles:
      description: Profiles on the GPU.
      type: list
      elements: str
    used:
      description: vGPUs on the GPU, running and planned.
      type: int
    max:
      description: Maximum vGPUs of the carved profile, null when idle or mixed-size.
      type: int
    free:
      description: vGPUs of the carved profile the GPU can still take, null when idle or mixed-size.
      type: int
    framebuffer_mib:
      description: Framebuffer of the GPU.
      type: int
    framebuffer_free_mib:
      description: Framebuffer not given to a vGPU.
      type: int
    carved_by_plan:
      description: The plan gives this GPU its profile. With RV(gpus[].used=0) it is kept for that profile.
      type: bool
    vms:
      description: VMs on the GPU, running and planned.
      type: list
      elements: str
unplaced:
  description: Requests that do not fit, in request order.
  returned: always
  type: list
  elements: dict
  contains:
    vm:
      description: VM name.
      type: str
    profile:
      description: Requested profile.
      type: str
    host:
      description: Pinned host, if any.
      type: str
    count:
      description: Requested vGPUs.
      type: int
    reason:
      description:
        - C(unknown_profile) (not in the catalog), C(profile_not_offered) (no usable host offers it),
          C(pinned_host_unavailable) (not in the inventory, in maintenance mode or disconnected),
          C(pinned_host_lacks_profile), C(pinned_host_full) or C(no_capacity).
      type: str
    message:
      description: The reason in words, with the numbers behind it.
      type: str
free_capacity:
  description: Per profile, the vGPUs that still fit after the plan without recarving a GPU in use (free slots of GPUs
    carved for it plus idle GPUs that can take it; an idle GPU counts for every profile it can take).
  returned: always
  type: dict
  sample: {grid_p40-3q: 14, grid_p40-8q: 5}
suggestions:
  description:
    - What to do about what does not fit or could go wrong, in words, for example GPUs to add or recarve, pins
      to drop, vGPU or assignment policy changes.
  returned: always
  type: list
  elements: str
notes:
  description: Limits of this plan, for example the power-on order that mixed-size placement needs.
  returned: always
  type: list
  elements: str
excluded:
  description: GPUs left out of the plan, each with C(host), C(pci_id), C(model) and C(reason).
  returned: always
  type: list
  elements: dict
stats:
  description: Counts of the plan.
  returned: always
  type: dict
  contains:
    requests:
      description: Requests given.
      type: int
    placed:
      description: Requests placed, including those kept in place.
      type: int
    kept:
      description: Requests for VMs that already run where they may stay.
      type: int
    unplaced:
      description: Requests that do not fit.
      type: int
    vgpus_placed:
      description: vGPUs the plan adds.
      type: int
    gpus:
      description: GPUs in the plan (not excluded).
      type: int
    gpus_used:
      description: GPUs with at least one vGPU after the plan.
      type: int
    gpus_used_lower_bound:
      description:
        - GPUs any plan needs for the vGPUs this plan places. Equal to RV(stats.gpus_used) when there is room for
          every request and no pins, counts of more than one vGPU, symmetry or headroom add constraints.
      type: int
    gpus_carved_by_plan:
      description: GPUs the plan carves.
      type: int
    gpus_reserved:
      description: GPUs the plan carves that get no VM (kept for symmetry or headroom).
      type: int
    gpus_idle:
      description: GPUs left idle.
      type: int
    gpus_excluded:
      description: GPUs left out of the plan.
      type: int
    headroom_shortfall:
      description: Per profile, headroom slots that could not be kept free.
      type: dict
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._planner import MODES, POLICIES, vgpu_plan


def argument_spec():
    return dict(
        inventory=dict(type="list", elements="dict", required=True),
        requests=dict(type="list", elements="dict", required=True, options=dict(
            vm=dict(type="str", required=True),
            profile=dict(type="str", required=True),
            host=dict(type="str"),
            count=dict(type="int", default=1),
        )),
        mode=dict(type="str", default="equal_size", choices=list(MODES)),
        assignment_policy=dict(type="str", choices=list(POLICIES)),
        symmetric=dict(type="bool", default=False),
        headroom=dict(type="raw", default=0),
        respect_current=dict(type="bool", default=True),
    )


def main():
    run_module(argument_spec(), vgpu_plan, supports_check_mode=True)


if __name__ == "__main__":
    main()
