#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: bmc_cooling
short_description: Set a server's cooling for passive GPUs through its BMC's own fan settings over Redfish
version_added: 0.1.0
description:
  - Passive datacenter GPUs (Tesla P40, A16, L40S and the like) have no fans of their own, and the BMC often cannot
    read their temperature, so the server's default fan curve may let them overheat. This module sets the BMC's
    fan policy from one O(intent), mapped to the vendor's settings, or sets those settings by name with
    O(settings).
  - Dell iDRAC (8 and 9) the thermal system attributes C(ThermalSettings.1.ThermalProfile), C(FanSpeedOffset),
    C(MinimumFanSpeed) and C(ThirdPartyPCIFanResponse); they apply at once. iDRAC9 takes them in a PATCH of its
    system attributes; iDRAC8, which serves no attributes over Redfish, through a Server Configuration Profile
    export (to read them) and import (to set them), each a job the module follows to its end; a failed import
    job fails the task with the job's messages.
  - HPE iLO the BIOS attribute C(ThermalConfig) (also C(ThermalShutdown), C(FanFailPolicy), C(FanInstallReq) with
    O(settings)); BIOS values are pending until the next reboot, handled as M(gpuops.vgpu.bios_settings) does.
  - Supermicro the fan mode (C(Mode) of the manager's C(Oem/Supermicro/FanMode)), among the modes the board
    offers; it applies at once.
  - Values are checked against what the vendor allows before anything is sent; a second run with the same input
    changes nothing.
author: gpuops maintainers (@gpuops)
options:
  intent:
    description:
      - V(default) the vendor's factory fan policy. V(passive_gpu) more airflow for PCIe GPUs the BMC cannot see
        (Dell Maximum Performance profile with a Medium fan offset, HPE Increased Cooling, Supermicro Heavy IO).
        V(max_cooling) the most the platform offers (Dell offset Max, HPE Maximum Cooling, Supermicro Full Speed).
      - Mutually exclusive with O(settings).
    type: str
    choices: [default, passive_gpu, max_cooling]
  settings:
    description:
      - "Vendor settings by name, for example C(ThermalSettings.1.FanSpeedOffset=High) on Dell (the
        C(ThermalSettings.1.) prefix may be left out), C(ThermalConfig=IncreasedCooling) on HPE or
        C(Mode=HeavyIO) on Supermicro. Settings not listed keep their values."
      - Quote C("Off"), which YAML would otherwise read as a boolean.
      - Mutually exclusive with O(intent).
    type: dict
  reboot:
    description:
      - Only for BIOS-held settings (HPE). V(never) leaves them pending for the next reboot; V(if_needed) restarts
        the server gracefully when they are pending and verifies them. Put an ESXi host in maintenance mode first.
    type: str
    choices: [never, if_needed]
    default: never
  reboot_timeout:
    description: Seconds to wait for the server to come back with the values applied (HPE with O(reboot=if_needed)).
    type: int
    default: 1800
extends_documentation_fragment:
  - gpuops.vgpu.redfish
  - gpuops.vgpu.attributes
  - gpuops.vgpu.attributes.ACTION_GROUP_REDFISH
attributes:
  check_mode:
    support: full
    details: Reads and validates everything and predicts the change without sending it.
  diff_mode:
    support: full
    details: Current and pending values of the wanted settings before and after.
notes:
  - The sources of every setting name and value are in the collection's docs/bmc_cooling.md.
  - For cooling that follows the GPUs' temperature, use the P(gpuops.vgpu.bmc_cooling#role) role's
    C(by_temperature) entry point.
seealso:
  - module: gpuops.vgpu.bios_settings
  - module: gpuops.vgpu.bmc_info
"""

EXAMPLES = r"""
- name: Enough airflow for the host's passive GPUs
  gpuops.vgpu.bmc_cooling:
    baseuri: "{{ bmc_address }}"
    username: "{{ bmc_username }}"
    password: "{{ bmc_password }}"
    validate_certs: "{{ bmc_validate_certs }}"
    intent: passive_gpu
  delegate_to: localhost

- name: Dell settings by name
  gpuops.vgpu.bmc_cooling:
    baseuri: https://127.0.0.1:8441
    username: root
    password: "{{ bmc_password }}"
    settings:
      FanSpeedOffset: High
      MinimumFanSpeed: 40
"""

RETURN = r"""
vendor:
  description: What the BMC reports about itself, and the family whose settings were used.
  returned: always
  type: dict
  sample: {family: dell, generation: idrac9, manufacturer: Dell Inc., model: PowerEdge R740}
intent:
  description: The intent asked for, or null with O(settings).
  returned: always
  type: str
  sample: passive_gpu
intent_before:
  description:
    - With O(intent), the intent whose settings the BMC held before this run (pending values counted), or null
      when its settings are none of the intents'. The temperature-driven entry point reads it in check mode.
  returned: always
  type: str
  sample: default
wanted:
  description: The vendor settings this run asked for.
  returned: always
  type: dict
  sample: {ThermalSettings.1.ThermalProfile: Maximum Performance, ThermalSettings.1.FanSpeedOffset: Medium}
changes:
  description: Settings this run sent (would send, in check mode).
  returned: always
  type: dict
  sample: {ThermalSettings.1.FanSpeedOffset: Medium}
pending:
  description: Wanted settings that wait for a reboot after this run (BIOS-held settings only).
  returned: always
  type: dict
  sample: {ThermalConfig: IncreasedCooling}
pending_reboot:
  description: Whether wanted settings wait for a reboot.
  returned: always
  type: bool
rebooted:
  description: Whether this run restarted the server.
  returned: always
  type: bool
diff:
  description: Current and pending values of the wanted settings before and after the run.
  returned: with C(--diff)
  type: dict
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import redfish_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc._cooling import INTENTS, bmc_cooling
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._redfish import RedfishClient


def argument_spec():
    return redfish_spec(
        intent=dict(type="str", choices=list(INTENTS)),
        settings=dict(type="dict"),
        reboot=dict(type="str", choices=["never", "if_needed"], default="never"),
        reboot_timeout=dict(type="int", default=1800),
    )


def main():
    run_module(argument_spec(), bmc_cooling, client=RedfishClient.from_params, supports_check_mode=True,
               mutually_exclusive=[("intent", "settings")], required_one_of=[("intent", "settings")])


if __name__ == "__main__":
    main()
