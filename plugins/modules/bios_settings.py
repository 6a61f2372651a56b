#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: bios_settings
short_description: Set server BIOS attributes or the GPU virtualisation profile over Redfish
version_added: 0.1.0
description:
  - Sets BIOS attributes through the server's BMC (Dell iDRAC, HPE iLO, Supermicro, any Redfish service), either
    by name with O(attributes) or as the O(profile=gpu_virtualization) intents, which are mapped to the attribute
    names of the vendor detected from the BMC's identity.
  - Names and values are checked against the server's BIOS attribute registry before anything is sent, including
    attributes that are read-only until another attribute changes.
  - Wanted values are compared with the pending values when there are any, else with the current ones, so a
    second run before the reboot reports no change and creates no second Dell job.
  - Values are stored as pending settings with the apply time the BMC advertises, or through a BIOS
    configuration job on Dell BMCs; they take effect at the next reboot, which the module performs only with
    O(reboot=if_needed).
author: gpuops maintainers (@gpuops)
options:
  attributes:
    description:
      - BIOS attributes to set, by the names the BIOS uses, for example C(SriovGlobalEnable) on Dell or
        C(SR_IOVSupport_002C) on Supermicro. Attributes not listed keep their values.
      - Quote values such as C("On") and C("Off"), which YAML would otherwise read as booleans.
      - Mutually exclusive with O(profile).
    type: dict
  profile:
    description:
      - V(gpu_virtualization) turns on CPU virtualisation (VT-x/AMD-V), the IOMMU (VT-d), SR-IOV, memory-mapped I/O
        above 4 GB (large-BAR GPUs) and PCIe AER, with the vendor's attribute names and values.
      - An intent the BIOS does not expose, or whose attribute is locked, is reported in RV(intents) and left
        out; see O(strict).
      - Mutually exclusive with O(attributes).
    type: str
    choices: [gpu_virtualization]
  strict:
    description:
      - With O(profile), fail before changing anything when an intent is not exposed by this BIOS or its
        attribute is read-only.
    type: bool
    default: false
  reboot:
    description:
      - V(never) leaves the pending values for the next reboot (RV(pending_reboot) tells whether one is needed).
      - V(if_needed) restarts the server when wanted values are pending, waits until it is back on with the
        values current, and fails if the BIOS did not apply them. Put an ESXi host in maintenance mode first.
    type: str
    choices: [never, if_needed]
    default: never
  reset_type:
    description:
      - V(graceful) asks the operating system to restart (or shuts it down and powers on again where the BMC has
        no graceful restart, such as iDRAC8). V(force) restarts without asking the operating system.
    type: str
    choices: [graceful, force]
    default: graceful
  reboot_timeout:
    description:
      - Seconds to wait for the server to shut down and for it to come back with the values applied. Servers
        with much memory or a BIOS job to run take several minutes.
    type: int
    default: 1800
extends_documentation_fragment:
  - gpuops.vgpu.redfish
  - gpuops.vgpu.attributes
  - gpuops.vgpu.attributes.ACTION_GROUP_REDFISH
attributes:
  check_mode:
    support: full
    details: Reads everything, validates the input and predicts the change, pending values and job without
      sending any change.
  diff_mode:
    support: full
    details: Current and pending values of the wanted attributes before and after.
notes:
  - Dell BMCs apply pending BIOS values only through a configuration job, and refuse new pending values while one
    is scheduled; when values must change then, the scheduled job is deleted and created again with the earlier
    pending values and the new ones.
  - iDRAC8 needs firmware 2.50.50.50 or later to change BIOS attributes over Redfish.
seealso:
  - module: gpuops.vgpu.bmc_info
"""

EXAMPLES = r"""
- name: Prepare the BIOS of every GPU host for vGPU, reboot later
  gpuops.vgpu.bios_settings:
    baseuri: "{{ bmc_address }}"
    username: "{{ bmc_username }}"
    password: "{{ bmc_password }}"
    validate_certs: "{{ bmc_validate_certs }}"
    profile: gpu_virtualization
  delegate_to: localhost
  register: bios

- name: Report what the platform does not expose
  ansible.builtin.debug:
    msg: "{{ bios.intents | dict2items | selectattr('value.status', 'eq', 'not_exposed') | map(attribute='key') }}"

- name: Set attributes by name and reboot when they are pending
  gpuops.vgpu.bios_settings:
    baseuri: https://127.0.0.1:8441
    username: root
    password: "{{ bmc_password }}"
    validate_certs: false
    attributes:
      SriovGlobalEnable: Enabled
      MmioAbove4Gb: Enabled
    reboot: if_needed

- name: Same, with the connection set once for the BMC modules
  module_defaults:
    group/gpuops.vgpu.redfish:
      username: root
      password: "{{ bmc_password }}"
      validate_certs: false
  block:
    - name: Fail when an intent cannot be met
      gpuops.vgpu.bios_settings:
        baseuri: https://127.0.0.1:8444
        profile: gpu_virtualization
        strict: true
"""

RETURN = r"""
vendor:
  description: What the BMC reports about itself, and the family used to map intents.
  returned: always
  type: dict
  sample: {family: dell, generation: idrac8, manufacturer: Dell Inc., model: PowerEdge R730,
           bmc_model: 13G Monolithic, bmc_firmware: 2.75.75.75}
diff:
  description:
    - Current and pending values of the wanted attributes before and after the run (predicted in check mode),
      and the wanted values.
  returned: with C(--diff)
  type: dict
  sample:
    before: {current: {SriovGlobalEnable: Disabled}, pending: {}}
    after: {current: {SriovGlobalEnable: Disabled}, pending: {SriovGlobalEnable: Enabled}}
    wanted: {SriovGlobalEnable: Enabled}
wanted:
  description: The attributes and values this run asked for (from O(attributes), or what O(profile) maps to).
  returned: always
  type: dict
  sample: {SriovGlobalEnable: Enabled, ProcVirtualization: Enabled}
pending:
  description: Wanted attributes whose new value waits for a reboot after this run (predicted in check mode).
  returned: always
  type: dict
  sample: {SriovGlobalEnable: Enabled}
changes:
  description: Attributes this run sent as pending values (would send, in check mode).
  returned: always
  type: dict
  sample: {SriovGlobalEnable: Enabled}
pending_reboot:
  description: Whether wanted values wait for a reboot after this run.
  returned: always
  type: bool
rebooted:
  description: Whether this run restarted the server.
  returned: always
  type: bool
job:
  description: URI of the Dell BIOS configuration job that applies the pending values, if there is one.
  returned: always
  type: str
  sample: /redfish/v1/Managers/iDRAC.Embedded.1/Jobs/JID_743120548953
apply_time:
  description: The apply time requested with the pending values, when the BMC advertises one.
  returned: always
  type: str
  sample: OnReset
intents:
  description:
    - With O(profile), per intent its status after the run (V(ok), V(pending), V(read_only), V(not_exposed)), the
      attributes and values it maps to, whether this run changed it, C(via) for an intent provided by another
      intent's attribute, and a C(note).
  returned: when O(profile) is set
  type: dict
  sample:
    cpu_virtualization: {status: ok, attributes: {ProcVirtualization: Enabled}, changed: false}
    iommu: {status: ok, via: cpu_virtualization, attributes: {ProcVirtualization: Enabled}, changed: false,
            note: "no separate VT-d attribute: ProcVirtualization enables VT-d on Dell Intel platforms"}
    sriov: {status: pending, attributes: {SriovGlobalEnable: Enabled}, changed: true}
    pcie_aer: {status: not_exposed, attributes: {}, changed: false, note: not exposed by this BIOS}
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import redfish_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc._bios_settings import bios_settings
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._redfish import RedfishClient


def argument_spec():
    return redfish_spec(
        attributes=dict(type="dict"),
        profile=dict(type="str", choices=["gpu_virtualization"]),
        strict=dict(type="bool", default=False),
        reboot=dict(type="str", choices=["never", "if_needed"], default="never"),
        reset_type=dict(type="str", choices=["graceful", "force"], default="graceful"),
        reboot_timeout=dict(type="int", default=1800),
    )


def main():
    run_module(argument_spec(), bios_settings, client=RedfishClient.from_params, supports_check_mode=True,
               mutually_exclusive=[("attributes", "profile")], required_one_of=[("attributes", "profile")])


if __name__ == "__main__":
    main()
