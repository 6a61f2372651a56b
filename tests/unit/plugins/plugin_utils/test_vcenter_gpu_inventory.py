# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vcenter_gpu inventory plugin's rules: options refused before any connection, groups and variables."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _vcenter_gpu_inventory as rules

PAIR = ["0000:3b:00.0", "0000:5e:00.0"]


def options(**changes):
    base = {"hostname": "vc.example.com", "username": "ops", "password": "secret", "password_file": None,
            "port": 443, "validate_certs": True, "clusters": [], "folders": [], "power_states": [],
            "nvlink_sets": {}, "vcenter_host": "localhost", "tags": [], "host_tags": [], "tags_match": "any",
            "gather_tags": False}
    base.update(changes)
    return rules.check_options(base)


def gpu(pci_id, model="P40", profile=None, passthrough=False):
    return {"pci_id": pci_id, "model": model, "device_name": "Tesla " + model, "memory_mib": 24576,
            "graphics_type": "sharedDirect", "configured_graphics_type": "sharedDirect", "vgpu_mode": "sameSize",
            "profile": profile, "passthrough": {"enabled": passthrough}}


def vm(name, host="esxi-01", cluster="gpu-cluster", profile=None, whole=(), power="poweredOn", folder="/dc1/vm"):
    return {"name": name, "moid": "vm-" + name, "uuid": "u-" + name, "host": host, "cluster": cluster,
            "datacenter": "dc1", "folder": folder, "power_state": power, "guest_ip": None,
            "vgpus": [{"key": 13000, "profile": profile}] if profile else [], "passthrough": list(whole),
            "gpu_models": ["P40"]}


FLEET = {
    "hosts": [
        {"name": "esxi-01", "cluster": "gpu-cluster", "datacenter": "dc1", "connection_state": "connected",
         "maintenance_mode": False, "gpus": [gpu(PAIR[0], profile="grid_p40-8q")]},
        {"name": "esxi-31", "cluster": "hpc", "datacenter": "dc1", "connection_state": "connected",
         "maintenance_mode": False,
         "gpus": [gpu(pci, model="A100-40", passthrough=True) for pci in PAIR + ["0000:86:00.0"]]},
        {"name": "esxi-sa", "cluster": None, "datacenter": "dc1", "connection_state": "connected",
         "maintenance_mode": True, "gpus": [gpu(PAIR[0], model="T4")]},
    ],
    "vms": [
        vm("train-1", profile="grid_p40-8q", folder="/dc1/vm/ml"),
        vm("train-2", profile="grid_p40-8q", power="poweredOff", folder="/dc1/vm/ml/old"),
        vm("pt-1", host="esxi-31", cluster="hpc", whole=PAIR),
        vm("pt-2", host="esxi-31", cluster="hpc", whole=["0000:86:00.0"], folder="/dc1/vm/mlx"),
    ],
}


@pytest.mark.parametrize("changes, words", [
    ({"hostname": ""}, "hostname is not set. Set hostname in the inventory file or the environment variable "
                       "VMWARE_HOST."),
    ({"username": None}, "username is not set."),
    ({"password": None}, "password is not set."),
    ({"password_file": "/run/pw"}, "password and password_file are both set."),
    ({"port": 0}, "port must be a TCP port (1-65535), got 0."),
    ({"port": True}, "port must be a TCP port"),
    ({"power_states": ["on"]}, "power_states has on, which vSphere does not know. Choose among poweredOn"),
    ({"folders": ["ml"]}, "folders has 'ml', which is not a VM folder's path. Write the path from the datacenter"),
    ({"clusters": "gpu-cluster"}, "clusters must be a list of names"),
    ({"nvlink_sets": {"esxi-31": ["0000:3b:00.0"]}}, "nvlink_sets of esxi-31 must be a list of lists of PCI ids"),
    ({"nvlink_sets": {"esxi-31": [["3b:00"]]}}, "nvlink_sets of esxi-31: '3b:00' is not a PCI id."),
    ({"tags": ["gpu-tier:"]}, "tags has 'gpu-tier:', which is not category:tag. Write each entry as category:tag"),
    ({"host_tags": [":managed"]}, "host_tags has ':managed', which is not category:tag."),
    ({"tags": "gpu-tier:gold"}, "tags must be a list of names"),
    ({"tags_match": "some"}, "tags_match is 'some'. Choose any (one of the tags) or all (every tag)."),
])
def test_bad_options_are_refused_naming_the_option_and_the_fix(changes, words):
    with pytest.raises(InputError) as err:
        options(**changes)
    assert words in str(err.value)
    assert "secret" not in str(err.value)


def test_password_file_stands_for_the_password_and_paths_are_normalized():
    checked = options(password=None, password_file="/run/pw", folders=["dc1/vm/ml/"],
                      nvlink_sets={"esxi-31": [["5E:00.0", "0000:3b:00.0"]]})
    assert checked["folders"] == ["/dc1/vm/ml"]
    assert checked["nvlink_sets"] == {"esxi-31": [PAIR]}


def test_groups_and_the_variables_the_roles_read():
    built = rules.build(FLEET, options(nvlink_sets={"esxi-31": [PAIR, ["0000:86:00.0", "0000:af:00.0"]]}))
    groups = built["groups"]
    assert groups["esxi_hosts"]["hosts"] == ["esxi-01", "esxi-31", "esxi-sa"]
    assert groups["servers"]["children"] == ["esxi_hosts"]
    assert groups["gpu_guests"]["hosts"] == ["train-1", "train-2"]
    assert groups["passthrough_guests"]["hosts"] == ["pt-1", "pt-2"]
    # The connection is every host's, as group_vars/all.yml of a hand-written inventory gives it.
    assert groups["vcenter"] == {"hosts": ["localhost"]}
    assert groups["all"] == {"vars": {
        "vcenter_hostname": "vc.example.com", "vcenter_port": 443, "vcenter_username": "ops",
        "vcenter_validate_certs": True, "vcenter_datacenter": "dc1"}}
    assert "secret" not in repr(built)

    hosts = built["hosts"]
    assert hosts["esxi-01"]["esxi_cluster"] == "gpu-cluster" and hosts["esxi-01"]["esxi_gpu_models"] == ["P40"]
    assert hosts["esxi-01"]["esxi_gpus"][0]["profile"] == "grid_p40-8q"
    assert hosts["esxi-31"]["esxi_gpus"][0]["passthrough"] is True
    assert (hosts["train-1"]["vgpu_profile"], hosts["train-1"]["vgpu_vm_name"]) == ("grid_p40-8q", "train-1")
    assert "passthrough_gpus" not in hosts["train-1"]
    assert hosts["pt-1"]["passthrough_gpus"] == 2 and hosts["pt-1"]["passthrough_gpu_ids"] == PAIR
    assert (hosts["pt-1"]["passthrough_nvlink"], hosts["pt-1"]["passthrough_nvlink_set"]) == (True, [PAIR])
    assert (hosts["pt-2"]["passthrough_nvlink"], hosts["pt-2"]["passthrough_nvlink_set"]) == (False, [])
    assert "vgpu_profile" not in hosts["pt-1"]


def test_without_nvlink_sets_a_passthrough_guest_gets_no_nvlink_claim():
    hosts = rules.build(FLEET, options())["hosts"]
    assert "passthrough_nvlink" not in hosts["pt-1"] and hosts["pt-1"]["passthrough_gpus"] == 2


@pytest.mark.parametrize("filters, esxi, guests", [
    ({"clusters": ["hpc"]}, ["esxi-31"], ["pt-1", "pt-2"]),
    ({"folders": ["/dc1/vm/ml"]}, ["esxi-01", "esxi-31", "esxi-sa"], ["train-1", "train-2"]),
    ({"power_states": ["poweredOff"]}, ["esxi-01", "esxi-31", "esxi-sa"], ["train-2"]),
    ({"clusters": ["gpu-cluster"], "power_states": ["poweredOn"]}, ["esxi-01"], ["train-1"]),
])
def test_filters(filters, esxi, guests):
    built = rules.build(FLEET, options(**filters))
    assert built["groups"]["esxi_hosts"]["hosts"] == esxi
    assert built["groups"]["gpu_guests"]["hosts"] + built["groups"]["passthrough_guests"]["hosts"] == guests


def test_no_vcenter_group_when_asked_and_one_datacenter_only_is_named():
    built = rules.build(FLEET, options(vcenter_host=""))
    assert "vcenter" not in built["groups"] and "localhost" not in built["hosts"]
    assert built["groups"]["all"]["vars"]["vcenter_hostname"] == "vc.example.com"
    two = dict(FLEET, hosts=FLEET["hosts"] + [dict(FLEET["hosts"][0], name="esxi-x", datacenter="dc2")])
    assert "vcenter_datacenter" not in rules.build(two, options())["groups"]["all"]["vars"]


def test_two_vms_of_one_name_are_refused():
    fleet = dict(FLEET, vms=FLEET["vms"] + [vm("train-1", profile="grid_p40-4q", folder="/dc2/vm")])
    with pytest.raises(InputError, match="Two objects of vCenter are both named train-1 .*/dc1/vm/ml and /dc2/vm"):
        rules.build(fleet, options())


TAGS = {"esxi-01": ["gpuops:managed", "rack:r1"], "esxi-31": ["gpuops:managed"], "esxi-sa": [],
        "train-1": ["gpu-tier:gold", "team:ml"], "train-2": ["gpu-tier:silver"], "pt-1": ["team:hpc"], "pt-2": []}


def tagged():
    fleet = {"hosts": [dict(host, tags=TAGS[host["name"]]) for host in FLEET["hosts"]],
             "vms": [dict(guest, tags=TAGS[guest["name"]]) for guest in FLEET["vms"]], "tags_read": True}
    return fleet


@pytest.mark.parametrize("filters, esxi, guests", [
    ({"tags": ["gpu-tier:gold", "gpu-tier:silver"]}, ["esxi-01", "esxi-31", "esxi-sa"], ["train-1", "train-2"]),
    ({"tags": ["gpu-tier:gold", "team:ml"], "tags_match": "all"}, ["esxi-01", "esxi-31", "esxi-sa"], ["train-1"]),
    ({"tags": ["gpu-tier:gold", "team:hpc"], "tags_match": "all"}, ["esxi-01", "esxi-31", "esxi-sa"], []),
    ({"tags": ["ml"]}, ["esxi-01", "esxi-31", "esxi-sa"], ["train-1"]),          # a tag name in any category
    ({"tags": ["other:ml"]}, ["esxi-01", "esxi-31", "esxi-sa"], []),
    ({"host_tags": ["gpuops:managed"]}, ["esxi-01", "esxi-31"], ["train-1", "train-2", "pt-1", "pt-2"]),
    ({"host_tags": ["rack:r1"], "tags": ["team:hpc"]}, ["esxi-01"], ["pt-1"]),
])
def test_tag_filters(filters, esxi, guests):
    built = rules.build(tagged(), options(**filters))
    assert built["groups"]["esxi_hosts"]["hosts"] == esxi
    assert built["groups"]["gpu_guests"]["hosts"] + built["groups"]["passthrough_guests"]["hosts"] == guests


def test_tags_become_variables_only_when_read():
    checked = options(gather_tags=True)
    assert rules.needs_tags(checked) and rules.needs_tags(options(host_tags=["rack:r1"]))
    assert not rules.needs_tags(options())
    hosts = rules.build(tagged(), checked)["hosts"]
    assert hosts["train-1"]["vm_tags"] == ["gpu-tier:gold", "team:ml"]
    assert hosts["train-1"]["vm_tags_by_category"] == {"gpu-tier": ["gold"], "team": ["ml"]}
    assert hosts["pt-2"]["vm_tags"] == [] and hosts["pt-2"]["vm_tags_by_category"] == {}
    assert hosts["esxi-01"]["esxi_tags"] == ["gpuops:managed", "rack:r1"]
    assert hosts["esxi-01"]["esxi_tags_by_category"] == {"gpuops": ["managed"], "rack": ["r1"]}
    untagged = rules.build(FLEET, options())["hosts"]
    assert "vm_tags" not in untagged["train-1"] and "esxi_tags" not in untagged["esxi-01"]
