"""Log services of a lab BMC, from the vendor profile's ``logs`` entry: each service (the manager's or the
system's) with its entries, and ``LogService.ClearLog`` where the vendor offers it. ``reset()`` restores the factory
entries.

Sources: DMTF Redfish LogService (v1_1) and LogEntry (v1_4) schemas; the vendors' names for their logs are in the
profiles (Dell's Sel and Lclog, HPE's IML and IEL, Supermicro's Log1). community.general's redfish_info GetLogs
reads the entries inside the manager's ``Entries`` collections, and redfish_command ClearLogs posts to each
manager log's ``#LogService.ClearLog`` target.
"""

import copy
import time

from bmc_errors import RedfishError


def link(path):
    return {"@odata.id": path}


class LogResources:
    """``owners`` maps "Managers"/"Systems" to the owning resource's path."""

    def __init__(self, owners, services):
        self.owners = owners
        self.services = services or []
        self.reset()

    def reset(self):
        self.entries = dict((s["id"], copy.deepcopy(s.get("entries") or [])) for s in self.services)
        self.cleared = dict((s["id"], 0) for s in self.services)

    def owner_path(self, service, *parts):
        owner = self.owners[service["owner"]]
        slash = "/" if owner.endswith("/") else ""
        return "/".join((owner.rstrip("/"), "LogServices") + parts) + slash

    def owners_with_logs(self):
        return sorted(set(s["owner"] for s in self.services))

    def links(self, owner):
        """What the owning resource (manager or system) links to."""
        for service in self.services:
            if service["owner"] == owner:
                return {"LogServices": link(self.owner_path(service))}
        return {}

    def ground_truth(self):
        return dict((s["id"], {"owner": s["owner"], "entries": copy.deepcopy(self.entries[s["id"]]),
                               "cleared": self.cleared[s["id"]]}) for s in self.services)

    def resources(self):
        paths = {}
        for owner in self.owners_with_logs():
            services = [s for s in self.services if s["owner"] == owner]
            paths[self.owner_path(services[0])] = lambda services=services: self.collection(services)
        for service in self.services:
            paths[self.owner_path(service, service["id"])] = lambda service=service: self.service(service)
            paths[self.owner_path(service, service["id"], "Entries")] = lambda service=service: self.entry_list(
                service)
        return paths

    def collections(self):
        return dict((self.owner_path(s, s["id"], "Entries"), lambda entry_id, service=s: self.entry(service, entry_id))
                    for s in self.services)

    def actions(self):
        """ClearLog target path -> handler of the POST."""
        return dict((self.owner_path(s, s["id"], "Actions", "LogService.ClearLog"),
                     lambda body, service=s: self.clear(service)) for s in self.services if s.get("clearable"))

    def collection(self, services):
        base = self.owner_path(services[0])
        members = [link(self.owner_path(s, s["id"])) for s in services]
        return {"@odata.id": base, "@odata.type": "#LogServiceCollection.LogServiceCollection",
                "Name": "Log Service Collection", "Members@odata.count": len(members), "Members": members}

    def service(self, service):
        body = {"@odata.id": self.owner_path(service, service["id"]), "@odata.type": "#LogService.v1_1_0.LogService",
                "Id": service["id"], "Name": service["name"], "Description": service["description"],
                # LogService spells the OEM kind "OEM", LogEntry "Oem".
                "LogEntryType": "OEM" if service["entry_type"] == "Oem" else service["entry_type"],
                "MaxNumberOfRecords": service["max_records"],
                "OverWritePolicy": service["overwrite"], "ServiceEnabled": True,
                "DateTime": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
                "Entries": link(self.owner_path(service, service["id"], "Entries")),
                "Status": {"State": "Enabled", "Health": "OK"}}
        if service.get("clearable"):
            body["Actions"] = {"#LogService.ClearLog": {
                "target": self.owner_path(service, service["id"], "Actions", "LogService.ClearLog")}}
        return body

    def render_entry(self, service, entry):
        body = {"@odata.id": self.owner_path(service, service["id"], "Entries", str(entry["id"])),
                "@odata.type": "#LogEntry.v1_4_0.LogEntry", "Id": str(entry["id"]), "Name": service["entry_name"],
                "EntryType": service["entry_type"], "Severity": entry["severity"], "Created": entry["created"],
                "Message": entry["message"]}
        if entry.get("message_id"):
            body["MessageId"] = entry["message_id"]
            body["MessageArgs"] = entry.get("args", [])
        if service.get("oem_record_format"):
            body["OemRecordFormat"] = service["oem_record_format"]
        if entry.get("sensor_type"):
            body["SensorType"] = entry["sensor_type"]
        return body

    def entry_list(self, service):
        # Members carry the entries themselves, as iDRAC's and iLO's Entries collections do.
        members = [self.render_entry(service, e) for e in self.entries[service["id"]]]
        return {"@odata.id": self.owner_path(service, service["id"], "Entries"),
                "@odata.type": "#LogEntryCollection.LogEntryCollection", "Name": service["name"] + " Entries",
                "Description": service["description"], "Members@odata.count": len(members), "Members": members}

    def entry(self, service, entry_id):
        for e in self.entries[service["id"]]:
            if str(e["id"]) == entry_id:
                return self.render_entry(service, e)
        return None

    def clear(self, service):
        self.entries[service["id"]] = []
        self.cleared[service["id"]] += 1
        return {"@Message.ExtendedInfo": [{"MessageId": "Base.1.8.Success", "Message": "Successfully Completed "
                                                                                        "Request"}]}
