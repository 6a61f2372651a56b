#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: vlcm_remediate
short_description: Bring the hosts of a cluster to its vSphere Lifecycle Manager image
version_added: 0.1.0
description:
  - Scans the hosts of a cluster against its desired vLCM image and remediates those that differ. vLCM takes them
    into maintenance mode one at a time (so DRS must be able to move their powered-on VMs), installs the image and
    returns them to service. Hosts that already comply are left alone, so a second run changes nothing.
  - With O(precheck=true) (the default), vLCM's pre-checks run first; a host that cannot be remediated, such as
    one whose powered-on vGPU VMs cannot move because vGPU vMotion is off, fails the module before any host changes.
  - Waits for the remediation, noting its progress as it goes, and reports the outcome per host and the
    compliance before and after. When a host fails, the module fails naming the host and the reason; hosts done
    before it stay remediated, the rest stay as they were.
  - Remediation needs the VMware End User License Agreement accepted; the module accepts it only with
    O(accept_eula=true).
  - A remediation of the cluster that vCenter is still running when the module starts (one an interrupted run left
    going, as vLCM works on in vCenter when the controller dies) is waited for first, in check mode too, so that the
    scan sees what it left and no second remediation is refused; RV(waited_for) names it.
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.vgpu.vcenter
  - gpuops.vgpu.attributes
  - gpuops.vgpu.attributes.ACTION_GROUP_VCENTER
attributes:
  check_mode:
    support: full
    details: Runs a compliance scan only (a vLCM task that changes no host) and reports which hosts would be
      remediated.
  diff_mode:
    support: full
    details: Compliance status of each host before and after.
options:
  cluster:
    description:
      - Name of the cluster.
    type: str
    required: true
  datacenter:
    description:
      - Datacenter of the cluster; tells apart clusters of the same name.
    type: str
  esxi_hostnames:
    description:
      - Remediate only these hosts of the cluster, by their names in vCenter. Default is every host.
    type: list
    elements: str
    default: []
    aliases: [hosts]
  accept_eula:
    description:
      - Accept the VMware End User License Agreement (U(https://www.vmware.com/download/eula.html)) for the
        remediation. Without it the module fails before remediating.
    type: bool
    default: false
  precheck:
    description:
      - Run vLCM's remediation pre-checks first and stop, with nothing changed, if they find a problem.
    type: bool
    default: true
  timeout:
    description:
      - Seconds to wait for the scan, the pre-checks and the remediation (each).
    type: int
    default: 3600
  vm_power_action:
    description:
      - What vLCM does with the powered-on VMs of each host before it enters maintenance mode, for this remediation
        only (vLCM's C(pre_remediation_power_action)); the cluster's configured remediation settings are put back
        afterwards. V(keep) leaves them running, so vCenter must be able to move them (DRS, vGPU vMotion);
        V(power_off) powers them off, V(suspend) suspends them.
      - Unset uses the cluster's own remediation settings.
    type: str
    choices: [keep, power_off, suspend]
  components:
    description:
      - Components (name to version) that a task before this one puts into the cluster image, as
        M(gpuops.vgpu.vlcm_cluster_image) does. In check mode that task changed nothing, so the scan still compares
        the hosts with the image as it was; a host that does not run each of these components at its version is
        then counted in RV(pending) too, and check mode names every host a real run would remediate.
      - Not used outside check mode, where the scan compares the hosts with the image as the earlier task left it.
    type: dict
    default: {}
requirements:
  - requests
notes:
  - Uses the vSphere Automation REST API (C(/api/esx/settings/clusters/{cluster}/software)).
  - Progress is returned in RV(progress), one line per step and at least every 30 seconds while the tasks run.
"""

EXAMPLES = r"""
- name: Remediate every host of the cluster to its image
  gpuops.vgpu.vlcm_remediate:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    cluster: gpu-cluster
    accept_eula: true
  register: remediation

- name: Hosts and their outcome
  ansible.builtin.debug:
    msg: "{{ remediation.hosts | map(attribute='name') | zip(remediation.hosts | map(attribute='status')) }}"

- name: Which hosts differ from the image (a scan, nothing is installed)
  gpuops.vgpu.vlcm_remediate:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    cluster: gpu-cluster
  check_mode: true
"""

RETURN = r"""
cluster:
  description: The cluster, with its vCenter id.
  returned: always
  type: dict
  sample: {"id": "domain-c7", "name": "gpu-cluster"}
pending:
  description: Names of the hosts that did not comply before (those remediated), or in check mode those a real run
    would remediate (see O(components)).
  returned: always
  type: list
  elements: str
hosts:
  description: Outcome per host of the remediation.
  returned: when a remediation ran
  type: list
  elements: dict
  contains:
    name:
      description: Host name in vCenter.
      type: str
    id:
      description: Host id.
      type: str
    status:
      description: C(OK), C(ERROR), C(SKIPPED) (not attempted after a host failed) or C(TIMED_OUT).
      type: str
    message:
      description: What vLCM says about the host, with the reason of a failure.
      type: str
compliance_before:
  description: Compliance from the scan at the start.
  returned: always
  type: dict
  contains:
    status:
      description: C(COMPLIANT), C(NON_COMPLIANT), C(INCOMPATIBLE) or C(UNAVAILABLE).
      type: str
    hosts:
      description: Per host C(name), C(id), C(status), C(impact) and C(components) (name to C(status),
        C(current) and C(target) version).
      type: list
      elements: dict
compliance_after:
  description: Compliance after the remediation, same form as RV(compliance_before).
  returned: when not in check mode
  type: dict
waited_for:
  description:
    - The remediations of the cluster that vCenter was still running when the module started (an earlier run's,
      left going when that run was interrupted), waited for before the scan, in check mode too.
  returned: always
  type: list
  elements: dict
  contains:
    task:
      description: The vCenter task.
      type: str
    user:
      description: Who started it.
      type: str
    started:
      description: When it started.
      type: str
    status:
      description: How it ended, C(SUCCEEDED) or C(FAILED) (the scan after it says what it left).
      type: str
    message:
      description: Why it failed, or None.
      type: str
progress:
  description: Progress of the vCenter tasks, one line per step.
  returned: always
  type: list
  elements: str
  sample: ["[  2.1s] apply running 1/3: Host esxi-02.lab.local (2 of 3): entering maintenance mode"]
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter_rest import VCenterRestClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._remediation import VM_POWER_ACTIONS, remediate


def argument_spec():
    return vcenter_spec(
        cluster=dict(type="str", required=True),
        datacenter=dict(type="str"),
        esxi_hostnames=dict(type="list", elements="str", default=[], aliases=["hosts"]),
        accept_eula=dict(type="bool", default=False),
        precheck=dict(type="bool", default=True),
        timeout=dict(type="int", default=3600),
        vm_power_action=dict(type="str", choices=sorted(VM_POWER_ACTIONS)),
        components=dict(type="dict", default={}),
    )


def main():
    run_module(argument_spec(), remediate, client=VCenterRestClient.from_params, supports_check_mode=True)


if __name__ == "__main__":
    main()
