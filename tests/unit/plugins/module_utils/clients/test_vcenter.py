# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""VCenterClient: choosing hosts from one PropertyCollector read, task waits and retries, property waits, and
how faults and connection errors become typed errors."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import http.client as http_client
import socket
import ssl

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import (
    ApiError,
    ChangeInDoubt,
    ConnectionFailure,
    NotFound,
    TimeoutExpired,
)
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients import _vcenter
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient

pyVmomi = pytest.importorskip("pyVmomi")
vim, vmodl = pyVmomi.vim, pyVmomi.vmodl
PC = vmodl.query.PropertyCollector


class TreeClient(VCenterClient):
    """A client whose single read answers from a fixed tree: two datacenters, each with a 'gpu' cluster."""

    def __init__(self):  # no connection
        self.endpoint = "vc.test:443"
        self.reads = []
        dc1, dc2 = vim.Datacenter("datacenter-1"), vim.Datacenter("datacenter-2")
        folder1, folder2, sub = vim.Folder("group-h1"), vim.Folder("group-h2"), vim.Folder("group-h3")
        gpu1, gpu2 = vim.ClusterComputeResource("domain-c1"), vim.ClusterComputeResource("domain-c2")
        other, single = vim.ClusterComputeResource("domain-c3"), vim.ComputeResource("domain-s1")

        def host(moid, name, parent):
            return {"obj": vim.HostSystem(moid), "moid": moid, "name": name, "parent": parent,
                    "runtime.inMaintenanceMode": False}

        self.tree = {
            vim.HostSystem: [host("host-3", "esxi-03", gpu1), host("host-1", "esxi-01", gpu1),
                             host("host-5", "esxi-05", gpu2), host("host-7", "esxi-07", other),
                             host("host-9", "esxi-sa", single)],
            vim.ComputeResource: [
                {"obj": gpu1, "moid": "domain-c1", "name": "gpu", "parent": folder1},
                {"obj": gpu2, "moid": "domain-c2", "name": "gpu", "parent": folder2},
                {"obj": other, "moid": "domain-c3", "name": "other", "parent": sub},
                {"obj": single, "moid": "domain-s1", "name": "esxi-sa", "parent": folder1},
            ],
            vim.Datacenter: [{"obj": dc1, "moid": "datacenter-1", "name": "dc-one"},
                             {"obj": dc2, "moid": "datacenter-2", "name": "dc-two"}],
            vim.Folder: [{"obj": folder1, "moid": "group-h1", "parent": dc1},
                         {"obj": folder2, "moid": "group-h2", "parent": dc2},
                         {"obj": sub, "moid": "group-h3", "parent": folder1}],
        }

    def retrieve(self, specs, root=None):
        self.reads.append(dict(specs))
        return dict((vim_type, [dict(item) for item in self.tree[vim_type]]) for vim_type in specs)


def _names(items):
    return [(item["name"], item["cluster"], item["datacenter"]) for item in items]


def test_one_read_with_the_asked_properties_and_places():
    client = TreeClient()
    items = client.hosts(["runtime.inMaintenanceMode"], cluster="gpu", datacenter="dc-one")
    assert _names(items) == [("esxi-01", "gpu", "dc-one"), ("esxi-03", "gpu", "dc-one")]
    assert len(client.reads) == 1
    assert client.reads[0][vim.HostSystem] == ["name", "parent", "runtime.inMaintenanceMode"]


def test_all_hosts_sorted_with_nested_folders_and_standalone_hosts():
    assert _names(TreeClient().hosts([])) == [
        ("esxi-01", "gpu", "dc-one"), ("esxi-03", "gpu", "dc-one"), ("esxi-05", "gpu", "dc-two"),
        ("esxi-07", "other", "dc-one"), ("esxi-sa", None, "dc-one")]


def test_names_keep_their_order_and_duplicates_collapse():
    items = TreeClient().hosts([], esxi_hostnames=["esxi-sa", "esxi-01", "esxi-sa"])
    assert [item["name"] for item in items] == ["esxi-sa", "esxi-01"]


@pytest.mark.parametrize("options, words", [
    ({"cluster": "gpu"}, ["ambiguous", "dc-one, dc-two", "datacenter option"]),
    ({"cluster": "nope"}, ["Cluster 'nope' was not found", "Known clusters: gpu, other"]),
    ({"datacenter": "dc-x"}, ["Datacenter 'dc-x'", "dc-one, dc-two"]),
    ({"cluster": "other", "esxi_hostnames": ["esxi-01"]},
     ["not found in cluster 'other': esxi-01", "Known hosts: esxi-07"]),
    ({"esxi_hostnames": ["esxi-99"]}, ["esxi-99", "esxi-01"]),
])
def test_unknown_or_ambiguous_names_fail_listing_what_exists(options, words):
    with pytest.raises(NotFound) as err:
        TreeClient().hosts([], **options)
    for word in words:
        assert word in str(err.value)


# ---- task and property waits ------------------------------------------------------------------------------------


class FakeCollector:
    """A PropertyCollector answering WaitForUpdatesEx from a script of updates.

    Each script entry is None (the wait ran out with no change) or a list of ``(moid, {property: value})``, sent as
    pyVmomi's own UpdateSet. ``answer`` builds the next entry from the filter instead, when the script is empty.
    """

    def __init__(self, log, script=(), answer=None):
        self.log, self.script, self.answer = log, list(script), answer
        self.objects, self.paths, self.waits, self.destroyed = [], [], [], False

    def CreateFilter(self, spec, partialUpdates):
        assert partialUpdates is True
        self.objects = [obj_spec.obj for obj_spec in spec.objectSet]
        self.paths = list(spec.propSet[0].pathSet)
        self.log.append(("filter", [obj._moId for obj in self.objects]))

    def WaitForUpdatesEx(self, version, options):
        self.waits.append((version, options.maxWaitSeconds))
        entry = self.script.pop(0) if self.script else self.answer(self.objects)
        if entry is None:
            return None
        by_moid = dict((obj._moId, obj) for obj in self.objects)
        return PC.UpdateSet(version=str(len(self.waits)), filterSet=[PC.FilterUpdate(
            filter=PC.Filter("filter-1"),
            objectSet=[PC.ObjectUpdate(kind="modify", obj=by_moid[moid], changeSet=[
                PC.Change(name=name, op="assign", val=value) for name, value in changes.items()])
                for moid, changes in entry])])

    def DestroyPropertyCollector(self):
        self.destroyed = True


class WaitClient(VCenterClient):
    """A client without a connection whose property collectors are FakeCollectors."""

    def __init__(self, script=(), answer=None):  # no connection
        self.endpoint = "vc.test:443"
        self.retried = 0
        self.log = []
        self.collectors = []
        self.script, self.answer = script, answer
        self.content = self
        self.propertyCollector = self

    def CreatePropertyCollector(self):
        self.collectors.append(FakeCollector(self.log, self.script, self.answer))
        return self.collectors[-1]


class Clock:
    """Stands for the time module: every reading is ``step`` seconds after the one before."""

    def __init__(self, step):
        self.now, self.step = 1000.0, step

    def monotonic(self):
        self.now += self.step
        return self.now


def _done(state="success", error=None, result=None):
    return {"info.state": state, "info.error": error, "info.result": result}


def test_tasks_are_awaited_together_and_reported_in_their_order():
    tasks = [vim.Task("task-1"), vim.Task("task-2")]
    fault = vim.fault.InvalidPowerState(msg="The VM is powered on.")
    client = WaitClient(script=[
        [("task-2", _done(result="vm-9")), ("task-1", {"info.state": "running"})],
        None,
        [("task-1", {"info.state": "error", "info.error": fault})],
    ])
    outcomes = client.wait_for_tasks(tasks, timeout=300)
    assert outcomes == [
        {"state": "error", "result": None, "error": "The VM is powered on.", "fault": "InvalidPowerState"},
        {"state": "success", "result": "vm-9", "error": None, "fault": None},
    ]
    collector = client.collectors[0]
    assert client.log == [("filter", ["task-1", "task-2"])]
    assert collector.paths == ["info.state", "info.error", "info.result"]
    assert [version for version, seconds in collector.waits] == ["", "1", "1"]
    assert all(seconds == 60 for version, seconds in collector.waits)
    assert collector.destroyed


def test_no_tasks_need_no_collector():
    client = WaitClient()
    assert client.wait_for_tasks([]) == [] and client.wait_for_values([], "runtime.powerState", ["on"], 5) == []
    assert client.collectors == []


def test_tasks_still_running_at_the_deadline_time_out_and_the_collector_is_destroyed(monkeypatch):
    monkeypatch.setattr(_vcenter, "time", Clock(step=2))
    client = WaitClient(answer=lambda objects: [("task-2", _done())])
    with pytest.raises(TimeoutExpired, match="1 of 2 vCenter tasks were still running after 5 seconds"):
        client.wait_for_tasks([vim.Task("task-1"), vim.Task("task-2")], timeout=5)
    collector = client.collectors[0]
    assert collector.destroyed
    assert [seconds for version, seconds in collector.waits] == [3, 1], "never past the deadline, never 0"


def test_run_tasks_starts_parallel_at_a_time_and_a_starter_that_fails_does_not_stop_the_others():
    failing = {"task-3": vmodl.fault.SystemError(reason="disk", faultMessage=[
        vmodl.LocalizableMessage(key="k", message="No space left on the datastore.")])}
    client = WaitClient(answer=lambda objects: [
        (obj._moId, _done("error", failing[obj._moId]) if obj._moId in failing else _done(result=obj._moId))
        for obj in objects])

    def starter(number):
        def start():
            client.log.append(("start", number))
            if number == 2:
                raise ApiError("vCenter vc.test:443 answered InvalidState: busy", fault="InvalidState")
            return vim.Task("task-%d" % number)
        return start

    outcomes = client.run_tasks([starter(number) for number in range(1, 6)], parallel=2, timeout=60)
    assert client.log == [("start", 1), ("start", 2), ("filter", ["task-1"]),
                          ("start", 3), ("start", 4), ("filter", ["task-3", "task-4"]),
                          ("start", 5), ("filter", ["task-5"])]
    assert [(outcome["state"], outcome["fault"]) for outcome in outcomes] == [
        ("success", None), ("error", "InvalidState"), ("error", "SystemError"), ("success", None),
        ("success", None)]
    assert outcomes[1]["error"] == "vCenter vc.test:443 answered InvalidState: busy"
    assert outcomes[2]["error"] == "No space left on the datastore."
    assert [outcome["result"] for outcome in outcomes] == ["task-1", None, None, "task-4", "task-5"]
    assert all(collector.destroyed for collector in client.collectors)


def test_a_failed_start_without_a_fault_detail_is_named_by_its_error_type():
    def start():
        raise ConnectionFailure("Lost the connection to vCenter vc.test:443: reset.")

    outcome = WaitClient().run_tasks([start], parallel=0)[0]
    assert outcome == {"state": "error", "result": None, "fault": "ConnectionFailure",
                       "error": "Lost the connection to vCenter vc.test:443: reset."}


def test_wait_for_values_returns_the_objects_that_did_not_get_there(monkeypatch):
    monkeypatch.setattr(_vcenter, "time", Clock(step=1))
    vms = [vim.VirtualMachine("vm-1"), vim.VirtualMachine("vm-2"), vim.VirtualMachine("vm-3")]
    client = WaitClient(script=[
        [("vm-1", {"runtime.powerState": "poweredOn"}), ("vm-2", {"runtime.powerState": "poweredOff"})],
        [("vm-1", {"runtime.powerState": "poweredOff"}), ("vm-3", {"runtime.powerState": "suspended"})],
    ], answer=lambda objects: None)
    assert client.wait_for_values(vms, "runtime.powerState", ["poweredOff"], timeout=10) == ["vm-3"]
    collector = client.collectors[0]
    assert collector.paths == ["runtime.powerState"] and collector.destroyed
    assert len(collector.waits) > 2, "kept waiting for vm-3 until the deadline"


def test_wait_for_values_stops_as_soon_as_every_object_is_there():
    client = WaitClient(script=[[("vm-1", {"runtime.powerState": "poweredOff"})]])
    assert client.wait_for_values([vim.VirtualMachine("vm-1")], "runtime.powerState", ["poweredOff"], 600) == []
    assert len(client.collectors[0].waits) == 1


# ---- faults and connection errors -------------------------------------------------------------------------------


def _raise(error):
    raise error


def _verify_error(message):
    """An SSLCertVerificationError as the ssl module raises it, with the reason in ``verify_message``."""
    error = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    error.verify_message = message
    return error


@pytest.mark.parametrize("error, kind, words, fault", [
    (vim.fault.InvalidState(msg="The host is in maintenance mode."), ApiError,
     "vCenter vc.test:443 answered InvalidState: The host is in maintenance mode.", "InvalidState"),
    (vmodl.fault.SystemError(reason="x", faultMessage=[vmodl.LocalizableMessage(key="a", message="one"),
                                                       vmodl.LocalizableMessage(key="b", message="two")]),
     ApiError, "answered SystemError: one; two", "SystemError"),
    (vim.fault.NoPermission(), ApiError, "answered NoPermission: NoPermission", "NoPermission"),
    (socket.error("Connection reset by peer"), ChangeInDoubt,
     "Lost the connection to vCenter vc.test:443 while waiting for the answer to _raise (Connection reset by peer): "
     "the change may or may not have been applied, so it was not sent again. Run again:", None),
    (http_client.RemoteDisconnected("closed"), ConnectionFailure, "Lost the connection", None),
])
def test_call_turns_faults_and_lost_connections_into_typed_errors(error, kind, words, fault):
    with pytest.raises(kind) as err:
        WaitClient().call(_raise, error)
    assert words in str(err.value)
    assert err.value.details.get("fault") == fault


def test_call_passes_arguments_and_the_answer_through():
    assert WaitClient().call(lambda *args, **kwargs: (args, kwargs), 1, spec="s") == ((1,), {"spec": "s"})


@pytest.mark.parametrize("error, words", [
    (vim.fault.InvalidLogin(), ["refused the login of user 'admin'", "VMWARE_PASSWORD"]),
    (_verify_error("self-signed certificate"),
     ["could not be verified: self-signed certificate.", "validate_certs: false"]),
    (socket.gaierror(-2, "Name or service not known"), ["Could not reach vCenter vc.test:443", "hostname and port"]),
    (vmodl.fault.NotSupported(msg="Not a vCenter"), ["rejected the connection: Not a vCenter"]),
])
def test_connection_failures_say_what_to_check(monkeypatch, error, words):
    monkeypatch.setattr(_vcenter, "SmartConnect", lambda **kwargs: _raise(error))
    with pytest.raises(ConnectionFailure) as err:
        VCenterClient.from_params({"hostname": "vc.test", "username": "admin", "password": "secret", "port": 443,
                                   "validate_certs": True})
    for word in words:
        assert word in str(err.value)
    assert "secret" not in str(err.value)


def test_a_session_verifies_certificates_unless_told_not_to_and_logs_out_once(monkeypatch):
    connects, disconnects = [], []

    class Session:
        def RetrieveContent(self):
            return "content"

    def connect(**kwargs):
        connects.append(kwargs)
        return Session()

    monkeypatch.setattr(_vcenter, "SmartConnect", connect)
    monkeypatch.setattr(_vcenter, "Disconnect", disconnects.append)
    with VCenterClient("vc.test", "admin", "secret", port=8443) as client:
        assert client.content == "content"
    client.close()
    assert len(disconnects) == 1
    assert connects[0]["sslContext"].verify_mode == ssl.CERT_REQUIRED
    assert (connects[0]["host"], connects[0]["port"], connects[0]["disableSslCertValidation"]) == (
        "vc.test", 8443, False)
    VCenterClient("vc.test", "admin", "secret", validate_certs=False)
    assert connects[1]["sslContext"].verify_mode == ssl.CERT_NONE and connects[1]["disableSslCertValidation"]


class Flaky(object):
    """Stands for a pyVmomi method named ``name``: raises ``errors`` one per call, then answers."""

    def __init__(self, errors):
        self.errors, self.calls = list(errors), 0

    def method(self, name):
        def call(*args, **kwargs):
            self.calls += 1
            if self.errors:
                raise self.errors.pop(0)
            return "answer"

        info = type("Info", (), {"wsdlName": name})()
        managed = type("Managed", (), {"info": info})()

        def bound(*args, **kwargs):  # pyVmomi's bound methods hold their ManagedMethod in the closure
            return (managed, call(*args, **kwargs))[1]
        return bound


@pytest.fixture
def no_sleep(monkeypatch):
    slept = []
    monkeypatch.setattr(_vcenter.time, "sleep", slept.append)
    return slept


def test_a_read_whose_connection_drops_is_sent_again_with_growing_waits(no_sleep):
    flaky = Flaky([http_client.RemoteDisconnected("closed"), ConnectionResetError(104, "reset")])
    client = WaitClient()
    assert client.call(flaky.method("RetrievePropertiesEx")) == "answer"
    assert flaky.calls == 3 and client.retried == 2
    assert 0.4 <= no_sleep[0] <= 0.6 and 0.8 <= no_sleep[1] <= 1.2


def test_a_read_that_keeps_failing_gives_up_after_four_attempts(no_sleep):
    flaky = Flaky([ConnectionResetError(104, "reset")] * 10)
    with pytest.raises(ConnectionFailure) as err:
        WaitClient().call(flaky.method("RetrievePropertiesEx"))
    assert flaky.calls == 4 and "4 attempts" in str(err.value)


def test_a_change_the_proxy_refused_with_503_is_sent_again(no_sleep):
    flaky = Flaky([http_client.HTTPException("503 Service Unavailable")])
    assert WaitClient().call(flaky.method("ReconfigVM_Task")) == "answer" and flaky.calls == 2


def test_a_change_whose_answer_was_lost_is_not_sent_again(no_sleep):
    flaky = Flaky([http_client.RemoteDisconnected("closed")])
    with pytest.raises(ChangeInDoubt) as err:
        WaitClient().call(flaky.method("ReconfigVM_Task"))
    assert flaky.calls == 1 and no_sleep == []
    assert "answer to ReconfigVM_Task" in str(err.value)


def test_a_login_that_met_a_busy_proxy_is_tried_again(monkeypatch, no_sleep):
    answers = [vim.fault.HostConnectFault(msg="503 Service Unavailable"), "session"]

    class Session:
        def RetrieveContent(self):
            return "content"

    def connect(**kwargs):
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return Session()

    monkeypatch.setattr(_vcenter, "SmartConnect", connect)
    client = VCenterClient("vc.test", "admin", "secret")
    assert client.content == "content" and client.retried == 1 and len(no_sleep) == 1


def test_a_login_refused_by_a_closed_port_is_not_tried_again(monkeypatch, no_sleep):
    calls = []

    def connect(**kwargs):
        calls.append(kwargs)
        raise vim.fault.HostConnectFault(msg="[Errno 111] Connection refused")

    monkeypatch.setattr(_vcenter, "SmartConnect", connect)
    with pytest.raises(ConnectionFailure, match="Could not reach vCenter vc.test:443"):
        VCenterClient("vc.test", "admin", "secret")
    assert len(calls) == 1 and no_sleep == []
