#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: vlcm_cluster_image
short_description: Add, update and remove components of a cluster's vSphere Lifecycle Manager image
version_added: 0.1.0
description:
  - Sets components of the desired image of a cluster managed by vSphere Lifecycle Manager (vLCM), for example the
    NVIDIA vGPU host driver and GPU management daemon, and removes others. Components not named keep their
    versions; the base image is left as it is.
  - Compares the request with the current image and changes only the difference, through a vLCM draft that is
    validated and then committed. A draft that fails validation is discarded, so the image stays as it was.
  - Fails before anything changes when a component or version is in no depot (import it first with
    M(gpuops.vgpu.vlcm_depot)), or when the cluster is not managed with a single image.
  - In check mode a component or version in no depot gives a warning instead, since an earlier task of the play
    may import it; a component without version that no depot holds yet shows as null in the diff.
  - Changing the image changes no host; M(gpuops.vgpu.vlcm_remediate) brings the hosts to it.
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.vgpu.vcenter
  - gpuops.vgpu.attributes
  - gpuops.vgpu.attributes.ACTION_GROUP_VCENTER
attributes:
  check_mode:
    support: full
    details: Reads the image and the depots and returns the diff; no draft is created. Components not in a depot
      yet are warned about rather than failed, as an earlier task of the play may import them.
  diff_mode:
    support: full
    details: The image's components before and after.
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
  components:
    description:
      - Components the image must hold, name to version.
      - A null version means any version the depots hold. A component already in the image keeps its version,
        a new one gets the newest the depots hold.
      - Quote versions in YAML (V("1.10") stays C(1.10); unquoted it would become the number C(1.1)).
    type: dict
    default: {}
  remove_components:
    description:
      - Names of components the image must not hold. Names not in the image are ignored.
    type: list
    elements: str
    default: []
  commit_message:
    description:
      - Message recorded with the image commit.
    type: str
    default: Changed by gpuops.vgpu.vlcm_cluster_image
  timeout:
    description:
      - Seconds to wait for vLCM to validate and commit the image.
    type: int
    default: 600
requirements:
  - requests
notes:
  - Uses the vSphere Automation REST API (C(/api/esx/settings/clusters/{cluster}/software)).
  - vLCM keeps one image draft per user and cluster. A draft of the connecting user that holds nothing beyond the
    image as it is or as this task makes it (what a run killed between creating and committing its draft leaves) is
    discarded with a warning that names it, and the change is made anew. A draft with changes of its own fails the
    task, naming them, and is left as it is.
"""

EXAMPLES = r"""
- name: NVIDIA vGPU host driver and GPU management daemon in the cluster image
  gpuops.vgpu.vlcm_cluster_image:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    cluster: gpu-cluster
    components:
      NVD-VGPU-800: 525.105.14-1OEM.800.1.0.20613240
      nvd-gpu-mgmt-daemon: 525.105.14-0.0.0000

- name: Keep whatever driver version is in the image, and drop an old component
  gpuops.vgpu.vlcm_cluster_image:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    cluster: gpu-cluster
    components:
      NVD-VGPU-800:
    remove_components:
      - NVD-VGPU-702
"""

RETURN = r"""
cluster:
  description: The cluster, with its vCenter id.
  returned: always
  type: dict
  sample: {"id": "domain-c7", "name": "gpu-cluster"}
image:
  description: The image after the change (in check mode, as it would be).
  returned: always
  type: dict
  contains:
    base_image:
      description: ESXi base image version.
      type: str
      sample: 8.0.2-0.0.22380479
    components:
      description: Components besides the base image, name to version.
      type: dict
      sample: {"NVD-VGPU-800": "525.105.14-1OEM.800.1.0.20613240"}
changes:
  description: Components set (name to version) and deleted (names).
  returned: always
  type: dict
  sample: {"set": {"NVD-VGPU-800": "525.105.14-1OEM.800.1.0.20613240"}, "delete": []}
commit:
  description: vLCM's id of the image commit made.
  returned: when the image changed (not in check mode)
  type: str
diff:
  description: The components before and after.
  returned: with C(--diff)
  type: dict
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter_rest import VCenterRestClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._image import change_cluster_image


def argument_spec():
    return vcenter_spec(
        cluster=dict(type="str", required=True),
        datacenter=dict(type="str"),
        components=dict(type="dict", default={}),
        remove_components=dict(type="list", elements="str", default=[]),
        commit_message=dict(type="str", default="Changed by gpuops.vgpu.vlcm_cluster_image"),
        timeout=dict(type="int", default=600),
    )


def main():
    run_module(argument_spec(), change_cluster_image, client=VCenterRestClient.from_params, supports_check_mode=True)


if __name__ == "__main__":
    main()
