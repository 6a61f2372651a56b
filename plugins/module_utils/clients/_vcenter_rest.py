# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one vCenter REST client (vSphere Automation API under ``/api``).

A session from ``POST /api/session``, sent as ``vmware-api-session-id``; certificate checks as ``validate_certs``
says; vAPI errors raised as the typed errors of ``_errors``; long operations (``?vmw-task=true``) awaited by polling
``/api/cis/tasks/{task}`` with a growing, jittered interval and a deadline, reporting progress to a callback.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import random
import time
import traceback

from ansible_collections.gpuops.vgpu.plugins.module_utils.clients import _retry
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import (
    ApiError,
    ConnectionFailure,
    InputError,
    MissingLibrary,
    NotFound,
    TaskFailed,
    TimeoutExpired,
)

REQUESTS_IMPORT_ERROR = None
try:
    import requests
except ImportError:  # pragma: no cover - raised as MissingLibrary by VCenterRestClient()
    REQUESTS_IMPORT_ERROR = traceback.format_exc()
    requests = None

SESSION_HEADER = "vmware-api-session-id"
POLL_FIRST, POLL_FACTOR, POLL_MAX = 0.25, 1.5, 5.0


def _verify(validate_certs):
    """requests' ``verify``: the CA bundle of REQUESTS_CA_BUNDLE or SSL_CERT_FILE when set, else certifi's."""
    if not validate_certs:
        return False
    return os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("SSL_CERT_FILE") or True


def vapi_message(body, fallback):
    """The human text of a vAPI error body (``messages[].default_message``), else ``fallback``."""
    if isinstance(body, dict):
        texts = [m.get("default_message") for m in body.get("messages") or [] if isinstance(m, dict)]
        texts = [text for text in texts if text]
        if texts:
            return " ".join(texts)
    return fallback


class VCenterRestClient:
    """A logged-in REST session. Use as a context manager, or call ``close()``."""

    def __init__(self, hostname, username, password, port=443, validate_certs=True, timeout=60, session=None):
        if REQUESTS_IMPORT_ERROR and session is None:
            raise MissingLibrary("requests", REQUESTS_IMPORT_ERROR)
        self.endpoint = "%s:%s" % (hostname, port)
        self.base = "https://%s" % self.endpoint
        self.timeout = timeout
        self._credentials = (username, password)
        self.http = session or requests.Session()
        # Passed with every request: a session-level verify=False loses to REQUESTS_CA_BUNDLE in requests.
        self.verify = _verify(validate_certs)
        self.http.headers.update({"Accept": "application/json"})
        self.session_id = None
        self.retried = 0
        self.sleep = time.sleep
        self.login()

    @classmethod
    def from_params(cls, params):
        """A session from the ``vcenter_connection`` options; the caller closes it."""
        return cls(params["hostname"], params["username"], params["password"], port=params["port"],
                   validate_certs=params["validate_certs"])

    def login(self):
        # A second session is harmless: a login lost on the way is simply sent again.
        response = self._send_retrying("POST", "/api/session", {"auth": self._credentials}, resend=True)
        if response.status_code == 401:
            raise ConnectionFailure(
                "vCenter %s refused the login of user '%s'." % (self.endpoint, self._credentials[0]),
                hint="Check username and password (or VMWARE_USER / VMWARE_PASSWORD).")
        self.session_id = self._body(response, "POST", "/api/session")
        if not isinstance(self.session_id, str) or not self.session_id:
            raise ApiError("vCenter %s answered the login without a session id." % self.endpoint)
        self.http.headers[SESSION_HEADER] = self.session_id

    def close(self):
        if self.session_id is not None:
            try:
                self._send("DELETE", "/api/session")
            except ConnectionFailure:
                pass  # logging out is best effort
            self.session_id = None
            self.http.headers.pop(SESSION_HEADER, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- requests ---------------------------------------------------------------------------------------------

    def _send(self, method, path, **kwargs):
        try:
            return self.http.request(method, self.base + path, timeout=self.timeout, verify=self.verify, **kwargs)
        except requests.exceptions.SSLError as err:
            raise ConnectionFailure(
                "The TLS certificate of vCenter %s could not be verified: %s." % (self.endpoint, err),
                hint="Trust its CA (SSL_CERT_FILE / REQUESTS_CA_BUNDLE) or, in a lab only, set validate_certs: false.")
        except requests.exceptions.Timeout:
            raise ConnectionFailure("vCenter %s did not answer %s %s within %s seconds."
                                    % (self.endpoint, method, path, self.timeout))
        except requests.exceptions.RequestException as err:
            raise ConnectionFailure("Could not reach vCenter %s: %s." % (self.endpoint, err),
                                    hint="Check hostname and port, and that the vCenter answers HTTPS from here.",
                                    transient=isinstance(err, requests.exceptions.ConnectionError))

    def request(self, method, path, params=None, body=None):
        """Send one request and return the decoded JSON answer (None when empty).

        A vAPI error becomes ``NotFound`` (404), ``InputError`` (INVALID_ARGUMENT) or ``ApiError``, with the
        vAPI ``error_type`` and ``data`` in its details. An expired session is renewed once.
        """
        kwargs = {"params": params}
        if body is not None:
            kwargs["json"] = body
        response = self._send_retrying(method, path, kwargs)
        if response.status_code == 401 and self.session_id is not None:
            self.login()
            response = self._send_retrying(method, path, kwargs)
        return self._body(response, method, path)

    def _send_retrying(self, method, path, kwargs, resend=False):
        """``_send``, again with backoff after a 503 of vCenter's proxy (the service never saw the request) or a
        lost connection on a read; a change whose answer was lost raises ``ChangeInDoubt`` (see ``_retry``)."""
        attempt = 0
        while True:
            try:
                response = self._send(method, path, **kwargs)
            except ConnectionFailure as err:
                if not err.details.get("transient"):
                    raise
                if method not in _retry.SAFE_HTTP_METHODS and not resend:
                    raise _retry.in_doubt(self.endpoint, "%s %s" % (method, path), err.message)
                if attempt + 1 >= _retry.ATTEMPTS:
                    raise
            else:
                if response.status_code != 503 or attempt + 1 >= _retry.ATTEMPTS:
                    return response
            self.retried += 1
            self.sleep(_retry.delay(attempt))
            attempt += 1

    def _body(self, response, method, path):
        try:
            body = response.json() if response.content else None
        except ValueError:
            body = None
            if response.ok:
                raise ApiError("vCenter %s answered %s %s with something that is not JSON." % (self.endpoint, method, path))
        if response.ok:
            return body
        error_type = body.get("error_type") if isinstance(body, dict) else None
        details = {"status": response.status_code, "error_type": error_type,
                   "data": body.get("data") if isinstance(body, dict) else None}
        text = vapi_message(body, "HTTP %s %s" % (response.status_code, response.reason))
        message = "vCenter %s: %s %s failed: %s" % (self.endpoint, method, path, text)
        if response.status_code == 404:
            raise NotFound(message, **details)
        if error_type == "INVALID_ARGUMENT":
            raise InputError(message, **details)
        raise ApiError(message, **details)

    def get(self, path, params=None):
        return self.request("GET", path, params=params)

    # ---- tasks ------------------------------------------------------------------------------------------------

    def start_task(self, method, path, body=None, params=None):
        """Start a ``?vmw-task=true`` operation; returns the task id."""
        task = self.request(method, path, params=params, body=body)
        if not isinstance(task, str) or not task:
            raise ApiError("vCenter %s answered %s %s without a task id." % (self.endpoint, method, path))
        return task

    def wait_task(self, task, timeout, on_progress=None, what=None, sleep=time.sleep, clock=time.monotonic):
        """Poll ``/api/cis/tasks/{task}`` until it ends; return its result.

        The interval starts at a quarter second and grows by half each time up to five seconds, with jitter, so a
        short task costs few calls and a long one does not flood vCenter. ``on_progress(info, elapsed)`` is called
        after every poll. A failed task raises ``TaskFailed`` with the vAPI ``error_type`` and ``data``; a task
        still running after ``timeout`` seconds raises ``TimeoutExpired`` (the task itself goes on in vCenter).
        """
        what = what or "vCenter task %s" % task
        started = clock()
        interval = POLL_FIRST
        while True:
            info = self.get("/api/cis/tasks/%s" % task) or {}
            elapsed = clock() - started
            if on_progress is not None:
                on_progress(info, elapsed)
            status = info.get("status")
            if status == "SUCCEEDED":
                return info.get("result")
            if status == "FAILED":
                error = info.get("error") or {}
                raise TaskFailed("%s failed: %s" % (what, vapi_message(error, "no reason given")),
                                 error_type=error.get("error_type"), data=error.get("data"), task=task)
            if elapsed >= timeout:
                raise TimeoutExpired("%s was still %s after %s seconds." % (what, status or "running", timeout),
                                     hint="It goes on in vCenter; raise timeout, or look at the task in vCenter.",
                                     task=task)
            sleep(min(interval * random.uniform(0.8, 1.2), max(0.0, timeout - elapsed) + 0.05))
            interval = min(interval * POLL_FACTOR, POLL_MAX)

    def run_task(self, method, path, body=None, params=None, timeout=3600, on_progress=None, what=None):
        """Start a task and wait for its result."""
        task = self.start_task(method, path, body=body, params=params)
        return self.wait_task(task, timeout, on_progress=on_progress, what=what)
