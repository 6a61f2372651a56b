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
  - With O(record), the settings before the change are also kept in vCenter, in the cluster's custom attribute
    C(gpuops.vgpu.cluster_vgpu.automation), before anything changes. Any later run, from any controller, puts them
    back with O(restore_recorded), which then clears the record. A record names the vCenter
    (C(about.instanceUuid)) and the cluster (MoRef) it was taken on; a record that cannot be trusted (damaged, cut
    short, or taken on another vCenter or cluster) fails the task before anything changes, naming the cluster, the
    attribute and the fix.
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
    details: Reads the cluster and its record and reports what would change, with the record it would write in
      RV(record); sends nothing.
  diff_mode:
    support: full
    details: The four DRS/DPM fields before and after; with O(record) or O(restore_recorded), the cluster's record too.
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
    suboptions: &fields
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
  record:
    description:
      - Before DRS or DPM change, keep the settings from before the change in the cluster's custom attribute
        C(gpuops.vgpu.cluster_vgpu.automation), with this run (O(run_id)), who ran it (C(user@controller)), the
        vCenter, the cluster and vCenter's time.
      - When the cluster carries a record already (a run that did not restore yet), that record stays as it is, as it
        holds the settings from before the work, not the ones an earlier run left. RV(record_found) is then true.
      - Nothing is written when nothing changes, unless O(adopt_previous) is given.
    type: bool
    default: false
  restore_recorded:
    description:
      - Put back the settings the cluster's record holds, then clear the record. A cluster without a record is left
        as it is (no change), unless O(adopt_previous) is given.
      - Mutually exclusive with O(record), O(restore) and the four settings.
    type: bool
    default: false
  adopt_previous:
    description:
      - Settings from before the work recorded somewhere else, as the controller file of an older version of role
        C(gpuops.vgpu.cluster_vgpu) held them (same keys as O(restore)).
      - With O(record), a cluster without a record gets a record of these settings (marked C(adopted)) instead of
        the ones read now, even when nothing else changes. With O(restore_recorded), they are put back when the
        cluster carries no record. A record in the cluster wins over them.
    type: dict
    suboptions: *fields
  run_id:
    description:
      - Names this run in the record O(record) writes, so a later run says which run it restored for.
      - Playbooks pass the run's cluster lock id. Defaults to the time and the ansible-playbook process id.
    type: str
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

- name: DRS and DPM off, what they were kept in vCenter first
  gpuops.vgpu.cluster_automation:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    cluster: gpu-cluster
    drs_enabled: false
    dpm_enabled: false
    record: true
    run_id: "{{ cluster_lock_run_id | default(omit) }}"

- name: Back to what the record holds, in this run or any later one, from any controller
  gpuops.vgpu.cluster_automation:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    cluster: gpu-cluster
    restore_recorded: true

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
record:
  description:
    - The cluster's record of DRS/DPM from before the work (custom attribute C(gpuops.vgpu.cluster_vgpu.automation)),
      null when it carries none.
    - With O(record), the record in effect after this run (the one found, or the one written or, in check mode,
      that would be written). With O(restore_recorded), the record that was put back and cleared.
    - Otherwise the record the cluster carries, when it can be trusted (see RV(record_error)).
  returned: always
  type: dict
  sample: {v: 1, run: 20261128T101500Z-4711, by: ops@ctl01, vcenter: 7a1c2f4e-0b6d-4c1e-9d3b-2f5a8e6c4b10,
           cluster: domain-c7, at: "2026-11-28T10:15:03.120000Z", previous: {drs_enabled: true,
           drs_behavior: fullyAutomated, dpm_enabled: true, dpm_behavior: automated}}
  contains:
    run:
      description: The run that took it (its O(run_id)).
      type: str
    by:
      description: Who ran it, as C(user@controller).
      type: str
    vcenter:
      description: C(about.instanceUuid) of the vCenter it was taken on.
      type: str
    cluster:
      description: MoRef of the cluster it was taken on.
      type: str
    at:
      description: vCenter's time when it was taken (UTC).
      type: str
    previous:
      description: DRS and DPM before the work; same keys as RV(previous).
      type: dict
    adopted:
      description: Present and true when taken over from O(adopt_previous).
      type: bool
record_found:
  description: Whether the cluster carried a record before this run (an earlier run's that was not restored yet).
  returned: always
  type: bool
record_error:
  description:
    - Why the cluster's record cannot be trusted (damaged, or of another vCenter or cluster); null when it can or
      there is none. With O(record) or O(restore_recorded) such a record fails the task instead, with the fix.
  returned: when neither O(record) nor O(restore_recorded) is set
  type: str
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._cluster_automation import (
    DPM_BEHAVIORS,
    DRS_BEHAVIORS,
    FIELDS,
    cluster_automation,
)


def _fields():
    return dict(
        drs_enabled=dict(type="bool"),
        drs_behavior=dict(type="str", choices=list(DRS_BEHAVIORS)),
        dpm_enabled=dict(type="bool"),
        dpm_behavior=dict(type="str", choices=list(DPM_BEHAVIORS)),
    )


def argument_spec():
    return vcenter_spec(_fields(), cluster=dict(type="str", required=True), datacenter=dict(type="str"),
                        restore=dict(type="dict", options=_fields()), record=dict(type="bool", default=False),
                        restore_recorded=dict(type="bool", default=False),
                        adopt_previous=dict(type="dict", options=_fields()), run_id=dict(type="str"))


def main():
    run_module(argument_spec(), cluster_automation, client=VCenterClient.from_params, supports_check_mode=True,
               mutually_exclusive=[["restore", field] for field in FIELDS]
               + [["restore_recorded", other] for other in ("record", "restore") + FIELDS])


if __name__ == "__main__":
    main()
