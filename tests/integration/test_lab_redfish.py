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


MANAGER = {"dell_idrac8": "/redfish/v1/Managers/iDRAC.Embedded.1",
           "dell_idrac9": "/redfish/v1/Managers/iDRAC.Embedded.1",
           "hpe_ilo5": "/redfish/v1/Managers/1/", "supermicro": "/redfish/v1/Managers/1"}


@pytest.mark.parametrize("bmc", VENDORS, indirect=True)
def test_manager_interface_lists_the_bmc_address(bmc):
    """Clients find the manager's own interface by the address they connected to (community.general's iLO
    commands do), so the interface lists it; the network protocols are served beside it."""
    manager = json.loads(fetch(bmc, "GET", MANAGER[bmc.vendor])[2])
    interfaces = json.loads(fetch(bmc, "GET", manager["EthernetInterfaces"]["@odata.id"])[2])
    assert interfaces["Members@odata.count"] == 1
    nic = json.loads(fetch(bmc, "GET", interfaces["Members"][0]["@odata.id"])[2])
    address = bmc.baseuri.split("//")[1].rsplit(":", 1)[0]
    assert [entry["Address"] for entry in nic["IPv4Addresses"]] == [address]
    assert nic["DHCPv4"]["UseNTPServers"] is False
    assert nic["Id"] == ("NIC.1" if bmc.vendor.startswith("dell") else "1")
    status, _headers, text = fetch(bmc, "GET", manager["NetworkProtocol"]["@odata.id"])
    assert status == 200 and json.loads(text)["HTTPS"] == {"ProtocolEnabled": True, "Port": 443}


@pytest.mark.parametrize("bmc", ["dell_idrac8", "dell_idrac9"], indirect=True)
def test_idrac_manager_attributes(bmc):
    """iDRAC9 links its attributes from the manager and takes a PATCH of known attributes of their type; iDRAC8
    serves none (its system attributes go through SCP export and import, which its manager advertises)."""
    bmc.factory_reset()
    manager = json.loads(fetch(bmc, "GET", MANAGER[bmc.vendor])[2])
    links = manager["Links"]["Oem"]["Dell"].get("DellAttributes")
    if bmc.vendor == "dell_idrac8":
        assert links is None and sorted(manager["Actions"]["Oem"]) == [
            "#OemManager.ExportSystemConfiguration", "#OemManager.ImportSystemConfiguration"]
        for method in ("GET", "PATCH"):
            status, _headers, text = fetch(bmc, method, "/redfish/v1/Managers/System.Embedded.1/Attributes",
                                           {"Attributes": {"ThermalSettings.1.FanSpeedOffset": "Max"}}
                                           if method == "PATCH" else None)
            assert status == 404 and "IDRAC.1.6.SYS403" in text, text
        return
    assert [link["@odata.id"] for link in links] == [
        "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/DellAttributes/%s" % name
        for name in ("iDRAC.Embedded.1", "LifecycleController.Embedded.1", "System.Embedded.1")]
    path = links[0]["@odata.id"]
    # The older <manager-id>/Attributes path reads the same resource.
    legacy = json.loads(fetch(bmc, "GET", "/redfish/v1/Managers/iDRAC.Embedded.1/Attributes")[2])
    assert legacy["Attributes"] == json.loads(fetch(bmc, "GET", path)[2])["Attributes"]
    status, _headers, text = fetch(bmc, "PATCH", path, {"Attributes": {"SNMP.1.AgentCommunity": "gpu-lab"}})
    assert status == 200, text
    for bad, message_id in (({"No.Such.Attribute": "x"}, "Base.1.8.PropertyUnknown"),
                            ({"SNMP.1.AgentCommunity": 7}, "Base.1.8.PropertyValueTypeError")):
        status, _headers, text = fetch(bmc, "PATCH", path, {"Attributes": bad})
        assert status == 400 and json.loads(text)["error"]["code"] == message_id
    assert json.loads(fetch(bmc, "GET", path)[2])["Attributes"]["SNMP.1.AgentCommunity"] == "gpu-lab"
    legacy = json.loads(fetch(bmc, "GET", "/redfish/v1/Managers/iDRAC.Embedded.1/Attributes")[2])
    assert legacy["Attributes"]["SNMP.1.AgentCommunity"] == "gpu-lab"
    bmc.factory_reset()
    assert json.loads(fetch(bmc, "GET", path)[2])["Attributes"]["SNMP.1.AgentCommunity"] == "public"


@pytest.mark.parametrize("bmc", ["hpe_ilo5"], indirect=True)
def test_ilo_date_time(bmc):
    """iLO's date and time service: two static NTP servers and a time zone chosen by its index in TimeZoneList,
    linked from the manager; the NTP servers show in the network protocols."""
    bmc.factory_reset()
    manager = json.loads(fetch(bmc, "GET", MANAGER[bmc.vendor])[2])
    path = manager["Oem"]["Hpe"]["Links"]["DateTime"]["@odata.id"]
    zones = json.loads(fetch(bmc, "GET", path)[2])["TimeZoneList"]
    chennai = [zone for zone in zones if "Chennai" in zone["Name"]][0]
    status, _headers, text = fetch(bmc, "PATCH", path, {"StaticNTPServers": ["ntp.lab.local", "0.0.0.0"],
                                                        "TimeZone": {"Index": chennai["Index"]}})
    assert status == 200
    assert json.loads(text)["error"]["@Message.ExtendedInfo"][0]["MessageId"] == "iLO.2.15.ResetRequired"
    assert fetch(bmc, "PATCH", path, {"TimeZone": {"Index": 999}})[0] == 400
    assert fetch(bmc, "PATCH", path, {"StaticNTPServers": ["a", "b", "c"]})[0] == 400
    now = json.loads(fetch(bmc, "GET", path)[2])
    assert now["StaticNTPServers"] == ["ntp.lab.local", "0.0.0.0"] and now["TimeZone"] == chennai
    protocols = json.loads(fetch(bmc, "GET", manager["NetworkProtocol"]["@odata.id"])[2])
    assert protocols["NTP"] == {"ProtocolEnabled": True, "NTPServers": ["ntp.lab.local", "0.0.0.0"]}
    bmc.factory_reset()
    assert json.loads(fetch(bmc, "GET", path)[2])["StaticNTPServers"] == ["", ""]


@pytest.mark.parametrize("bmc", VENDORS, indirect=True)
def test_network_protocol_ntp_servers(bmc):
    """The NTP servers of the manager's network protocols take a PATCH with Redfish's array rules: null removes an
    element, an empty object keeps it, and elements past the PATCH's array go."""
    bmc.factory_reset()
    path = json.loads(fetch(bmc, "GET", MANAGER[bmc.vendor])[2])["NetworkProtocol"]["@odata.id"]
    assert fetch(bmc, "PATCH", path, {"NTP": {"NTPServers": ["ntp-a.lab", "ntp-b.lab"]}})[0] == 200
    assert fetch(bmc, "PATCH", path, {"NTP": {"NTPServers": [None, {}]}})[0] == 200
    assert json.loads(fetch(bmc, "GET", path)[2])["NTP"]["NTPServers"] == ["ntp-b.lab"]
    status, _headers, text = fetch(bmc, "PATCH", path, {"HTTPS": {"Port": 8443}})
    assert status == 400 and json.loads(text)["error"]["code"] == "Base.1.8.PropertyNotWritable"
    bmc.factory_reset()
    assert json.loads(fetch(bmc, "GET", path)[2])["NTP"]["NTPServers"] == []


@pytest.mark.parametrize("bmc", VENDORS, indirect=True)
def test_processors_follow_the_processor_summary(bmc):
    """One processor per socket under the vendor's member ids, as the system's ProcessorSummary counts them
    (community.general's GetCpuInventory reads them)."""
    system = json.loads(fetch(bmc, "GET", SYSTEM[bmc.vendor])[2])
    processors = json.loads(fetch(bmc, "GET", system["Processors"]["@odata.id"])[2])
    summary = system["ProcessorSummary"]
    assert processors["Members@odata.count"] == summary["Count"]
    first = json.loads(fetch(bmc, "GET", processors["Members"][0]["@odata.id"])[2])
    assert first["Id"] == ("CPU.Socket.1" if bmc.vendor.startswith("dell") else "1")
    assert (first["Model"], first["ProcessorType"], first["Socket"]) == (summary["Model"], "CPU", "CPU 1")


@pytest.mark.parametrize("bmc", ["dell_idrac9"], indirect=True)
def test_boot_settings_refuse_bad_values_before_any_change(bmc):
    """A PATCH of the boot settings with one bad value changes nothing and names the property."""
    before = bmc.state()["boot"]
    bad = [({"PowerRestorePolicy": "Sometimes"}, "Base.1.8.PropertyValueNotInList", "/PowerRestorePolicy"),
           ({"Boot": {"BootOrder": ["Boot0001", "Boot0001"]}, "PowerRestorePolicy": "AlwaysOff"},
            "Base.1.8.PropertyValueFormatError", "/Boot/BootOrder"),
           ({"Boot": {"BootOrder": ["Boot0009"]}}, "Base.1.8.PropertyValueFormatError", "/Boot/BootOrder"),
           ({"Boot": {"BootSourceOverrideTarget": "Floppy", "BootSourceOverrideEnabled": "Once"}},
            "Base.1.8.PropertyValueNotInList", "/Boot/BootSourceOverrideTarget"),
           ({"Boot": {"BootNext": "Boot0001"}}, "Base.1.8.PropertyUnknown", "/Boot/BootNext"),
           ({"AssetTag": "x"}, "Base.1.8.PropertyUnknown", "/AssetTag")]
    for body, message_id, prop in bad:
        status, _headers, text = fetch(bmc, "PATCH", SYSTEM[bmc.vendor], body)
        info = json.loads(text)["error"]["@Message.ExtendedInfo"][0]
        assert (status, info["MessageId"], info["RelatedProperties"]) == (400, message_id, [prop]), body
    assert bmc.state()["boot"] == before
    boot = json.loads(fetch(bmc, "GET", SYSTEM[bmc.vendor])[2])["Boot"]
    assert boot["BootOrder"] == before["order"] and boot["BootSourceOverrideEnabled"] == "Disabled"
