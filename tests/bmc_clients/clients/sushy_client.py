# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""OpenStack's sushy as Ironic's Redfish driver uses it: a session, the system with its BIOS, the chassis with its
power supplies, the manager, a BIOS change through the settings object and a power off. Run in the clients' own
virtual environment; prints what it read as JSON.

    sushy_client.py BASE_URL USERNAME PASSWORD CA_FILE ATTRIBUTES_JSON [basic]

With "basic", HTTP basic authentication (Ironic's redfish_auth_type basic) instead of a session: an iLO on a port
other than 443 names its sessions by URLs without the port, which sushy's session authentication follows as they are.
"""

import json
import sys

import sushy


def main(base_url, username, password, ca_file, attributes, auth_type="session"):
    auth = (sushy.auth.BasicAuth if auth_type == "basic" else sushy.auth.SessionAuth)(username, password)
    root = sushy.Sushy(base_url, verify=ca_file, auth=auth)
    system = root.get_system(root.get_system_collection().members_identities[0])
    chassis = root.get_chassis(root.get_chassis_collection().members_identities[0])
    manager = root.get_manager(root.get_manager_collection().members_identities[0])
    bios = system.bios
    supplies = []
    if chassis.power is not None:
        supplies = [{"serial": supply.serial_number, "capacity_watts": supply.power_capacity_watts}
                    for supply in chassis.power.power_supplies]
    seen = {"system": {"serial": system.serial_number, "model": system.model, "power_state": str(system.power_state.value),
                       "reset_types": sorted(str(value.value) for value in system.get_allowed_reset_system_values())},
            "bios": {"attributes": dict(bios.attributes), "apply_times": sorted(str(value.value) for value in bios.supported_apply_times or [])},
            "supplies": supplies,
            "manager": {"firmware": manager.firmware_version, "model": manager.model}}
    bios.set_attributes(attributes)
    system.reset_system(sushy.ResetType.FORCE_OFF)
    root._auth.close()
    print(json.dumps(seen))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5]), *sys.argv[6:])
