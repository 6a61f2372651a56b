"""What a lab BMC's manager serves besides its own resource: its network interface and protocols (every vendor),
iLO's date and time service, and iDRAC9's manager attributes. Vendor clients look for these: community.general's
ilo_redfish_config finds the manager's interface by the address it connected to (the interface lists it, as a BMC's
own interface does), and idrac_redfish_info/config read and set iDRAC attributes through DellAttributes.

Sources: DMTF Redfish EthernetInterface and ManagerNetworkProtocol schemas; HPE iLO 5 "Managing Time in iLO"
(servermanagementportal.ext.hpe.com/docs/redfishservices/ilos/supplementdocuments/managingtime/: HpeiLODateTime at
/redfish/v1/Managers/{id}/DateTime, StaticNTPServers, TimeZone, TimeZoneList); Dell iDRAC9 Redfish API Guide
(DellAttributes at /redfish/v1/Managers/iDRAC.Embedded.1/Attributes, linked from the manager's Links.Oem.Dell,
PATCH {"Attributes": {...}})."""

import copy

from bmc_inventory import collection, link
from bmc_errors import RedfishError


def _norm(path):
    return path.rstrip("/") or "/"


class ManagerResources:
    """The manager's sub-resources of one BMC, from the vendor profile's ``manager`` entry; ``reset()`` restores
    the factory values."""

    def __init__(self, manager_path, profile, address, hostname):
        self.base = _norm(manager_path)
        self.slash = "/" if manager_path.endswith("/") else ""
        self.profile = profile or {}
        self.address = address
        self.hostname = hostname
        self.reset()

    def reset(self):
        # iDRAC8 keeps its system attributes but serves them only through SCP export and import (bmc_scp).
        self.over_redfish = not self.profile.get("scp")
        self.date_time = copy.deepcopy(self.profile.get("date_time"))
        self.attributes = copy.deepcopy(self.profile.get("attributes") or {})
        self.rules = self.profile.get("attribute_rules") or {}
        # Current iDRAC9 firmware links its attribute resources under the manager's Oem/Dell/DellAttributes
        # (recorded manager body in ironcore-dev/metal-operator issue 843; libredfish PR 38: <manager>/Attributes
        # "may not work on all iDRAC versions"). The older <manager>/Attributes stays served here for the clients
        # that call it by that path (community.general's idrac_redfish_*); whether 6.10 still answers it is not
        # confirmed.
        self.oem_links = bool(self.profile.get("attributes_under_oem"))
        self.ntp = []  # NTP servers where there is no date and time service to keep them

    def ntp_servers(self):
        return self.date_time["StaticNTPServers"] if self.date_time is not None else self.ntp

    def path(self, *parts):
        return "/".join((self.base,) + parts) + self.slash

    def nic_id(self):
        return str(self.profile.get("nic_id", "1"))

    def manager_links(self):
        """What the manager resource links to: properties, and the Dell OEM links."""
        body = {"EthernetInterfaces": link(self.path("EthernetInterfaces")),
                "NetworkProtocol": link(self.path("NetworkProtocol"))}
        if self.date_time is not None:
            body["Oem"] = {"Hpe": {"Links": {"DateTime": link(self.path("DateTime"))}}}
        return body

    def attributes_path(self, name):
        return "/redfish/v1/Managers/%s/Attributes" % name

    def oem_attributes_path(self, name):
        return self.path("Oem", "Dell", "DellAttributes", name)

    def linked_attributes_path(self, name):
        return self.oem_attributes_path(name) if self.oem_links else self.attributes_path(name)

    def dell_links(self):
        if not self.attributes or not self.over_redfish:
            return {}
        return {"DellAttributes": [link(self.linked_attributes_path(name)) for name in self.attributes]}

    def read_only(self):
        """Resource path -> renderer, for the resources only read."""
        return {self.path("EthernetInterfaces"): lambda: collection(
                    _norm(self.path("EthernetInterfaces")), "EthernetInterface", "Ethernet Network Interface "
                    "Collection", [self.nic_id()]),
                self.path("EthernetInterfaces", self.nic_id()): self.interface}

    def writable(self):
        """Resource path -> (renderer, patcher), for the resources a PATCH changes."""
        routes = {self.path("NetworkProtocol"): (self.network_protocol, self.patch_network_protocol)}
        if self.date_time is not None:
            routes[self.path("DateTime")] = (self.render_date_time, self.patch_date_time)
        for name in self.attributes:
            if self.over_redfish:
                paths = [self.attributes_path(name)] + ([self.oem_attributes_path(name)] if self.oem_links else [])
                for path in paths:
                    routes[path] = (lambda name=name, path=path: self.render_attributes(name, path),
                                    lambda body, name=name: self.patch_attributes(name, body))
            else:
                routes[self.attributes_path(name)] = (self.no_attributes, lambda body: self.no_attributes())
        return routes

    def no_attributes(self):
        """What iDRAC8 answers for an Attributes URI, GET or PATCH (dell/iDRAC-Redfish-Scripting issue 262)."""
        raise RedfishError(404, "Unable to complete the operation because the resource Attributes entered is not "
                           "found.", "IDRAC.1.6.SYS403")

    def interface(self):
        nic = self.nic_id()
        return {"@odata.id": self.path("EthernetInterfaces", nic), "@odata.type":
                "#EthernetInterface.v1_4_1.EthernetInterface", "Id": nic, "Name": "Manager Ethernet Interface",
                "InterfaceEnabled": True, "LinkStatus": "LinkUp", "Status": {"State": "Enabled", "Health": "OK"},
                "MACAddress": self.profile.get("mac", "00:00:5e:00:53:01"), "SpeedMbps": 1000, "FullDuplex": True,
                "HostName": self.hostname,
                "IPv4Addresses": [{"Address": self.address, "SubnetMask": "255.0.0.0", "AddressOrigin": "Static",
                                   "Gateway": "0.0.0.0"}],
                "IPv6Addresses": [], "StaticNameServers": [],
                # Static addressing: no NTP or DNS servers taken from DHCP.
                "DHCPv4": {"DHCPEnabled": False, "UseDNSServers": False, "UseNTPServers": False,
                           "UseDomainName": False, "UseGateway": False, "UseStaticRoutes": False},
                "DHCPv6": {"OperatingMode": "Disabled", "UseDNSServers": False, "UseNTPServers": False,
                           "UseDomainName": False, "UseRapidCommit": False}}

    def network_protocol(self):
        ntp = self.ntp_servers()
        return {"@odata.id": self.path("NetworkProtocol"), "@odata.type":
                "#ManagerNetworkProtocol.v1_4_0.ManagerNetworkProtocol", "Id": "NetworkProtocol",
                "Name": "Manager Network Protocol", "HostName": self.hostname,
                "Status": {"State": "Enabled", "Health": "OK"},
                "HTTP": {"ProtocolEnabled": True, "Port": 80}, "HTTPS": {"ProtocolEnabled": True, "Port": 443},
                "SSH": {"ProtocolEnabled": True, "Port": 22}, "IPMI": {"ProtocolEnabled": False, "Port": 623},
                "SNMP": {"ProtocolEnabled": False, "Port": 161},
                "NTP": {"ProtocolEnabled": bool([s for s in ntp if s and s != "0.0.0.0"]),
                        "NTPServers": [s for s in ntp if s]}}

    def patch_network_protocol(self, body):
        """Only the NTP servers change (the other protocols are the lab's fixed setup). An array PATCH follows
        DSP0266: null removes the element, an empty object keeps it, and elements past the PATCH's are removed."""
        if not isinstance(body, dict) or set(body) - {"NTP"} or not isinstance(body.get("NTP"), dict) \
                or set(body["NTP"]) - {"NTPServers"}:
            raise RedfishError(400, "Only NTP/NTPServers can be changed on this resource.",
                               "Base.1.8.PropertyNotWritable", ["/" + key for key in sorted(body or {})])
        wanted = body["NTP"].get("NTPServers", [])
        if not isinstance(wanted, list):
            raise RedfishError(400, "NTPServers takes an array.", "Base.1.8.PropertyValueTypeError",
                               ["/NTP/NTPServers"])
        current, servers = self.ntp_servers(), []
        for index, item in enumerate(wanted):
            if item is None:
                continue
            if item == {}:
                if index < len(current):
                    servers.append(current[index])
                continue
            if not isinstance(item, str):
                raise RedfishError(400, "NTPServers takes server names.", "Base.1.8.PropertyValueTypeError",
                                   ["/NTP/NTPServers/%d" % index])
            servers.append(item)
        current[:] = servers
        return self.network_protocol()

    def render_date_time(self):
        body = {"@odata.id": self.path("DateTime"), "@odata.type": "#HpeiLODateTime.v2_0_0.HpeiLODateTime",
                "Id": "DateTime", "Name": "iLO Date and Time Settings", "ConfigurationSettings": "Current"}
        body.update(self.date_time)
        return body

    def patch_date_time(self, body):
        zones = dict((zone["Index"], zone) for zone in self.date_time["TimeZoneList"])
        for key, value in body.items():
            if key == "StaticNTPServers":
                if not isinstance(value, list) or len(value) > 2 or not all(isinstance(s, str) for s in value):
                    raise RedfishError(400, "StaticNTPServers takes a list of at most two server names.",
                                       "Base.1.8.PropertyValueFormatError", ["/StaticNTPServers"])
                self.date_time["StaticNTPServers"] = list(value)
            elif key == "TimeZone":
                index = value.get("Index") if isinstance(value, dict) else None
                if index not in zones:
                    raise RedfishError(400, "The value %r for TimeZone is not an index of TimeZoneList." % (value,),
                                       "Base.1.8.PropertyValueNotInList", ["/TimeZone"])
                self.date_time["TimeZone"] = dict(zones[index])
            else:
                raise RedfishError(400, "The property %s is not in the list of valid properties for the resource."
                                   % key, "Base.1.8.PropertyUnknown", ["/" + key])
        # iLO answers a successful PATCH with an error object that carries the messages; NTP and time zone changes
        # take effect when iLO restarts.
        return {"error": {"code": "iLO.0.10.ExtendedInfo", "message": "See @Message.ExtendedInfo for more "
                          "information.", "@Message.ExtendedInfo": [{"MessageId": "iLO.2.15.ResetRequired"}]}}

    def render_attributes(self, name, path):
        return {"@odata.id": path, "@odata.type": "#DellAttributes.v1_0_0.DellAttributes",
                "Id": name.replace(".Embedded.1", "") + "Attributes", "Name": "OEMAttributeRegistry",
                "Description": "This schema provides the oem attributes", "AttributeRegistry": name.split(".")[0]
                + "AttributeRegistry.v1_0_0", "Attributes": dict(self.attributes[name])}

    def patch_attributes(self, name, body):
        attributes = (body or {}).get("Attributes")
        if not isinstance(attributes, dict) or set(body) != {"Attributes"}:
            raise RedfishError(400, "The request body must carry only Attributes.", "Base.1.8.PropertyUnknown")
        current = self.attributes[name]
        for key, value in attributes.items():
            if key not in current:
                raise RedfishError(400, "The property %s is not in the list of valid properties for the resource."
                                   % key, "Base.1.8.PropertyUnknown", ["/Attributes/" + key])
            if type(value) is not type(current[key]):
                raise RedfishError(400, "The value %r for the property %s is of a different type than the property "
                                   "can accept." % (value, key), "Base.1.8.PropertyValueTypeError",
                                   ["/Attributes/" + key])
            self.check_rule(name, key, value, current)
        current.update(attributes)
        return {"@Message.ExtendedInfo": [{"MessageId": "Base.1.8.Success",
                                           "Message": "Successfully Completed Request", "Severity": "OK"}]}

    def check_rule(self, name, key, value, current):
        """The attribute registry's rules the profile lists: read-only attributes, the allowed values of an
        enumeration, and an integer's bounds (given or read from other attributes) with its special values."""
        rule = (self.rules.get(name) or {}).get(key)
        if not rule:
            return
        if rule.get("read_only"):
            raise RedfishError(400, "The property %s is a read only property and cannot be assigned a value." % key,
                               "Base.1.8.PropertyNotWritable", ["/Attributes/" + key])
        if "values" in rule and value not in rule["values"]:
            raise RedfishError(400, "The value %s for the property %s is not in the list of acceptable values."
                               % (value, key), "Base.1.8.PropertyValueNotInList", ["/Attributes/" + key])
        if "lower" in rule and value not in rule.get("special", []):
            lower = current.get(rule["lower"], rule["lower"])
            upper = current.get(rule["upper"], rule["upper"])
            if not lower <= value <= upper:
                raise RedfishError(400, "The value %s for the property %s is not in the list of acceptable values "
                                   "(%s to %s, or %s)." % (value, key, lower, upper, ", ".join(
                                       str(v) for v in rule.get("special", []))),
                                   "Base.1.8.PropertyValueNotInList", ["/Attributes/" + key])
