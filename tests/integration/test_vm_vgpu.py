# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vm_vgpu against the lab vCenter; every assertion reads the lab's ground truth."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, labctl, start_lab
from vsphere_direct import Direct


def vm_vgpu(**options):
    return [{"name": "vm_vgpu", "gpuops.vgpu.vm_vgpu": options}]


def profiles(lab, name):
    return sorted(v["profile"] for v in lab.vm(name)["vgpus"])


@pytest.fixture(autouse=True)
def shared_direct_hosts(lab):
    direct = Direct(lab)
    try:
        for host in ("esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local"):
            direct.shared_direct(host)
    finally:
        direct.close()


def given(lab, vgpus=(), powered_on=()):
    """Set up with plain pyVmomi: the (VM, profile) vGPUs added, then the VMs powered on."""
    direct = Direct(lab)
    try:
        for vm, profile in vgpus:
            direct.add_vgpu(vm, profile)
        for vm in powered_on:
            direct.power_on(vm)
    finally:
        direct.close()


def test_check_mode_changes_nothing(lab, run_tasks):
    before = lab.state()
    run = run_tasks(vm_vgpu(profile="grid_p40-8q", vms=[{"name": "gpu-vm-01"}, {"name": "gpu-vm-02"}]), check=True,
                    diff=True)
    result = run.result(0)
    assert result["changed"] is True
    assert [vm["after"]["profiles"] for vm in result["vms"]] == [["grid_p40-8q"], ["grid_p40-8q"]]
    assert lab.state() == before


def test_add_then_idempotent(lab, run_tasks):
    result = run_tasks(vm_vgpu(profile="grid_p40-8q", vms=[{"name": "gpu-vm-01"}, {"name": "gpu-vm-02"}])).result(0)
    assert result["changed"] is True
    for name in ("gpu-vm-01", "gpu-vm-02"):
        vm = lab.vm(name)
        assert [v["profile"] for v in vm["vgpus"]] == ["grid_p40-8q"]
        assert vm["memory_reservation_locked_to_max"] is True
        assert vm["power_state"] == "poweredOff"
    again = run_tasks(vm_vgpu(profile="grid_p40-8q", vms=[{"name": "gpu-vm-01"}, {"name": "gpu-vm-02"}])).result(0)
    assert again["changed"] is False
    assert [vm["changed"] for vm in again["vms"]] == [False, False]


def test_diff_shows_before_and_after(lab, run_tasks):
    given(lab, vgpus=[("gpu-vm-01", "grid_p40-8q")])
    run = run_tasks(vm_vgpu(profile="grid_p40-4q", vms=[{"name": "gpu-vm-01"}]), diff=True, check=True)
    diff = run.result(0)["diff"]
    assert diff["before"]["gpu-vm-01"]["profiles"] == ["grid_p40-8q"]
    assert diff["after"]["gpu-vm-01"]["profiles"] == ["grid_p40-4q"]


def test_profile_change_leaves_one_device(lab, run_tasks):
    given(lab, vgpus=[("gpu-vm-01", "grid_p40-8q")])
    keys_before = [v["key"] for v in lab.vm("gpu-vm-01")["vgpus"]]
    run_tasks(vm_vgpu(vms=[{"name": "gpu-vm-01", "profile": "grid_p40-4q"}]))
    vm = lab.vm("gpu-vm-01")
    assert [v["profile"] for v in vm["vgpus"]] == ["grid_p40-4q"]
    assert len(keys_before) == 1


def test_multi_vgpu_and_back(lab, run_tasks):
    run_tasks(vm_vgpu(vms=[{"name": "gpu-vm-04", "profiles": ["grid_p40-12q", "grid_p40-12q"]}]))
    assert profiles(lab, "gpu-vm-04") == ["grid_p40-12q", "grid_p40-12q"]
    again = run_tasks(vm_vgpu(vms=[{"name": "gpu-vm-04", "profiles": ["grid_p40-12q", "grid_p40-12q"]}])).result(0)
    assert again["changed"] is False
    run_tasks(vm_vgpu(vms=[{"name": "gpu-vm-04", "profile": "grid_p40-12q"}]))
    assert profiles(lab, "gpu-vm-04") == ["grid_p40-12q"]


def test_absent_and_release(lab, run_tasks):
    given(lab, vgpus=[("gpu-vm-02", "grid_p40-8q")])
    run_tasks(vm_vgpu(state="absent", vms=[{"name": "gpu-vm-02"}]))
    vm = lab.vm("gpu-vm-02")
    assert vm["vgpus"] == [] and vm["memory_reservation_locked_to_max"] is True
    absent_again = run_tasks(vm_vgpu(state="absent", vms=[{"name": "gpu-vm-02"}])).result(0)
    assert absent_again["changed"] is False
    run_tasks(vm_vgpu(state="absent", release_memory_reservation=True, vms=[{"name": "gpu-vm-02"}]))
    vm = lab.vm("gpu-vm-02")
    assert vm["memory_reservation_locked_to_max"] is False and vm["memory_reservation_mb"] == 0


def test_lookup_by_uuid_and_moid(lab, run_tasks):
    truth = lab.vm("gpu-vm-05")
    run_tasks(vm_vgpu(profile="grid_p40-6q", vms=[{"uuid": truth["uuid"]}]))
    assert profiles(lab, "gpu-vm-05") == ["grid_p40-6q"]
    result = run_tasks(vm_vgpu(profile="grid_p40-6q", vms=[{"moid": truth["moid"]}])).result(0)
    assert result["changed"] is False and result["vms"][0]["name"] == "gpu-vm-05"


def test_power_on_places_the_vgpus(lab, run_tasks):
    options = dict(profile="grid_p40-6q", power_on=True, vms=[{"name": "gpu-vm-05"}])
    predicted = run_tasks(vm_vgpu(**options), check=True).result(0)
    assert predicted["changed"] is True and predicted["vms"][0]["after"]["power_state"] == "poweredOn"
    assert lab.vm("gpu-vm-05")["power_state"] == "poweredOff"
    result = run_tasks(vm_vgpu(**options)).result(0)
    vm = lab.vm("gpu-vm-05")
    assert result["changed"] is True and vm["power_state"] == "poweredOn"
    gpu = lab.host(vm["host"])["gpus"][0]
    assert vm["vgpus"][0]["gpu"] == gpu["pci_id"] and gpu["profile"] == "grid_p40-6q"
    assert run_tasks(vm_vgpu(**options)).result(0)["changed"] is False
    run_tasks(vm_vgpu(profile="grid_p40-6q", power="power_off", vms=[{"name": "gpu-vm-05", "state": "absent"}]))
    assert lab.vm("gpu-vm-05")["power_state"] == "poweredOn" and lab.vm("gpu-vm-05")["vgpus"] == []
    Direct(lab).power_off("gpu-vm-05")


def test_powered_on_vm_with_power_never_fails_before_any_change(lab, run_tasks):
    direct = Direct(lab)
    try:
        direct.power_on("gpu-vm-01")
    finally:
        direct.close()
    before = lab.state()
    run = run_tasks(vm_vgpu(profile="grid_p40-8q", vms=[{"name": "gpu-vm-03"}, {"name": "gpu-vm-01"}]),
                    expect_failure=True)
    message = run.result(0)["msg"]
    assert "gpu-vm-01" in message and "powered on" in message and "Nothing was changed" in message
    assert lab.state() == before


def test_shutdown_guest_changes_and_powers_back_on(lab, run_tasks):
    given(lab, vgpus=[("gpu-vm-01", "grid_p40-4q")], powered_on=["gpu-vm-01"])
    assert lab.vm("gpu-vm-01")["power_state"] == "poweredOn"
    result = run_tasks(vm_vgpu(profile="grid_p40-8q", power="shutdown_guest", shutdown_timeout=60,
                               vms=[{"name": "gpu-vm-01"}])).result(0)
    vm = lab.vm("gpu-vm-01")
    assert result["changed"] is True
    assert vm["power_state"] == "poweredOn"
    assert [v["profile"] for v in vm["vgpus"]] == ["grid_p40-8q"]
    assert vm["vgpus"][0]["gpu"] is not None, "powered on again, the vGPU runs on a GPU"
    gpu = lab.host(vm["host"])["gpus"][0]
    assert gpu["profile"] == "grid_p40-8q" and "gpu-vm-01" in gpu["vms"]


def test_guest_that_ignores_shutdown(lab, run_tasks):
    given(lab, vgpus=[("gpu-vm-01", "grid_p40-8q")], powered_on=["gpu-vm-01"])
    lab.add_fault(kind="shutdown_ignored", vm="gpu-vm-01")
    try:
        run = run_tasks(vm_vgpu(profile="grid_p40-4q", power="shutdown_guest", shutdown_timeout=2,
                                vms=[{"name": "gpu-vm-01"}]), expect_failure=True)
        entry = run.result(0)["vms"][0]
        assert "did not shut down within 2 s" in entry["error"] and entry["ended"] == "as it was"
        vm = lab.vm("gpu-vm-01")
        assert vm["power_state"] == "poweredOn" and [v["profile"] for v in vm["vgpus"]] == ["grid_p40-8q"]

        run_tasks(vm_vgpu(profile="grid_p40-4q", power="shutdown_guest", shutdown_timeout=2, hard_power_off=True,
                          vms=[{"name": "gpu-vm-01"}]))
        vm = lab.vm("gpu-vm-01")
        assert vm["power_state"] == "poweredOn" and [v["profile"] for v in vm["vgpus"]] == ["grid_p40-4q"]
    finally:
        lab.clear_faults()


@pytest.mark.parametrize("options, words", [
    ({"profile": "grid_p40-9q", "vms": [{"name": "gpu-vm-06"}]}, ["grid_p40-9q", "esxi-02.lab.local", "grid_p40-8q"]),
    ({"profile": "grid_t4-4c", "vms": [{"name": "gpu-vm-06"}]}, ["grid_t4-4c", "not supported"]),
    ({"profile": "grid_p40-8q", "vms": [{"name": "gpu-vm-06"}, {"name": "no-such-vm"}]}, ["no-such-vm", "Nothing was changed"]),
    ({"profile": "grid_p40-8q", "vms": [{"name": "gpu-vm-06"}], "datacenter": "no-dc"}, ["no-dc"]),
    ({"profile": "grid_p40-8q", "vms": [{"name": "gpu-vm-06"}], "parallel": 0}, ["parallel"]),
    ({"profile": "grid_p40-8q", "vms": [{"name": "gpu-vm-06"}], "power": "maybe"}, ["power", "maybe"]),
    ({"vms": [{"name": "gpu-vm-06"}]}, ["no profile"]),
])
def test_bad_input_fails_cleanly(lab, run_tasks, options, words):
    before = lab.state()
    run = run_tasks(vm_vgpu(**options), expect_failure=True)
    message = run.result(0)["msg"]
    for word in words:
        assert word in message, message
    assert lab.state() == before


def test_one_failed_reconfigure_does_not_stop_the_others(lab, run_tasks):
    lab.add_fault(kind="fail_reconfigure", vm="gpu-vm-08", count=1)
    try:
        run = run_tasks(vm_vgpu(profile="grid_p40-3q", vms=[{"name": n} for n in ("gpu-vm-07", "gpu-vm-08", "gpu-vm-09")]),
                        expect_failure=True)
    finally:
        lab.clear_faults()
    result = run.result(0)
    assert "gpu-vm-08" in result["msg"] and "1 of 3" in result["msg"]
    by_name = dict((vm["name"], vm) for vm in result["vms"])
    assert by_name["gpu-vm-08"]["ended"] == "as it was"
    assert profiles(lab, "gpu-vm-07") == profiles(lab, "gpu-vm-09") == ["grid_p40-3q"]
    assert profiles(lab, "gpu-vm-08") == []
    retry = run_tasks(vm_vgpu(profile="grid_p40-3q", vms=[{"name": n} for n in ("gpu-vm-07", "gpu-vm-08", "gpu-vm-09")]))
    assert [vm["changed"] for vm in retry.result(0)["vms"]] == [False, True, False]


def test_a_reconfigure_that_never_reached_vcenter_is_sent_again(lab, run_tasks):
    """The connection drops before vCenter reads the request: no task was queued, so the request is sent again."""
    names = ("gpu-vm-07", "gpu-vm-08", "gpu-vm-09")
    given(lab, vgpus=[(name, "grid_p40-3q") for name in names])
    lab.add_fault(kind="drop_connection", method="ReconfigVM_Task", count=1)
    lab.reset_stats()
    try:
        result = run_tasks(vm_vgpu(profile="grid_p40-2q", vms=[{"name": n} for n in names])).result(0)
    finally:
        lab.clear_faults()
    assert all(vm["error"] is None for vm in result["vms"])
    assert [profiles(lab, name) for name in names] == [["grid_p40-2q"]] * 3
    assert lab.stats()["by_method"]["ReconfigVM_Task"] == 4, "three reconfigures and the one sent again"
    assert run_tasks(vm_vgpu(profile="grid_p40-2q", vms=[{"name": n} for n in names])).result(0)["changed"] is False


def test_a_reconfigure_whose_answer_was_lost_is_read_back_and_not_sent_twice(lab, run_tasks):
    """vCenter queued the task and the answer was lost: the task is found among vCenter's recent tasks and awaited."""
    names = ("gpu-vm-07", "gpu-vm-08", "gpu-vm-09")
    given(lab, vgpus=[(name, "grid_p40-3q") for name in names], powered_on=names)
    lab.add_fault(kind="drop_answer", method="ReconfigVM_Task", count=1)
    lab.reset_stats()
    try:
        result = run_tasks(vm_vgpu(profile="grid_p40-2q", power="power_off", vms=[{"name": n} for n in names])).result(0)
    finally:
        lab.clear_faults()
    assert all(vm["error"] is None for vm in result["vms"])
    for name in names:
        vm = lab.vm(name)
        assert [v["profile"] for v in vm["vgpus"]] == ["grid_p40-2q"] and vm["power_state"] == "poweredOn"
        assert not vm["custom_values"].get("gpuops.vgpu.vm_vgpu.power")
    assert lab.stats()["by_method"]["ReconfigVM_Task"] == 3, "the reconfigure whose answer was lost is not resent"


def test_cross_check_with_community_vmware(lab, run_tasks):
    """An independent client reads the profile vm_vgpu set."""
    run_tasks(vm_vgpu(profile="grid_p40-2q", vms=[{"name": "gpu-vm-07"}]))
    conn = lab.connection
    run = run_tasks([{"name": "read", "community.vmware.vmware_guest_vgpu_info": {
        "hostname": conn["hostname"], "port": conn["port"], "username": conn["username"],
        "password": conn["password"], "validate_certs": False, "datacenter": "lab-dc", "name": "gpu-vm-07"}}])
    info = run.result(0)["vgpu"]
    assert [item["Vgpu"] for item in info] == ["grid_p40-2q"]


def test_move_to_a_planned_host(lab, run_tasks):
    assert lab.vm("gpu-vm-03")["host"] == "esxi-01.lab.local"
    options = dict(profile="grid_p40-2q", vms=[{"name": "gpu-vm-03", "host": "esxi-03.lab.local"}], power_on=True)
    predicted = run_tasks(vm_vgpu(**options), check=True).result(0)
    assert predicted["vms"][0]["after"]["host"] == "esxi-03.lab.local"
    assert lab.vm("gpu-vm-03")["host"] == "esxi-01.lab.local"
    result = run_tasks(vm_vgpu(**options)).result(0)
    vm = lab.vm("gpu-vm-03")
    assert result["vms"][0]["after"]["host"] == vm["host"] == "esxi-03.lab.local"
    assert vm["power_state"] == "poweredOn" and vm["vgpus"][0]["gpu"] is not None
    assert run_tasks(vm_vgpu(**options)).result(0)["changed"] is False


def test_move_to_a_host_without_the_profile_is_refused(lab, run_tasks):
    before = lab.state()
    run = run_tasks(vm_vgpu(profile="grid_p40-2q", vms=[{"name": "gpu-vm-06", "host": "esxi-11.lab.local"}]),
                    expect_failure=True)
    assert "esxi-11.lab.local" in run.result(0)["msg"] and "grid_p40-2q" in run.result(0)["msg"]
    assert lab.state() == before


def _soap_for(lab, run_tasks, names, profile):
    lab.reset_stats()
    result = run_tasks(vm_vgpu(profile=profile, vms=[{"name": n} for n in names])).result(0)
    return result, lab.stats()["soap_requests"]


def test_round_trips_scale(run_tasks, tmp_path):
    """≤ 3·N + a constant for N VMs that change; the same count for 5 or 40 VMs that need nothing."""
    topology = tmp_path / "forty.json"
    with open(str(topology), "w") as handle:
        subprocess.run([sys.executable, os.path.join(ROOT, "lab", "topologies", "generate.py"), "--hosts", "8",
                        "--gpus-per-host", "2", "--vms", "40"], stdout=handle, check=True)
    labctl("down")
    big = start_lab(topology=str(topology), extra=("--no-bmc",))
    counts = {}
    try:
        names = ["gpu-vm-%03d" % n for n in range(1, 41)]
        for label, subset in (("5", names[:5]), ("40", names)):
            result, counts["change %s" % label] = _soap_for(big, run_tasks, subset, "grid_p40-2q" if label == "5" else "grid_p40-1q")
            assert all(vm["changed"] for vm in result["vms"])
            result, counts["same %s" % label] = _soap_for(big, run_tasks, subset, "grid_p40-2q" if label == "5" else "grid_p40-1q")
            assert not result["changed"]
        truth = dict((vm["name"], vm) for vm in big.state()["vms"])
        assert all([v["profile"] for v in truth[n]["vgpus"]] == ["grid_p40-1q"] for n in names)
    finally:
        labctl("down")
        start_lab()
    print(json.dumps(counts))
    assert counts["same 5"] == counts["same 40"], counts
    constant = counts["same 40"]
    assert counts["change 40"] <= 3 * 40 + constant, counts


def test_a_vm_a_person_powered_on_and_off_since_the_record_stays_off_and_is_named(lab, run_tasks):
    """gpu-vm-05 and gpu-vm-06 ran and were left off by an interrupted run (their power records in vCenter); since
    then a person powered gpu-vm-06 on and off again (a VmPoweredOnEvent newer than the record, found through the
    event time filter). A run that asks for nothing powers gpu-vm-05 on with its recorded change and leaves
    gpu-vm-06 off, naming who powered it on and when; both records go."""
    given(lab, vgpus=[("gpu-vm-05", "grid_p40-2q"), ("gpu-vm-06", "grid_p40-2q")],
          powered_on=["gpu-vm-05", "gpu-vm-06"])
    want = {"state": "present", "profiles": ["grid_p40-4q"], "host": None}
    direct = Direct(lab)
    try:
        direct.left_off_by_an_interrupted_run("gpu-vm-05", want)
        direct.left_off_by_an_interrupted_run("gpu-vm-06", want)
        direct.power_on("gpu-vm-06")
        direct.power_off("gpu-vm-06")
    finally:
        direct.close()
    result = run_tasks(vm_vgpu(vms=[])).result(0)
    by_name = dict((entry["name"], entry) for entry in result["recovered"])
    assert by_name["gpu-vm-05"]["ended"] == "powered on"
    assert by_name["gpu-vm-06"]["ended"] == "left off"
    assert by_name["gpu-vm-06"]["why"].startswith("powered on by %s at " % lab.connection["username"])
    assert lab.vm("gpu-vm-05")["power_state"] == "poweredOn" and profiles(lab, "gpu-vm-05") == ["grid_p40-4q"]
    assert lab.vm("gpu-vm-06")["power_state"] == "poweredOff"
    assert not any(lab.vm(name)["custom_values"].get("gpuops.vgpu.vm_vgpu.power") for name in ("gpu-vm-05", "gpu-vm-06"))
