#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: host_graphics
short_description: Graphics type, assignment policy and vGPU mode of ESXi hosts' GPUs, with the Xorg restart
version_added: 0.1.0
description:
  - Sets, on the hosts of a cluster or on named hosts, the host default graphics type, the shared passthrough
    assignment policy and, per GPU, the graphics type and vGPU mode. For NVIDIA vGPU, GPUs must run
    C(sharedDirect) ("Shared Direct", vendor shared passthrough graphics).
  - Only the options given change. The configuration sent to vSphere is the host's current one with just the asked
    fields changed, so the assignment policy, the host default and other GPUs' entries stay as they are unless named.
  - A new graphics type becomes active only after Xorg restarts on the host. By default the module restarts Xorg
    where it changed the configuration, and also where a GPU still does not run its configured type because an
    earlier change was never followed by a restart (RV(hosts[].xorg_restart_reason) says which).
  - Refuses to change the graphics type of a GPU that runs vGPU VMs unless O(force=true).
  - All hosts are read in one vCenter round trip; hosts that need no change cost nothing more.
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
    details: Sends no configuration and restarts nothing; RV(hosts) and C(changed) say what would happen.
  diff_mode:
    support: full
    details: Per changed host, its graphics configuration and each GPU's configured and active type.
options:
  default_graphics_type:
    description:
      - Host default graphics type, used by GPUs without an entry of their own.
      - V(sharedDirect) is NVIDIA vGPU; V(shared) is VMware's paravirtual 3D (vSGA).
    type: str
    choices: [shared, sharedDirect]
  assignment_policy:
    description:
      - Shared passthrough GPU assignment policy. V(performance) spreads vGPU VMs over the GPUs, V(consolidation)
        fills one GPU before the next.
    type: str
    choices: [performance, consolidation]
  gpu_graphics_type:
    description:
      - Graphics type for every NVIDIA GPU of the hosts, set as each GPU's own entry (other graphics devices, such as
        an on-board VGA controller, are left alone).
      - An entry in O(devices) with a O(devices[].graphics_type) wins for its GPU.
    type: str
    choices: [shared, sharedDirect]
  devices:
    description:
      - Settings of single GPUs; each entry sets O(devices[].graphics_type), O(devices[].vgpu_mode) or both.
      - The same PCI ids apply to every selected host; a host without one of them fails the module before anything
        changes.
    type: list
    elements: dict
    suboptions:
      pci_id:
        description:
          - PCI id as vSphere shows it (V(0000:3b:00.0)); V(3b:00.0) and nvidia-smi's V(00000000:3B:00.0) also match.
        type: str
        required: true
      graphics_type:
        description:
          - Graphics type of this GPU.
        type: str
        choices: [shared, sharedDirect]
      vgpu_mode:
        description:
          - V(sameSize) allows one vGPU profile size per GPU at a time; V(mixedSize) allows several sizes, each vGPU
            at one of NVIDIA's placement IDs of its type (vSphere 8.0 Update 3 and later, GPUs that support it).
          - A GPU whose model the catalog knows cannot run mixed-size mode (for example a Tesla P40) fails the module
            before anything changes; so does a mode change on a GPU that runs vGPU VMs (vCenter refuses it; O(force)
            does not apply).
          - The mode takes effect with the Xorg restart; the module reads the GPU's mode back and warns when it did
            not take.
        type: str
        choices: [sameSize, mixedSize]
  restart_xorg:
    description:
      - V(when_changed) restarts Xorg on hosts whose configuration changed, and on hosts with a GPU that does not yet
        run its configured type. V(always) restarts it on every selected host (and so always reports a change).
        V(never) leaves the restart to the user; the module then warns about GPUs that wait for one.
    type: str
    choices: [when_changed, always, never]
    default: when_changed
  force:
    description:
      - Change the graphics type of GPUs even when vGPU VMs run on them. Those VMs may lose their vGPU; power them
        off first where possible.
    type: bool
    default: false
notes:
  - One of O(cluster) and O(esxi_hostnames) is required.
  - On a host where no NVIDIA host driver runs, a GPU may never take the configured type; with
    O(restart_xorg=when_changed) such a host gets an Xorg restart on each run. Install the host driver first.
seealso:
  - module: gpuops.vgpu.gpu_info
    description: Reads the active and configured graphics type of every GPU.
"""

EXAMPLES = r"""
- name: Every GPU of the vGPU cluster to Shared Direct, spreading VMs over GPUs
  gpuops.vgpu.host_graphics:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    cluster: gpu-cluster
    default_graphics_type: sharedDirect
    gpu_graphics_type: sharedDirect
    assignment_policy: performance
  register: graphics

- name: Hosts where Xorg was restarted
  ansible.builtin.debug:
    msg: "{{ graphics.hosts | selectattr('xorg_restarted') | map(attribute='name') | list }}"

- name: Fill one GPU before the next on one host; nothing else changes
  module_defaults:
    group/gpuops.vgpu.vcenter:
      hostname: "{{ vcenter_hostname }}"
      port: "{{ vcenter_port }}"
      username: "{{ vcenter_username }}"
      password: "{{ vcenter_password }}"
      validate_certs: "{{ vcenter_validate_certs }}"
  gpuops.vgpu.host_graphics:
    esxi_hostnames:
      - esxi-01.lab.local
    assignment_policy: consolidation

- name: One GPU to mixed-size vGPU mode, without restarting Xorg yet
  gpuops.vgpu.host_graphics:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    esxi_hostnames:
      - esxi-01.lab.local
    devices:
      - pci_id: "0000:3b:00.0"
        graphics_type: sharedDirect
        vgpu_mode: mixedSize
    restart_xorg: never
"""

RETURN = r"""
hosts:
  description: One entry per selected host, sorted by name unless O(esxi_hostnames) gives the order.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Host name in vCenter.
      type: str
    changed:
      description: Whether the configuration changed or Xorg restarted on this host (or would, in check mode).
      type: bool
    before:
      description:
        - Graphics configuration before the change (C(default_graphics_type), C(assignment_policy), C(devices) with
          C(pci_id), C(graphics_type), C(vgpu_mode)) and C(gpus), per NVIDIA GPU its C(pci_id), C(device_name),
          C(configured_graphics_type), active C(graphics_type) and C(vgpu_mode) in effect (null from vCenters before
          8.0 Update 3).
      type: dict
    after:
      description: The same after the change, as read back from vCenter (predicted in check mode).
      type: dict
    xorg_restarted:
      description: Whether Xorg was restarted on the host (would be, in check mode).
      type: bool
    xorg_restart_reason:
      description: Why Xorg was restarted, null when it was not.
      type: str
      sample: the graphics configuration changed
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import host_scope, vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._host_graphics import configure

GRAPHICS_TYPES = ["shared", "sharedDirect"]


def argument_spec():
    return vcenter_spec(
        host_scope(),
        default_graphics_type=dict(type="str", choices=GRAPHICS_TYPES),
        assignment_policy=dict(type="str", choices=["performance", "consolidation"]),
        gpu_graphics_type=dict(type="str", choices=GRAPHICS_TYPES),
        devices=dict(type="list", elements="dict", options=dict(
            pci_id=dict(type="str", required=True),
            graphics_type=dict(type="str", choices=GRAPHICS_TYPES),
            vgpu_mode=dict(type="str", choices=["sameSize", "mixedSize"]),
        ), required_one_of=[["graphics_type", "vgpu_mode"]]),
        restart_xorg=dict(type="str", choices=["when_changed", "always", "never"], default="when_changed"),
        force=dict(type="bool", default=False),
    )


def main():
    run_module(argument_spec(), configure, client=VCenterClient.from_params, supports_check_mode=True,
               required_one_of=[["cluster", "esxi_hostnames"]])


if __name__ == "__main__":
    main()
