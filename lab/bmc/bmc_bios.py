"""A lab BMC's BIOS: current attributes, pending settings with their ETag, and the attribute registry with its
dependencies, at the vendor's paths."""

import re

from bmc_http import json_response, link


class BiosHandlers:
    """The Bios resource, its SettingsObject and the registries (``self.bmc`` holds the values)."""

    def bios(self, request):
        self.allow(request, "GET")
        p = self.bmc.profile["bios"]
        current = self.bmc.bios_current()
        settings = {"@odata.type": "#Settings.v1_3_0.Settings", "SettingsObject": link(p["settings_path"]),
                    "ETag": self.bmc.etag()}
        if p["apply_times"]:
            settings["SupportedApplyTimes"] = p["apply_times"]
        return json_response({
            "@odata.id": p["path"], "@odata.type": "#Bios.v1_1_0.Bios", "Id": "Bios",
            "Name": "BIOS Configuration Current Settings", "AttributeRegistry": p["registry"]["id"],
            "Attributes": current, "@Redfish.Settings": settings,
        })

    def settings(self, request):
        self.allow(request, "GET", "PATCH")
        p = self.bmc.profile["bios"]
        if request.method == "PATCH":
            status, headers, messages = self.bmc.patch_settings(self.body(request), request.headers.get("If-Match"))
            headers["ETag"] = self.bmc.etag()
            body = {"@Message.ExtendedInfo": messages}
            if p.get("patch_answer") == "error":
                # iLO 5 answers a successful PATCH too with an error object that carries the messages.
                body = {"error": {"code": "iLO.0.10.ExtendedInfo",
                                  "message": "See @Message.ExtendedInfo for more information.",
                                  "@Message.ExtendedInfo": messages}}
            return json_response(body, status, headers)
        shown, etag = self.bmc.bios_settings()
        return json_response({
            "@odata.id": p["settings_path"], "@odata.type": "#Bios.v1_1_0.Bios", "@odata.etag": etag,
            "Id": "Settings", "Name": "BIOS Configuration Pending Settings",
            "AttributeRegistry": p["registry"]["id"], "Attributes": shown,
        }, headers={"ETag": etag})

    def registries(self, request):
        self.allow(request, "GET")
        members = [link("/redfish/v1/Registries/Base.1.8.0"), link(self.bmc.profile["bios"]["registry"]["file_path"])]
        return json_response({
            "@odata.id": "/redfish/v1/Registries", "@odata.type": "#MessageRegistryFileCollection."
            "MessageRegistryFileCollection", "Name": "Registry File Collection",
            "Members@odata.count": len(members), "Members": members,
        })

    def base_registry_file(self, request):
        self.allow(request, "GET")
        return json_response({
            "@odata.id": "/redfish/v1/Registries/Base.1.8.0",
            "@odata.type": "#MessageRegistryFile.v1_1_0.MessageRegistryFile", "Id": "Base.1.8.0",
            "Name": "Base Message Registry File", "Registry": "Base.1.8", "Languages": ["en"],
            "Location": [{"Language": "en", "PublicationUri": "https://redfish.dmtf.org/registries/Base.1.8.0.json"}],
        })

    def registry_file(self, request):
        self.allow(request, "GET")
        reg = self.bmc.profile["bios"]["registry"]
        return json_response({
            "@odata.id": reg["file_path"], "@odata.type": "#MessageRegistryFile.v1_1_0.MessageRegistryFile",
            "Id": reg["id"], "Name": "BIOS Attribute Registry File", "Registry": reg["id"], "Languages": ["en"],
            "Location": [{"Language": "en", "Uri": reg["path"]}],
        })

    def registry(self, request):
        self.allow(request, "GET")
        p = self.bmc.profile
        reg = p["bios"]["registry"]
        attributes, dependencies = [], []
        for entry in p["bios"]["attributes"]:
            name = entry["name"]
            kind = self.bmc.registry.type_of(name)
            item = {"AttributeName": name, "DisplayName": _display_name(name), "Type": kind,
                    "ReadOnly": bool(entry.get("read_only")), "Hidden": False, "DefaultValue": entry.get("value"),
                    "MenuPath": "./"}
            if kind == "Enumeration":
                item["Value"] = [{"ValueName": v, "ValueDisplayName": v} for v in entry["values"]]
            if kind == "Integer":
                item.update(LowerBound=entry.get("lower"), UpperBound=entry.get("upper"), ScalarIncrement=1)
            if kind == "String":
                item.update(MinLength=0, MaxLength=entry.get("max_length", 256))
            attributes.append(item)
            for other, needed in sorted((entry.get("writable_when") or {}).items()):
                dependencies.append({"DependencyFor": name, "Type": "Map", "Dependency": {
                    "MapFrom": [{"MapFromAttribute": other, "MapFromCondition": "NEQ",
                                 "MapFromProperty": "CurrentValue", "MapFromValue": needed}],
                    "MapToAttribute": name, "MapToProperty": "ReadOnly", "MapToValue": True}})
        return json_response({
            "@odata.id": reg["path"], "@odata.type": "#AttributeRegistry.v1_3_0.AttributeRegistry",
            "Id": reg["id"], "Name": "BIOS Attribute Registry", "Language": "en", "RegistryVersion": "1.0.0",
            "OwningEntity": reg["owning_entity"],
            "SupportedSystems": [{"ProductName": p["system"]["resource"]["Model"],
                                  "FirmwareVersion": p["system"]["resource"]["BiosVersion"]}],
            "RegistryEntries": {"Attributes": attributes, "Dependencies": dependencies, "Menus": []},
        })


def _display_name(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name.split("_0")[0].replace("_", " ")).strip()
