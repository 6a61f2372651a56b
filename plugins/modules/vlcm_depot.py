#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: vlcm_depot
short_description: Import an ESXi offline bundle into vSphere Lifecycle Manager, or remove it
version_added: 0.1.0
description:
  - Imports the offline bundle (component depot zip) at O(location) into vSphere Lifecycle Manager (vLCM) with
    vCenter fetching it (PULL), and returns the components it carries. A bundle already imported from that
    location is not imported again; one whose content is already in vLCM from another location is reported with
    that depot and no change.
  - With O(src), reads the bundle's metadata on the controller first, so a play knows which components and
    versions the bundle holds before anything is imported, and a corrupt or wrong file fails before vCenter is
    asked to fetch it.
  - O(state=absent) removes the depot imported from O(location) and its content. vLCM refuses when a cluster's
    desired image needs a component version only this depot holds.
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.vgpu.vcenter
  - gpuops.vgpu.attributes
  - gpuops.vgpu.attributes.ACTION_GROUP_VCENTER
attributes:
  check_mode:
    support: full
    details: Reads the depots (and O(src)) and reports what would change; nothing is imported or removed.
  diff_mode:
    support: full
    details: Whether a depot from O(location) exists before and after.
options:
  location:
    description:
      - URL vCenter reads the offline bundle from (C(https://), C(http://), or C(file://) for a file on the vCenter
        appliance). It is the depot's identity, so the same location is imported once.
    type: str
    required: true
  src:
    description:
      - The same offline bundle as a file on the controller. Its components are read and returned in RV(bundle)
        before the import, and compared with what vCenter imported.
    type: path
  description:
    description:
      - Description of a new depot, shown in vLCM.
    type: str
  state:
    description:
      - V(present) imports the bundle, V(absent) removes the depot imported from O(location).
    type: str
    choices: [present, absent]
    default: present
  timeout:
    description:
      - Seconds to wait for vCenter to download and import the bundle, or to remove it.
    type: int
    default: 1800
requirements:
  - requests
notes:
  - Uses the vSphere Automation REST API (C(/api/esx/settings/depots/offline)).
"""

EXAMPLES = r"""
# depot_dir: where the bundles are on the controller; depot_url: where vCenter fetches the same files
# (in the lab: .tmp/lab/depot and https://127.0.0.1:8989/lab/depot).
- name: Import the NVIDIA vGPU host driver, reading its components on the controller first
  gpuops.vgpu.vlcm_depot:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    src: "{{ depot_dir }}/NVD-VGPU-800_525.105.14-1OEM.800.1.0.20613240_21506612.zip"
    location: "{{ depot_url }}/NVD-VGPU-800_525.105.14-1OEM.800.1.0.20613240_21506612.zip"
  register: driver_depot

- name: Show what the bundle carries
  ansible.builtin.debug:
    msg: "{{ driver_depot.components | map(attribute='name') | zip(driver_depot.components | map(attribute='version')) }}"

- name: Remove the depot again
  gpuops.vgpu.vlcm_depot:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    location: "{{ depot_url }}/NVD-VGPU-800_525.105.14-1OEM.800.1.0.20613240_21506612.zip"
    state: absent
"""

RETURN = r"""
depot:
  description: The depot imported from O(location); null when there is none (after O(state=absent), or in check mode
    before an import).
  returned: always
  type: dict
  contains:
    id:
      description: vLCM's id of the depot.
      type: str
    location:
      description: URL the depot was imported from.
      type: str
    description:
      description: Description of the depot.
      type: str
    owner:
      description: User who imported it.
      type: str
components:
  description:
    - Components of the depot (in check mode before an import, those of O(src)).
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Component name, as the cluster image uses it.
      type: str
      sample: NVD-VGPU-800
    version:
      description: Component version.
      type: str
      sample: 525.105.14-1OEM.800.1.0.20613240
    display_name:
      description: Name shown in vLCM.
      type: str
    display_version:
      description: Version shown in vLCM.
      type: str
    vendor:
      description: Vendor of the component.
      type: str
progress:
  description: Progress of the vCenter tasks the module waited for, one line per step.
  returned: when the module waited for a task
  type: list
  elements: str
  sample: ["[  0.3s] create running 0/2: Downloading https://depot.example.com/nvidia/NVD-VGPU-800.zip"]
bundle:
  description: The metadata of O(src), read on the controller.
  returned: when O(src) is given
  type: dict
  contains:
    file_name:
      description: File name of the bundle.
      type: str
    size:
      description: Size in bytes.
      type: int
    vendors:
      description: Vendors the bundle's index names.
      type: list
      elements: str
    components:
      description: Components with C(name), C(version), C(display_name), C(display_version), C(vendor),
        C(summary), C(release_date), C(category), C(urgency), C(bulletin) and C(vibs).
      type: list
      elements: dict
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter_rest import VCenterRestClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._depots import ensure_depot


def argument_spec():
    return vcenter_spec(
        location=dict(type="str", required=True),
        src=dict(type="path"),
        description=dict(type="str"),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        timeout=dict(type="int", default=1800),
    )


def main():
    run_module(argument_spec(), ensure_depot, client=VCenterRestClient.from_params, supports_check_mode=True)


if __name__ == "__main__":
    main()
