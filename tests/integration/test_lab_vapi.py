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


def rest_session(lab):
    """Plain requests on the lab's /api with a session from POST /api/session."""
    session = requests.Session()
    session.verify = lab.certificate
    session.trust_env = False
    login = session.post("https://127.0.0.1:%s/api/session" % lab.port,
                         auth=(lab.connection["username"], lab.connection["password"]))
    assert login.status_code == 201
    session.headers["vmware-api-session-id"] = login.json()
    return session


def test_tags_made_through_the_sdk_read_back_over_rest(lab, client):
    """Tags made with VMware's SDK (JSON-RPC) and read over REST in the shapes of VMware's REST reference
    (developer.broadcom.com/xapis/vsphere-automation-api, cis: Tagging_TagAssociation_ObjectToTags, _TagToObjects,
    Tagging_CategoryModel; paths as the SDK's REST metadata writes them under /api)."""
    from com.vmware.cis.tagging_client import Category, CategoryModel, Tag
    from com.vmware.vapi.std.errors_client import AlreadyExists, InvalidArgument
    from com.vmware.vapi.std_client import DynamicID

    state = lab.state()
    vm, other = (DynamicID(type="VirtualMachine", id=v["moid"]) for v in state["vms"][:2])
    host = DynamicID(type="HostSystem", id=state["hosts"][0]["moid"])
    tier = client.tagging.Category.create(Category.CreateSpec(
        name="gpu-tier", description="vGPU service tier", cardinality=CategoryModel.Cardinality.SINGLE,
        associable_types={"VirtualMachine"}))
    gold, silver = (client.tagging.Tag.create(Tag.CreateSpec(name=name, description="", category_id=tier))
                    for name in ("gold", "silver"))
    client.tagging.TagAssociation.attach(tag_id=gold, object_id=vm)
    client.tagging.TagAssociation.attach(tag_id=silver, object_id=other)
    with pytest.raises(AlreadyExists):
        client.tagging.Category.create(Category.CreateSpec(
            name="gpu-tier", description="", cardinality=CategoryModel.Cardinality.MULTIPLE, associable_types=set()))
    with pytest.raises(InvalidArgument):  # SINGLE: one tier per VM
        client.tagging.TagAssociation.attach(tag_id=silver, object_id=vm)
    with pytest.raises(InvalidArgument):  # the category allows VMs only
        client.tagging.TagAssociation.attach(tag_id=gold, object_id=host)

    api, base = rest_session(lab), "https://127.0.0.1:%s/api/cis/tagging" % lab.port
    assert api.get(base + "/category").json() == [tier] and api.get(base + "/tag").json() == [gold, silver]
    model = api.get(base + "/category/" + tier).json()
    assert (model["id"], model["name"], model["cardinality"], model["associable_types"]) == (
        tier, "gpu-tier", "SINGLE", ["VirtualMachine"])
    assert api.get(base + "/tag/" + gold).json()["category_id"] == tier
    objects = [{"type": o.type, "id": o.id} for o in (vm, other, host)]
    on_objects = api.post(base + "/tag-association", params={"action": "list-attached-tags-on-objects"},
                          json={"object_ids": objects}).json()
    assert on_objects == [{"object_id": objects[0], "tag_ids": [gold]}, {"object_id": objects[1], "tag_ids": [silver]},
                          {"object_id": objects[2], "tag_ids": []}]
    on_tags = api.post(base + "/tag-association", params={"action": "list-attached-objects-on-tags"},
                       json={"tag_ids": [gold, silver]}).json()
    assert on_tags == [{"tag_id": gold, "object_ids": [objects[0]]}, {"tag_id": silver, "object_ids": [objects[1]]}]
    detached = api.post(base + "/tag-association/" + gold, params={"action": "detach"}, json={"object_id": objects[0]})
    assert detached.status_code == 204
    assert client.tagging.TagAssociation.list_attached_tags(vm) == []
    refused = api.post(base + "/tag-association/" + gold, params={"action": "attach"}, json={"object_id": objects[2]})
    assert (refused.status_code, refused.json()["error_type"]) == (400, "INVALID_ARGUMENT")
