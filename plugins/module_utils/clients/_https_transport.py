# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""HTTPS for the Redfish client: one request per call, failures without an HTTP answer sorted by kind.

``HttpsTransport`` sends a request straight to the BMC and returns the raw answer; ``TransportError.kind`` tells the
client whether a failure is worth retrying. Also here: what an answer holds (``Response``, its JSON body, a
``Retry-After`` delay) and the basic-auth header value.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import email.utils
import json
import socket
import ssl
import time

from http.client import HTTPException, HTTPSConnection
from urllib.parse import urlsplit


class Response:
    """``body`` is the parsed JSON; ``text`` the whole answer where it is not JSON (a Dell profile export's XML)."""

    def __init__(self, status, headers, body, raw=None):
        self.status = status
        self.headers = dict((key.lower(), value) for key, value in (headers or {}).items())
        self.body = body
        self.text = None
        if isinstance(body, dict) and "_text" in body and raw:
            self.text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw

    def header(self, name):
        return self.headers.get(name.lower())


class TransportError(Exception):
    """A request that got no HTTP answer. ``kind``: refused, timeout, reset, tls, dns or other."""

    def __init__(self, kind, reason):
        super(TransportError, self).__init__(reason)
        self.kind = kind
        self.reason = reason


def classify(reason):
    """``(kind, text)`` for an exception raised while sending a request; kinds as in ``TransportError``."""
    if isinstance(reason, ssl.SSLCertVerificationError):
        return "tls", getattr(reason, "verify_message", None) or str(reason)
    if isinstance(reason, (ssl.SSLEOFError, ssl.SSLZeroReturnError)):
        return "reset", "the connection was closed during the TLS handshake"
    if isinstance(reason, ssl.SSLError):
        return "tls", str(reason)
    if isinstance(reason, ConnectionRefusedError):
        return "refused", "connection refused"
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return "timeout", "timed out"
    if isinstance(reason, socket.gaierror):
        return "dns", "the name does not resolve (%s)" % reason
    if isinstance(reason, (ConnectionResetError, BrokenPipeError, HTTPException)):
        return "reset", "the connection was closed (%s)" % (reason or type(reason).__name__)
    return "other", str(reason)


class HttpsTransport:
    """Sends requests straight to the BMC (no proxy). The TLS context is built once per client, not per request."""

    def __init__(self):
        self._contexts = {}

    def context(self, validate_certs):
        if validate_certs not in self._contexts:
            if validate_certs:
                context = ssl.create_default_context()
            else:
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            self._contexts[validate_certs] = context
        return self._contexts[validate_certs]

    def __call__(self, method, url, body, headers, timeout, validate_certs):
        """One request. Returns (status, headers, raw body) or raises TransportError."""
        parts = urlsplit(url)
        connection = HTTPSConnection(parts.hostname, parts.port or 443, timeout=timeout,
                                     context=self.context(validate_certs))
        try:
            connection.request(method, parts.path + ("?" + parts.query if parts.query else ""), body=body,
                               headers=headers)
            answer = connection.getresponse()
            return answer.status, dict(answer.getheaders()), answer.read()
        except (OSError, HTTPException) as err:
            kind, reason = classify(err)
            raise TransportError(kind, reason)
        finally:
            connection.close()


def basic_authorization(username, password):
    """The value of the ``Authorization`` header for basic auth."""
    raw = ("%s:%s" % (username, password)).encode("utf-8")
    return "Basic " + base64.b64encode(raw).decode("ascii")


def parse_json(raw):
    """The JSON body of an answer; a body that is not JSON becomes ``{"_text": <its first 300 characters>}``."""
    if not raw:
        return None
    try:
        return json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except ValueError:
        return {"_text": (raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw)[:300]}


def retry_after_seconds(value):
    """Seconds from a Retry-After header (delta seconds or an HTTP date); None when absent or unreadable."""
    if value is None:
        return None
    text = str(value).strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())
