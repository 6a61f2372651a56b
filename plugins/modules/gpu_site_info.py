#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_site_info
short_description: Everything vCenter holds about the GPU clusters, in one call
version_added: 0.1.0
description:
  - Reads in one module call, over one SOAP session and (for the vLCM part) one REST session, what otherwise takes
    four modules and one call per cluster each - the GPU inventory (M(gpuops.vgpu.gpu_info)), DRS and DPM of each
    cluster with the record of a vGPU prepare (M(gpuops.vgpu.cluster_automation) in check mode), each cluster's
    vLCM image and last compliance scan (M(gpuops.vgpu.vlcm_info)), and named advanced settings of vCenter
    (M(gpuops.vgpu.vcenter_settings) in check mode). Each part answers exactly as its own module does.
  - Made for checkers such as the doctor role, which want every part even when one cannot be read - a part that
    fails is reported in its C(_error) key and the others are still read; the module fails only on bad options or
    when vCenter cannot be reached at all.
  - Reads only; it starts no scan and changes nothing.
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.vgpu.vcenter
  - gpuops.vgpu.attributes.INFO_MODULE
  - gpuops.vgpu.attributes.ACTION_GROUP_VCENTER
options:
  clusters:
    description:
      - Clusters to read. Empty reads the clusters of every host with a GPU (in O(datacenter) when set).
    type: list
    elements: str
    default: []
  datacenter:
    description:
      - Datacenter of the clusters; tells apart clusters of the same name.
    type: str
  vms:
    description:
      - VMs to return in RV(vms), by name. A VM that is not found leaves the rest read and its message in
        RV(vms_error).
    type: list
    elements: str
    default: []
  settings:
    description:
      - Advanced settings of vCenter (C(OptionManager)) to return in RV(settings), by key; a key vCenter does not
        have is returned as V(null).
    type: list
    elements: str
    default: []
  gather:
    description:
      - The parts to read. Default is all of them.
    type: list
    elements: str
    choices: [inventory, automation, vlcm, settings]
requirements:
  - pyVmomi
  - requests
"""

EXAMPLES = r"""
- name: What vCenter holds about the GPU clusters
  gpuops.vgpu.gpu_site_info:
    hostname: "{{ vcenter_hostname }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    clusters: [gpu-cluster]
    vms: [train-01]
    settings: [vgpu.hotmigrate.enabled]
  register: site

- name: Clusters a vGPU prepare left without DRS/DPM restored
  ansible.builtin.debug:
    msg: "{{ site.clusters | selectattr('automation.record') | map(attribute='name') | list }}"
"""

RETURN = r"""
gathered:
  description: The parts read, in the order of O(gather)'s choices.
  returned: always
  type: list
  elements: str
hosts:
  description: The hosts with GPUs of the clusters read, as M(gpuops.vgpu.gpu_info) returns them.
  returned: when inventory is gathered
  type: list
  elements: dict
vms:
  description: The VMs named in O(vms), as M(gpuops.vgpu.gpu_info) returns them.
  returned: when inventory is gathered
  type: list
  elements: dict
vms_error:
  description: Why the VMs named in O(vms) could not be read (the hosts were read without them), or V(null).
  returned: when inventory is gathered
  type: str
inventory_error:
  description: Why the inventory could not be read, or V(null).
  returned: when inventory is gathered
  type: str
settings:
  description: The value of each key of O(settings) (V(null) for a key vCenter does not have); V(null) when they
    could not be read.
  returned: when settings are gathered
  type: dict
settings_error:
  description: Why the settings could not be read, or V(null).
  returned: when settings are gathered
  type: str
clusters:
  description: One entry per cluster read, in the order of O(clusters) (else by name).
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Cluster name.
      type: str
    automation:
      description: DRS and DPM as M(gpuops.vgpu.cluster_automation) reports them in check mode (C(previous),
        C(current), C(record), C(record_found), C(record_error)), or V(null) when they could not be read.
      type: dict
    automation_error:
      description: Why DRS and DPM could not be read, or V(null).
      type: str
    vlcm:
      description: The cluster, its image and compliance as M(gpuops.vgpu.vlcm_info) returns them, or V(null).
      type: dict
    vlcm_error:
      description: Why vLCM could not be read, or V(null).
      type: str
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._site_info import GATHER_CHOICES, read_site


def argument_spec():
    return vcenter_spec(
        clusters=dict(type="list", elements="str", default=[]),
        datacenter=dict(type="str"),
        vms=dict(type="list", elements="str", default=[]),
        settings=dict(type="list", elements="str", default=[], no_log=False),
        gather=dict(type="list", elements="str", choices=GATHER_CHOICES),
    )


def main():
    run_module(argument_spec(), read_site, client=VCenterClient.from_params, supports_check_mode=True)


if __name__ == "__main__":
    main()
