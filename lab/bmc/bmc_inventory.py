"""Inventory resources of a lab BMC from its vendor profile: the system's ``Storage`` and ``Memory`` collections
and the update service's ``FirmwareInventory`` and ``SoftwareInventory``, with the member ids the vendor uses.

sushy's own storage driver keys systems by UUID and answers 500 for a vendor id such as ``System.Embedded.1``, and
its fake systems driver has no memory or inventories, so these are served here instead.
"""

from bmc_errors import RedfishError

UPDATE_SERVICE = "/redfish/v1/UpdateService"


def link(path):
    return {"@odata.id": path}


def collection(path, kind, name, member_ids):
    return {"@odata.id": path, "@odata.type": "#%sCollection.%sCollection" % (kind, kind), "Name": name,
            "Members@odata.count": len(member_ids), "Members": [link("%s/%s" % (path, i)) for i in member_ids]}


class InventoryResources:
    def __init__(self, system, data):
        self.system = system
        self.storage_data = data.get("storage") or []
        self.memory_data = data.get("memory") or []
        self.inventories = {"FirmwareInventory": data.get("firmware_inventory") or [],
                            "SoftwareInventory": data.get("software_inventory") or []}
        # One processor per socket, from the system's ProcessorSummary, under the vendor's member ids (Dell
        # CPU.Socket.<n>, others <n>).
        summary = data["system"]["resource"].get("ProcessorSummary") or {}
        id_format = data["system"].get("processor_id", "%d")
        self.processors = [{"id": id_format % n, "socket": "CPU %d" % n, "model": summary.get("Model", "")}
                           for n in range(1, int(summary.get("Count", 0)) + 1)]

    def resources(self):
        """Resource path -> renderer."""
        paths = {self.system + "/Storage": self.storage, self.system + "/Memory": self.memory,
                 self.system + "/Processors": self.processor_collection}
        for kind in self.inventories:
            paths["%s/%s" % (UPDATE_SERVICE, kind)] = lambda kind=kind: self.inventory(kind)
        return paths

    def collections(self):
        """Collection path -> renderer of one member by id."""
        paths = {self.system + "/Storage": self.storage_member, self.system + "/Memory": self.memory_member,
                 self.system + "/Processors": self.processor}
        for kind in self.inventories:
            paths["%s/%s" % (UPDATE_SERVICE, kind)] = lambda member, kind=kind: self.inventory_member(kind, member)
        return paths

    def links(self):
        """Links the computer system carries to what is served here."""
        return {"Storage": link(self.system + "/Storage"), "Memory": link(self.system + "/Memory"),
                "Processors": link(self.system + "/Processors")}

    @staticmethod
    def find(entries, member, path):
        for entry in entries:
            if entry["id"] == member:
                return entry
        raise RedfishError(404, "The resource at the URI %s/%s was not found." % (path, member),
                           "Base.1.8.ResourceMissingAtURI")

    def storage(self):
        return collection(self.system + "/Storage", "Storage", "Storage Collection",
                          [entry["id"] for entry in self.storage_data])

    def storage_member(self, member):
        entry = self.find(self.storage_data, member, self.system + "/Storage")
        path = "%s/Storage/%s" % (self.system, member)
        controllers = []
        for index, controller in enumerate(entry["controllers"]):
            item = {"@odata.id": "%s#/StorageControllers/%d" % (path, index), "MemberId": str(index),
                    "Status": {"State": "Enabled", "Health": "OK"}}
            item.update(controller)
            controllers.append(item)
        return {"@odata.id": path, "@odata.type": "#Storage.v1_7_1.Storage", "Id": member, "Name": entry["name"],
                "Status": {"State": "Enabled", "Health": "OK", "HealthRollup": "OK"},
                "StorageControllers": controllers, "Drives@odata.count": 0, "Drives": []}

    def memory(self):
        return collection(self.system + "/Memory", "Memory", "Memory Collection",
                          [entry["id"] for entry in self.memory_data])

    def memory_member(self, member):
        entry = dict(self.find(self.memory_data, member, self.system + "/Memory"))
        body = {"@odata.id": "%s/Memory/%s" % (self.system, member), "@odata.type": "#Memory.v1_7_1.Memory",
                "Id": entry.pop("id"), "Status": {"State": "Enabled", "Health": "OK"}}
        body.update(entry)
        return body

    def processor_collection(self):
        return collection(self.system + "/Processors", "Processor", "Processors Collection",
                          [entry["id"] for entry in self.processors])

    def processor(self, member):
        entry = self.find(self.processors, member, self.system + "/Processors")
        manufacturer = "AMD" if "AMD" in entry["model"] else "Intel(R) Corporation"
        return {"@odata.id": "%s/Processors/%s" % (self.system, member),
                "@odata.type": "#Processor.v1_7_0.Processor", "Id": member, "Name": "Processor",
                "Socket": entry["socket"], "ProcessorType": "CPU", "ProcessorArchitecture": "x86",
                "InstructionSet": "x86-64", "Manufacturer": manufacturer, "Model": entry["model"],
                "Status": {"State": "Enabled", "Health": "OK"}}

    def inventory(self, kind):
        path = "%s/%s" % (UPDATE_SERVICE, kind)
        name = "Firmware Inventory Collection" if kind == "FirmwareInventory" else "Software Inventory Collection"
        return collection(path, "SoftwareInventory", name, [entry["id"] for entry in self.inventories[kind]])

    def inventory_member(self, kind, member):
        path = "%s/%s" % (UPDATE_SERVICE, kind)
        entry = dict(self.find(self.inventories[kind], member, path))
        body = {"@odata.id": "%s/%s" % (path, member), "@odata.type": "#SoftwareInventory.v1_2_3.SoftwareInventory",
                "Id": entry.pop("id"), "Status": {"State": "Enabled", "Health": "OK"}}
        body.update(entry)
        return body
