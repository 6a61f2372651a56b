# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""run_module(): the logic called as ``logic(client, params, check_mode)``, the result as Ansible gets it, its
warnings warned, errors turned into failures, and the client built lazily."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.module_utils import basic
from ansible.module_utils.basic import missing_required_lib
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import (
    MissingLibrary,
    NotFound,
    TaskFailed,
    keeping_warnings,
)
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import Host, run_module
from ansible_collections.gpuops.vgpu.tests.unit.plugins.modules.module_runner import record_warnings, run_main

SPEC = {"name": {"type": "str", "required": True}, "secret": {"type": "str", "no_log": True}}


@pytest.fixture
def tracebacks(monkeypatch):
    """Tracebacks kept in failures, as with ``-vvv`` (ansible-core before 2.19 always keeps them)."""
    try:
        from ansible.module_utils._internal import _traceback
    except ImportError:
        return
    monkeypatch.setattr(_traceback, "_is_traceback_enabled", lambda event: True)


def module_main(run, client=None):
    return lambda: run_module(SPEC, run, client=client, supports_check_mode=True)


class Client:
    """Counts how it is built, entered and closed, and what it was built from."""

    def __init__(self, events, params):
        self.events = events
        events.append(("built", params["name"]))

    def __enter__(self):
        self.events.append("entered")
        return self

    def __exit__(self, *exc_info):
        self.events.append(("closed", exc_info[0].__name__ if exc_info[0] else None))

    def read(self):
        self.events.append("read")
        return 42


def test_the_result_goes_through_with_changed_false_unless_set(capsys):
    seen = []

    def run(client, params, check_mode):
        seen.append((params["name"], check_mode))
        return {"hosts": ["esxi-01"]}

    code, result = run_main(module_main(run), {"name": "a"}, capsys, check_mode=True)
    assert code == 0 and seen == [("a", True)]
    assert result["hosts"] == ["esxi-01"] and result["changed"] is False
    code, result = run_main(module_main(lambda *handoff: {"changed": True}), {"name": "a"}, capsys)
    assert result["changed"] is True


def test_the_diff_is_returned_only_with_diff(capsys):
    def run(client, params, check_mode):
        return {"changed": True, "diff": {"before": {"a": 1}, "after": {"a": 2}}}

    assert "diff" not in run_main(module_main(run), {"name": "a"}, capsys)[1]
    assert run_main(module_main(run), {"name": "a"}, capsys, diff=True)[1]["diff"] == {
        "before": {"a": 1}, "after": {"a": 2}}
    assert "diff" not in run_main(module_main(lambda *handoff: {"diff": None}), {"name": "a"}, capsys, diff=True)[1]


def test_a_gpuops_error_fails_with_message_hint_and_details(capsys):
    def run(client, params, check_mode):
        raise TaskFailed("Host esxi-02 did not enter maintenance mode.", hint="Power off gpu-vm-04.",
                         hosts=[{"name": "esxi-02"}], blocking_vms={"esxi-02": ["gpu-vm-04"]}, fault=None)

    code, result = run_main(module_main(run), {"name": "a"}, capsys)
    assert code == 1 and result["failed"] is True
    assert result["msg"] == "Host esxi-02 did not enter maintenance mode. Power off gpu-vm-04."
    assert result["hosts"] == [{"name": "esxi-02"}] and result["blocking_vms"] == {"esxi-02": ["gpu-vm-04"]}
    assert "fault" not in result, "details without a value are left out"
    assert "exception" not in result


def test_a_failure_carries_the_diff_only_with_diff(capsys):
    def run(client, params, check_mode):
        raise TaskFailed("1 of 2 VMs failed.", vms=[], diff={"before": {"vm": 1}, "after": {"vm": 2}})

    assert "diff" not in run_main(module_main(run), {"name": "a"}, capsys)[1]
    code, result = run_main(module_main(run), {"name": "a"}, capsys, diff=True)
    assert code == 1 and result["diff"] == {"before": {"vm": 1}, "after": {"vm": 2}} and result["vms"] == []


def test_a_missing_library_says_which_and_keeps_the_import_error(capsys, tracebacks):
    def run(client, params, check_mode):
        raise MissingLibrary("pyvmomi", "Traceback ...\nModuleNotFoundError: No module named 'pyVmomi'")

    code, result = run_main(module_main(run), {"name": "a"}, capsys)
    assert code == 1 and result["msg"] == missing_required_lib("pyvmomi")
    assert "No module named 'pyVmomi'" in result["exception"]


def test_an_unexpected_error_keeps_its_traceback(capsys, tracebacks):
    def run(client, params, check_mode):
        return {}["missing"]

    code, result = run_main(module_main(run), {"name": "a"}, capsys)
    assert code == 1 and result["msg"] == "Unexpected error: KeyError: 'missing'"
    assert "Traceback" in result["exception"] and "in run" in result["exception"]


def test_bad_arguments_fail_before_run(capsys):
    calls = []
    code, result = run_main(module_main(lambda *args: calls.append(args)), {"nme": "a"}, capsys)
    assert code == 1 and calls == []
    assert "name" in result["msg"]


def test_the_client_is_built_at_its_first_use_from_the_params_and_closed(capsys):
    events = []

    def run(client, params, check_mode):
        events.append("run")
        return {"value": client.read() + client.read()}

    code, result = run_main(module_main(run, lambda params: Client(events, params)), {"name": "vc"}, capsys)
    assert result["value"] == 84
    assert events == ["run", ("built", "vc"), "entered", "read", "read", ("closed", None)]


def test_a_client_never_used_is_never_built(capsys):
    events = []
    run_main(module_main(lambda *handoff: {}, lambda params: Client(events, params)), {"name": "vc"}, capsys)
    assert events == []


def test_the_client_is_closed_when_run_fails(capsys):
    events = []

    def run(client, params, check_mode):
        client.read()
        raise NotFound("Cluster 'gpu' was not found.", hint="Known clusters: lab.")

    code, result = run_main(module_main(run, lambda params: Client(events, params)), {"name": "vc"}, capsys)
    assert code == 1 and result["msg"] == "Cluster 'gpu' was not found. Known clusters: lab."
    assert events == [("built", "vc"), "entered", "read", ("closed", "NotFound")]


def test_a_client_that_fails_to_connect_fails_the_module(capsys):
    def connect(params):
        raise NotFound("vCenter vc.test refused the login of user 'admin'.")

    code, result = run_main(module_main(lambda client, params, check_mode: client.read(), connect), {"name": "vc"},
                            capsys)
    assert code == 1 and result["msg"] == "vCenter vc.test refused the login of user 'admin'."


def test_no_log_values_stay_out_of_the_result(capsys):
    def run(client, params, check_mode):
        return {"echo": "token is %s" % params["secret"]}

    code, result = run_main(module_main(run), {"name": "a", "secret": "hunter2"}, capsys)
    assert "hunter2" not in str(result)


class FlakyClient(Client):
    """A client that had to send two requests again."""

    endpoint = "vc.test:443"

    def __init__(self, events, params):
        super(FlakyClient, self).__init__(events, params)
        self.retried = 0

    def read(self):
        self.retried += 2
        return 42


def test_requests_sent_again_are_warned_about_on_success_and_on_failure(capsys, monkeypatch):
    events, warnings = [], record_warnings(monkeypatch)

    def run(client, params, check_mode):
        return {"value": client.read()}

    def fail(client, params, check_mode):
        client.read()
        raise NotFound("No host esxi-09.", hint="Check the name.")

    def factory(params):
        return FlakyClient(events, params)

    code, result = run_main(module_main(run, client=factory), {"name": "a"}, capsys)
    assert code == 0 and result["value"] == 42
    assert warnings == ["2 request(s) to vc.test:443 were sent again after a lost connection or a busy answer "
                        "(503/429)."]
    code, result = run_main(module_main(fail, client=factory), {"name": "a"}, capsys)
    assert code == 1 and result["failed"] and len(warnings) == 2 and "sent again" in warnings[1]


def test_no_warning_when_no_request_was_sent_again(capsys, monkeypatch):
    events, warnings = [], record_warnings(monkeypatch)
    code, result = run_main(module_main(lambda client, params, check_mode: {"value": client.read()},
                                        client=lambda params: Client(events, params)), {"name": "a"}, capsys)
    assert code == 0 and warnings == []


def test_the_result_warnings_are_warned_not_returned_and_come_before_requests_sent_again(capsys, monkeypatch):
    events, warnings = [], record_warnings(monkeypatch)

    def run(client, params, check_mode):
        return {"value": client.read(), "warnings": ["first", "second"]}

    code, result = run_main(module_main(run, client=lambda params: FlakyClient(events, params)), {"name": "a"}, capsys)
    assert code == 0 and result["value"] == 42 and "warnings" not in result
    assert warnings == ["first", "second", "2 request(s) to vc.test:443 were sent again after a lost connection or a "
                        "busy answer (503/429)."]


def test_warnings_kept_before_a_failure_are_warned_with_it(capsys, monkeypatch):
    warnings = record_warnings(monkeypatch)

    def run(client, params, check_mode):
        found = ["Forced: gpu-vm-04 runs on it."]
        with keeping_warnings(found):
            found.append("Host esxi-02 waits for a restart.")
            raise TaskFailed("Host esxi-02 did not restart.")

    code, result = run_main(module_main(run), {"name": "a"}, capsys)
    assert code == 1 and result["msg"] == "Host esxi-02 did not restart."
    assert warnings == ["Forced: gpu-vm-04 runs on it.", "Host esxi-02 waits for a restart."]


def test_host_hands_the_logic_the_modules_commands(capsys, monkeypatch):
    seen = []
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, args, **kwargs: (0, " ".join(args), ""))
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, **kwargs: "/usr/bin/" + name)

    def run(client, params, check_mode):
        seen.append(isinstance(client, Host))
        return {"out": client.run_command(["echo", "hi"])[1], "path": client.get_bin_path("echo")}

    code, result = run_main(module_main(run, client=Host), {"name": "a"}, capsys)
    assert code == 0 and seen == [True] and result["out"] == "echo hi" and result["path"] == "/usr/bin/echo"
