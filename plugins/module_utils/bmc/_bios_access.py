# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""BIOS, Dell BIOS jobs and power of the one system behind a ``RedfishClient``, and waiting for a restart."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, TimeoutExpired
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._redfish import link_of, odata_id


class BiosAccess:
    """The BIOS, Dell jobs and power of the one system behind a RedfishClient, reached by following links."""

    def __init__(self, client):
        self.client = client

    def read(self):
        """Current attributes, what the settings object shows, its ETag, advertised apply times, registry name."""
        client = self.client
        bios = client.follow(client.system(), "Bios")
        settings = bios.get("@Redfish.Settings") or {}
        settings_uri = link_of(settings, "SettingsObject")
        shown, etag = {}, settings.get("ETag")
        if settings_uri:
            answer = client.request("GET", settings_uri)
            body = answer.body if isinstance(answer.body, dict) else {}
            shown = body.get("Attributes") or {}
            etag = answer.header("ETag") or body.get("@odata.etag") or etag
        return {
            "uri": odata_id(bios),
            "current": bios.get("Attributes") or {},
            "settings_uri": settings_uri,
            "shown": shown,
            "etag": etag,
            "apply_times": settings.get("SupportedApplyTimes") or [],
            "registry": bios.get("AttributeRegistry"),
        }

    def registry(self, name):
        """The attribute registry the Bios resource names, found through the Registries collection."""
        client = self.client
        collection_uri = link_of(client.root, "Registries")
        if not name or not collection_uri:
            return None
        collection = client.get(collection_uri, optional=True) or {}
        links = [odata_id(member) for member in collection.get("Members") or [] if odata_id(member)]
        # Members are usually named after their registry: look at that one first.
        links.sort(key=lambda uri: 0 if uri.rstrip("/").rsplit("/", 1)[-1] == name else 1)
        for uri in links:
            registry_file = client.get(uri, optional=True) or {}
            if name not in (registry_file.get("Registry"), registry_file.get("Id")):
                continue
            locations = sorted(registry_file.get("Location") or [],
                               key=lambda loc: 0 if loc.get("Language") in ("en", None) else 1)
            for location in locations:
                if location.get("Uri"):
                    return client.get(location["Uri"], optional=True)
            return None
        return None

    def jobs_uri(self):
        """Dell's job queue, linked from the manager; None on BMCs without one."""
        manager = self.client.manager()
        return link_of(manager, "Links", "Oem", "Dell", "Jobs") or link_of(manager, "Oem", "Dell", "Jobs")

    def jobs(self, jobs_uri):
        return self.client.members(jobs_uri, expand=True) if jobs_uri else []

    def patch(self, settings_uri, attributes, apply_time=None, etag=None):
        """Store pending values. Returns the job URI when the BMC created one for the requested apply time."""
        body = {"Attributes": attributes}
        if apply_time:
            body["@Redfish.SettingsApplyTime"] = {"ApplyTime": apply_time}
        answer = self.client.request("PATCH", settings_uri, body, headers={"If-Match": etag} if etag else None)
        location = answer.header("Location")
        return location if location and "/Jobs/" in location else None

    def create_job(self, jobs_uri, settings_uri):
        answer = self.client.request("POST", jobs_uri, {"TargetSettingsURI": settings_uri})
        return answer.header("Location") or odata_id(answer.body or {})

    def delete_job(self, job):
        self.client.request("DELETE", job, accept=(404,))

    def power_state(self):
        return self.client.refresh_system().get("PowerState")

    def reset(self, reset_type):
        action = (self.client.system().get("Actions") or {}).get("#ComputerSystem.Reset") or {}
        if not action.get("target"):
            raise ApiError("The system of the BMC at %s has no ComputerSystem.Reset action." % self.client.baseuri)
        self.client.request("POST", action["target"], {"ResetType": reset_type})

    def reset_types(self):
        """The reset types the system advertises; None when it does not say."""
        action = (self.client.system().get("Actions") or {}).get("#ComputerSystem.Reset") or {}
        allowed = action.get("ResetType@Redfish.AllowableValues")
        if allowed is None and action.get("@Redfish.ActionInfo"):
            info = self.client.get(action["@Redfish.ActionInfo"], optional=True) or {}
            for parameter in info.get("Parameters") or []:
                if parameter.get("Name") == "ResetType":
                    allowed = parameter.get("AllowableValues")
        return allowed


def wait_for(check, timeout, what, sleep=None, clock=None, first=1.0, factor=1.5, cap=15.0):
    """Poll ``check()`` with growing pauses until it returns something true; TimeoutExpired after ``timeout`` s."""
    sleep = sleep or time.sleep
    clock = clock or time.monotonic
    deadline = clock() + timeout
    delay = first
    while True:
        result = check()
        if result:
            return result
        if clock() + delay > deadline:
            raise TimeoutExpired("%s did not happen within %s s." % (what, timeout),
                                 hint="Raise the timeout if this server takes longer; check the server's console.")
        sleep(delay)
        delay = min(cap, delay * factor)
