#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: cluster_record
short_description: Read, write or clear a record a layer keeps on a cluster in vCenter
version_added: 0.1.0
description:
  - Keeps a JSON record of a layer's work in a custom attribute of the cluster (O(field)), so that any later run,
    from any controller or AWX job, reads it. The C(driver_upgrade) role keeps there the image and DRS/DPM from
    before an upgrade, for a run that stopped half way and for the rollback.
  - The record holds O(data) with the run, who ran it, the vCenter (C(about.instanceUuid)) and cluster (MoRef) it
    was taken on and vCenter's time. One C(SetField) call writes it, atomic in vCenter.
  - A read refuses a record that is cut short or edited, lacks one of O(required_keys) in its data, or was taken
    on another vCenter or cluster, before anything else runs, naming the cluster, the attribute and what to do
    (O(fix)).
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
    details: A read runs as usual; a write or a clear reports whether the record would change and sends nothing.
  diff_mode:
    support: full
    details: The record's data before and after a write.
options:
  cluster:
    description: The cluster that carries the record.
    type: str
    required: true
  datacenter:
    description: The datacenter of O(cluster), where cluster names repeat.
    type: str
  field:
    description:
      - The custom attribute (of clusters) holding the record, named C(gpuops.vgpu.<layer>); vCenter gets the
        attribute's definition on the first write.
    type: str
    required: true
  data:
    description:
      - Write this JSON object as the record's data. A record that holds the same data already is left as it is.
      - Without O(data) the module reads the record.
    type: dict
  state:
    description:
      - V(absent) clears the record (sets the attribute to the empty string).
    type: str
    choices: [present, absent]
    default: present
  required_keys:
    description: Keys the data of a record read must have; one missing makes it untrustworthy.
    type: list
    elements: str
    default: []
  missing:
    description:
      - What a read does when the cluster carries no record. V(ok) returns RV(exists=false) and an empty RV(data);
        V(fail) fails with O(fix).
    type: str
    choices: [ok, fail]
    default: ok
  fix:
    description: What the user should do about a missing or untrustworthy record, for the message.
    type: str
  run_id:
    description: The run named in a written record; made from the time and the process id when not given.
    type: str
notes:
  - Custom attributes are vCenter's own, so a record goes with the cluster, not with the controller; clearing it
    in the vSphere Client (the cluster's Custom Attributes) is the same as O(state=absent).
"""

EXAMPLES = r"""
- name: Keep the image from before an upgrade on the cluster
  gpuops.vgpu.cluster_record:
    cluster: gpu-cluster
    field: gpuops.vgpu.driver_upgrade
    data:
      state: upgrading
      previous_image: {"NVD-VGPU-800": "525.105.14-1OEM.800.1.0.20613240"}

- name: Read it back, failing when there is none
  gpuops.vgpu.cluster_record:
    cluster: gpu-cluster
    field: gpuops.vgpu.driver_upgrade
    required_keys: [state, previous_image]
    missing: fail
  register: upgrade_record
"""

RETURN = r"""
exists:
  description: Whether the cluster carries a record after the task.
  returned: always
  type: bool
data:
  description: The record's data after the task (empty without a record).
  returned: always
  type: dict
record:
  description: Who wrote the record and when (C(run), C(by), C(at) in vCenter's time); null without one.
  returned: unless O(state=absent)
  type: dict
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._cluster_record import cluster_record


def argument_spec():
    return vcenter_spec(
        cluster=dict(type="str", required=True),
        datacenter=dict(type="str"),
        field=dict(type="str", required=True),
        data=dict(type="dict"),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        required_keys=dict(type="list", elements="str", default=[], no_log=False),
        missing=dict(type="str", choices=["ok", "fail"], default="ok"),
        fix=dict(type="str"),
        run_id=dict(type="str"),
    )


def main():
    run_module(argument_spec(), cluster_record, client=VCenterClient.from_params, supports_check_mode=True)


if __name__ == "__main__":
    main()
