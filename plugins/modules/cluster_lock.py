#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: cluster_lock
short_description: One run at a time on a cluster, through a lock that vCenter holds
version_added: 0.1.0
description:
  - Takes or releases a lock on a cluster that vCenter itself keeps, so two runs that would change the same cluster
    (an AWX schedule and a person, on different controllers) do not interleave.
  - The lock is the custom attribute C(gpuops.vgpu.lock.<cluster moid>). Taking it creates the attribute, which
    vCenter refuses when it exists, so exactly one of two runs gets it; the winner writes on the cluster who holds
    it (owner, run id, controller, since, expires), visible among the cluster's Custom Attributes.
  - A run that finds the lock held waits up to O(wait) seconds, then fails naming the holder and since when.
  - A lock is taken over when it has expired (O(ttl) after it was last taken or renewed, by vCenter's clock), when
    the ansible-playbook process that took it on this controller has ended, or when its owner was never written
    (the run died between the two calls). O(break) takes or removes it on purpose.
  - Taking the lock again with the same O(run_id) renews its expiry and reports no change.
  - Run it where the play's vCenter tasks run (the controller, usually C(localhost)).
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
    details: Reads the lock and reports whether it would be taken, renewed, broken or released; changes nothing.
  diff_mode:
    support: none
options:
  cluster:
    description: Name of the cluster. Give O(cluster) or O(clusters).
    type: str
  clusters:
    description:
      - Names of several clusters, locked or released in one call, in the order given. All or none - when one of
        them cannot be taken, the locks this call took are given back before the task fails.
      - The result lists each cluster's outcome in RV(locks).
    type: list
    elements: str
  datacenter:
    description: Datacenter of the cluster; needed when several datacenters have a cluster of that name.
    type: str
  state:
    description: V(present) takes (or renews) the lock; V(absent) releases it.
    type: str
    choices: [present, absent]
    default: present
  run_id:
    description:
      - Names this run; every task of one run gives the same value. The playbooks set it once per run.
    type: str
    required: true
  owner:
    description: Who runs, for the message another run gets. Defaults to C(user@controller).
    type: str
  ttl:
    description: Seconds after which a lock that was not renewed counts as left by a dead run (at least 60).
    type: int
    default: 3600
  wait:
    description: Seconds to wait for another run's lock before failing; V(0) fails at once.
    type: int
    default: 300
  break:
    description:
      - Take the lock even though another run holds it, or release another run's lock. For a run known to be dead.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: One run at a time on gpu-cluster
  gpuops.vgpu.cluster_lock:
    cluster: gpu-cluster
    run_id: "{{ cluster_lock_run_id }}"

- name: Let the next run in
  gpuops.vgpu.cluster_lock:
    cluster: gpu-cluster
    run_id: "{{ cluster_lock_run_id }}"
    state: absent

- name: Both GPU clusters in one call, or neither
  gpuops.vgpu.cluster_lock:
    clusters: [gpu-cluster, mixed-cluster]
    run_id: "{{ cluster_lock_run_id }}"
"""

RETURN = r"""
lock:
  description: The lock as this run holds it now (null after a release).
  returned: always
  type: dict
  sample: {owner: awx@ctl01, run_id: 20261125T210000Z-42, controller: ctl01, pid: 4242,
           since: "2026-11-25T21:00:00Z", expires: "2026-11-25T22:00:00Z"}
broke:
  description: The lock of another run this run took over or removed, with C(reason); null when none.
  returned: always
  type: dict
cluster:
  description: The cluster.
  returned: with O(cluster)
  type: str
locks:
  description: With O(clusters), the outcome for each cluster (C(cluster), C(changed), C(lock), C(broke)), in order.
  returned: with O(clusters)
  type: list
  elements: dict
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._cluster_lock import run_lock


def argument_spec():
    return vcenter_spec(
        cluster=dict(type="str"), clusters=dict(type="list", elements="str"), datacenter=dict(type="str"),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        run_id=dict(type="str", required=True), owner=dict(type="str"),
        ttl=dict(type="int", default=3600), wait=dict(type="int", default=300),
        **{"break": dict(type="bool", default=False)})


def main():
    run_module(argument_spec(), run_lock, client=VCenterClient.from_params, supports_check_mode=True,
               required_one_of=[("cluster", "clusters")], mutually_exclusive=[("cluster", "clusters")])


if __name__ == "__main__":
    main()
