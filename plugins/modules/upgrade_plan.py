#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: upgrade_plan
short_description: Plan a rolling NVIDIA vGPU driver upgrade of ESXi hosts and their running vGPU guests
version_added: 0.1.0
description:
  - Reads the hosts of a cluster (or the hosts named), their GPUs and the vGPU VMs running on them, which vGPU
    profiles each host can suspend (C(sharedGpuCapabilities.suspendSupported)) and whether vCenter migrates running
    vGPU VMs (C(vgpu.hotmigrate.enabled)), and plans the upgrade to O(target_host_driver).
  - Returns the order of hosts (in steps of at most O(max_hosts_out) hosts), what happens to each running vGPU VM
    while its host is out (moved by vMotion to a GPU carved for its profile or idle, suspended, or shut down) with the
    expected interruption, and the order of guest driver upgrades that keeps every guest on a driver its host's vGPU
    Manager accepts at every step.
  - NVIDIA's rule, from the vGPU release notes (Compatibility Requirements for the NVIDIA vGPU Manager and Guest
    VM Driver), is that a vGPU Manager accepts guest drivers of its own branch, of the previous branch and, for an
    LTS manager, of the previous LTS branch. Hosts therefore go first and guests after every host of their cluster runs
    the target; a guest the target manager would not accept moves first when every current manager accepts the
    target guest driver.
  - Fails, naming each reason, when the upgrade cannot run as asked; nothing is changed by this module in any case.
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
  target_host_driver:
    description:
      - The vGPU Manager version the hosts should run, such as V(535.54.06); an ESXi component version such as
        V(535.54.06-1OEM.800.1.0.20613240) is read too.
    type: str
    required: true
  target_guest_driver:
    description:
      - The Linux GRID guest driver the guests should run. Default is the one of the same vGPU release in the
        collection's catalog (V(535.54.03) for V(535.54.06)); required for a release the catalog does not list.
    type: str
  current_host_driver:
    description:
      - The vGPU Manager every host runs now, unless O(host_drivers) names the host's own.
    type: str
  host_drivers:
    description:
      - vGPU Manager version per host name, for hosts that differ from O(current_host_driver).
    type: dict
    default: {}
  current_guest_driver:
    description:
      - The GRID guest driver every running vGPU VM has now, unless O(guest_drivers) names the VM's own.
    type: str
  guest_drivers:
    description:
      - Guest driver version per VM name, for VMs that differ from O(current_guest_driver).
    type: dict
    default: {}
  current_guest_cuda:
    description:
      - The CUDA toolkit the guests run (V(12.0), V(12.2.1)), unless O(guest_cuda) names the VM's own. A guest whose
        toolkit the target guest driver cannot run (the catalog's CUDA/driver table) is refused; one it runs only
        under CUDA minor-version compatibility gets a note.
    type: str
  guest_cuda:
    description:
      - CUDA toolkit version per VM name, for VMs that differ from O(current_guest_cuda); VMs without one are not
        checked.
    type: dict
    default: {}
  policy:
    description:
      - What happens to a running vGPU VM while its host is remediated. V(migrate) needs C(vgpu.hotmigrate.enabled);
        V(suspend) needs the host to report the VM's profile as suspend-capable.
    type: str
    choices: [migrate, suspend, shutdown]
    default: migrate
  vm_policies:
    description:
      - A policy per VM name that overrides O(policy) for that VM.
    type: dict
    default: {}
  max_hosts_out:
    description:
      - The most hosts remediated at once. Hosts are only taken out together while the other hosts hold all their
        migrating VMs.
    type: int
    default: 1
  depot_host_drivers:
    description:
      - Host driver (component) versions the vLCM depots hold, for example the C(NVD-VGPU-800) versions of
        M(gpuops.vgpu.vlcm_info)'s C(components). When given, a target that is not among them is refused.
    type: list
    elements: str
  remediation_s:
    description:
      - Expected time one host is out (maintenance mode, image, reboot), for the interruption of suspended or shut
        down VMs.
    type: int
    default: 1200
  allow_blocked:
    description:
      - Return the plan with what cannot be done in RV(blocked) instead of failing.
    type: bool
    default: false
notes:
  - The round trips to vCenter do not depend on the number of hosts or VMs.
"""

EXAMPLES = r"""
- name: Plan the R525 to R535 upgrade of the vGPU cluster
  gpuops.vgpu.upgrade_plan:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    cluster: gpu-cluster
    current_host_driver: 525.105.14
    current_guest_driver: 525.105.17
    target_host_driver: 535.54.06
    policy: migrate
    vm_policies:
      batch-01: shutdown
  register: upgrade

- name: Host order
  ansible.builtin.debug:
    msg: "{{ upgrade.host_order }}"
"""

RETURN = r"""
target:
  description: The target host and guest driver and the vGPU release (None when the catalog does not list it).
  returned: always
  type: dict
  sample: {"host_driver": "535.54.06", "guest_driver": "535.54.03", "release": "16.0"}
hot_migrate:
  description: Whether vCenter's C(vgpu.hotmigrate.enabled) is on.
  returned: always
  type: bool
host_order:
  description: Hosts in the order they are remediated.
  returned: always
  type: list
  elements: str
steps:
  description:
    - One entry per group of hosts out at once, in order, with C(hosts), C(host_driver) (C(from) per host, C(to)) and
      C(vms) (C(vm), C(host), C(profile), C(gpu), C(action) migrate, suspend or shutdown, C(to_host) and C(to_gpu)
      for a migration, C(interruption), C(downtime_s), None for a migration).
  returned: always
  type: list
  elements: dict
guest_upgrades:
  description:
    - Guest driver upgrades in order, each with C(vm), C(host), C(from), C(to) and C(when) (V(before_hosts) or
      V(after_hosts)).
  returned: always
  type: list
  elements: dict
vms:
  description: Per running vGPU VM, the steps that touch it, its actions, its host at the end and its downtime.
  returned: always
  type: list
  elements: dict
clusters:
  description: Per cluster its hosts, host order and the hosts already on the target.
  returned: always
  type: list
  elements: dict
blocked:
  description:
    - What cannot be done, each with C(kind) (bundle-not-in-depot, target-older-than-guest, guest-not-accepted,
      target-guest-not-accepted, hot-migrate-off, suspend-unsupported, no-room, host-not-connected, cuda-unsupported),
      C(message) and C(hint). Only with O(allow_blocked); otherwise the module fails naming them.
  returned: always
  type: list
  elements: dict
ok:
  description: Whether the upgrade can run as planned.
  returned: always
  type: bool
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import host_scope, vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._upgrade import POLICIES
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._upgrade_inventory import plan_upgrade


def argument_spec():
    return vcenter_spec(
        host_scope(),
        target_host_driver=dict(type="str", required=True),
        target_guest_driver=dict(type="str"),
        current_host_driver=dict(type="str"),
        host_drivers=dict(type="dict", default={}),
        current_guest_driver=dict(type="str"),
        guest_drivers=dict(type="dict", default={}),
        policy=dict(type="str", choices=list(POLICIES), default="migrate"),
        vm_policies=dict(type="dict", default={}),
        max_hosts_out=dict(type="int", default=1),
        depot_host_drivers=dict(type="list", elements="str"),
        remediation_s=dict(type="int", default=1200),
        current_guest_cuda=dict(type="str"),
        guest_cuda=dict(type="dict", default={}),
        allow_blocked=dict(type="bool", default=False),
    )


def main():
    run_module(argument_spec(), plan_upgrade, client=VCenterClient.from_params, supports_check_mode=True)


if __name__ == "__main__":
    main()
