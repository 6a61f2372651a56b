# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The HTTPS transport of the Redfish client: failures sorted by kind, answers read."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import socket
import ssl
from http.client import RemoteDisconnected

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.clients import _https_transport as transport


@pytest.mark.parametrize("error, kind", [
    (ssl.SSLCertVerificationError(1, "certificate verify failed"), "tls"),
    (ssl.SSLEOFError(8, "EOF occurred in violation of protocol"), "reset"),
    (ConnectionRefusedError(111, "Connection refused"), "refused"),
    (socket.timeout("timed out"), "timeout"),
    (socket.gaierror(-2, "Name or service not known"), "dns"),
    (RemoteDisconnected("Remote end closed connection without response"), "reset"),
    (OSError(113, "No route to host"), "other"),
])
def test_transport_errors_are_classified(error, kind):
    assert transport.classify(error)[0] == kind


def test_retry_after_as_seconds_or_http_date(monkeypatch):
    monkeypatch.setattr(transport.time, "time", lambda: 1000000000.0)
    assert transport.retry_after_seconds("7") == 7.0
    assert transport.retry_after_seconds("Sun, 09 Sep 2001 01:46:50 GMT") == 10.0
    assert transport.retry_after_seconds("Sun, 09 Sep 2001 01:46:30 GMT") == 0.0
    assert transport.retry_after_seconds("soon") is None
    assert transport.retry_after_seconds(None) is None


def test_answers_that_are_not_json_keep_their_start_as_text():
    assert transport.parse_json(b'{"Id": "1"}') == {"Id": "1"}
    assert transport.parse_json(b"") is None
    assert transport.parse_json(b"<html>" + b"x" * 400) == {"_text": "<html>" + "x" * 294}


def test_headers_are_read_whatever_their_case():
    answer = transport.Response(201, {"X-Auth-Token": "t", "location": "/s/1"}, None)
    assert answer.header("x-auth-token") == "t" and answer.header("Location") == "/s/1"


def test_tls_contexts_verify_unless_told_not_to_and_are_built_once():
    https = transport.HttpsTransport()
    strict, lax = https.context(True), https.context(False)
    assert strict.verify_mode == ssl.CERT_REQUIRED and strict.check_hostname is True
    assert lax.verify_mode == ssl.CERT_NONE and lax.check_hostname is False
    assert https.context(True) is strict
