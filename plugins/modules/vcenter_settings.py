#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: vcenter_settings
short_description: vCenter advanced settings, sent with the type each setting declares
version_added: 0.1.0
description:
  - Sets vCenter advanced settings (the vCenter Server's OptionManager), for example V(vgpu.hotmigrate.enabled),
    which vGPU vMotion needs.
  - Each value is converted to the type the setting declares in vCenter (boolean, integer, long, float, string or
    one of a set of choices) before it is sent; vCenter refuses a boolean setting written as a string. Booleans
    also accept V(true)/V(false), V(yes)/V(no), V(on)/V(off) and V(1)/V(0) as strings.
  - A key vCenter does not know fails before anything changes, naming close matches, unless O(allow_new=true).
  - Only the keys whose value differs are sent, all in one update. Settings not named stay as they are.
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
    details: Reads and types the values, sends nothing; RV(changed_keys) lists what would change.
  diff_mode:
    support: full
    details: Before and after of the keys that change.
options:
  settings:
    description:
      - Setting keys and their values.
    type: dict
    required: true
  allow_new:
    description:
      - Create keys vCenter does not know yet, as string settings. Without it an unknown key fails the module.
    type: bool
    default: false
notes:
  - A key that has a value but no definition in vCenter is typed like its current value.
"""

EXAMPLES = r"""
- name: Allow vMotion of vGPU VMs
  gpuops.vgpu.vcenter_settings:
    hostname: "{{ vcenter_hostname }}"
    port: "{{ vcenter_port }}"
    username: "{{ vcenter_username }}"
    password: "{{ vcenter_password }}"
    validate_certs: "{{ vcenter_validate_certs }}"
    settings:
      vgpu.hotmigrate.enabled: true

- name: Several settings at once, credentials set once for the action group
  module_defaults:
    group/gpuops.vgpu.vcenter:
      hostname: "{{ vcenter_hostname }}"
      port: "{{ vcenter_port }}"
      username: "{{ vcenter_username }}"
      password: "{{ vcenter_password }}"
      validate_certs: "{{ vcenter_validate_certs }}"
  gpuops.vgpu.vcenter_settings:
    settings:
      vgpu.hotmigrate.enabled: "yes"
      config.gpuops.owner: platform-team
    allow_new: true
  register: settings

- name: Keys that changed
  ansible.builtin.debug:
    var: settings.changed_keys
"""

RETURN = r"""
settings:
  description: Values of the given keys before and after, as vCenter holds them (null for a key that did not exist).
  returned: always
  type: dict
  contains:
    before:
      description: Key to value before the change.
      type: dict
      sample: {"vgpu.hotmigrate.enabled": false}
    after:
      description: Key to value after the change (predicted in check mode).
      type: dict
      sample: {"vgpu.hotmigrate.enabled": true}
changed_keys:
  description: Keys whose value changed (would change, in check mode), sorted.
  returned: always
  type: list
  elements: str
  sample: [vgpu.hotmigrate.enabled]
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import vcenter_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._settings import apply_settings


def argument_spec():
    return vcenter_spec(settings=dict(type="dict", required=True), allow_new=dict(type="bool", default=False))


def main():
    run_module(argument_spec(), apply_settings, client=VCenterClient.from_params, supports_check_mode=True)


if __name__ == "__main__":
    main()
