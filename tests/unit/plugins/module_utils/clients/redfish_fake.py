# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Scripted Redfish services that the unit tests of the Redfish client, its readers and the BMC modules talk to."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._https_transport import TransportError
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients import _redfish
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._redfish import RedfishClient

BASE = "https://bmc.example:8443"
PASSWORD = "S3cret-pass"
ROOT = {"@odata.id": "/redfish/v1/", "Systems": {"@odata.id": "/rf/Systems/"},
        "Managers": {"@odata.id": "/rf/Managers"}, "Registries": {"@odata.id": "/rf/Registries"},
        "SessionService": {"@odata.id": "/rf/SessionService"},
        "Links": {"Sessions": {"@odata.id": "/rf/SessionService/Sessions/"}}}


class FakeBmc:
    """A scripted Redfish service. ``routes[(method, path)]`` is an answer or a list of answers used in turn; an
    answer is (status, headers, body), or an exception kind for TransportError. Every request is recorded."""

    def __init__(self, routes=None, root=None):
        self.routes = {("GET", "/redfish/v1/"): (200, {}, root or ROOT)}
        self.routes[("POST", "/rf/SessionService/Sessions/")] = (
            201, {"X-Auth-Token": "tok-1", "Location": "/rf/SessionService/Sessions/7"}, {"Id": "7"})
        self.routes[("DELETE", "/rf/SessionService/Sessions/7")] = (204, {}, None)
        self.routes.update(routes or {})
        self.log = []
        self.sleeps = []
        self.now = 0.0

    def transport(self, method, url, body, headers, timeout, validate_certs):
        assert url.startswith(BASE)
        path = url[len(BASE):]
        self.log.append((method, path, json.loads(body) if body else None, dict(headers)))
        answer = self.routes.get((method, path), (404, {}, {"error": {"message": "no %s" % path}}))
        if isinstance(answer, list):
            answer = answer.pop(0) if len(answer) > 1 else answer[0]
        if isinstance(answer, str):
            raise TransportError(answer, {"refused": "connection refused", "timeout": "timed out",
                                          "tls": "certificate verify failed: self-signed certificate",
                                          "reset": "the connection was closed"}[answer])
        status, answer_headers, answer_body = answer
        if isinstance(answer_body, bytes):  # an answer that is not JSON, as sent
            return status, answer_headers, answer_body
        return status, answer_headers, json.dumps(answer_body).encode() if answer_body is not None else b""

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self):
        return self.now

    def client(self, **kwargs):
        options = dict(validate_certs=True, auth="session", timeout=10, retries=3)
        options.update(kwargs)
        return RedfishClient(BASE, "root", PASSWORD, transport=self.transport, sleep=self.sleep,
                             clock=self.clock, **options)

    def requests(self, method=None):
        return [(m, p) for m, p, _b, _h in self.log if method is None or m == method]

    def serve_modules(self, monkeypatch):
        """Make the client a module builds with ``RedfishClient.from_params`` talk to this service, on its clock."""
        monkeypatch.setattr(_redfish, "HttpsTransport", lambda: self.transport)
        monkeypatch.setattr(_redfish, "time", _Clock(self))


class _Clock:
    def __init__(self, bmc):
        self.sleep = bmc.sleep
        self.monotonic = bmc.clock


def registry_entry(name, values=None, kind=None, read_only=False):
    """An attribute of a BIOS attribute registry as Redfish serves it."""
    item = {"AttributeName": name, "Type": kind or ("Enumeration" if values else "String"), "ReadOnly": read_only}
    if values:
        item["Value"] = [{"ValueName": value, "ValueDisplayName": value} for value in values]
    return item


ON_OFF = ["Enabled", "Disabled"]
DELL_REGISTRY = [registry_entry("ProcVirtualization", ON_OFF), registry_entry("SriovGlobalEnable", ON_OFF),
                 registry_entry("MmioAbove4Gb", ON_OFF), registry_entry("ProcCStates", ON_OFF),
                 registry_entry("SystemServiceTag", read_only=True)]
DELL_CURRENT = {"ProcVirtualization": "Enabled", "SriovGlobalEnable": "Disabled", "MmioAbove4Gb": "Disabled",
                "ProcCStates": "Enabled", "SystemServiceTag": "7XK2F42"}

SYSTEM = "/rf/Systems/1"
BIOS = SYSTEM + "/Bios"
SETTINGS = BIOS + "/Settings"
RESET = SYSTEM + "/Actions/ComputerSystem.Reset"
MANAGER = "/rf/Managers/1"
JOBS = MANAGER + "/Jobs"
CHASSIS = "/rf/Chassis/1"
REGISTRY = "/rf/Registries/BiosAttributeRegistry.v1"
REGISTRY_FILE = "/rf/registrystore/en/BiosAttributeRegistry.v1.json"


class FakeServer(FakeBmc):
    """One server behind a BMC, with state. PATCHed BIOS values stay pending in the settings object until a restart
    applies them (all but the names in ``drops``). ``dell=True`` adds Dell's job queue, without which pending
    values are not applied, and a PATCH with an apply time creates a job (``patch_creates_job``); a job ends in
    ``job_outcome`` at the restart. ``apply_times`` are those the settings object advertises."""

    def __init__(self, registry_entries, current, manufacturer="Supermicro", manager_model="X11", dell=False,
                 apply_times=(), reset_types=("On", "ForceOff", "GracefulShutdown", "GracefulRestart",
                                              "ForceRestart")):
        super(FakeServer, self).__init__()
        self.current = dict(current)
        self.pending = {}
        self.power_state = "On"
        self.jobs = {}
        self.drops = set()
        self.boots = 0
        self.dell = dell
        self.patch_creates_job = dell
        self.job_outcome = ("Completed", "Job completed successfully.")
        self.settings_object = True
        self.apply_times = list(apply_times)
        self.system_doc = {
            "@odata.id": SYSTEM, "Id": "1", "Manufacturer": manufacturer, "Model": "GPU Server 1",
            "SerialNumber": "SN-1", "Status": {"Health": "OK", "HealthRollup": "OK", "State": "Enabled"},
            "Bios": {"@odata.id": BIOS},
            "Links": {"ManagedBy": [{"@odata.id": MANAGER}], "Chassis": [{"@odata.id": CHASSIS}]},
            "Actions": {"#ComputerSystem.Reset": {"target": RESET,
                                                  "ResetType@Redfish.AllowableValues": list(reset_types)}}}
        manager = {"@odata.id": MANAGER, "Model": manager_model, "FirmwareVersion": "2.75.75.75"}
        if dell:
            manager["Links"] = {"Oem": {"Dell": {"Jobs": {"@odata.id": JOBS}}}}
        self.routes.update({
            ("GET", "/rf/Systems/"): (200, {}, {"Members": [{"@odata.id": SYSTEM}]}),
            ("GET", MANAGER): (200, {}, manager),
            ("GET", CHASSIS): (200, {}, {"Thermal": {"@odata.id": CHASSIS + "/Thermal"}}),
            ("GET", CHASSIS + "/Thermal"): (200, {}, {
                "Temperatures": [{"Name": "Inlet Temp", "ReadingCelsius": 23, "PhysicalContext": "Intake",
                                  "UpperThresholdCritical": 47, "Status": {"Health": "OK"}}],
                "Fans": [{"Name": "Fan1", "Reading": 6840, "ReadingUnits": "RPM", "Status": {"Health": "OK"}}]}),
            ("GET", "/rf/Registries"): (200, {}, {"Members": [{"@odata.id": REGISTRY}]}),
            ("GET", REGISTRY): (200, {}, {"Registry": "BiosAttributeRegistry.v1",
                                          "Location": [{"Language": "en", "Uri": REGISTRY_FILE}]}),
            ("GET", REGISTRY_FILE): (200, {}, {"RegistryEntries": {"Attributes": list(registry_entries)}}),
            ("PATCH", SETTINGS): (200, {}, None),
            ("POST", RESET): (204, {}, None),
            ("POST", JOBS): (200, {}, None),
        })

    def transport(self, method, url, body, headers, timeout, validate_certs):
        self._publish()
        path = url[len(BASE):]
        answer = super(FakeServer, self).transport(method, url, body, headers, timeout, validate_certs)
        if answer[0] < 300:
            answer = self._change(method, path, json.loads(body) if body else None, answer)
        return answer

    def _publish(self):
        """Routes that show the state as it is now."""
        system = dict(self.system_doc, PowerState=self.power_state)
        self.routes[("GET", SYSTEM)] = (200, {}, system)
        bios = {"@odata.id": BIOS, "AttributeRegistry": "BiosAttributeRegistry.v1", "Attributes": dict(self.current)}
        if self.settings_object:
            bios["@Redfish.Settings"] = {"SettingsObject": {"@odata.id": SETTINGS},
                                         "SupportedApplyTimes": list(self.apply_times)}
        self.routes[("GET", BIOS)] = (200, {}, bios)
        self.routes[("GET", SETTINGS)] = (200, {"ETag": 'W/"%d"' % len(self.log)},
                                          {"Attributes": dict(self.pending)})
        self.routes[("GET", JOBS)] = (200, {}, {"Members": [{"@odata.id": uri} for uri in sorted(self.jobs)]})
        for uri, job in self.jobs.items():
            self.routes[("GET", uri)] = (200, {}, dict(job))
            self.routes[("DELETE", uri)] = (200, {}, None)

    def _change(self, method, path, body, answer):
        if (method, path) == ("PATCH", SETTINGS):
            self.pending.update(body["Attributes"])
            if self.patch_creates_job and body.get("@Redfish.SettingsApplyTime"):
                return 202, {"Location": self._new_job()}, b""
        elif (method, path) == ("POST", JOBS):
            return 200, {"Location": self._new_job()}, b""
        elif method == "DELETE" and path in self.jobs:
            del self.jobs[path]
            self.pending = {}
        elif (method, path) == ("POST", RESET):
            self._reset(body["ResetType"])
        return answer

    def _new_job(self):
        uri = "%s/JID_%d" % (JOBS, len(self.jobs) + 1)
        self.jobs[uri] = {"@odata.id": uri, "Id": uri.rsplit("/", 1)[-1], "JobType": "BIOSConfiguration",
                          "JobState": "Scheduled", "Message": "Task successfully scheduled."}
        return uri

    def _reset(self, reset_type):
        if reset_type in ("ForceOff", "GracefulShutdown"):
            self.power_state = "Off"
            return
        if reset_type == "On" and self.power_state == "On":
            return
        self.power_state = "On"
        self.boots += 1
        scheduled = [job for job in self.jobs.values() if job["JobState"] == "Scheduled"]
        if self.dell and not scheduled:
            return
        self.current.update((name, value) for name, value in self.pending.items() if name not in self.drops)
        self.pending = {}
        for job in scheduled:
            job["JobState"], job["Message"] = self.job_outcome


def dell_server(**kwargs):
    """A Dell server with an iDRAC8 and the BIOS of ``DELL_REGISTRY``, as it leaves the factory."""
    return FakeServer(DELL_REGISTRY, DELL_CURRENT, manufacturer="Dell Inc.", manager_model="13G Monolithic",
                      dell=True, **kwargs)
