#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: bmc_info
short_description: Read a server's identity, BIOS, power, health and thermal state from its BMC over Redfish
version_added: 0.1.0
description:
  - Reads, through the server's BMC, the manufacturer, model, serial number and BIOS version, the current BIOS
    attributes and the pending ones that wait for a reboot, power state and health.
  - Reads temperatures and fans from the newer C(ThermalSubsystem) schema where the BMC serves it, else from the
    older C(Thermal) resource.
  - GPU temperatures are not among them on most servers; the host's C(nvidia-smi) reports those.
  - With O(bios_profile) it also compares the BIOS with a profile, in the same Redfish session, exactly as
    M(gpuops.vgpu.bios_settings) in check mode does, so a checker needs one read per server.
author: gpuops maintainers (@gpuops)
options:
  bios_profile:
    description:
      - Compare the BIOS with this profile of M(gpuops.vgpu.bios_settings) and return the comparison in
        RV(bios_profile). Nothing is sent to the BMC but reads.
    type: str
    choices: [gpu_virtualization]
extends_documentation_fragment:
  - gpuops.vgpu.redfish
  - gpuops.vgpu.attributes.INFO_MODULE
  - gpuops.vgpu.attributes.ACTION_GROUP_REDFISH
seealso:
  - module: gpuops.vgpu.bios_settings
"""

EXAMPLES = r"""
- name: Read the BMC of every ESXi host
  gpuops.vgpu.bmc_info:
    baseuri: "{{ bmc_address }}"
    username: "{{ bmc_username }}"
    password: "{{ bmc_password }}"
    validate_certs: "{{ bmc_validate_certs }}"
  delegate_to: localhost
  register: bmc

- name: Warn about a hot server room
  ansible.builtin.debug:
    msg: "{{ inventory_hostname }} inlet is {{ bmc.inlet_celsius }} °C"
  when: bmc.inlet_celsius is not none and bmc.inlet_celsius > 30

- name: Read the lab's Supermicro BMC
  gpuops.vgpu.bmc_info:
    baseuri: https://127.0.0.1:8446
    username: root
    password: "{{ bmc_password }}"
    validate_certs: false
"""

RETURN = r"""
vendor:
  description: Family (V(dell), V(hpe), V(supermicro), V(generic)), BMC generation and identity.
  returned: always
  type: dict
  sample: {family: dell, generation: idrac8, manufacturer: Dell Inc., model: PowerEdge R730,
           bmc_model: 13G Monolithic, bmc_firmware: 2.75.75.75}
manufacturer:
  description: Manufacturer of the server.
  returned: always
  type: str
  sample: Dell Inc.
model:
  description: Model of the server.
  returned: always
  type: str
  sample: PowerEdge R730
serial_number:
  description: Serial number of the server.
  returned: always
  type: str
sku:
  description: SKU, the service tag on Dell servers.
  returned: always
  type: str
uuid:
  description: UUID of the server.
  returned: always
  type: str
bios_version:
  description: Version of the BIOS (system ROM).
  returned: always
  type: str
  sample: 2.17.0
power_state:
  description: Power state of the server (V(On), V(Off), V(PoweringOn), V(PoweringOff)).
  returned: always
  type: str
health:
  description: Health of the server and the roll-up of its components.
  returned: always
  type: dict
  sample: {health: OK, rollup: OK, state: Enabled}
bios:
  description:
    - Current BIOS attributes, the pending values that take effect at the next reboot, the name of the BIOS
      attribute registry and the apply times the BMC advertises for BIOS changes.
  returned: always
  type: dict
  sample:
    attributes: {ProcVirtualization: Enabled, SriovGlobalEnable: Disabled}
    pending: {SriovGlobalEnable: Enabled}
    registry: BiosAttributeRegistry.v1_0_3
    supported_apply_times: []
thermal_schema:
  description: Which thermal schema the readings come from, V(ThermalSubsystem) or V(Thermal); null without one.
  returned: always
  type: str
temperatures:
  description:
    - Temperature sensors with their reading, physical context (V(Intake), V(CPU), V(Exhaust) ...), health and
      thresholds; values the BMC does not report are null.
  returned: always
  type: list
  elements: dict
  sample: [{name: System Board Inlet Temp, reading_celsius: 23, context: Intake, health: OK, upper_warning: 42,
            upper_critical: 47}]
fans:
  description: Fans with their speed in RPM and in percent, where reported, and health.
  returned: always
  type: list
  elements: dict
  sample: [{name: System Board Fan1A, speed_rpm: 6840, speed_percent: null, health: OK}]
inlet_celsius:
  description: The inlet (intake) temperature, when a sensor reports it.
  returned: always
  type: float
  sample: 23
bios_profile:
  description:
    - The comparison of the BIOS with O(bios_profile) - the result of M(gpuops.vgpu.bios_settings) in check mode
      (C(vendor), C(wanted), C(pending), C(changes), C(pending_reboot), C(intents) ...), with C(changed) telling
      whether a real run of it would change anything - or V(null) when it could not be made.
  returned: when O(bios_profile) is set
  type: dict
bios_profile_error:
  description: Why the BIOS could not be compared with O(bios_profile) (the identity and thermal state are still
    returned), or V(null).
  returned: when O(bios_profile) is set
  type: str
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import redfish_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc._info import read_bmc
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._redfish import RedfishClient


def argument_spec():
    return redfish_spec(bios_profile=dict(type="str", choices=["gpu_virtualization"]))


def main():
    run_module(argument_spec(), read_bmc, client=RedfishClient.from_params, supports_check_mode=True)


if __name__ == "__main__":
    main()
