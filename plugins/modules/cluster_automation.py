#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: cluster_automation
short_description: DRS and DPM of a cluster on or off, with an exact restore of what was there before
version_added: 0.1.0
description:
  - Turns DRS and DPM of a cluster on or off and sets their automation level. vGPU work goes better with both off
    (vCenter may otherwise try to move a vGPU VM or power a host down, fail, and loop) and back on afterwards.
  - Only the options given change; the others, and every other cluster setting, keep their values. There are no
    defaults that could turn something back on.
  - Returns the settings before the change in RV(previous). Passing that dict back as O(restore) puts the cluster
    exactly as it was.
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
    details: Reads the cluster and reports what would change; sends nothing.
  diff_mode:
    support: full
    details: The four DRS/DPM fields before and after.
options:
  cluster:
    description:
      - Name of the cluster.
    type: str
    required: true
  datacenter:
    description:
      - Datacenter of the cluster; needed when several datacenters have a cluster of that name.
    type: str
  drs_enabled:
    description:
      - Turn DRS on or off.
    type: bool
  drs_behavior:
    description:
      - DRS automation level for VMs without an override.
    type: str
    choices: [fullyAutomated, partiallyAutomated, manual]
  dpm_enabled:
    description:
      - Turn DPM (host power management) on or off.
    type: bool
  dpm_behavior:
    description:
      - DPM automation level.
    type: str
    choices: [manual, automated]
  restore:
    description:
      - A dict as returned in RV(previous) by an earlier run. The cluster gets exactly those values back.
      - Mutually exclusive with O(drs_enabled), O(drs_behavior), O(dpm_enabled) and O(dpm_behavior).
    type: dict
    suboptions:
      drs_enabled:
        description: DRS on or off.
        type: bool
      drs_behavior:
        description: DRS automation level.
        type: str
        choices: [fullyAutomated, partiallyAutomated, manual]
      dpm_enabled:
        description: DPM on or off.
        type: bool
      dpm_behavior:
        description: DPM automation level.
        type: str
        choices: [manual, automated]
"""

EXAMPLES = r"""
- name: DRS and DPM off for the vGPU work
  gpuops.vgpu.cluster_automation:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    cluster: gpu-cluster
    drs_enabled: false
    dpm_enabled: false
  register: automation

- name: Back to what it was
  gpuops.vgpu.cluster_automation:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    cluster: gpu-cluster
    restore: "{{ automation.previous }}"

- name: DRS recommendations only, leaving DPM alone
  module_defaults:
    group/gpuops.vgpu.vcenter:
      hostname: "{{ vcenter_hostname }}"
      port: "{{ vcenter_port }}"
      username: "{{ vcenter_username }}"
      password: "{{ vcenter_password }}"
      validate_certs: "{{ vcenter_validate_certs }}"
  gpuops.vgpu.cluster_automation:
    cluster: gpu-cluster
    drs_behavior: manual
"""

RETURN = r"""
previous:
  description: DRS and DPM before this run. Pass it as O(restore) to return the cluster to this state.
  returned: always
  type: dict
  contains:
    drs_enabled:
      description: DRS on or off (null when vCenter leaves it unset).
      type: bool
    drs_behavior:
      description: DRS automation level.
      type: str
      sample: fullyAutomated
    dpm_enabled:
      description: DPM on or off (null when vCenter leaves it unset).
      type: bool
    dpm_behavior:
      description: DPM automation level.
      type: str
      sample: automated
current:
  description: DRS and DPM after this run, read back from vCenter (predicted in check mode); same keys as RV(previous).
  returned: always
  type: dict
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._cluster_automation import FIELDS, reconcile

DRS_BEHAVIORS = ["fullyAutomated", "partiallyAutomated", "manual"]
DPM_BEHAVIORS = ["manual", "automated"]


def _fields():
    return dict(
        drs_enabled=dict(type="bool"),
        drs_behavior=dict(type="str", choices=DRS_BEHAVIORS),
        dpm_enabled=dict(type="bool"),
        dpm_behavior=dict(type="str", choices=DPM_BEHAVIORS),
    )


def argument_spec():
    return vcenter_spec(_fields(), cluster=dict(type="str", required=True), datacenter=dict(type="str"),
                        restore=dict(type="dict", options=_fields()))


def run(module, client):
    return reconcile(client, module.params, module.check_mode)


def main():
    run_module(argument_spec(), run, client=VCenterClient.from_params, supports_check_mode=True,
               mutually_exclusive=[["restore", field] for field in FIELDS])


if __name__ == "__main__":
    main()
