# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Redfish client against a scripted BMC: sessions, link following, retries, errors, vendor detection."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.clients import _redfish as rf
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import (
    ApiError,
    ConnectionFailure,
    InputError,
    NotFound,
)
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.clients.redfish_fake import (
    BASE,
    PASSWORD,
    ROOT,
    FakeBmc,
)


@pytest.fixture(autouse=True)
def no_jitter(monkeypatch):
    monkeypatch.setattr(rf.random, "uniform", lambda low, high: 1.0)


# -- baseuri -----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("given, expected", [
    ("10.0.0.21", "https://10.0.0.21"),
    ("bmc01.example.com:8443", "https://bmc01.example.com:8443"),
    ("https://127.0.0.1:8441/", "https://127.0.0.1:8441"),
    ("HTTPS://Bmc01", "https://bmc01"),
    ("fe80::1", "https://[fe80::1]"),
    ("[fe80::1]:443", "https://[fe80::1]:443"),
])
def test_baseuri_accepts_uris_and_bare_hosts(given, expected):
    assert rf.normalize_baseuri(given) == expected


@pytest.mark.parametrize("given, message", [
    ("http://10.0.0.21", "uses http://"),
    ("https://10.0.0.21/redfish/v1", "has a path"),
    ("", "empty"),
    ("https://host:99999", "invalid port"),
])
def test_baseuri_refuses_what_cannot_be_a_bmc(given, message):
    with pytest.raises(InputError, match=message):
        rf.normalize_baseuri(given)


# -- sessions ----------------------------------------------------------------------------------------------------------

def test_session_is_created_from_the_linked_collection_used_and_deleted():
    bmc = FakeBmc({("GET", "/rf/Systems/"): (200, {}, {"Members": []})})
    with bmc.client() as client:
        client.get("/rf/Systems/")
    assert bmc.requests() == [("GET", "/redfish/v1/"), ("POST", "/rf/SessionService/Sessions/"),
                              ("GET", "/rf/Systems/"), ("DELETE", "/rf/SessionService/Sessions/7")]
    login = bmc.log[1]
    assert login[2] == {"UserName": "root", "Password": PASSWORD}
    assert "Authorization" not in login[3] and "X-Auth-Token" not in login[3]
    assert bmc.log[2][3]["X-Auth-Token"] == "tok-1"
    assert "Authorization" not in bmc.log[2][3]


def test_session_is_deleted_when_the_work_fails():
    bmc = FakeBmc({("GET", "/rf/Systems/"): (500, {}, {"error": {"message": "boom"}})})
    with pytest.raises(ApiError, match="boom"):
        with bmc.client() as client:
            client.get("/rf/Systems/")
    assert bmc.requests()[-1] == ("DELETE", "/rf/SessionService/Sessions/7")


def test_basic_auth_when_the_bmc_has_no_session_service():
    root = dict((k, v) for k, v in ROOT.items() if k not in ("Links", "SessionService"))
    bmc = FakeBmc({("GET", "/rf/Systems/"): (200, {}, {"Members": []})}, root=root)
    with bmc.client() as client:
        client.get("/rf/Systems/")
    expected = "Basic " + base64.b64encode(("root:" + PASSWORD).encode()).decode()
    assert bmc.log[-1][3]["Authorization"] == expected
    assert bmc.requests("POST") == [] and bmc.requests("DELETE") == []


def test_basic_auth_when_session_creation_is_not_allowed():
    bmc = FakeBmc({("POST", "/rf/SessionService/Sessions/"): (405, {}, None),
                   ("GET", "/rf/Systems/"): (200, {}, {"Members": []})})
    with bmc.client() as client:
        client.get("/rf/Systems/")
    assert bmc.log[-1][3]["Authorization"].startswith("Basic ")


def test_auth_basic_option_never_opens_a_session():
    bmc = FakeBmc({("GET", "/rf/Systems/"): (200, {}, {"Members": []})})
    with bmc.client(auth="basic") as client:
        client.get("/rf/Systems/")
    assert bmc.requests() == [("GET", "/redfish/v1/"), ("GET", "/rf/Systems/")]
    assert all(headers["Authorization"].startswith("Basic ") for _m, _p, _b, headers in bmc.log)


def test_wrong_credentials_fail_clearly_without_the_password():
    bmc = FakeBmc({("POST", "/rf/SessionService/Sessions/"): (401, {}, {"error": {"message": "bad"}})})
    with pytest.raises(ConnectionFailure) as caught:
        bmc.client().login()
    assert "rejected the credentials of user 'root'" in str(caught.value)
    assert PASSWORD not in str(caught.value)
    assert len(bmc.requests("POST")) == 1


def test_expired_session_logs_in_again_once():
    bmc = FakeBmc({("GET", "/rf/Systems/"): [(401, {}, None), (200, {}, {"Members": []})]})
    with bmc.client() as client:
        assert client.get("/rf/Systems/") == {"Members": []}
    assert bmc.requests("POST") == [("POST", "/rf/SessionService/Sessions/")] * 2


# -- retries -----------------------------------------------------------------------------------------------------------

def test_503_is_retried_honouring_retry_after():
    answers = [(503, {"Retry-After": "2"}, None), (503, {"Retry-After": "5"}, None), (200, {}, {"Members": []})]
    bmc = FakeBmc({("GET", "/rf/Systems/"): answers})
    client = bmc.client(auth="basic")
    assert client.get("/rf/Systems/") == {"Members": []}
    assert bmc.sleeps == [2.0, 5.0] and client.retried == 2


def test_429_without_retry_after_backs_off_exponentially():
    bmc = FakeBmc({("GET", "/rf/Systems/"): [(429, {}, None)] * 3 + [(200, {}, {})]})
    bmc.client(auth="basic").get("/rf/Systems/")
    assert bmc.sleeps == [1.0, 2.0, 4.0]


def test_retry_after_is_capped():
    bmc = FakeBmc({("GET", "/rf/Systems/"): [(503, {"Retry-After": "3600"}, None), (200, {}, {})]})
    bmc.client(auth="basic").get("/rf/Systems/")
    assert bmc.sleeps == [rf.RETRY_AFTER_CAP]


def test_retries_are_bounded_and_the_error_says_so():
    bmc = FakeBmc({("GET", "/rf/Systems/"): [(503, {}, {"error": {"message": "busy"}})]})
    with pytest.raises(ApiError) as caught:
        bmc.client(auth="basic", retries=2).get("/rf/Systems/")
    assert "kept answering HTTP 503 after 3 attempts: busy" in str(caught.value)
    assert bmc.requests() == [("GET", "/rf/Systems/")] * 3


def test_bmc_down_fails_after_bounded_retries():
    bmc = FakeBmc({("GET", "/redfish/v1/"): "refused"})
    with pytest.raises(ConnectionFailure) as caught:
        bmc.client(retries=2).login()
    assert len(bmc.log) == 3
    assert bmc.sleeps == [1.0, 2.0]
    assert "Could not reach the BMC at https://bmc.example:8443 for GET /redfish/v1/: connection refused " \
           "(after 3 attempts over 3 s)" in str(caught.value)


def test_refused_connections_are_retried_even_for_post():
    bmc = FakeBmc({("POST", "/rf/SessionService/Sessions/"): ["refused", (201, {"X-Auth-Token": "t"}, {})]})
    client = bmc.client()
    client.login()
    assert len(bmc.requests("POST")) == 2 and client.retried == 1


def test_a_post_that_may_have_arrived_is_not_repeated():
    bmc = FakeBmc({("POST", "/rf/Reset"): "timeout"})
    with pytest.raises(ConnectionFailure, match="did not answer POST /rf/Reset within 10 s"):
        bmc.client(auth="basic").request("POST", "/rf/Reset", {"ResetType": "On"})
    assert len(bmc.requests("POST")) == 1


def test_a_get_that_timed_out_is_repeated():
    bmc = FakeBmc({("GET", "/rf/Systems/"): ["timeout", (200, {}, {"ok": 1})]})
    assert bmc.client(auth="basic").get("/rf/Systems/") == {"ok": 1}


def test_certificate_errors_are_not_retried_and_explain_validate_certs():
    bmc = FakeBmc({("GET", "/redfish/v1/"): "tls"})
    with pytest.raises(ConnectionFailure) as caught:
        bmc.client().login()
    assert len(bmc.log) == 1
    assert "could not be verified: certificate verify failed: self-signed certificate" in str(caught.value)
    assert "validate_certs: false" in str(caught.value)


# -- errors and links --------------------------------------------------------------------------------------------------

def test_redfish_error_messages_are_surfaced_with_their_ids():
    body = {"error": {"code": "Base.1.8.GeneralError", "message": "general", "@Message.ExtendedInfo": [
        {"MessageId": "Base.1.8.PropertyValueNotInList", "Message": "The value Maybe is not acceptable."}]}}
    bmc = FakeBmc({("PATCH", "/rf/Bios/Settings"): (400, {}, body)})
    with pytest.raises(ApiError) as caught:
        bmc.client(auth="basic").request("PATCH", "/rf/Bios/Settings", {"Attributes": {}})
    assert str(caught.value) == ("PATCH /rf/Bios/Settings on the BMC at https://bmc.example:8443 failed with HTTP "
                                 "400: The value Maybe is not acceptable.")
    assert caught.value.details["message_ids"] == ["Base.1.8.PropertyValueNotInList"]
    assert len(bmc.requests("PATCH")) == 1


def test_missing_resource_is_not_found():
    with pytest.raises(NotFound):
        FakeBmc().client(auth="basic").get("/rf/Nothing")
    assert FakeBmc().client(auth="basic").get("/rf/Nothing", optional=True) is None


def test_links_stay_on_the_bmc_and_lose_their_fragment():
    client = FakeBmc().client()
    assert client.url("/rf/Chassis/1/Thermal#/Fans/0") == BASE + "/rf/Chassis/1/Thermal"
    assert client.url({"@odata.id": BASE + "/rf/x?a=1"}) == BASE + "/rf/x?a=1"
    assert client.url("https://idrac-7xk2f42.example/rf/x") == BASE + "/rf/x"
    with pytest.raises(ApiError, match="a link without @odata.id"):
        client.url({})


def test_the_system_is_found_by_following_links():
    bmc = FakeBmc({("GET", "/rf/Systems/"): (200, {}, {"Members": [{"@odata.id": "/rf/Systems/Sys.A"}]}),
                   ("GET", "/rf/Systems/Sys.A"): (200, {}, {"Id": "Sys.A", "Manufacturer": "Dell Inc.",
                                                            "Links": {"ManagedBy": [{"@odata.id": "/rf/M/x"}]}}),
                   ("GET", "/rf/M/x"): (200, {}, {"Model": "14G Monolithic", "FirmwareVersion": "6.10.30.00"})})
    client = bmc.client(auth="basic")
    assert client.system()["Id"] == "Sys.A"
    assert client.vendor()["generation"] == "idrac9"
    assert ("GET", "/rf/M/x") in bmc.requests()


def test_more_than_one_system_is_refused():
    bmc = FakeBmc({("GET", "/rf/Systems/"): (200, {}, {"Members": [{"@odata.id": "/a"}, {"@odata.id": "/b"}]})})
    with pytest.raises(ApiError, match="manages 2 systems"):
        bmc.client(auth="basic").system()


def test_members_are_expanded_in_one_request_when_supported():
    root = dict(ROOT, ProtocolFeaturesSupported={"ExpandQuery": {"ExpandAll": True, "Levels": True}})
    jobs = [{"@odata.id": "/rf/Jobs/J1", "JobState": "Scheduled"}]
    bmc = FakeBmc({("GET", "/rf/Jobs?$expand=*($levels=1)"): (200, {}, {"Members": jobs})}, root=root)
    assert bmc.client(auth="basic").members("/rf/Jobs", expand=True) == jobs
    assert bmc.requests()[-1] == ("GET", "/rf/Jobs?$expand=*($levels=1)")


@pytest.mark.parametrize("features, query", [
    ({"ExpandAll": True, "Levels": True}, "$expand=*($levels=1)"),
    ({"NoLinks": True}, "$expand=."),
    ({"Links": True}, None),
    ({}, None),
])
def test_expand_query_follows_what_the_service_advertises(features, query):
    root = dict(ROOT, ProtocolFeaturesSupported={"ExpandQuery": features})
    assert FakeBmc(root=root).client(auth="basic").expand_query() == query


def test_members_are_read_one_by_one_without_expand():
    bmc = FakeBmc({("GET", "/rf/Jobs"): (200, {}, {"Members": [{"@odata.id": "/rf/Jobs/J1"}]}),
                   ("GET", "/rf/Jobs/J1"): (200, {}, {"Id": "J1"})})
    assert bmc.client(auth="basic").members("/rf/Jobs", expand=True) == [{"Id": "J1"}]


@pytest.mark.parametrize("system, manager, family, generation", [
    ({"Manufacturer": "Dell Inc."}, {"Model": "13G Monolithic"}, "dell", "idrac8"),
    ({"Manufacturer": "Dell Inc."}, {"FirmwareVersion": "2.75.75.75"}, "dell", "idrac8"),
    ({"Manufacturer": "Dell Inc."}, {"Model": "15G Monolithic"}, "dell", "idrac9"),
    ({"Manufacturer": "HPE"}, {"Model": "iLO 5"}, "hpe", "ilo5"),
    ({"Manufacturer": "Supermicro"}, {}, "supermicro", None),
    ({"Manufacturer": "Contoso"}, {}, "generic", None),
])
def test_vendor_detection(system, manager, family, generation):
    vendor = rf.detect_vendor(system, manager)
    assert (vendor["family"], vendor["generation"]) == (family, generation)
