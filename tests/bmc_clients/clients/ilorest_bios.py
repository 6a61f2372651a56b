# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""HPE's python-ilorest-library as HPE's examples use it: login, GETs of the system and its BIOS, a PATCH of the BIOS
settings object, logout. Run in the clients' own virtual environment; prints what it saw as JSON.

It logs in with basic authentication: with a session, its logout (7.4.0.0) builds the session's URL from the
login's Location and the port it connected to, and doubles the port of any port other than 443, the lab's case.

    ilorest_bios.py BASE_URL USERNAME PASSWORD CA_FILE ATTRIBUTES_JSON
"""

import json
import sys

from redfish import RedfishClient


def main(base_url, username, password, ca_file, attributes):
    client = RedfishClient(base_url=base_url, username=username, password=password,
                           ca_cert_data={"ca_certs": ca_file})
    client.login(auth="basic")
    seen = {}
    try:
        systems = client.get("/redfish/v1/Systems/")
        system_uri = systems.dict["Members"][0]["@odata.id"]
        system = client.get(system_uri)
        bios_uri = system.dict["Bios"]["@odata.id"]
        bios = client.get(bios_uri)
        settings_uri = bios.dict["@Redfish.Settings"]["SettingsObject"]["@odata.id"]
        answer = client.patch(settings_uri, {"Attributes": attributes})
        seen = {"system": {"status": system.status, "serial": system.dict.get("SerialNumber"),
                           "model": system.dict.get("Model")},
                "bios": {"status": bios.status, "attributes": bios.dict["Attributes"]},
                "settings_uri": settings_uri,
                "patch": {"status": answer.status, "body": answer.dict}}
    finally:
        client.logout()
    print(json.dumps(seen))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5]))
