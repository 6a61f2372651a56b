# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_maintenance: who blocks a host, one host at a time or all at once, and what a failure says."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _host_maintenance as hm
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError, TaskFailed

vim = pytest.importorskip("pyVmomi").vim


class FakeHost:
    def __init__(self, lab, name):
        self.lab, self.name = lab, name

    def EnterMaintenanceMode_Task(self, timeout, evacuatePoweredOffVms):
        self.lab.started.append(("enter", self.name, timeout, evacuatePoweredOffVms))
        return self.name

    def ExitMaintenanceMode_Task(self, timeout):
        self.lab.started.append(("exit", self.name, timeout))
        return self.name


class FakeLab:
    """Hosts in a cluster (DRS as given) and a standalone one; tasks fail for the host names in ``failing``."""

    def __init__(self, drs_enabled=False, drs_behavior="fullyAutomated", failing=()):
        self.cluster = vim.ClusterComputeResource("domain-c7")
        self.standalone = vim.ComputeResource("domain-s9")
        self.configuration = vim.cluster.ConfigInfoEx(
            drsConfig=vim.cluster.DrsConfigInfo(enabled=drs_enabled, defaultVmBehavior=drs_behavior))
        self.vms = {"vm-1": ("gpu-vm-01", "poweredOn"), "vm-2": ("gpu-vm-02", "poweredOff"),
                    "vm-3": ("gpu-vm-03", "poweredOn"), "vm-4": ("sa-vm", "poweredOn")}
        self.items = [
            self._host("host-1", "esxi-01", self.cluster, ["vm-1", "vm-2"]),
            self._host("host-2", "esxi-02", self.cluster, ["vm-3"]),
            self._host("host-3", "esxi-03", self.cluster, []),
            self._host("host-9", "esxi-sa", self.standalone, ["vm-4"]),
        ]
        self.failing = failing
        self.started = []
        self.waits = []

    def _host(self, moid, name, parent, vms, maintenance=False):
        return {"obj": FakeHost(self, name), "moid": moid, "name": name, "parent": parent,
                "runtime.inMaintenanceMode": maintenance, "runtime.connectionState": "connected",
                "vm": [vim.VirtualMachine(vm) for vm in vms]}

    def hosts(self, properties, cluster=None, esxi_hostnames=None, datacenter=None):
        assert set(hm.HOST_PROPERTIES) <= set(properties)
        by_name = dict((item["name"], dict(item)) for item in self.items)
        if esxi_hostnames:
            return [by_name[name] for name in esxi_hostnames]
        return [item for item in by_name.values() if item["parent"] is self.cluster]

    def retrieve_objects(self, objects, properties):
        if properties == ["configurationEx"]:
            return [{"obj": obj, "moid": obj._moId, "configurationEx": self.configuration} for obj in objects]
        if properties == ["name", "vm"]:
            by_name = dict((item["name"], item) for item in self.items)
            return [dict(by_name[obj.name], obj=obj) for obj in objects]
        assert properties == ["name", "runtime.powerState"]
        return [{"obj": obj, "moid": obj._moId, "name": self.vms[obj._moId][0],
                 "runtime.powerState": self.vms[obj._moId][1]} for obj in objects]

    def call(self, method, *args, **kwargs):
        return method(*args, **kwargs)

    def run_tasks(self, starters, parallel=8, timeout=3600):
        self.waits.append((len(starters), parallel, timeout))
        outcomes = []
        for starter in starters:
            name = starter()
            if name in self.failing:
                outcomes.append({"state": "error", "result": None, "error": "the VMs cannot be moved",
                                 "fault": "Timedout"})
            else:
                outcomes.append({"state": "success", "result": None, "error": None, "fault": None})
        return outcomes


def _params(**options):
    params = dict(cluster=None, esxi_hostnames=None, datacenter=None, state="present", timeout=1800,
                  evacuate_powered_off_vms=False, parallel=False)
    params.update(options)
    return params


def test_powered_on_vms_block_hosts_vcenter_cannot_evacuate():
    lab = FakeLab(drs_enabled=True, drs_behavior="partiallyAutomated")
    with pytest.raises(InputError) as err:
        hm.converge(lab, _params(esxi_hostnames=["esxi-01", "esxi-02", "esxi-03", "esxi-sa"]), False)
    message = str(err.value)
    assert "esxi-01: gpu-vm-01; esxi-02: gpu-vm-03; esxi-sa: sa-vm" in message
    assert "gpu-vm-02" not in message, "powered-off VMs do not block"
    assert "no host was changed" in message
    assert lab.started == []


def test_evacuating_powered_off_vms_needs_drs_on():
    lab = FakeLab(drs_enabled=False)
    with pytest.raises(InputError) as err:
        hm.converge(lab, _params(esxi_hostnames=["esxi-01", "esxi-03"], evacuate_powered_off_vms=True), False)
    assert "esxi-01: gpu-vm-01, gpu-vm-02 (powered off)" in str(err.value)
    assert "esxi-03" not in str(err.value)
    manual = FakeLab(drs_enabled=True, drs_behavior="manual")
    with pytest.raises(InputError) as err:
        hm.converge(manual, _params(esxi_hostnames=["esxi-01"], evacuate_powered_off_vms=True), False)
    assert "esxi-01: gpu-vm-01." in str(err.value), "with DRS on, powered-off VMs are moved; powered-on ones still block"


def test_check_mode_fails_where_the_real_run_would():
    lab = FakeLab(drs_enabled=False)
    with pytest.raises(InputError, match="esxi-02: gpu-vm-03"):
        hm.converge(lab, _params(esxi_hostnames=["esxi-02"]), True)


def test_fully_automated_drs_moves_vms_so_hosts_go_one_by_one():
    lab = FakeLab(drs_enabled=True)
    result = hm.converge(lab, _params(cluster="gpu-cluster", timeout=300, evacuate_powered_off_vms=True), False)
    assert [entry[:2] for entry in lab.started] == [("enter", "esxi-01"), ("enter", "esxi-02"), ("enter", "esxi-03")]
    assert lab.started[0][2:] == (300, True)
    assert lab.waits == [(1, 1, 300 + hm.WAIT_GRACE)] * 3
    assert result["changed"] is True
    assert [host["after"] for host in result["hosts"]] == [{"maintenance_mode": True}] * 3
    assert set(result["diff"]["before"]) == {"esxi-01", "esxi-02", "esxi-03"}


def test_parallel_starts_every_host_and_waits_together():
    lab = FakeLab(drs_enabled=True)
    hm.converge(lab, _params(cluster="gpu-cluster", parallel=True), False)
    assert lab.waits == [(3, 3, 1800 + hm.WAIT_GRACE)]


def test_hosts_already_as_asked_are_left_alone():
    lab = FakeLab()
    lab.items[2]["runtime.inMaintenanceMode"] = True
    result = hm.converge(lab, _params(esxi_hostnames=["esxi-03"]), False)
    assert result["changed"] is False and lab.started == []
    assert result["hosts"] == [{"name": "esxi-03", "changed": False, "before": {"maintenance_mode": True},
                                "after": {"maintenance_mode": True}}]
    result = hm.converge(lab, _params(esxi_hostnames=["esxi-01", "esxi-03"], state="absent"), False)
    assert lab.started == [("exit", "esxi-03", 1800)]
    assert [host["changed"] for host in result["hosts"]] == [False, True]


def test_one_by_one_stops_at_the_first_failure_and_says_what_is_done():
    lab = FakeLab(drs_enabled=True, failing=("esxi-02",))
    with pytest.raises(TaskFailed) as err:
        hm.converge(lab, _params(cluster="gpu-cluster"), False)
    message = str(err.value)
    assert "esxi-02: the VMs cannot be moved (powered-on VMs on it: gpu-vm-03)" in message
    assert "Hosts done: esxi-01; not started: esxi-03" in message
    assert err.value.details["blocking_vms"] == {"esxi-02": ["gpu-vm-03"]}
    assert [entry[1] for entry in lab.started] == ["esxi-01", "esxi-02"]


def test_parallel_failures_are_reported_per_host():
    lab = FakeLab(drs_enabled=True, failing=("esxi-01", "esxi-02"))
    with pytest.raises(TaskFailed) as err:
        hm.converge(lab, _params(cluster="gpu-cluster", parallel=True), False)
    assert err.value.details["blocking_vms"] == {"esxi-01": ["gpu-vm-01"], "esxi-02": ["gpu-vm-03"]}
    assert "Hosts done: esxi-03; not started: none" in str(err.value)


def test_a_timeout_below_one_second_is_refused():
    with pytest.raises(InputError, match="timeout"):
        hm.converge(FakeLab(), _params(cluster="gpu-cluster", timeout=0), False)
