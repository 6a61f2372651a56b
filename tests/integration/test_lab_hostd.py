# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's hosts answer as ESXi's own endpoint (hostd): pyVmomi connects to a host by its name, on the lab's
port, with the host's root account. The lab routes by the HTTP Host header; the test resolves the host names to
127.0.0.1 inside its own process instead of through DNS."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import socket

import pytest

from vsphere_direct import Direct

pytest.importorskip("pyVmomi")

from pyVim.connect import Disconnect, SmartConnect  # noqa: E402
from pyVim.task import WaitForTask  # noqa: E402
from pyVmomi import vim, vmodl  # noqa: E402


@pytest.fixture
def lab_names(lab, monkeypatch):
    """Every lab host's name resolves to 127.0.0.1 in this process."""
    names = set(host["name"] for host in lab.state()["hosts"])
    resolve = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        return resolve("127.0.0.1" if host in names else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return names


@pytest.fixture
def connect_host(lab, lab_names):
    sessions = []

    def connect(name, user=None, password=None):
        si = SmartConnect(host=name, port=lab.port, user=user or lab.vcenter_vars["esxi_username"],
                          pwd=password or lab.vcenter_vars["esxi_password"], disableSslCertValidation=True)
        sessions.append(si)
        return si

    yield connect
    for si in sessions:
        Disconnect(si)


def host_with_vms(lab):
    state = lab.state()
    counts = {}
    for vm in state["vms"]:
        counts[vm["host"]] = counts.get(vm["host"], 0) + 1
    return max(counts, key=lambda name: (counts[name], name)), state


def all_of(content, vim_type):
    view = content.viewManager.CreateContainerView(content.rootFolder, [vim_type], True)
    try:
        return list(view.view)
    finally:
        view.DestroyView()


def test_a_host_presents_itself_as_esxi_with_its_own_vms_only(lab, connect_host):
    name, state = host_with_vms(lab)
    content = connect_host(name).RetrieveContent()
    assert content.about.apiType == "HostAgent"
    assert content.about.name == "VMware ESXi"
    assert content.rootFolder._moId == "ha-folder-root"
    assert [dc._moId for dc in content.rootFolder.childEntity] == ["ha-datacenter"]

    vms = all_of(content, vim.VirtualMachine)
    expected = sorted(vm["name"] for vm in state["vms"] if vm["host"] == name)
    assert sorted(vm.name for vm in vms) == expected
    assert len(expected) < len(state["vms"])
    assert all(vm._moId.isdigit() and vm.runtime.host._moId == "ha-host" for vm in vms)
    assert [host.name for host in all_of(content, vim.HostSystem)] == [name]


def test_vcenters_account_cannot_log_in_to_a_host(lab, connect_host):
    name = host_with_vms(lab)[0]
    with pytest.raises(vim.fault.InvalidLogin):
        connect_host(name, lab.vcenter_vars["vcenter_username"], lab.vcenter_vars["vcenter_password"])


def test_a_change_through_the_host_is_seen_through_vcenter(lab, connect_host):
    name, state = host_with_vms(lab)
    vm_name = sorted(vm["name"] for vm in state["vms"] if vm["host"] == name and vm["power_state"] == "poweredOff")[0]
    content = connect_host(name).RetrieveContent()
    vm = next(vm for vm in all_of(content, vim.VirtualMachine) if vm.name == vm_name)
    WaitForTask(vm.PowerOnVM_Task())
    assert lab.vm(vm_name)["power_state"] == "poweredOn"

    host = all_of(content, vim.HostSystem)[0]
    host.configManager.autoStartManager.ReconfigureAutostart(spec=vim.host.AutoStartManager.Config(
        defaults=vim.host.AutoStartManager.SystemDefaults(enabled=True, startDelay=200),
        powerInfo=[vim.host.AutoStartManager.AutoPowerInfo(
            key=vm, startAction="powerOn", startOrder=1, startDelay=-1, stopAction="systemDefault",
            stopDelay=-1, waitForHeartbeat="systemDefault")]))
    direct = Direct(lab)
    try:
        seen = direct.host(name).config.autoStart
        assert seen.defaults.enabled is True and seen.defaults.startDelay == 200
        assert [info.key.name for info in seen.powerInfo] == [vm_name]
    finally:
        direct.close()


def test_another_hosts_vm_is_not_found_through_a_host(lab, connect_host):
    name, state = host_with_vms(lab)
    other = next(vm for vm in state["vms"] if vm["host"] != name and vm["power_state"] == "poweredOff")
    si = connect_host(name)
    stranger = vim.VirtualMachine(other["moid"].replace("vm-", ""), si._stub)
    with pytest.raises(vmodl.fault.ManagedObjectNotFound):
        stranger.PowerOnVM_Task()
    assert lab.vm(other["name"])["power_state"] == "poweredOff"
