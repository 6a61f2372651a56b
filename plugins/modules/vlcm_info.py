#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: vlcm_info
short_description: vSphere Lifecycle Manager depots, their components, a cluster's hosts, image and compliance
version_added: 0.1.0
description:
  - Returns the offline depots of vSphere Lifecycle Manager (vLCM) with the components each carries, every
    component version the depots hold, and for a cluster whether it is managed with a single image, its hosts, its
    desired image and its last compliance scan.
  - With O(bundles), also reads offline bundles on the host that runs the module (the controller, for the
    collection's vCenter plays) and returns the components each carries, so that one task tells what the bundles
    bring and what vLCM already holds.
  - Reads only; it starts no scan (M(gpuops.vgpu.vlcm_remediate) in check mode scans).
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.vgpu.vcenter
  - gpuops.vgpu.attributes.INFO_MODULE
  - gpuops.vgpu.attributes.ACTION_GROUP_VCENTER
options:
  cluster:
    description:
      - Cluster whose image and compliance to return.
    type: str
  datacenter:
    description:
      - Datacenter of the cluster; tells apart clusters of the same name.
    type: str
  gather:
    description:
      - What to read. V(depots) costs one call per depot; the others one call each.
      - V(hosts), V(image) and V(compliance) need O(cluster).
      - Default is everything that applies, V(depots) and V(components), and with O(cluster) also V(hosts),
        V(image) and V(compliance).
    type: list
    elements: str
    choices: [depots, components, hosts, image, compliance]
  bundles:
    description:
      - Offline bundles (component depot zips) to read on the host that runs the module, whatever O(gather) says.
        Only their metadata is read; a missing or corrupt file fails the module before any call to vCenter.
    type: list
    elements: path
requirements:
  - requests
"""

EXAMPLES = r"""
- name: Image and compliance of the vGPU cluster
  gpuops.vgpu.vlcm_info:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    cluster: gpu-cluster
  register: vlcm

- name: Driver version on every host
  ansible.builtin.debug:
    msg: "{{ item.name }}: {{ item.components['NVD-VGPU-800'].current | default('not installed') }}"
  loop: "{{ vlcm.compliance.hosts }}"
  loop_control:
    label: "{{ item.name }}"

- name: Which offline depots are imported
  gpuops.vgpu.vlcm_info:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    gather: [depots]

# depot_dir: where the bundles are on the controller (in the lab: .tmp/lab/depot).
- name: What a bundle carries, and every component version the depots hold, in one task
  gpuops.vgpu.vlcm_info:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    bundles:
      - "{{ depot_dir }}/NVD-VGPU-800_525.105.14-1OEM.800.1.0.20613240_21506612.zip"
    gather: [components]
  register: vlcm_read
"""

RETURN = r"""
depots:
  description: Offline depots, sorted by location.
  returned: when O(gather) has V(depots)
  type: list
  elements: dict
  contains:
    id:
      description: vLCM's id of the depot.
      type: str
    location:
      description: URL it was imported from.
      type: str
    description:
      description: Its description.
      type: str
    owner:
      description: User who imported it.
      type: str
    components:
      description: Components it carries (C(name), C(version), C(display_name), C(display_version), C(vendor)).
      type: list
      elements: dict
components:
  description: Every component version the depots hold (C(name), C(version), C(display_name),
    C(display_version), C(vendor), C(summary), C(release_date), C(category), C(urgency)), base image included.
  returned: when O(gather) has V(components)
  type: list
  elements: dict
bundles:
  description:
    - The offline bundles of O(bundles), in that order, each with C(path), C(file_name), C(size), C(vendors) and
      C(components) as RV(gpuops.vgpu.vlcm_depot#module:bundle) describes them.
  returned: when O(bundles) is given
  type: list
  elements: dict
hosts:
  description: The hosts of the cluster (C(name), C(id), C(connection_state)), by name.
  returned: when O(cluster) is given and O(gather) has V(hosts)
  type: list
  elements: dict
cluster:
  description: The cluster, with its id and whether it is managed with a single image (C(image_managed)).
  returned: when O(cluster) is given
  type: dict
  sample: {"id": "domain-c7", "name": "gpu-cluster", "image_managed": true}
image:
  description: The desired image (C(base_image) version, C(components) name to version); null for a cluster that
    is not image-managed.
  returned: when O(cluster) is given and O(gather) has V(image)
  type: dict
compliance:
  description:
    - The last compliance scan (C(status), C(impact), C(scan_time), C(commit), and C(hosts) with per host
      C(name), C(id), C(status), C(impact) and C(components) name to C(status), C(current) and C(target)).
    - Null when the cluster was never scanned or is not image-managed.
  returned: when O(cluster) is given and O(gather) has V(compliance)
  type: dict
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter_rest import VCenterRestClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._info import GATHER_CHOICES, vlcm_info


def argument_spec():
    return vcenter_spec(
        cluster=dict(type="str"),
        datacenter=dict(type="str"),
        gather=dict(type="list", elements="str", choices=GATHER_CHOICES),
        bundles=dict(type="list", elements="path"),
    )


def main():
    run_module(argument_spec(), vlcm_info, client=VCenterRestClient.from_params, supports_check_mode=True)


if __name__ == "__main__":
    main()
