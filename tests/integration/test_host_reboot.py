# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hosts whose passthrough change waits for a reboot: host_passthrough with reboot, host_maintenance state=rebooted.

The lab's esxi-31 here cannot rebind devices without a reboot (passthrough_needs_reboot) and takes 2 seconds to
reboot; hpc-cluster has DRS off, so a powered-on VM keeps the host from maintenance mode.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys
import time

import pytest
import yaml

from conftest import ROOT
from site_run import kill_tree
from vlcm_lab import host_variant_topology
from vsphere_direct import Direct

pytest.importorskip("pyVmomi")

HOST = "esxi-31.lab.local"
GPUS = ["0000:3b:00.0", "0000:5e:00.0", "0000:86:00.0", "0000:af:00.0"]


@pytest.fixture
def lab(labs, tmp_path_factory):
    path = host_variant_topology(tmp_path_factory.getbasetemp(), "reboot-topology.json", HOST,
                                 passthrough_needs_reboot=True, reboot_seconds=2)
    return labs(path, extra=("--no-bmc",))


def module(run_tasks, name, check=False, expect_failure=False, **options):
    return run_tasks([{"name": name, "gpuops.vgpu." + name: options}], check=check,
                     expect_failure=expect_failure).result(0)


def host_state(lab):
    return lab.host(HOST)


def passthru(lab):
    return dict((gpu["pci_id"], (gpu["passthru_enabled"], gpu["passthru_active"])) for gpu in host_state(lab)["gpus"])


def power_on(lab, vm):
    session = Direct(lab)
    try:
        session.power_on(vm)
    finally:
        session.close()


def test_passthrough_with_reboot_check_mode_change_and_rerun(lab, run_tasks):
    before = lab.state()
    predicted = module(run_tasks, "host_passthrough", check=True, esxi_hostnames=[HOST], models=["A100-40"],
                       reboot=True)
    assert predicted["changed"] is True
    assert predicted["hosts"][0]["rebooted"] is True and predicted["hosts"][0]["reboot_required"] is False
    assert lab.state() == before

    result = module(run_tasks, "host_passthrough", esxi_hostnames=[HOST], models=["A100-40"], reboot=True)
    host = host_state(lab)
    assert result["hosts"][0]["rebooted"] is True and result["hosts"][0]["reboot_pending_devices"] == []
    assert host["reboots"] == 1 and host["boot_time"] > before_host(before)["boot_time"]
    assert host["connection_state"] == "connected" and host["maintenance_mode"] is False
    assert passthru(lab) == dict((pci_id, (True, True)) for pci_id in GPUS)

    again = module(run_tasks, "host_passthrough", esxi_hostnames=[HOST], models=["A100-40"], reboot=True)
    assert again["changed"] is False and again["hosts"][0]["rebooted"] is False
    assert host_state(lab)["reboots"] == 1


def before_host(state):
    return [host for host in state["hosts"] if host["name"] == HOST][0]


def test_without_reboot_the_change_waits_and_the_host_is_not_rebooted(lab, run_tasks):
    boot = host_state(lab)["boot_time"]
    predicted = module(run_tasks, "host_passthrough", check=True, esxi_hostnames=[HOST], devices=GPUS[:2])
    assert predicted["hosts"][0]["reboot_pending_devices"] == GPUS[:2]
    result = module(run_tasks, "host_passthrough", esxi_hostnames=[HOST], devices=GPUS[:2])
    assert result["hosts"][0]["reboot_required"] is True and result["hosts"][0]["rebooted"] is False
    assert result["hosts"][0]["reboot_pending_devices"] == GPUS[:2]
    assert passthru(lab) == {GPUS[0]: (True, False), GPUS[1]: (True, False), GPUS[2]: (False, False),
                             GPUS[3]: (False, False)}
    assert host_state(lab)["boot_time"] == boot and host_state(lab)["reboots"] == 0

    # A later run with reboot allowed reboots for the change already made, though nothing else changes.
    later = module(run_tasks, "host_passthrough", esxi_hostnames=[HOST], devices=GPUS[:2], reboot=True)
    assert later["changed"] is True and later["hosts"][0]["changed_devices"] == []
    assert passthru(lab)[GPUS[0]] == (True, True) and host_state(lab)["reboots"] == 1


def test_a_vm_that_keeps_the_host_from_maintenance_mode_refuses_the_reboot_before_any_change(lab, run_tasks):
    power_on(lab, "pt-vm-02")
    before = lab.state()
    result = module(run_tasks, "host_passthrough", expect_failure=True, esxi_hostnames=[HOST], devices=GPUS[:2],
                    reboot=True)
    assert "keep them from it" in result["msg"] and "pt-vm-02" in result["msg"] and HOST in result["msg"]
    refused = module(run_tasks, "host_maintenance", expect_failure=True, esxi_hostnames=[HOST], state="rebooted")
    assert "pt-vm-02" in refused["msg"]
    assert lab.state() == before


def test_host_maintenance_reboots_and_restores_maintenance_mode(lab, run_tasks):
    boot = host_state(lab)["boot_time"]
    predicted = module(run_tasks, "host_maintenance", check=True, esxi_hostnames=[HOST], state="rebooted")
    assert predicted["hosts"][0]["rebooted"] is True and predicted["hosts"][0]["entered_maintenance"] is True
    assert host_state(lab)["reboots"] == 0

    result = module(run_tasks, "host_maintenance", esxi_hostnames=[HOST], state="rebooted")
    assert result["changed"] is True and result["hosts"][0]["after"]["maintenance_mode"] is False
    host = host_state(lab)
    assert host["reboots"] == 1 and host["boot_time"] > boot and host["maintenance_mode"] is False

    module(run_tasks, "host_maintenance", esxi_hostnames=[HOST], state="present")
    module(run_tasks, "host_maintenance", esxi_hostnames=[HOST], state="rebooted")
    host = host_state(lab)
    assert host["reboots"] == 2 and host["maintenance_mode"] is True


def test_a_host_that_does_not_come_back_in_time_fails_naming_it(lab, run_tasks):
    result = module(run_tasks, "host_maintenance", expect_failure=True, esxi_hostnames=[HOST], state="rebooted",
                    reboot_timeout=1)
    assert "Host %s did not come back from its reboot within 1 seconds" % HOST in result["msg"]
    assert "connection state now: notResponding" in result["msg"] and "left in maintenance mode" in result["msg"]
    deadline = time.time() + 10
    while host_state(lab)["connection_state"] != "connected" and time.time() < deadline:
        time.sleep(0.2)
    host = host_state(lab)
    assert host["reboots"] == 1 and host["maintenance_mode"] is True


def role(run_tasks, expect_failure=False, **variables):
    variables.update(gpu_passthrough_requests=[{"name": "pt-vm-01", "gpus": 2}], gpu_passthrough_power_on=False,
                     gpu_passthrough_nvlink_sets={HOST: [GPUS[:2], GPUS[2:]]}, gpu_passthrough_host_nvidia_smi=False)
    return run_tasks([{"name": "gpu_passthrough", "ansible.builtin.include_role": {"name": "gpuops.vgpu.gpu_passthrough"},
                       "vars": variables}], expect_failure=expect_failure)


def test_the_role_stops_at_the_host_unless_it_may_reboot_it(lab, run_tasks):
    stopped = role(run_tasks, expect_failure=True).failed
    message = json.dumps(stopped)
    assert "Passthrough waits for a reboot on %s (%s)" % (HOST, ", ".join(GPUS)) in message
    assert host_state(lab)["reboots"] == 0
    assert [vm["passthrough"] for vm in lab.state()["vms"] if vm["name"] == "pt-vm-01"] == [[]]

    role(run_tasks, gpu_passthrough_reboot_hosts=True)
    assert host_state(lab)["reboots"] == 1 and passthru(lab) == dict((pci_id, (True, True)) for pci_id in GPUS)
    held = [vm["passthrough"] for vm in lab.state()["vms"] if vm["name"] == "pt-vm-01"][0]
    assert sorted(device["id"] for device in held) == GPUS[:2]


def test_a_run_killed_during_the_reboot_leaves_a_record_and_the_next_takes_the_host_out(lab, run_tasks, tmp_path):
    """SIGKILL once the host is in maintenance mode for its reboot: vCenter keeps the record (owner
    host_passthrough); the next run, nothing waiting for a reboot any more, takes the host out and clears it."""
    play = [{"hosts": "localhost", "gather_facts": False,
             "module_defaults": {"group/gpuops.vgpu.vcenter": lab.connection},
             "tasks": [{"gpuops.vgpu.host_passthrough": {"esxi_hostnames": [HOST], "models": ["A100-40"],
                                                         "reboot": True}}]}]
    playbook = tmp_path / "killed.yml"
    playbook.write_text(yaml.safe_dump(play))
    proc = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), "ansible-playbook")] + lab.inventory_args
                            + [str(playbook)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True,
                            env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections")))
    deadline = time.monotonic() + 120
    while not host_state(lab)["maintenance_mode"] and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    kill_tree(proc.pid)
    proc.wait()
    host = host_state(lab)
    assert host["maintenance_mode"] is True, "killed while the host was in maintenance mode for its reboot"
    assert json.loads(host["custom_values"]["gpuops.vgpu.maintenance"])["owner"] == "host_passthrough"

    deadline = time.monotonic() + 60
    while host_state(lab)["connection_state"] != "connected" and time.monotonic() < deadline:  # a reboot under way
        time.sleep(0.2)
    result = module(run_tasks, "host_passthrough", esxi_hostnames=[HOST], models=["A100-40"], reboot=True)
    host = host_state(lab)
    # Killed before or after its reboot request: the host is rebooted now, or was, and taken out either way.
    assert result["changed"] is True and (result["hosts"][0]["left_maintenance"] or result["hosts"][0]["rebooted"])
    assert host["reboots"] == 1 and host["maintenance_mode"] is False
    assert not host["custom_values"].get("gpuops.vgpu.maintenance")
    assert passthru(lab) == dict((pci_id, (True, True)) for pci_id in GPUS)
    again = module(run_tasks, "host_passthrough", esxi_hostnames=[HOST], models=["A100-40"])
    assert again["changed"] is False and again["hosts"][0]["left_maintenance"] is False
