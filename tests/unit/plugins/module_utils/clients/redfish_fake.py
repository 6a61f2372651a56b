# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A scripted Redfish service that the unit tests of the Redfish client and its readers talk to."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._https_transport import TransportError
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
