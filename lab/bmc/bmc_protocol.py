"""What DSP0266 asks of every Redfish service besides its resources: the headers and request checks of every answer,
and the documents (DSP0266, "Service root request", "OData service document" and "OData $metadata"): the version document at ``/redfish``, the OData service document at
``/redfish/v1/odata`` (application/json) and the CSDL metadata document at ``/redfish/v1/$metadata``
(application/xml), whose ``edmx:Reference``s point at DMTF's published schema files for every resource type the
BMC serves (``SERVED``), with every namespace each file declares.
"""

import json
import os
import re
from xml.sax.saxutils import quoteattr

from bmc_errors import RedfishError

SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas")
PUBLISHED = "http://redfish.dmtf.org/schemas/v1/"
METADATA_TYPE = "application/xml;charset=utf-8"
# The query parameters of OData's that a client may send; other ones starting with $ are refused (DSP0266, "Query
# parameters": unsupported ones that start with $ answer 501).
ODATA_QUERIES = ("$expand", "$select", "$filter", "$top", "$skip", "$levels", "$only", "$count", "$orderby")
# The resource types a lab BMC serves (its own and sushy's); a new one needs its schema files in schemas/.
SERVED = """
    AccountService AttributeRegistry Bios BootOption BootOptionCollection CertificateCollection Chassis
    ChassisCollection ComputerSystem ComputerSystemCollection EthernetInterface EthernetInterfaceCollection Fan
    FanCollection LogEntry LogEntryCollection LogService LogServiceCollection Manager ManagerAccount
    ManagerAccountCollection ManagerCollection ManagerNetworkProtocol Memory MemoryCollection MessageRegistryFile
    MessageRegistryFileCollection Power PowerSubsystem PowerSupply PowerSupplyCollection Processor
    ProcessorCollection Role RoleCollection SecureBoot Sensor
    SensorCollection ServiceRoot Session SessionCollection SessionService SoftwareInventory
    SoftwareInventoryCollection Storage StorageCollection Thermal ThermalMetrics ThermalSubsystem UpdateService
    VirtualMedia VirtualMediaCollection
""".split()


def version_document():
    return {"v1": "/redfish/v1/"}


def odata_document(service_root):
    """One singleton per top-level resource the service root links to, and the service root itself."""
    value = [{"name": "Service", "kind": "Singleton", "url": "/redfish/v1/"}]
    for name, item in sorted(service_root.items()):
        if isinstance(item, dict) and "@odata.id" in item:
            value.append({"name": name, "kind": "Singleton", "url": item["@odata.id"]})
    return {"@odata.context": "/redfish/v1/$metadata", "value": value}


def schema_namespaces(directory=SCHEMAS):
    """Schema file name -> the namespaces it declares, for the resource types served."""
    result = {}
    for kind in SERVED:
        name = "%s_v1.xml" % kind
        with open(os.path.join(directory, name)) as handle:
            result[name] = re.findall(r'<Schema [^>]*Namespace="([^"]+)"', handle.read())
    return result


def metadata_document(service_root_type, directory=SCHEMAS):
    """CSDL with a reference per served type and the service's entity container, which extends the container
    of the service root's version (``#ServiceRoot.v1_5_0.ServiceRoot`` gives ``ServiceRoot.v1_5_0``)."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">']
    for name, namespaces in schema_namespaces(directory).items():
        lines.append('  <edmx:Reference Uri=%s>' % quoteattr(PUBLISHED + name))
        lines.extend('    <edmx:Include Namespace=%s/>' % quoteattr(namespace) for namespace in namespaces)
        lines.append('  </edmx:Reference>')
    container = service_root_type.lstrip("#").rsplit(".", 1)[0]
    lines += ['  <edmx:DataServices>',
              '    <Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="Service">',
              '      <EntityContainer Name="Service" Extends=%s/>' % quoteattr(container + ".ServiceContainer"),
              '    </Schema>',
              '  </edmx:DataServices>',
              '</edmx:Edmx>', '']
    return "\n".join(lines)


def check_protocol(request):
    """Refuses an OData version other than 4.0 (412) and an unknown query parameter starting with $ (501)."""
    version = request.headers.get("OData-Version")
    if version and version.strip() != "4.0":
        raise RedfishError(412, "OData-Version %s is not supported; this service speaks 4.0." % version,
                           "Base.1.8.PreconditionFailed")
    unknown = [name for name in request.args if name.startswith("$") and name not in ODATA_QUERIES]
    if unknown:
        raise RedfishError(501, "The query parameter %s is not supported." % unknown[0],
                           "Base.1.8.QueryNotSupported")


def described_by(request, response):
    """The Link header with rel=describedby naming the JSON schema of a resource read with GET or HEAD."""
    if request.method not in ("GET", "HEAD") or response.mimetype != "application/json" or "Link" in response.headers:
        return
    try:
        odata_type = json.loads(response.get_data(as_text=True)).get("@odata.type", "")
    except (ValueError, AttributeError):
        return
    if odata_type:
        schema = odata_type.lstrip("#").rsplit(".", 1)[0]
        response.headers["Link"] = "<http://redfish.dmtf.org/schemas/v1/%s.json>; rel=describedby" % schema


def sushy_allow(path):
    """The methods a resource that sushy serves takes: actions are POSTed, the rest is read."""
    return "POST" if "/Actions/" in path else "GET, HEAD"
