# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vCenter REST client against a scripted HTTP session: login, errors, certificates, task polling."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

requests = pytest.importorskip("requests")

from ansible_collections.gpuops.vgpu.plugins.module_utils.clients import _vcenter_rest as rest  # noqa: E402
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import (  # noqa: E402
    ApiError,
    ConnectionFailure,
    InputError,
    NotFound,
    TaskFailed,
    TimeoutExpired,
)


@pytest.fixture(autouse=True)
def no_ca_environment(monkeypatch):
    """The machine's CA variables would change what ``verify`` holds."""
    for name in ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"):
        monkeypatch.delenv(name, raising=False)


class Response:
    def __init__(self, status, body=None, reason="OK"):
        self.status_code = status
        self.reason = reason
        self.content = json.dumps(body).encode() if body is not None else b""
        self._body = body

    @property
    def ok(self):
        return self.status_code < 400

    def json(self):
        if not self.content:
            raise ValueError("no body")
        return self._body


def vapi_error(error_type, text, data=None):
    body = {"error_type": error_type, "messages": [{"id": "x", "default_message": text, "args": []}]}
    if data is not None:
        body["data"] = data
    return body


class Session:
    """A requests.Session stand-in: ``routes`` maps "METHOD path" to a response or a list of responses."""

    def __init__(self, routes):
        self.routes = dict(routes)
        self.routes.setdefault("POST /api/session", Response(201, "sid-1"))
        self.routes.setdefault("DELETE /api/session", Response(204))
        self.headers = {}
        self.calls = []

    def request(self, method, url, **kwargs):
        path = url.split("127.0.0.1:8989", 1)[1]
        self.calls.append(dict(kwargs, method=method, path=path, session=self.headers.get(rest.SESSION_HEADER)))
        answer = self.routes["%s %s" % (method, path)]
        if isinstance(answer, list):
            answer = answer.pop(0) if len(answer) > 1 else answer[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


def client(routes, **kwargs):
    session = Session(routes)
    return rest.VCenterRestClient("127.0.0.1", "admin", "secret", port=8989, session=session, **kwargs), session


def test_login_sends_basic_auth_and_then_the_session_header():
    c, session = client({"GET /api/vcenter/cluster": Response(200, [{"cluster": "domain-c7", "name": "gpu"}])})
    assert c.get("/api/vcenter/cluster", params={"names": ["gpu"]}) == [{"cluster": "domain-c7", "name": "gpu"}]
    login, read = session.calls
    assert login["auth"] == ("admin", "secret") and login["session"] is None
    assert read["session"] == "sid-1" and read["params"] == {"names": ["gpu"]}
    assert read["verify"] is True and read["timeout"] == 60
    c.close()
    assert session.calls[-1]["method"] == "DELETE" and rest.SESSION_HEADER not in session.headers


def test_wrong_password():
    with pytest.raises(ConnectionFailure) as err:
        client({"POST /api/session": Response(401, vapi_error("UNAUTHENTICATED", "Authentication failed."))})
    assert "refused the login of user 'admin'" in err.value.message
    assert "username and password" in err.value.hint


@pytest.mark.parametrize("validate_certs, env, expected", [
    (False, {"REQUESTS_CA_BUNDLE": "/etc/ca.pem"}, False),
    (True, {}, True),
    (True, {"SSL_CERT_FILE": "/etc/private-ca.pem"}, "/etc/private-ca.pem"),
    (True, {"REQUESTS_CA_BUNDLE": "/etc/a.pem", "SSL_CERT_FILE": "/etc/b.pem"}, "/etc/a.pem"),
])
def test_certificate_verification_follows_validate_certs(monkeypatch, validate_certs, env, expected):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    session = client({}, validate_certs=validate_certs)[1]
    assert session.calls[0]["verify"] == expected


def test_tls_and_network_errors_become_connection_failures():
    with pytest.raises(ConnectionFailure) as err:
        client({"POST /api/session": requests.exceptions.SSLError("certificate verify failed")})
    assert "TLS certificate of vCenter 127.0.0.1:8989 could not be verified" in err.value.message
    assert "validate_certs: false" in err.value.hint
    with pytest.raises(ConnectionFailure) as err:
        client({"POST /api/session": requests.exceptions.ConnectionError("refused")})
    assert "Could not reach vCenter 127.0.0.1:8989" in err.value.message


def test_vapi_errors_are_typed_and_keep_their_data():
    c = client({
        "GET /api/a": Response(404, vapi_error("NOT_FOUND", "There is no cluster domain-c99."), "Not Found"),
        "GET /api/b": Response(400, vapi_error("INVALID_ARGUMENT", "location is required."), "Bad Request"),
        "GET /api/c": Response(400, vapi_error("ALREADY_EXISTS", "Imported.", {"depot": "d-1"}), "Bad Request"),
        "GET /api/d": Response(500, None, "Internal Server Error"),
    })[0]
    with pytest.raises(NotFound) as err:
        c.get("/api/a")
    assert err.value.message == "vCenter 127.0.0.1:8989: GET /api/a failed: There is no cluster domain-c99."
    with pytest.raises(InputError):
        c.get("/api/b")
    with pytest.raises(ApiError) as err:
        c.get("/api/c")
    assert err.value.details["error_type"] == "ALREADY_EXISTS" and err.value.details["data"] == {"depot": "d-1"}
    with pytest.raises(ApiError) as err:
        c.get("/api/d")
    assert "HTTP 500 Internal Server Error" in err.value.message


def test_an_expired_session_is_renewed_once():
    c, session = client({
        "POST /api/session": [Response(201, "sid-1"), Response(201, "sid-2")],
        "GET /api/x": [Response(401, vapi_error("UNAUTHENTICATED", "expired")), Response(200, {"ok": True})],
    })
    assert c.get("/api/x") == {"ok": True}
    assert [call["session"] for call in session.calls if call["path"] == "/api/x"] == ["sid-1", "sid-2"]


def task_info(status, completed=0, total=3, text="", result=None, error=None):
    info = {"status": status, "operation": "apply", "progress": {
        "total": total, "completed": completed, "message": {"id": "m", "default_message": text, "args": []}}}
    if result is not None:
        info["result"] = result
    if error is not None:
        info["error"] = error
    return Response(200, info)


class Clock:
    def __init__(self):
        self.now = 0.0
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def test_task_polling_backs_off_reports_progress_and_returns_the_result():
    polls = [task_info("RUNNING", i, text="host %d" % i) for i in range(6)]
    polls.append(task_info("SUCCEEDED", 3, result={"commit": "2"}))
    c, session = client({"POST /api/task?vmw-task=true": Response(202, "t-1"), "GET /api/cis/tasks/t-1": polls})
    seen, clock = [], Clock()
    task = c.start_task("POST", "/api/task?vmw-task=true", body={"a": 1})
    result = c.wait_task(task, 600, on_progress=lambda info, elapsed: seen.append(info["progress"]["completed"]),
                         sleep=clock.sleep, clock=clock)
    assert result == {"commit": "2"}
    assert seen == [0, 1, 2, 3, 4, 5, 3]
    assert len(clock.sleeps) == 6
    assert all(later > earlier for earlier, later in zip(clock.sleeps, clock.sleeps[1:]))
    assert 0.2 <= clock.sleeps[0] <= 0.3 and max(clock.sleeps) <= 5.0 * 1.2
    assert session.calls[1]["json"] == {"a": 1}


def test_failed_task_raises_with_the_vapi_error():
    error = vapi_error("ERROR", "Remediation of cluster gpu failed: host esxi-01 cannot enter maintenance mode.",
                       {"failed_hosts": ["host-1"]})
    c = client({"GET /api/cis/tasks/t-2": task_info("FAILED", error=error)})[0]
    with pytest.raises(TaskFailed) as err:
        c.wait_task("t-2", 60, what="Remediation of cluster gpu", sleep=lambda s: None)
    assert err.value.message == ("Remediation of cluster gpu failed: Remediation of cluster gpu failed: host esxi-01 "
                                 "cannot enter maintenance mode.")
    assert err.value.details["data"] == {"failed_hosts": ["host-1"]} and err.value.details["error_type"] == "ERROR"


def test_task_timeout_names_the_task_and_stops_polling():
    c, session = client({"GET /api/cis/tasks/t-3": task_info("RUNNING", 1)})
    clock = Clock()
    with pytest.raises(TimeoutExpired) as err:
        c.wait_task("t-3", 10, what="Remediation of cluster gpu", sleep=clock.sleep, clock=clock)
    assert "Remediation of cluster gpu was still RUNNING after 10 seconds" in err.value.message
    assert clock.now < 10 + 5.0 * 1.2 + 0.1
    polls = [call for call in session.calls if call["path"] == "/api/cis/tasks/t-3"]
    assert 5 <= len(polls) <= 20


def test_polling_intervals_stop_growing_at_the_maximum():
    polls = [task_info("RUNNING", 0)] * 30 + [task_info("SUCCEEDED", 3, result="done")]
    c = client({"GET /api/cis/tasks/t-4": polls})[0]
    clock = Clock()
    assert c.wait_task("t-4", 3600, sleep=clock.sleep, clock=clock) == "done"
    assert len(clock.sleeps) == 30
    assert all(rest.POLL_MAX * 0.8 <= pause <= rest.POLL_MAX * 1.2 for pause in clock.sleeps[-10:])


def test_the_last_pause_ends_at_the_deadline():
    c = client({"GET /api/cis/tasks/t-5": task_info("RUNNING", 1)})[0]
    clock = Clock()
    with pytest.raises(TimeoutExpired) as err:
        c.wait_task("t-5", 1, sleep=clock.sleep, clock=clock)
    assert err.value.details["task"] == "t-5" and "raise timeout" in err.value.hint
    assert clock.sleeps[-1] <= 1 - sum(clock.sleeps[:-1]) + 0.05 + 1e-9


def test_a_failed_task_without_an_error_says_so():
    c = client({"GET /api/cis/tasks/t-6": task_info("FAILED")})[0]
    with pytest.raises(TaskFailed) as err:
        c.wait_task("t-6", 60, sleep=lambda s: None)
    assert err.value.message == "vCenter task t-6 failed: no reason given"
    assert err.value.details["task"] == "t-6"


def test_run_task_starts_waits_and_returns_the_result():
    c, session = client({"POST /api/esx/x?vmw-task=true": Response(202, "t-7"),
                         "GET /api/cis/tasks/t-7": [task_info("RUNNING", 1), task_info("SUCCEEDED", result="7")]})
    seen = []
    result = c.run_task("POST", "/api/esx/x?vmw-task=true", body={"hosts": ["host-1"]},
                        on_progress=lambda info, elapsed: seen.append(info["status"]), what="Scan")
    assert result == "7" and seen == ["RUNNING", "SUCCEEDED"]
    assert [(call["method"], call["path"]) for call in session.calls] == [
        ("POST", "/api/session"), ("POST", "/api/esx/x?vmw-task=true"), ("GET", "/api/cis/tasks/t-7"),
        ("GET", "/api/cis/tasks/t-7")]
    assert session.calls[1]["json"] == {"hosts": ["host-1"]}


def test_a_task_start_without_a_task_id_is_an_error():
    c = client({"POST /api/esx/x?vmw-task=true": Response(200, {"not": "a task"})})[0]
    with pytest.raises(ApiError) as err:
        c.run_task("POST", "/api/esx/x?vmw-task=true")
    assert err.value.message == "vCenter 127.0.0.1:8989 answered POST /api/esx/x?vmw-task=true without a task id."


def test_a_session_refused_again_after_renewal_is_not_retried_forever():
    c, session = client({
        "POST /api/session": [Response(201, "sid-1"), Response(201, "sid-2")],
        "GET /api/x": Response(401, vapi_error("UNAUTHENTICATED", "This user has no privilege."), "Unauthorized"),
    })
    with pytest.raises(ApiError) as err:
        c.get("/api/x")
    assert "This user has no privilege." in err.value.message and err.value.details["status"] == 401
    assert [call["path"] for call in session.calls] == ["/api/session", "/api/x", "/api/session", "/api/x"]


class HtmlResponse(Response):
    def __init__(self):
        super(HtmlResponse, self).__init__(200)
        self.content = b"<html>proxy login</html>"

    def json(self):
        raise ValueError("Expecting value")


def test_a_slow_answer_and_an_answer_that_is_not_json():
    c = client({"GET /api/slow": requests.exceptions.ReadTimeout("read timed out"), "GET /api/html": HtmlResponse()})[0]
    with pytest.raises(ConnectionFailure) as err:
        c.get("/api/slow")
    assert err.value.message == "vCenter 127.0.0.1:8989 did not answer GET /api/slow within 60 seconds."
    with pytest.raises(ApiError) as err:
        c.get("/api/html")
    assert err.value.message == "vCenter 127.0.0.1:8989 answered GET /api/html with something that is not JSON."


def test_logging_out_is_best_effort():
    c, session = client({"DELETE /api/session": requests.exceptions.ConnectionError("gone")})
    c.close()
    assert c.session_id is None and rest.SESSION_HEADER not in session.headers
    c.close()
    assert [call["method"] for call in session.calls] == ["POST", "DELETE"]
