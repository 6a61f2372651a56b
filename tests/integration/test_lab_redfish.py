# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab BMCs' standard Redfish documents, headers and inventories, read with a plain HTTP client."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET

import pytest

from redfish_direct import HOSTS, VENDORS, LabBmc, _context

EDMX = "{http://docs.oasis-open.org/odata/ns/edmx}"
SYSTEM = {"dell_idrac8": "/redfish/v1/Systems/System.Embedded.1",
          "dell_idrac9": "/redfish/v1/Systems/System.Embedded.1",
          "hpe_ilo5": "/redfish/v1/Systems/1", "supermicro": "/redfish/v1/Systems/1"}
STORAGE = {"dell_idrac8": "RAID.Integrated.1-1", "dell_idrac9": "RAID.Integrated.1-1", "hpe_ilo5": "DE00A000",
           "supermicro": "HA-RAID"}
FIRST_DIMM = {"dell_idrac8": "DIMM.Socket.A1", "dell_idrac9": "DIMM.Socket.A1", "hpe_ilo5": "proc1dimm1",
              "supermicro": "1"}
SETTINGS = {"dell_idrac8": "/redfish/v1/Systems/System.Embedded.1/Bios/Settings",
            "dell_idrac9": "/redfish/v1/Systems/System.Embedded.1/Bios/Settings",
            "hpe_ilo5": "/redfish/v1/systems/1/bios/settings/", "supermicro": "/redfish/v1/Systems/1/Bios/SD"}
STAGED = {"dell_idrac8": {"SriovGlobalEnable": "Enabled"}, "dell_idrac9": {"MemoryMappedIOH": "56TB"},
          "hpe_ilo5": {"Sriov": "Enabled"}, "supermicro": {"QuietBoot": False}}


def fetch(bmc, method, path, body=None, headers=None):
    """Status, headers and body text of a request with basic auth."""
    token = base64.b64encode(("%s:%s" % bmc.credentials).encode()).decode()
    all_headers = dict({"Authorization": "Basic " + token, "Content-Type": "application/json"}, **(headers or {}))
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(bmc.baseuri + path, data=data, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(request, context=_context(), timeout=30) as answer:
            return answer.status, answer.headers, answer.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read().decode()


@pytest.fixture
def bmc(lab, request):
    return LabBmc(lab, HOSTS[request.param])


@pytest.mark.parametrize("bmc", VENDORS, indirect=True)
def test_standard_documents(bmc):
    status, headers, text = fetch(bmc, "GET", "/redfish")
    assert (status, json.loads(text)) == (200, {"v1": "/redfish/v1/"})
    root = json.loads(fetch(bmc, "GET", "/redfish/v1/")[2])

    status, headers, text = fetch(bmc, "GET", "/redfish/v1/odata")
    assert status == 200 and headers.get_content_type() == "application/json"
    urls = dict((entry["name"], entry["url"]) for entry in json.loads(text)["value"])
    assert urls["Service"] == "/redfish/v1/" and urls["Systems"] == root["Systems"]["@odata.id"]

    status, headers, text = fetch(bmc, "GET", "/redfish/v1/$metadata")
    assert status == 200 and headers.get_content_type() == "application/xml"
    document = ET.fromstring(text)
    included = dict((include.get("Namespace"), reference.get("Uri"))
                    for reference in document.iter(EDMX + "Reference") for include in reference)
    version = root["@odata.type"].lstrip("#").rsplit(".", 1)[0]
    assert included[version] == "http://redfish.dmtf.org/schemas/v1/ServiceRoot_v1.xml"
    assert "Memory" in included and "SoftwareInventory" in included and "Storage" in included
    container = next(element for element in document.iter() if element.tag.endswith("EntityContainer"))
    assert container.get("Extends") == version + ".ServiceContainer"


@pytest.mark.parametrize("bmc", VENDORS, indirect=True)
def test_allow_and_cache_control(bmc):
    status, headers, _text = fetch(bmc, "GET", SYSTEM[bmc.vendor])
    assert status == 200 and headers["Allow"] == "GET, HEAD, PATCH" and headers["Cache-Control"] == "no-cache"
    status, headers, _text = fetch(bmc, "HEAD", "/redfish/v1/")
    assert status == 200 and headers["Allow"] == "GET, HEAD"
    status, headers, _text = fetch(bmc, "DELETE", "/redfish/v1/")
    assert status == 405 and headers["Allow"] == "GET, HEAD"


@pytest.mark.parametrize("bmc", VENDORS, indirect=True)
def test_inventories_with_vendor_ids(bmc):
    system = json.loads(fetch(bmc, "GET", SYSTEM[bmc.vendor])[2])
    storage = json.loads(fetch(bmc, "GET", system["Storage"]["@odata.id"])[2])
    member = storage["Members"][0]["@odata.id"]
    assert member == "%s/Storage/%s" % (SYSTEM[bmc.vendor], STORAGE[bmc.vendor])
    status, _headers, text = fetch(bmc, "GET", member)
    assert status == 200 and json.loads(text)["StorageControllers"][0]["Model"]

    memory = json.loads(fetch(bmc, "GET", system["Memory"]["@odata.id"])[2])
    assert memory["Members"][0]["@odata.id"].rsplit("/", 1)[1] == FIRST_DIMM[bmc.vendor]
    dimm = json.loads(fetch(bmc, "GET", memory["Members"][0]["@odata.id"])[2])
    assert dimm["CapacityMiB"] > 0

    for kind in ("FirmwareInventory", "SoftwareInventory"):
        status, _headers, text = fetch(bmc, "GET", "/redfish/v1/UpdateService/" + kind)
        assert status == 200
    firmware = json.loads(fetch(bmc, "GET", "/redfish/v1/UpdateService/FirmwareInventory")[2])
    versions = [json.loads(fetch(bmc, "GET", item["@odata.id"])[2])["Version"] for item in firmware["Members"]]
    assert system["BiosVersion"] in versions


@pytest.mark.parametrize("bmc", VENDORS, indirect=True)
def test_patch_answer_shape(bmc):
    headers = {}
    if bmc.vendor == "supermicro":
        headers["If-Match"] = fetch(bmc, "GET", SETTINGS[bmc.vendor])[1]["ETag"]
    status, _headers, text = fetch(bmc, "PATCH", SETTINGS[bmc.vendor], {"Attributes": STAGED[bmc.vendor]}, headers)
    answer = json.loads(text)
    assert status < 300
    if bmc.vendor == "hpe_ilo5":
        assert set(answer) == {"error"}
        assert answer["error"]["@Message.ExtendedInfo"][0]["MessageId"] == "iLO.2.15.SystemResetRequired"
    else:
        assert "error" not in answer
