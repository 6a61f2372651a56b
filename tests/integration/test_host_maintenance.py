# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_maintenance against the lab vCenter, checked against the lab's ground truth.

gpu-cluster has fully automated DRS (vCenter moves powered-on VMs off a host); mixed-cluster is partially automated
and esxi-sa-01 is standalone with a powered-on VM, so both need the VMs moved first.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json

import pytest
from pyVmomi import vim

from vsphere_direct import Direct

CLUSTER_HOSTS = ["esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local"]


def maintenance(run_tasks, check=False, diff=False, expect_failure=False, **options):
    run = run_tasks([{"name": "host_maintenance", "gpuops.vgpu.host_maintenance": options}], check=check, diff=diff,
                    expect_failure=expect_failure)
    return run.result(0)


def in_maintenance(lab):
    return dict((host["name"], host["maintenance_mode"]) for host in lab.state()["hosts"])


def direct(lab, *steps):
    """Run ``(method name, args...)`` steps of vsphere_direct.Direct on one connection."""
    session = Direct(lab)
    try:
        for step in steps:
            getattr(session, step[0])(*step[1:])
    finally:
        session.close()


def test_check_mode_predicts_and_changes_nothing(lab, run_tasks):
    before = lab.state()
    result = maintenance(run_tasks, check=True, esxi_hostnames=["esxi-02.lab.local"])
    assert result["changed"] is True
    assert result["hosts"] == [{"name": "esxi-02.lab.local", "changed": True, "before": {"maintenance_mode": False},
                                "after": {"maintenance_mode": True}}]
    assert lab.state() == before


def test_enter_and_exit_one_host(lab, run_tasks):
    start = in_maintenance(lab)
    result = maintenance(run_tasks, diff=True, esxi_hostnames=["esxi-02.lab.local"])
    assert result["changed"] is True
    assert result["diff"] == {"before": {"esxi-02.lab.local": {"maintenance_mode": False}},
                              "after": {"esxi-02.lab.local": {"maintenance_mode": True}}}
    assert in_maintenance(lab) == dict(start, **{"esxi-02.lab.local": True})
    assert maintenance(run_tasks, esxi_hostnames=["esxi-02.lab.local"])["changed"] is False

    assert maintenance(run_tasks, esxi_hostnames=["esxi-02.lab.local"], state="absent")["changed"] is True
    assert in_maintenance(lab) == start
    assert maintenance(run_tasks, esxi_hostnames=["esxi-02.lab.local"], state="absent")["changed"] is False


def test_fully_automated_drs_moves_a_powered_on_vm_away(lab, run_tasks):
    direct(lab, ("power_on", "gpu-vm-04"))
    assert lab.vm("gpu-vm-04")["host"] == "esxi-02.lab.local"
    maintenance(run_tasks, esxi_hostnames=["esxi-02.lab.local"])
    assert lab.host("esxi-02.lab.local")["maintenance_mode"] is True
    moved = lab.vm("gpu-vm-04")
    assert moved["power_state"] == "poweredOn"
    assert moved["host"] in ("esxi-01.lab.local", "esxi-03.lab.local")

    maintenance(run_tasks, esxi_hostnames=["esxi-02.lab.local"], state="absent")
    direct(lab, ("power_off", "gpu-vm-04"))
    assert lab.host("esxi-02.lab.local")["maintenance_mode"] is False


def test_vms_vcenter_cannot_move_fail_before_any_host_changes(lab, run_tasks):
    direct(lab, ("power_on", "mixed-vm-01"))
    before = lab.state()
    run = run_tasks([{"name": "host_maintenance", "gpuops.vgpu.host_maintenance": {
        "esxi_hostnames": ["esxi-01.lab.local", "esxi-11.lab.local", "esxi-sa-01.lab.local"]}}], expect_failure=True)
    message = run.result(0)["msg"]
    assert "esxi-11.lab.local: mixed-vm-01; esxi-sa-01.lab.local: standalone-vm-01" in message
    assert "esxi-01.lab.local:" not in message
    assert "no host was changed" in message
    assert lab.state() == before, "esxi-01 could enter, but nothing starts while another host is blocked"
    direct(lab, ("power_off", "mixed-vm-01"))


def test_one_by_one_stops_at_a_host_that_cannot_be_evacuated_and_says_what_is_done(lab, run_tasks):
    # A running vGPU VM moves only with vGPU vMotion, which the lab has off: vCenter refuses to evacuate esxi-03.
    direct(lab, ("shared_direct", "esxi-03.lab.local"), ("add_vgpu", "gpu-vm-07", "grid_p40-8q"),
           ("power_on", "gpu-vm-07"))
    run = run_tasks([{"name": "host_maintenance", "gpuops.vgpu.host_maintenance": {
        "esxi_hostnames": ["esxi-01.lab.local", "esxi-03.lab.local", "esxi-02.lab.local"]}}], expect_failure=True)
    result = run.result(0)
    assert "esxi-03.lab.local" in result["msg"] and "gpu-vm-07" in result["msg"]
    assert "Hosts done: esxi-01.lab.local; not started: esxi-02.lab.local" in result["msg"]
    assert result["blocking_vms"] == {"esxi-03.lab.local": ["gpu-vm-07"]}
    truth = in_maintenance(lab)
    assert (truth["esxi-01.lab.local"], truth["esxi-03.lab.local"], truth["esxi-02.lab.local"]) == (True, False, False)
    assert lab.vm("gpu-vm-07")["host"] == "esxi-03.lab.local"

    maintenance(run_tasks, esxi_hostnames=["esxi-01.lab.local"], state="absent")
    direct(lab, ("power_off", "gpu-vm-07"))


def test_parallel_takes_the_whole_cluster_in_and_out_together(lab, run_tasks):
    lab.reset_stats()
    result = maintenance(run_tasks, cluster="gpu-cluster", parallel=True, timeout=120)
    assert [host["changed"] for host in result["hosts"]] == [True, True, True]
    assert [in_maintenance(lab)[name] for name in CLUSTER_HOSTS] == [True, True, True]
    stats = lab.stats()["by_method"]
    assert stats["EnterMaintenanceMode_Task"] == 3
    assert stats["CreatePropertyCollector"] == 1, "the three tasks are awaited together"

    result = maintenance(run_tasks, cluster="gpu-cluster", state="absent", parallel=True)
    assert [host["changed"] for host in result["hosts"]] == [True, True, True]
    assert [in_maintenance(lab)[name] for name in CLUSTER_HOSTS] == [False, False, False]


@pytest.mark.parametrize("options, words", [
    ({"esxi_hostnames": ["esxi-99.lab.local"]}, ["esxi-99.lab.local", "esxi-01.lab.local"]),
    ({"cluster": "no-such-cluster"}, ["no-such-cluster", "gpu-cluster"]),
    ({"cluster": "gpu-cluster", "state": "maintenance"}, ["state", "present, absent"]),
    ({"cluster": "gpu-cluster", "timeout": 0}, ["timeout", "at least 1"]),
    ({"state": "present"}, ["cluster", "esxi_hostnames"]),
])
def test_bad_input_fails_clearly_and_changes_nothing(lab, run_tasks, options, words):
    before = lab.state()
    run = run_tasks([{"name": "host_maintenance", "gpuops.vgpu.host_maintenance": options}], expect_failure=True)
    for word in words:
        assert word in run.result(0)["msg"]
    assert lab.state() == before


FIELD = "gpuops.vgpu.maintenance"


def records(lab):
    """Host name to the owner its maintenance record names."""
    found = {}
    for host in lab.state()["hosts"]:
        raw = (host.get("custom_values") or {}).get(FIELD)
        if raw:
            found[host["name"]] = json.loads(raw)["owner"]
    return found


def test_an_owner_takes_out_only_the_hosts_it_put_in(lab, run_tasks):
    """bios puts esxi-02 in; a person put esxi-03 in before. bios's exit takes out esxi-02 alone, and clears its
    record; the record is in vCenter, where a run from any controller finds it."""
    maintenance(run_tasks, esxi_hostnames=["esxi-03.lab.local"])
    entered = maintenance(run_tasks, esxi_hostnames=["esxi-02.lab.local", "esxi-03.lab.local"], owner="bios",
                          run_id="run-1")
    assert [host["maintenance_owner"] for host in entered["hosts"]] == ["bios", None]
    assert records(lab) == {"esxi-02.lab.local": "bios"}
    raw = json.loads(lab.host("esxi-02.lab.local")["custom_values"][FIELD])
    assert raw["run"] == "run-1" and raw["v"] == 1 and raw["at"].endswith("Z")

    planned = maintenance(run_tasks, check=True, cluster="gpu-cluster", state="absent", owner="bios")
    assert [host["name"] for host in planned["hosts"] if host["changed"]] == ["esxi-02.lab.local"]
    assert planned["kept"] == ["esxi-03.lab.local"] and records(lab) == {"esxi-02.lab.local": "bios"}

    left = maintenance(run_tasks, cluster="gpu-cluster", state="absent", owner="bios")
    assert left["kept"] == ["esxi-03.lab.local"] and left["records_cleared"] == []
    assert in_maintenance(lab)["esxi-02.lab.local"] is False and in_maintenance(lab)["esxi-03.lab.local"] is True
    assert records(lab) == {}
    assert maintenance(run_tasks, cluster="gpu-cluster", state="absent", owner="bios")["changed"] is False
    maintenance(run_tasks, esxi_hostnames=["esxi-03.lab.local"], state="absent")


def test_a_record_left_on_a_host_out_of_maintenance_mode_is_cleared(lab, run_tasks):
    maintenance(run_tasks, esxi_hostnames=["esxi-02.lab.local"], owner="bios")
    maintenance(run_tasks, esxi_hostnames=["esxi-02.lab.local"], state="absent")  # a person, without the owner
    assert records(lab) == {"esxi-02.lab.local": "bios"}
    result = maintenance(run_tasks, esxi_hostnames=["esxi-02.lab.local"], state="absent", owner="bios")
    assert result["changed"] is True and result["records_cleared"] == ["esxi-02.lab.local"]
    assert records(lab) == {} and in_maintenance(lab)["esxi-02.lab.local"] is False


@pytest.mark.parametrize("value, words", [
    ('{"v": 1, "owner": "bios"', "not a complete record"),
    (json.dumps({"v": 1, "owner": "bios", "run": "r", "by": "b", "vcenter": "another-vcenter",
                 "at": "2026-11-29T08:00:00.000000Z"}), "it was taken on vCenter another-vcenter"),
])
def test_a_record_that_cannot_be_trusted_fails_before_any_change(lab, run_tasks, value, words):
    direct(lab, ("set_host_field", "esxi-02.lab.local", FIELD, value))
    before = in_maintenance(lab)
    result = maintenance(run_tasks, expect_failure=True, cluster="gpu-cluster", owner="bios")
    assert ("Nothing was changed: the maintenance record (custom attribute %s) of host esxi-02.lab.local cannot be "
            "trusted: " % FIELD) in result["msg"] and words in result["msg"]
    assert in_maintenance(lab) == before
    direct(lab, ("set_host_field", "esxi-02.lab.local", FIELD, ""))


MAINTENANCE_EVENTS = ["EnteringMaintenanceModeEvent", "EnteredMaintenanceModeEvent", "ExitMaintenanceModeEvent"]


def test_maintenance_mode_events_look_as_vcenters(lab):
    """pyVmomi reads the lab's maintenance mode events as it reads vCenter's: their types, the host, cluster and
    datacenter they name, the user of the session that asked, and a time filter that leaves out older ones."""
    session = Direct(lab)
    try:
        host = session.host("esxi-03.lab.local")
        start = session.si.CurrentTime()
        session.enter_maintenance("esxi-03.lab.local")
        session.exit_maintenance("esxi-03.lab.local")
        events = session.events(host, MAINTENANCE_EVENTS, time=vim.event.EventFilterSpec.ByTime(beginTime=start))
        assert [type(event).__name__ for event in events] == [
            "vim.event.EnteringMaintenanceModeEvent", "vim.event.EnteredMaintenanceModeEvent",
            "vim.event.ExitMaintenanceModeEvent"]
        for event in events:
            assert isinstance(event, vim.event.HostEvent)
            assert event.userName == lab.connection["username"]
            assert event.host.host._moId == host._moId and event.host.name == "esxi-03.lab.local"
            assert event.computeResource.name == "gpu-cluster" and event.datacenter.name
            assert "esxi-03.lab.local" in event.fullFormattedMessage and event.createdTime >= start
        later = events[-1].createdTime + datetime.timedelta(microseconds=1)
        assert session.events(host, MAINTENANCE_EVENTS, time=vim.event.EventFilterSpec.ByTime(beginTime=later)) == []
        older = session.events(host, MAINTENANCE_EVENTS, time=vim.event.EventFilterSpec.ByTime(endTime=start))
        assert all(event.createdTime <= start for event in older)
        assert session.events(host, MAINTENANCE_EVENTS, userName=vim.event.EventFilterSpec.ByUsername(
            systemUser=True, userList=["nobody"])) == []
        other = session.host("esxi-01.lab.local")
        assert session.events(other, MAINTENANCE_EVENTS, time=vim.event.EventFilterSpec.ByTime(beginTime=start)) == []
    finally:
        session.close()
    assert lab.host("esxi-03.lab.local")["maintenance_mode"] is False


def test_a_host_a_person_took_out_since_the_record_is_left_as_they_left_it(lab, run_tasks):
    """bios put esxi-02 and esxi-03 in maintenance mode; since then a person took esxi-02 out and put it back in,
    and took esxi-03 out. bios's exit leaves both as the person left them, clears the records and names them; a
    host the person did not touch (esxi-01) comes out as before."""
    maintenance(run_tasks, esxi_hostnames=CLUSTER_HOSTS, owner="bios", run_id="run-7")
    assert records(lab) == dict((name, "bios") for name in CLUSTER_HOSTS)
    direct(lab, ("exit_maintenance", "esxi-02.lab.local"), ("enter_maintenance", "esxi-02.lab.local"),
           ("exit_maintenance", "esxi-03.lab.local"))

    planned = maintenance(run_tasks, check=True, cluster="gpu-cluster", state="absent", owner="bios")
    assert [host["name"] for host in planned["hosts"] if host["changed"]] == ["esxi-01.lab.local"]
    assert records(lab) == dict((name, "bios") for name in CLUSTER_HOSTS)

    left = maintenance(run_tasks, cluster="gpu-cluster", state="absent", owner="bios")
    assert in_maintenance(lab)["esxi-01.lab.local"] is False
    assert in_maintenance(lab)["esxi-02.lab.local"] is True and in_maintenance(lab)["esxi-03.lab.local"] is False
    assert records(lab) == {}
    assert [(found["name"], found["maintenance_mode"], found["by"]) for found in left["changed_by_person"]] == [
        ("esxi-02.lab.local", True, lab.connection["username"]),
        ("esxi-03.lab.local", False, lab.connection["username"])]
    assert all(found["at"].endswith("Z") for found in left["changed_by_person"])
    assert left["records_cleared"] == ["esxi-02.lab.local", "esxi-03.lab.local"]
    assert [host["name"] for host in left["hosts"] if host["changed"]] == ["esxi-01.lab.local"]
    again = maintenance(run_tasks, cluster="gpu-cluster", state="absent", owner="bios")
    assert again["changed"] is False and again["changed_by_person"] == []
    direct(lab, ("exit_maintenance", "esxi-02.lab.local"))
