# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab vCenter's vSphere Automation API (JSON-RPC at POST /api) through VMware's own SDK, against the lab's
ground truth."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
import requests
from com.vmware.vapi.std.errors_client import NotFound, Unauthenticated
from com.vmware.vcenter_client import VM
from vmware.vapi.vsphere.client import create_vsphere_client

POWER_STATES = {"poweredOn": "POWERED_ON", "poweredOff": "POWERED_OFF", "suspended": "SUSPENDED"}


def sdk_client(lab):
    session = requests.Session()
    session.verify = lab.certificate
    session.trust_env = False  # a CA bundle named in the environment would replace the lab's certificate
    conn = lab.connection
    return create_vsphere_client(server="127.0.0.1:%s" % lab.port, username=conn["username"],
                                 password=conn["password"], session=session)


@pytest.fixture
def client(lab):
    return sdk_client(lab)


def test_vm_list_matches_ground_truth(lab, client):
    truth = dict((vm["moid"], vm) for vm in lab.state()["vms"])

    listed = client.vcenter.VM.list()

    assert sorted(vm.vm for vm in listed) == sorted(truth)
    for vm in listed:
        assert vm.name == truth[vm.vm]["name"]
        assert vm.power_state == POWER_STATES[truth[vm.vm]["power_state"]]
        assert vm.memory_size_mib == truth[vm.vm]["memory_mb"]


def test_vm_list_filters(lab, client):
    truth = lab.state()["vms"]
    first = truth[0]

    by_name = client.vcenter.VM.list(VM.FilterSpec(names={first["name"]}))
    off = client.vcenter.VM.list(VM.FilterSpec(power_states={"POWERED_OFF"}))
    datacenter = client.vcenter.Datacenter.list()[0].datacenter
    vm_folder = client.vcenter.Datacenter.get(datacenter).vm_folder
    in_folder = client.vcenter.VM.list(VM.FilterSpec(folders={vm_folder}))
    nowhere = client.vcenter.VM.list(VM.FilterSpec(folders={"group-v999999"}))

    assert [(vm.vm, vm.name) for vm in by_name] == [(first["moid"], first["name"])]
    assert sorted(vm.vm for vm in off) == sorted(vm["moid"] for vm in truth if vm["power_state"] == "poweredOff")
    assert sorted(vm.vm for vm in in_folder) == sorted(vm["moid"] for vm in truth)
    assert nowhere == []


def test_unknown_vm_is_not_found(client):
    with pytest.raises(NotFound):
        client.vcenter.vm.guest.Identity.get("vm-999999")


def test_session_ends_with_logout(lab, client):
    assert client.session_svc.get().user == lab.connection["username"]

    client.session_svc.delete()

    with pytest.raises(Unauthenticated):
        client.vcenter.VM.list()


def test_wrong_password_is_refused(lab):
    session = requests.Session()
    session.verify = lab.certificate
    session.trust_env = False
    with pytest.raises(Unauthenticated):
        create_vsphere_client(server="127.0.0.1:%s" % lab.port, username=lab.connection["username"],
                              password="not-the-password", session=session)


def test_object_rename_through_the_automation_api(lab, run_tasks):
    vm = lab.state()["vms"][0]
    conn = lab.connection
    options = {"hostname": conn["hostname"], "port": conn["port"], "username": conn["username"],
               "password": conn["password"], "validate_certs": True, "object_type": "VirtualMachine",
               "object_name": vm["name"], "new_name": vm["name"] + "-renamed"}
    # The module verifies the lab's certificate: requests (the SDK) and ssl (pyVmomi) read it from the environment.
    trust_lab = {"REQUESTS_CA_BUNDLE": lab.certificate, "SSL_CERT_FILE": lab.certificate}

    def rename(**changes):
        task = {"community.vmware.vmware_object_rename": dict(options, **changes)}
        return run_tasks([task], env=trust_lab).result(0)

    first = rename()
    renamed = lab.vm(vm["name"] + "-renamed")
    again = rename(object_name=vm["name"] + "-renamed")

    assert first["changed"] is True
    assert renamed["moid"] == vm["moid"]
    assert not [v for v in lab.state()["vms"] if v["name"] == vm["name"]]
    assert again["changed"] is False
