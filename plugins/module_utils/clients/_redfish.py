# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one Redfish client.

Sessions (``X-Auth-Token``, deleted at the end) with a basic-auth fallback, resources reached by following
``@odata.id`` links from the service root, bounded retries with backoff on 503/429 and connection failures
(honouring ``Retry-After``), timeouts, and vendor detection. Raises the typed errors of ``_errors``. The HTTPS
requests themselves go through ``_https_transport``.

What is read and written through it lives beside it: the BIOS, Dell jobs and power in ``bmc/_bios_access``,
thermal readings in ``bmc/_thermal``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import random
import time

from urllib.parse import urlsplit

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import (
    ApiError,
    ConnectionFailure,
    InputError,
    NotFound,
)
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._https_transport import (
    HttpsTransport,
    Response,
    TransportError,
    basic_authorization,
    parse_json,
    retry_after_seconds,
)

SERVICE_ROOT = "/redfish/v1/"
RETRY_STATUSES = (429, 503)
IDEMPOTENT = ("GET", "HEAD", "PUT", "DELETE", "PATCH")
BACKOFF_BASE = 1.0
BACKOFF_CAP = 30.0
RETRY_AFTER_CAP = 60.0


def normalize_baseuri(value):
    """``https://host[:port]`` from a URI or a bare host (``10.0.0.21``, ``bmc01:8443``, ``[fe80::1]:443``)."""
    text = (value or "").strip()
    if not text:
        raise InputError("baseuri is empty.", hint="Give the BMC as https://host[:port] or a bare host.")
    if "://" not in text:
        if text.count(":") > 1 and not text.startswith("["):
            text = "[%s]" % text
        text = "https://" + text
    parts = urlsplit(text)
    if parts.scheme.lower() != "https":
        raise InputError("baseuri %r uses %s://; Redfish BMCs are reached over HTTPS." % (value, parts.scheme),
                         hint="Use https://host[:port] or a bare host.")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise InputError("baseuri %r has a path; the module finds the Redfish service root itself." % value,
                         hint="Give only https://host[:port].")
    try:
        port = parts.port
    except ValueError:
        raise InputError("baseuri %r has an invalid port." % value, hint="Use https://host[:port].")
    if not parts.hostname:
        raise InputError("baseuri %r names no host." % value, hint="Use https://host[:port] or a bare host.")
    host = "[%s]" % parts.hostname if ":" in parts.hostname else parts.hostname
    return "https://%s%s" % (host, ":%d" % port if port else "")


def odata_id(value):
    """The ``@odata.id`` of a link or resource, or the value itself when it already is a URI."""
    if isinstance(value, dict):
        return value.get("@odata.id")
    return value


def link_of(resource, *keys):
    """Follow keys (and list indexes) inside a resource to a link; None when the resource does not have it."""
    node = resource
    for key in keys:
        if isinstance(key, int):
            node = node[key] if isinstance(node, list) and len(node) > key else None
        else:
            node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            return None
    return odata_id(node)


def detect_vendor(system, manager=None, root=None):
    """Family (dell, hpe, supermicro, generic) and BMC generation from the identity the BMC reports."""
    manager = manager or {}
    root = root or {}
    manufacturer = (system.get("Manufacturer") or "").strip()
    text = " ".join([manufacturer, root.get("Vendor") or "", " ".join((system.get("Oem") or {}).keys())]).lower()
    bmc_model = manager.get("Model") or ""
    firmware = manager.get("FirmwareVersion") or ""
    family, generation = "generic", None
    if "dell" in text:
        family = "dell"
        if bmc_model[:2].isdigit():
            server_generation = int(bmc_model[:2])
            generation = {12: "idrac7", 13: "idrac8"}.get(server_generation) or (
                "idrac9" if server_generation >= 14 else None)
        elif firmware[:1].isdigit():
            generation = "idrac8" if int(firmware.split(".")[0]) <= 2 else "idrac9"
    elif "hpe" in text.split() or "hp" in text.split() or "hewlett" in text:
        family = "hpe"
        generation = bmc_model.lower().replace(" ", "") or None
    elif "supermicro" in text:
        family = "supermicro"
    return {
        "family": family,
        "generation": generation,
        "manufacturer": manufacturer or None,
        "model": system.get("Model"),
        "bmc_model": bmc_model or None,
        "bmc_firmware": firmware or None,
    }


class RedfishClient:
    """Talks to one BMC. Use as a context manager so the session is deleted at the end, even on failure."""

    def __init__(self, baseuri, username, password, validate_certs=True, auth="session", timeout=30, retries=3,
                 transport=None, sleep=None, clock=None):
        if timeout < 1:
            raise InputError("timeout %s is too small." % timeout, hint="Give the BMC at least 1 second per request.")
        if retries < 0:
            raise InputError("retries %s is negative." % retries, hint="Use 0 to try each request only once.")
        self.baseuri = normalize_baseuri(baseuri)
        self.username = username
        self.password = password
        self.validate_certs = validate_certs
        self.auth = auth
        self.timeout = timeout
        self.retries = retries
        self.retried = 0
        self._transport = transport or HttpsTransport()
        self.sleep = sleep or time.sleep
        self.clock = clock or time.monotonic
        self._token = None
        self._session_uri = None
        self._basic = auth == "basic"
        self._root = None
        self._system = None

    @classmethod
    def from_params(cls, params):
        return cls(params["baseuri"], params["username"], params["password"], params["validate_certs"],
                   params["auth"], params["timeout"], params["retries"])

    def __enter__(self):
        self.login()
        return self

    def __exit__(self, *exc_info):
        self.logout()
        return False

    # -- authentication ----------------------------------------------------------------------------------------

    def login(self):
        """Read the service root and open a session; fall back to basic auth when the BMC has no session service."""
        self._root = self.get(SERVICE_ROOT, auth=self._basic)
        if self._basic:
            return
        sessions = link_of(self._root, "Links", "Sessions")
        if not sessions and link_of(self._root, "SessionService"):
            sessions = link_of(self.get(link_of(self._root, "SessionService"), optional=True) or {}, "Sessions")
        if sessions:
            answer = self.request("POST", sessions, {"UserName": self.username, "Password": self.password},
                                  auth=False, accept=(404, 405, 501))
            if answer.status < 300:
                # Without a token the session is of no use, but it is still deleted at the end (with basic auth).
                self._token = answer.header("X-Auth-Token")
                self._session_uri = answer.header("Location") or odata_id(answer.body or {})
                if self._token:
                    return
        self._basic = True

    def logout(self):
        """Delete the session; a BMC that does not answer keeps it until its own timeout."""
        if not self._session_uri:
            return
        uri, self._session_uri = self._session_uri, None
        try:
            self.request("DELETE", uri, accept=(404,), retries=0)
        except (ApiError, ConnectionFailure):
            pass
        finally:
            self._token = None

    def _auth_headers(self):
        if self._token:
            return {"X-Auth-Token": self._token}
        return {"Authorization": basic_authorization(self.username, self.password)}

    # -- requests ------------------------------------------------------------------------------------------------

    def url(self, target):
        uri = odata_id(target)
        if not uri:
            raise ApiError("The BMC at %s returned a link without @odata.id." % self.baseuri)
        uri = uri.split("#", 1)[0]
        if not uri.startswith("/"):
            # An absolute link (some BMCs name themselves by a host name the controller may not resolve): only
            # its path is used, so credentials never go anywhere but to baseuri.
            parts = urlsplit(uri)
            uri = parts.path + ("?" + parts.query if parts.query else "")
        return self.baseuri + uri

    def request(self, method, target, body=None, headers=None, auth=True, accept=(), retries=None):
        """One Redfish request with retries. Returns a Response for 2xx and for statuses in ``accept``."""
        retries = self.retries if retries is None else retries
        url = self.url(target)
        path = url[len(self.baseuri):]
        send = {"Accept": "application/json", "OData-Version": "4.0"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            send["Content-Type"] = "application/json"
        send.update(headers or {})
        started = self.clock()
        relogged = False
        attempt = 0
        while True:
            if auth:
                send.update(self._auth_headers())
            try:
                status, answer_headers, raw = self._transport(method, url, data, send, self.timeout,
                                                              self.validate_certs)
            except TransportError as err:
                retriable = err.kind == "refused" or (err.kind in ("timeout", "reset", "other")
                                                      and method in IDEMPOTENT)
                if not retriable or attempt >= retries:
                    raise self._transport_failure(err, method, path, attempt + 1, started)
                self._backoff(attempt, None)
                attempt += 1
                self.retried += 1
                continue
            answer = Response(status, answer_headers, parse_json(raw), raw)
            if status in RETRY_STATUSES and attempt < retries:
                self._backoff(attempt, answer.header("Retry-After"))
                attempt += 1
                self.retried += 1
                continue
            if status == 401 and auth and self._token and not relogged:
                # The session expired or was deleted on the BMC: log in again once.
                relogged = True
                self._token = None
                self._session_uri = None
                self.login()
                continue
            break
        if status < 300 or status in accept:
            return answer
        raise self._http_failure(method, path, answer, attempt + 1)

    def get(self, target, auth=True, optional=False):
        """GET a resource body. ``optional`` returns None for 404 instead of raising NotFound."""
        answer = self.request("GET", target, auth=auth, accept=(404,) if optional else ())
        if answer.status == 404:
            return None
        if not isinstance(answer.body, dict):
            raise ApiError("The BMC at %s answered GET %s with something that is not a JSON object."
                           % (self.baseuri, odata_id(target)))
        return answer.body

    def _backoff(self, attempt, retry_after):
        delay = min(BACKOFF_CAP, BACKOFF_BASE * (2 ** attempt)) * random.uniform(0.8, 1.2)
        wait = retry_after_seconds(retry_after)
        if wait is not None:
            delay = min(RETRY_AFTER_CAP, wait)
        self.sleep(delay)

    def _transport_failure(self, err, method, path, attempts, started):
        spent = self.clock() - started
        tries = "after %d attempt%s over %.0f s" % (attempts, "" if attempts == 1 else "s", spent)
        if err.kind == "tls":
            return ConnectionFailure(
                "The TLS certificate of the BMC at %s could not be verified: %s." % (self.baseuri, err.reason),
                hint="Trust the BMC's CA on the controller (SSL_CERT_FILE), or set validate_certs: false for a "
                     "BMC with a self-signed certificate you accept.", baseuri=self.baseuri)
        if err.kind == "timeout":
            return ConnectionFailure(
                "The BMC at %s did not answer %s %s within %s s (%s)."
                % (self.baseuri, method, path, self.timeout, tries),
                hint="Raise timeout for a slow BMC, or retries for one that is restarting.", baseuri=self.baseuri)
        return ConnectionFailure(
            "Could not reach the BMC at %s for %s %s: %s (%s)." % (self.baseuri, method, path, err.reason, tries),
            hint="Check baseuri and that the BMC is up and reachable; raise retries to wait longer for a BMC that "
                 "is restarting.", baseuri=self.baseuri)

    def _http_failure(self, method, path, answer, attempts):
        messages, ids = _redfish_messages(answer.body)
        text = "; ".join(messages) or "HTTP %s" % answer.status
        where = "%s %s on the BMC at %s" % (method, path, self.baseuri)
        details = dict(status=answer.status, uri=path, message_ids=ids or None)
        if answer.status == 401:
            return ConnectionFailure(
                "The BMC at %s rejected the credentials of user %r (HTTP 401)." % (self.baseuri, self.username),
                hint="Check username and password; repeated failures can lock the account on the BMC.", **details)
        if answer.status == 404:
            return NotFound("%s: the resource does not exist (HTTP 404)." % where, **details)
        if answer.status in RETRY_STATUSES:
            return ApiError("%s kept answering HTTP %s after %d attempts: %s" % (where, answer.status, attempts, text),
                            hint="The BMC is busy or rate-limiting; try again later or raise retries.", **details)
        return ApiError("%s failed with HTTP %s: %s" % (where, answer.status, text), **details)

    # -- resources -----------------------------------------------------------------------------------------------

    @property
    def root(self):
        if self._root is None:
            self._root = self.get(SERVICE_ROOT, auth=self._basic)
        return self._root

    def _root_link(self, name):
        uri = link_of(self.root, name)
        if not uri:
            raise ApiError("The Redfish service root of %s has no %s link." % (self.baseuri, name))
        return uri

    def follow(self, resource, *keys):
        """GET the resource a link inside ``resource`` points at; NotFound when the link is absent."""
        uri = link_of(resource, *keys)
        if not uri:
            raise NotFound("The BMC at %s does not link %s from %s." % (
                self.baseuri, "/".join(str(k) for k in keys), resource.get("@odata.id") or "the resource"))
        return self.get(uri)

    def members(self, collection, expand=False):
        """Member resources of a collection; one request with ``$expand`` when the service supports it."""
        uri = odata_id(collection)
        query = self.expand_query() if expand else None
        body = self.get(uri + ("&" if "?" in uri else "?") + query if query else uri)
        result = []
        for member in body.get("Members") or []:
            expanded = len(member) > 1
            result.append(member if expanded else self.get(member))
        return result

    def expand_query(self):
        """The ``$expand`` query this service advertises in ProtocolFeaturesSupported, or None."""
        expand = (self.root.get("ProtocolFeaturesSupported") or {}).get("ExpandQuery") or {}
        levels = "($levels=1)" if expand.get("Levels") else ""
        if expand.get("ExpandAll"):
            return "$expand=*" + levels
        if expand.get("NoLinks"):
            return "$expand=." + levels
        return None

    def system(self):
        """The one computer system this BMC manages."""
        if self._system is None:
            collection = self.get(self._root_link("Systems"))
            links = [odata_id(member) for member in collection.get("Members") or []]
            if len(links) != 1:
                raise ApiError("The BMC at %s manages %d systems (%s); these modules expect one server per BMC."
                               % (self.baseuri, len(links), ", ".join(links) or "none"))
            self._system = self.get(links[0])
        return self._system

    def refresh_system(self):
        self._system = None
        return self.system()

    def manager(self):
        system = self.system()
        uri = link_of(system, "Links", "ManagedBy", 0)
        if uri:
            return self.get(uri)
        managers = self.get(self._root_link("Managers")).get("Members") or []
        return self.get(managers[0]) if managers else {}

    def vendor(self):
        return detect_vendor(self.system(), self.manager(), self.root)


def _redfish_messages(body):
    """Human messages and message ids from a Redfish error (or extended info) body."""
    if not isinstance(body, dict):
        return [], []
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    infos = error.get("@Message.ExtendedInfo") or []
    messages = [info.get("Message") for info in infos if isinstance(info, dict) and info.get("Message")]
    ids = [info.get("MessageId") for info in infos if isinstance(info, dict) and info.get("MessageId")]
    if not messages and error.get("message"):
        messages = [error["message"]]
    if not messages and body.get("_text"):
        messages = [body["_text"]]
    return messages, ids
