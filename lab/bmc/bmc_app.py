"""The HTTP face of one lab BMC: a WSGI application in front of sushy-tools' emulator.

sushy-tools serves the service root, the systems collection, the computer system with its power actions and the
system's sub-resources; its fake systems driver is replaced by one that takes power state from the BMC's state.
This layer adds what sushy lacks and real BMCs have, shaped by the vendor profile: sessions and basic auth, the
vendor's resource paths and identity, BIOS with pending settings and an attribute registry, Dell jobs, both
thermal schemas (``bmc_thermal``), fault injection and the unauthenticated ``/lab`` endpoints that tests read
ground truth from.
"""

import io
import json
import logging
import time
from urllib.parse import parse_qs

from werkzeug.wrappers import Request, Response

from bmc_accounts import AccountResources
from bmc_bios import BiosHandlers
from bmc_boot import BootResources
from bmc_chaos import Chaos, reset_connection
from bmc_cooling import Cooling
from bmc_inventory import InventoryResources
from bmc_logs import LogResources
from bmc_manager import ManagerResources
from bmc_power import PowerResources
from bmc_scp import TASKS, ScpActions
from bmc_protocol import (METADATA_TYPE, check_protocol, described_by, metadata_document, odata_document,
                          sushy_allow, version_document)
from bmc_errors import RedfishError
from bmc_http import HttpHandlers, deep_merge, error_response, json_response, link, norm
from bmc_lab_endpoints import LabEndpoints
from bmc_sessions import SessionHandlers
from bmc_thermal import ThermalResources

LOG = logging.getLogger("bmc")
PUBLIC = ("/redfish", "/redfish/v1", "/redfish/v1/odata", "/redfish/v1/$metadata")
SUSHY_TOP = ("/redfish/v1/Systems", "/redfish/v1/UpdateService", "/redfish/v1/CertificateService")


class BmcApp(HttpHandlers, SessionHandlers, BiosHandlers, LabEndpoints):
    """``new_drivers()`` gives the sushy drivers of this BMC over a fresh state, at start and at every reset;
    ``on_down()`` is called when a test asks the BMC to refuse connections for a while."""

    def __init__(self, bmc, sushy_app, new_drivers, on_down=None):
        self.bmc = bmc
        self.sushy_app = sushy_app
        self.new_drivers = new_drivers
        self.drivers = new_drivers()
        self.sushy_written = False  # whether sushy's state may have changed since the drivers were made
        self.on_down = on_down
        p = bmc.profile
        self.paths = {
            "system": "/redfish/v1/Systems/%s" % p["system"]["id"],
            "chassis": p["chassis"]["path"],
            "manager": p["manager"]["path"],
            "sessions": p["sessions"]["path"],
            "bios": p["bios"]["path"],
            "settings": p["bios"]["settings_path"],
        }
        chassis = norm(p["chassis"]["path"])
        routes = {
            "/redfish": self.version,
            "/redfish/v1": self.service_root,
            "/redfish/v1/odata": self.odata,
            "/redfish/v1/$metadata": self.metadata,
            "/redfish/v1/SessionService": self.session_service,
            p["sessions"]["path"]: self.sessions,
            norm(p["sessions"]["path"]) + "/Members": self.sessions,
            self.paths["system"]: self.system,
            p["bios"]["path"]: self.bios,
            p["bios"]["settings_path"]: self.settings,
            "/redfish/v1/Registries": self.registries,
            p["bios"]["registry"]["file_path"]: self.registry_file,
            "/redfish/v1/Registries/Base.1.8.0": self.base_registry_file,
            p["bios"]["registry"]["path"]: self.registry,
            "/redfish/v1/Managers": self.managers,
            p["manager"]["path"]: self.manager,
            "/redfish/v1/Chassis": self.chassis_collection,
            chassis: self.chassis,
        }
        members = {p["sessions"]["path"]: self.session}
        if "jobs" in p:
            for path in filter(None, (p["jobs"]["path"], p["jobs"].get("oem_path"))):
                routes[path] = self.jobs
                members[path] = self.job
        self.manager_parts = ManagerResources(p["manager"]["path"], p["manager"].get("parts"), "127.0.0.1",
                                              "%s-bmc" % bmc.host.split(".")[0])
        self.cooling = Cooling(p.get("cooling"), p["manager"]["path"], bmc.bios_current,
                               lambda: self.manager_parts.attributes.get("System.Embedded.1", {}))
        self.thermal = ThermalResources(chassis, p["thermal"], self.cooling.fans)
        for path, render in self.thermal.resources().items():
            routes[path] = self.read_only(render)
        for path, render in self.thermal.collections().items():
            members[path] = self.read_only_member(render)
        self.power = PowerResources(p["chassis"]["path"], p.get("power"), bmc.power_state)
        self.logs = LogResources({"Managers": p["manager"]["path"], "Systems": self.paths["system"]}, p.get("logs"))
        for resources in (self.power, self.logs):
            for path, render in resources.resources().items():
                routes[path] = self.read_only(render)
            for path, render in resources.collections().items():
                members[path] = self.read_only_member(render)
        for path, act in self.logs.actions().items():
            routes[path] = self.action(act)
        self.scp = ScpActions(p["manager"]["path"], p["manager"].get("parts"), bmc, self.manager_parts)
        for path, act in self.scp.actions().items():
            routes[path] = self.accepted_action(act)
        if self.scp.enabled:
            members[TASKS] = self.scp_task
        for path, render in self.manager_parts.read_only().items():
            routes[path] = self.read_only(render)
        for path, (render, patch) in dict(self.manager_parts.writable(), **self.cooling.writable()).items():
            routes[path] = self.writable(render, patch)
        self.inventory = InventoryResources(norm(self.paths["system"]), p)
        self.boot = BootResources(norm(self.paths["system"]), bmc)
        accounts = AccountResources(bmc.username, str(p["sessions"].get("account_id", "1")))
        for resources in (self.inventory, self.boot, accounts):
            for path, render in resources.resources().items():
                routes[path] = self.read_only(render)
            for path, render in resources.collections().items():
                members[path] = self.read_only_member(render)
        self.routes = dict((norm(path), handler) for path, handler in routes.items())
        self.members = dict((norm(path), handler) for path, handler in members.items())
        self.chaos = Chaos()
        self.lab_routes = self.lab_endpoints()

    # -- WSGI entry --------------------------------------------------------------------------------------------

    def __call__(self, environ, start_response):
        request = Request(environ)
        path = norm(request.path)
        if path == "/lab" or path.startswith("/lab/"):
            response = self.lab(request, path)
        else:
            started = time.monotonic()
            fault = self.chaos.pick()
            if fault == "reset_before":
                reset_connection(environ)
                return Response(status=204)(environ, start_response)
            try:
                if fault == "unavailable":
                    raise RedfishError(503, "The service is temporarily unable to answer (lab chaos).",
                                       "Base.1.8.ServiceTemporarilyUnavailable", headers={"Retry-After": "1"})
                response = self.redfish(request, path)
            except RedfishError as err:
                response = error_response(err)
            if fault == "reset_after":
                reset_connection(environ)
            response.headers.setdefault("Allow", request.environ.get("lab.allow") or sushy_allow(path))
            response.headers.setdefault("Cache-Control", "no-cache")
            described_by(request, response)
            LOG.info("%s %s %s %s %.3fs", self.bmc.host, request.method, request.full_path.rstrip("?"),
                     response.status_code, time.monotonic() - started)
        return response(environ, start_response)

    def redfish(self, request, path):
        self.bmc.count(request.method, path)
        fault = self.bmc.take_fault(("http_error", "slow"))
        if fault and fault["kind"] == "slow":
            time.sleep(fault["seconds"])
        elif fault:
            headers = {"Retry-After": str(fault["retry_after"])} if "retry_after" in fault else {}
            raise RedfishError(fault["status"], "The service is temporarily unable to answer (lab fault).",
                               "Base.1.8.ServiceTemporarilyUnavailable", headers=headers)
        check_protocol(request)
        sessions = norm(self.paths["sessions"])
        public = path in PUBLIC or (request.method == "POST" and path in (sessions, sessions + "/Members"))
        if not public:
            self.authenticate(request)
        handler = self.routes.get(path)
        if handler:
            return handler(request)
        parent, _sep, member = path.rpartition("/")
        if parent in self.members:
            return self.members[parent](request, member)
        if self.is_sushy(path):
            return self.sushy(request)
        raise RedfishError(404, "The resource at the URI %s was not found." % path, "Base.1.8.ResourceMissingAtURI")

    def authenticate(self, request):
        token = request.headers.get("X-Auth-Token")
        if self.bmc.take_fault(("unauthorized",)):
            # As if the session had expired or the password had been changed meanwhile.
            session_id = token and self.bmc.session_for_token(token)
            if session_id:
                self.bmc.delete_session(session_id)
            raise RedfishError(401, "The authentication credentials included with this request are missing or "
                               "invalid.", "Base.1.8.NoValidSession")
        if token and self.bmc.session_for_token(token):
            return
        auth = request.authorization
        if auth and auth.type == "basic" and self.bmc.credentials_ok(auth.username or "", auth.password or ""):
            return
        raise RedfishError(401, "The authentication credentials included with this request are missing or invalid.",
                           "Base.1.8.NoValidSession")

    def is_sushy(self, path):
        system = norm(self.paths["system"])
        if path in SUSHY_TOP or path.startswith("/redfish/v1/UpdateService/"):
            return True
        # sushy's own BIOS resources apply changes at once; this BMC's BIOS lives at the vendor's paths.
        return path.startswith(system + "/") and not path.startswith(system + "/BIOS")

    def sushy(self, request):
        environ = dict(request.environ)
        environ.pop("HTTP_AUTHORIZATION", None)
        environ["lab.drivers"] = self.drivers
        if environ["REQUEST_METHOD"] == "HEAD":  # the body is left out when the answer is sent
            environ["REQUEST_METHOD"] = "GET"
        self.sushy_written = self.sushy_written or request.method not in ("GET", "HEAD")
        response = Response.from_app(self.sushy_app, environ, buffered=True)
        read = request.method in ("GET", "HEAD")
        if response.mimetype == "application/json" and response.status_code == 200 and read:
            # sushy's templates carry DMTF's mockup copyright, an annotation only mockups may have.
            body = json.loads(response.get_data(as_text=True))
            body.pop("@Redfish.Copyright", None)
            response.set_data(json.dumps(body, indent=1))
        return response

    def sushy_json(self, request):
        response = self.sushy(request)
        if response.status_code != 200 or request.method not in ("GET", "HEAD"):
            return response, None
        return response, json.loads(response.get_data(as_text=True))

    def scp_task(self, request, job_id):
        self.allow(request, "GET")
        status, body = self.scp.task_answer(job_id)
        if isinstance(body, str):
            return Response(body, status=status, mimetype="application/xml")
        return json_response(body, status)

    # -- documents beside the resources ----------------------------------------------------------------------------

    def version(self, request):
        self.allow(request, "GET")
        return json_response(version_document())

    def odata(self, request):
        self.allow(request, "GET")
        return json_response(odata_document(self.sushy_root(request)))

    def metadata(self, request):
        self.allow(request, "GET")
        response = Response(metadata_document(self.sushy_root(request)["@odata.type"]), content_type=METADATA_TYPE)
        response.headers["OData-Version"] = "4.0"
        return response

    # -- service root ----------------------------------------------------------------------------------------------

    def service_root(self, request):
        self.allow(request, "GET")
        response, body = self.sushy_json(request)
        if body is None:
            return response
        return json_response(self.root_body(body))

    def root_body(self, body):
        deep_merge(body, self.bmc.profile["service_root"])
        body.update(UUID=self.bmc.profile["system"]["resource"]["UUID"], Id="RootService", Name="Root Service")
        body["SessionService"] = link("/redfish/v1/SessionService")
        body["AccountService"] = link("/redfish/v1/AccountService")
        body.pop("CertificateService", None)  # sushy's links to resources it does not serve
        body["Links"] = {"Sessions": link(self.paths["sessions"])}
        return body

    def sushy_root(self, request):
        """The service root as a dict, whatever the path of the request that needs it."""
        environ = dict(request.environ, PATH_INFO="/redfish/v1/", REQUEST_METHOD="GET", QUERY_STRING="")
        return self.root_body(self.sushy_json(Request(environ))[1])

    # -- system ----------------------------------------------------------------------------------------------------

    def system(self, request):
        self.allow(request, "GET", "PATCH")
        if request.method == "PATCH":
            return self.patch_system(request)
        response, body = self.sushy_json(request)
        if body is None:
            return response
        p = self.bmc.profile
        body.pop("Status", None)
        deep_merge(body, p["system"]["resource"])
        body["Id"] = p["system"]["id"]
        body["Name"] = "System"
        body["Status"] = {"State": "Enabled", "Health": "OK", "HealthRollup": "OK"}
        for summary in ("ProcessorSummary", "MemorySummary"):
            status = body.get(summary, {}).get("Status", {})
            if "HealthRollUp" in status:  # sushy's spelling; the schema's is HealthRollup
                status["HealthRollup"] = status.pop("HealthRollUp")
        body["Bios"] = link(self.paths["bios"])
        body.update(self.boot.system_properties())
        body.update(self.inventory.links())
        body.update(self.logs.links("Systems"))
        body["Links"] = {"Chassis": [link(self.paths["chassis"])], "ManagedBy": [link(self.paths["manager"])]}
        body["Actions"]["#ComputerSystem.Reset"]["ResetType@Redfish.AllowableValues"] = p["system"]["reset_types"]
        return json_response(body)

    def patch_system(self, request):
        """The boot settings and power restore policy are this BMC's; what else a PATCH carries (the indicator
        LED) goes to sushy."""
        body = self.body(request)
        if not isinstance(body, dict):
            raise RedfishError(400, "The request body must be a JSON object.", "Base.1.8.MalformedJSON")
        own = dict((key, body.pop(key)) for key in ("Boot", "PowerRestorePolicy") if key in body)
        if body:
            # sushy would take part of a spec it does not know and answer in plain text: refuse it first.
            unknown = [key for key in body if key != "IndicatorLED"]
            if unknown:
                raise RedfishError(400, "The property %s is not in the list of valid properties for the resource."
                                   % unknown[0], "Base.1.8.PropertyUnknown", ["/" + unknown[0]])
        self.boot.patch(own)
        if body:
            request.environ["wsgi.input"] = io.BytesIO(json.dumps(body).encode())
            request.environ["CONTENT_LENGTH"] = str(len(json.dumps(body).encode()))
            return self.sushy(Request(request.environ))
        return Response(status=204)

    # -- managers and Dell jobs ----------------------------------------------------------------------------------

    def managers(self, request):
        self.allow(request, "GET")
        return json_response({"@odata.id": "/redfish/v1/Managers", "@odata.type": "#ManagerCollection."
                              "ManagerCollection", "Name": "Manager Collection", "Members@odata.count": 1,
                              "Members": [link(self.paths["manager"])]})

    def manager(self, request):
        self.allow(request, "GET")
        p = self.bmc.profile
        body = {"@odata.id": self.paths["manager"], "@odata.type": "#Manager.v1_5_0.Manager",
                "Id": norm(self.paths["manager"]).rsplit("/", 1)[1], "PowerState": "On",
                "Status": {"State": "Enabled", "Health": "OK"},
                "Links": {"ManagerForServers": [link(self.paths["system"])],
                          "ManagerForChassis": [link(self.paths["chassis"])]}}
        body.update(p["manager"]["resource"])
        body.update(self.manager_parts.manager_links())
        body.update(self.logs.links("Managers"))
        if self.cooling.manager_oem():
            body.setdefault("Oem", {}).update(self.cooling.manager_oem())
        if self.scp.manager_actions():
            body.setdefault("Actions", {})["Oem"] = self.scp.manager_actions()
        if "jobs" in p:
            body["Links"]["Oem"] = {"Dell": dict({"@odata.type": "#DellManager.v1_0_0.DellManager",
                                                  "Jobs": link(p["jobs"]["path"])}, **self.manager_parts.dell_links())}
        return json_response(body)

    def jobs(self, request):
        self.allow(request, "GET", "POST")
        jobs_cfg = self.bmc.profile["jobs"]
        if request.method == "POST":
            job = self.bmc.create_job(self.body(request))
            return json_response({"@Message.ExtendedInfo": [{"MessageId": "Base.1.8.Success",
                                                             "Message": "Successfully Completed Request"}]},
                                 200, {"Location": job["@odata.id"]})
        jobs = self.bmc.job_list()
        expand = parse_qs(request.query_string.decode()).get("$expand")
        members = jobs if expand and jobs_cfg.get("expand") else [link(job["@odata.id"]) for job in jobs]
        return json_response({"@odata.id": norm(request.path), "@odata.type": "#DellJobCollection.DellJobCollection",
                              "Name": "JobQueue", "Members@odata.count": len(members), "Members": members})

    def job(self, request, job_id):
        self.allow(request, "GET", "DELETE")
        if request.method == "DELETE":
            self.bmc.delete_job(job_id)
            return json_response({"@Message.ExtendedInfo": [{"MessageId": "Base.1.8.Success",
                                                             "Message": "Successfully Completed Request"}]})
        return json_response(self.bmc.job(job_id))

    # -- chassis and thermal -----------------------------------------------------------------------------------

    def chassis_collection(self, request):
        self.allow(request, "GET")
        return json_response({"@odata.id": "/redfish/v1/Chassis", "@odata.type": "#ChassisCollection."
                              "ChassisCollection", "Name": "Chassis Collection", "Members@odata.count": 1,
                              "Members": [link(self.paths["chassis"])]})

    def chassis(self, request):
        self.allow(request, "GET")
        p = self.bmc.profile
        base = norm(self.paths["chassis"])
        body = {"@odata.id": self.paths["chassis"], "@odata.type": "#Chassis.v1_15_0.Chassis",
                "Id": base.rsplit("/", 1)[1], "PowerState": self.bmc.power_state(),
                "Status": {"State": "Enabled", "Health": "OK", "HealthRollup": "OK"},
                "Links": {"ComputerSystems": [link(self.paths["system"])], "ManagedBy": [link(self.paths["manager"])]}}
        body.update(p["chassis"]["resource"])
        body.update(self.thermal.links())
        body.update(self.power.links())
        return json_response(body)
