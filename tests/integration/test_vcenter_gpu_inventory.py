# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vcenter_gpu inventory plugin through ansible-inventory against the lab vCenter: its groups and variables
equal the lab's ground truth (/lab/state), its filters, constructed options and cache work, its SOAP requests do not
grow with the VMs, and bad configuration is refused before any connection."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml
from pyVim.task import WaitForTask

from conftest import ROOT
from vsphere_direct import Direct

vim = pytest.importorskip("pyVmomi").vim

PT_HOST = "esxi-31.lab.local"
PT_GPUS = ["0000:3b:00.0", "0000:5e:00.0", "0000:86:00.0", "0000:af:00.0"]
NVLINK_SETS = {PT_HOST: [PT_GPUS[:2], PT_GPUS[2:]]}
VGPUS = {"gpu-vm-01": "grid_p40-8q", "gpu-vm-04": "grid_p40-3q", "ml-vm-01": "grid_a100-4c"}
# One session, one PropertyCollector call: what a read of the inventory costs whatever the number of VMs (pyVmomi
# asks for the service content at login, the client once, pyVmomi again at logout).
ONE_READ = {"RetrieveServiceContent": 3, "Login": 1, "CreateContainerView": 1, "RetrievePropertiesEx": 1,
            "DestroyView": 1, "Logout": 1}


def ansible_inventory(lab, tmp_path, env=None, name="lab.vcenter_gpu.yml", connection=True, text="", **options):
    """``ansible-inventory --list`` of a plugin configuration for ``lab`` (``options``, then ``text``): ``(process,
    inventory or None)``."""
    config = {"plugin": "gpuops.vgpu.vcenter_gpu"}
    if connection:
        config.update(hostname="127.0.0.1", port=lab.port, username=lab.vcenter_vars["vcenter_username"],
                      password=lab.vcenter_vars["vcenter_password"], validate_certs=False)
    config.update(options)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(dict((key, value) for key, value in config.items() if value is not None)) + text)
    run_env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
                   ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="1", ANSIBLE_NOCOLOR="1")
    run_env.update(env or {})
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-inventory"), "-i", str(path),
                           "--list"], cwd=str(tmp_path), env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False, timeout=600)
    assert lab.vcenter_vars["vcenter_password"] not in proc.stdout + proc.stderr
    return proc, json.loads(proc.stdout, object_hook=unwrapped) if proc.returncode == 0 else None


def unwrapped(value):
    """ansible-inventory marks the strings read from vCenter as never to be templated ({"__ansible_unsafe": ...})."""
    return value["__ansible_unsafe"] if list(value) == ["__ansible_unsafe"] else value


def listed(lab, tmp_path, **options):
    proc, found = ansible_inventory(lab, tmp_path, **options)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return found


def members(found, group):
    return sorted((found.get(group) or {}).get("hosts") or [])


def give_gpus(lab, run_tasks):
    """vGPUs (VGPUS; gpu-vm-01 running on esxi-01's P40) and whole GPUs (pt-vm-01 an NVLink pair, pt-vm-02 one GPU
    of the other pair), set through the API."""
    whole = [{"name": "pt-vm-01", "devices": PT_GPUS[:2]}, {"name": "pt-vm-02", "devices": PT_GPUS[2:3]}]
    run_tasks([{"name": "passthrough", "gpuops.vgpu.host_passthrough": {"esxi_hostnames": [PT_HOST],
                                                                        "models": ["A100-40"]}},
               {"name": "whole GPUs", "gpuops.vgpu.vm_passthrough": {"vms": whole}}])
    direct = Direct(lab)
    try:
        direct.shared_direct("esxi-01.lab.local")
        for vm, profile in VGPUS.items():
            direct.add_vgpu(vm, profile)
        direct.power_on("gpu-vm-01")
    finally:
        direct.close()


def ground_truth(state):
    """The inventory the plugin should give, from /lab/state: groups and each host's and guest's variables."""
    hosts = [host for host in state["hosts"] if host["gpus"]]
    expected = {"esxi_hosts": sorted(host["name"] for host in hosts), "hostvars": {}}
    for host in hosts:
        expected["hostvars"][host["name"]] = {
            "esxi_cluster": host["cluster"], "esxi_datacenter": host["datacenter"],
            "esxi_connection_state": host["connection_state"], "esxi_maintenance_mode": host["maintenance_mode"],
            "esxi_gpu_models": sorted(set(gpu["model"] for gpu in host["gpus"])),
            "esxi_gpus": [{"pci_id": gpu["pci_id"], "model": gpu["model"], "graphics_type": gpu["graphics_type"],
                           "configured_graphics_type": gpu["configured_graphics_type"],
                           "vgpu_mode": gpu["vgpu_mode"] or None, "profile": gpu["profile"],
                           "passthrough": gpu["passthru_enabled"], "memory_mib": gpu["memory_mib"]}
                          for gpu in host["gpus"]]}
    vgpu = [vm for vm in state["vms"] if vm["vgpus"]]
    whole = [vm for vm in state["vms"] if vm["passthrough"]]
    expected["gpu_guests"] = sorted(vm["name"] for vm in vgpu)
    expected["passthrough_guests"] = sorted(vm["name"] for vm in whole)
    for vm in vgpu + whole:
        variables = expected["hostvars"].setdefault(vm["name"], {
            "vm_moid": vm["moid"], "vm_uuid": vm["uuid"], "vm_host": vm["host"], "vm_cluster": vm["cluster"],
            "vm_power_state": vm["power_state"]})
        if vm["vgpus"]:
            variables.update(vgpu_profile=vm["vgpus"][0]["profile"], vgpu_vm_name=vm["name"])
        if vm["passthrough"]:
            variables.update(passthrough_vm_name=vm["name"], passthrough_gpus=len(vm["passthrough"]),
                             passthrough_gpu_ids=sorted(device["id"] for device in vm["passthrough"]))
    return expected


def same_as_truth(found, truth):
    for group in ("esxi_hosts", "gpu_guests", "passthrough_guests"):
        assert members(found, group) == truth[group], group
    hostvars = found["_meta"]["hostvars"]
    assert sorted(truth["hostvars"]) == sorted(name for name in hostvars if name != "localhost")
    for name, wanted in truth["hostvars"].items():
        got = dict(hostvars[name])
        if "esxi_gpus" in got:
            got["esxi_gpus"] = [dict((key, gpu[key]) for key in wanted["esxi_gpus"][0]) for gpu in got["esxi_gpus"]]
        assert dict((key, got.get(key)) for key in wanted) == wanted, name


def test_default_topology_equals_the_ground_truth_in_one_read(lab, run_tasks, tmp_path):
    give_gpus(lab, run_tasks)
    lab.reset_stats()
    found = listed(lab, tmp_path, nvlink_sets=NVLINK_SETS)
    stats = lab.stats()
    truth = ground_truth(lab.state())
    assert truth["gpu_guests"] == sorted(VGPUS) and truth["passthrough_guests"] == ["pt-vm-01", "pt-vm-02"]
    same_as_truth(found, truth)
    assert stats["by_method"] == ONE_READ

    hostvars = found["_meta"]["hostvars"]
    assert (hostvars["pt-vm-01"]["passthrough_nvlink"], hostvars["pt-vm-01"]["passthrough_nvlink_set"]) == (
        True, [PT_GPUS[:2]])
    assert (hostvars["pt-vm-02"]["passthrough_nvlink"], hostvars["pt-vm-02"]["passthrough_nvlink_set"]) == (
        False, [])
    # The default keyed groups: cluster, GPU model, vGPU profile.
    assert members(found, "cluster_gpu_cluster") == ["esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local",
                                                     "gpu-vm-01", "gpu-vm-04"]
    assert members(found, "gpu_A100_40") == ["esxi-12.lab.local", PT_HOST, "ml-vm-01", "pt-vm-01", "pt-vm-02"]
    assert members(found, "vgpu_grid_p40_8q") == ["gpu-vm-01"]
    assert members(found, "servers") == [] and "esxi_hosts" in found["servers"]["children"]
    assert members(found, "vcenter") == ["localhost"]
    assert hostvars["localhost"]["vcenter_hostname"] == "127.0.0.1"
    assert hostvars["localhost"]["vcenter_port"] == lab.port and hostvars["localhost"]["vcenter_datacenter"] == "lab-dc"
    assert "vcenter_password" not in hostvars["localhost"]
    # The topology gives gpu-vm-01 no guest address, so VMware Tools reports none: no ansible_host, rather than a
    # wrong one.
    assert "ansible_host" not in hostvars["gpu-vm-01"] and hostvars["gpu-vm-01"]["vm_guest_ip"] is None


def test_filters_constructed_options_and_credentials_from_the_environment(lab, run_tasks, tmp_path):
    give_gpus(lab, run_tasks)
    direct = Direct(lab)
    try:
        datacenter = direct._find(vim.Datacenter, "lab-dc")
        ml = datacenter.vmFolder.CreateFolder("ml")
        WaitForTask(ml.MoveIntoFolder_Task([direct.vm("ml-vm-01"), direct.vm("gpu-vm-04")]))
    finally:
        direct.close()
    state = lab.state()
    connection = lab.connection
    env = {"VMWARE_HOST": "127.0.0.1", "VMWARE_PORT": str(lab.port), "VMWARE_USER": connection["username"],
           "VMWARE_PASSWORD": connection["password"], "VMWARE_VALIDATE_CERTS": "false"}

    found = listed(lab, tmp_path, connection=False, env=env, folders=["/lab-dc/vm/ml"], strict=True,
                   address_template="{{ inventory_hostname }}.ml.example.com",
                   compose={"gpu_validate_cuda_version": "'11.6' if vgpu_profile is defined else '12.2'"},
                   groups={"a100_guests": "'A100-40' in vm_gpu_models | default([])"})
    assert members(found, "gpu_guests") == ["gpu-vm-04", "ml-vm-01"] and members(found, "passthrough_guests") == []
    assert members(found, "esxi_hosts") == sorted(h["name"] for h in state["hosts"] if h["gpus"])
    hostvars = found["_meta"]["hostvars"]
    assert hostvars["ml-vm-01"]["vm_folder"] == "/lab-dc/vm/ml"
    assert hostvars["ml-vm-01"]["ansible_host"] == "ml-vm-01.ml.example.com"
    assert hostvars["ml-vm-01"]["gpu_validate_cuda_version"] == "11.6"
    assert hostvars["esxi-01.lab.local"]["gpu_validate_cuda_version"] == "12.2"
    assert members(found, "a100_guests") == ["ml-vm-01"]

    password_file = tmp_path / "vcenter-password"
    password_file.write_text(connection["password"] + "\n")
    found = listed(lab, tmp_path, clusters=["gpu-cluster", "hpc-cluster"], power_states=["poweredOff"],
                   password=None, password_file=str(password_file))
    assert members(found, "esxi_hosts") == ["esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local", PT_HOST]
    assert members(found, "gpu_guests") == ["gpu-vm-04"]
    assert members(found, "passthrough_guests") == ["pt-vm-01", "pt-vm-02"]

    found = listed(lab, tmp_path, clusters=["mixed-cluster"], keyed_groups=[{"key": "vm_power_state", "prefix": "power"}],
                   vcenter_host="")
    assert members(found, "gpu_guests") == ["ml-vm-01"] and "vcenter" not in found
    assert members(found, "power_poweredOff") == ["ml-vm-01"]


def sdk_client(lab):
    """VMware's own client (vSphere Automation SDK, JSON-RPC), logged in to the lab; its tagging service is
    ``.tagging`` (keep the client: it logs out when it goes)."""
    import requests
    from vmware.vapi.vsphere.client import create_vsphere_client

    session = requests.Session()
    session.verify = lab.certificate
    session.trust_env = False
    return create_vsphere_client(server="127.0.0.1:%s" % lab.port, username=lab.connection["username"],
                                 password=lab.connection["password"], session=session)


def tag_by_hand(lab, tagging, wanted):
    """Attach ``{object name: ["category:tag", ...]}`` through the SDK, making categories and tags as needed:
    ``gpu-tier`` takes one tag per VM (SINGLE, VMs only), the others any number on any object."""
    from com.vmware.cis.tagging_client import Category, CategoryModel, Tag
    from com.vmware.vapi.std_client import DynamicID

    state = lab.state()
    ids = dict((vm["name"], DynamicID(type="VirtualMachine", id=vm["moid"])) for vm in state["vms"])
    ids.update((host["name"], DynamicID(type="HostSystem", id=host["moid"])) for host in state["hosts"])
    categories, tags = {}, {}
    for name, wanted_tags in sorted(wanted.items()):
        for entry in wanted_tags:
            category, tag = entry.split(":", 1)
            if category not in categories:
                single = category == "gpu-tier"
                categories[category] = tagging.Category.create(Category.CreateSpec(
                    name=category, description="", associable_types={"VirtualMachine"} if single else set(),
                    cardinality=CategoryModel.Cardinality.SINGLE if single else CategoryModel.Cardinality.MULTIPLE))
            if entry not in tags:
                tags[entry] = tagging.Tag.create(Tag.CreateSpec(name=tag, description="",
                                                                category_id=categories[category]))
            tagging.TagAssociation.attach(tag_id=tags[entry], object_id=ids[name])
    return tags


def tags_in_vcenter(lab, tagging):
    """``{object name: ["category:tag", ...]}`` as the SDK reads the lab's tagging service back."""
    state = lab.state()
    names = dict((vm["moid"], vm["name"]) for vm in state["vms"])
    names.update((host["moid"], host["name"]) for host in state["hosts"])
    found = {}
    for entry in tagging.TagAssociation.list_attached_objects_on_tags(tagging.Tag.list()):
        tag = tagging.Tag.get(entry.tag_id)
        label = "%s:%s" % (tagging.Category.get(tag.category_id).name, tag.name)
        for obj in entry.object_ids:
            found.setdefault(names[obj.id], []).append(label)
    return dict((name, sorted(labels)) for name, labels in found.items())


def test_tag_filters_and_tag_variables_equal_the_tags_in_vcenter(lab, run_tasks, tmp_path):
    give_gpus(lab, run_tasks)
    client = sdk_client(lab)
    tagging = client.tagging
    tag_by_hand(lab, tagging, {
        "gpu-vm-01": ["gpu-tier:gold"], "gpu-vm-04": ["gpu-tier:silver"], "ml-vm-01": ["gpu-tier:gold", "team:ml"],
        "pt-vm-01": ["team:ml"], "gpu-vm-02": ["gpu-tier:gold"],  # gpu-vm-02 has no GPU: never listed
        "esxi-01.lab.local": ["gpuops:managed"], "esxi-12.lab.local": ["gpuops:managed", "rack:r7"]})
    truth, state = tags_in_vcenter(lab, tagging), lab.state()
    assert truth["ml-vm-01"] == ["gpu-tier:gold", "team:ml"] and truth["esxi-12.lab.local"] == [
        "gpuops:managed", "rack:r7"]
    gpu_vms = dict((vm["name"], vm) for vm in state["vms"] if vm["vgpus"] or vm["passthrough"])
    gpu_hosts = [host["name"] for host in state["hosts"] if host["gpus"]]

    def having(names, wanted, match=any):
        return sorted(name for name in names if match(tag in truth.get(name, []) for tag in wanted))

    lab.reset_stats()
    found = listed(lab, tmp_path, tags=["gpu-tier:gold", "gpu-tier:silver"], host_tags=["gpuops:managed"],
                   keyed_groups=[{"prefix": "tag", "key": "vm_tags | default(esxi_tags)"}])
    rest = lab.stats()["rest_by_route"]
    assert members(found, "gpu_guests") == having([n for n, vm in gpu_vms.items() if vm["vgpus"]],
                                                  ["gpu-tier:gold", "gpu-tier:silver"]) == [
        "gpu-vm-01", "gpu-vm-04", "ml-vm-01"]
    assert members(found, "passthrough_guests") == []
    assert members(found, "esxi_hosts") == having(gpu_hosts, ["gpuops:managed"]) == [
        "esxi-01.lab.local", "esxi-12.lab.local"]
    hostvars = found["_meta"]["hostvars"]
    for name in members(found, "gpu_guests"):
        assert hostvars[name]["vm_tags"] == truth[name], name
    assert hostvars["ml-vm-01"]["vm_tags_by_category"] == {"gpu-tier": ["gold"], "team": ["ml"]}
    assert hostvars["esxi-12.lab.local"]["esxi_tags"] == truth["esxi-12.lab.local"]
    assert members(found, "tag_gpu_tier_gold") == ["gpu-vm-01", "ml-vm-01"]
    assert members(found, "tag_gpuops_managed") == ["esxi-01.lab.local", "esxi-12.lab.local"]
    # One batched read of the associations, then each attached tag and category once (5 tags, 4 categories).
    assert rest == {"POST /api/session": 1, "DELETE /api/session": 1,
                    "POST /api/cis/tagging/tag-association?action=list-attached-tags-on-objects": 1,
                    "GET /api/cis/tagging/tag/{tagId}": 5, "GET /api/cis/tagging/category/{categoryId}": 4}

    found = listed(lab, tmp_path, tags=["gpu-tier:gold", "ml"], tags_match="all")
    assert members(found, "gpu_guests") == having(gpu_vms, ["gpu-tier:gold", "team:ml"], all) == ["ml-vm-01"]
    assert members(found, "esxi_hosts") == sorted(gpu_hosts)
    found = listed(lab, tmp_path, gather_tags=True)
    assert members(found, "passthrough_guests") == ["pt-vm-01", "pt-vm-02"]
    assert (found["_meta"]["hostvars"]["pt-vm-01"]["vm_tags"], found["_meta"]["hostvars"]["pt-vm-02"]["vm_tags"]) == (
        ["team:ml"], [])


def test_the_cache_answers_a_second_run_without_a_soap_request(lab, run_tasks, tmp_path):
    give_gpus(lab, run_tasks)
    cache = {"cache": True, "cache_plugin": "ansible.builtin.jsonfile", "cache_connection": str(tmp_path / "cache"),
             "cache_timeout": 600}
    lab.reset_stats()
    first = listed(lab, tmp_path, **cache)
    assert lab.stats()["by_method"] == ONE_READ
    assert lab.vcenter_vars["vcenter_password"] not in "".join(
        open(str(tmp_path / "cache" / name)).read() for name in os.listdir(str(tmp_path / "cache")))
    lab.reset_stats()
    assert listed(lab, tmp_path, **cache) == first
    assert lab.stats()["soap_requests"] == 0
    # Without the cache the same configuration reads vCenter again.
    cache["cache"] = False
    assert listed(lab, tmp_path, **cache) == first
    assert lab.stats()["by_method"] == ONE_READ


@pytest.mark.parametrize("options, message", [
    ({"power_states": ["running"]}, "Invalid value ['running'] for config 'power_states'"),
    ({"folders": ["ml"]}, "folders has 'ml', which is not a VM folder's path. Write the path from the datacenter"),
    ({"port": 0}, "port must be a TCP port (1-65535), got 0."),
    ({"password": None}, "password is not set. Set password (vault-encrypted) or password_file"),
    ({"nvlink_sets": {PT_HOST: [["3b:00"]]}}, "nvlink_sets of %s: '3b:00' is not a PCI id." % PT_HOST),
    ({"password_file": "/nonexistent"}, "password and password_file are both set."),
    ({"password": None, "password_file": "/nonexistent"}, "password_file /nonexistent cannot be read"),
])
def test_bad_configuration_is_refused_before_connecting(lab, tmp_path, options, message):
    config = dict(hostname="127.0.0.1", port=lab.port, username=lab.vcenter_vars["vcenter_username"],
                  password=lab.vcenter_vars["vcenter_password"], validate_certs=False)
    config.update(options)
    lab.reset_stats()
    proc, found = ansible_inventory(lab, tmp_path, connection=False,
                                    **dict((key, value) for key, value in config.items() if value is not None))
    assert proc.returncode != 0 and found is None
    assert message in " ".join(proc.stderr.split()), proc.stderr[-2000:]
    assert lab.stats()["soap_requests"] == 0


def test_a_refused_login_and_an_unverified_certificate_are_named(lab, tmp_path):
    proc, _inventory = ansible_inventory(lab, tmp_path, password="not-the-password")
    assert proc.returncode != 0
    assert "refused the login of user 'administrator@vsphere.local'" in " ".join(proc.stderr.split())
    assert "not-the-password" not in proc.stdout + proc.stderr
    proc, _inventory = ansible_inventory(lab, tmp_path, validate_certs=True)
    assert proc.returncode != 0 and "could not be verified" in " ".join(proc.stderr.split())


def test_a_vault_encrypted_password(lab, tmp_path):
    vault_password = tmp_path / "vault-password"
    vault_password.write_text("vault-of-the-test\n")
    encrypted = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-vault"), "encrypt_string",
                                "--vault-password-file", str(vault_password), "--name", "password",
                                lab.vcenter_vars["vcenter_password"]], stdout=subprocess.PIPE, universal_newlines=True,
                               check=True).stdout
    assert "$ANSIBLE_VAULT" in encrypted
    found = listed(lab, tmp_path, password=None, text=encrypted,
                   env={"ANSIBLE_VAULT_PASSWORD_FILE": str(vault_password)})
    assert members(found, "esxi_hosts") == sorted(h["name"] for h in lab.state()["hosts"] if h["gpus"])


def big_lab(labs, tmp_path_factory, vms):
    path = tmp_path_factory.getbasetemp() / ("inventory-%d.json" % vms)
    if not path.exists():
        with open(str(path), "w") as handle:
            subprocess.run([sys.executable, os.path.join(ROOT, "lab", "topologies", "generate.py"), "--hosts", "40",
                            "--clusters", "4", "--vms", str(vms)], stdout=handle, check=True)
    return labs(str(path), extra=("--no-bmc", "--no-shells"))


def test_a_thousand_vms_equal_the_ground_truth_in_the_same_one_read(labs, tmp_path_factory, tmp_path):
    lab = big_lab(labs, tmp_path_factory, 1000)
    direct = Direct(lab)
    try:
        for number in range(1, 41):  # one running vGPU VM per host, and 60 more VMs with a vGPU, powered off
            direct.shared_direct("esxi-%03d.lab.local" % number)
        for number in range(1, 101):
            direct.add_vgpu("gpu-vm-%03d" % number, "grid_p40-2q" if number % 2 else "grid_p40-4q")
        for number in range(1, 41):
            direct.power_on("gpu-vm-%03d" % number)
    finally:
        direct.close()
    lab.reset_stats()
    found = listed(lab, tmp_path)
    stats = lab.stats()
    truth = ground_truth(lab.state())
    assert len(truth["esxi_hosts"]) == 40 and len(truth["gpu_guests"]) == 100
    same_as_truth(found, truth)
    assert stats["by_method"] == ONE_READ
    assert len(members(found, "vgpu_grid_p40_2q")) == 50 and len(members(found, "cluster_gpu_cluster_04")) == 35


def test_ansible_host_from_vmware_tools_reaches_the_guest(labs, tmp_path):
    """A topology whose gpu-vm-01 runs a guest reached at the loopback (what labctl --guests gives the VMs of its
    guest containers): VMware Tools' address (guest.ipAddress, read over SOAP) becomes ansible_host, and Ansible
    reaches the guest container with it and nothing but the port and key from the user's variables."""
    from guest_run import lab_guest

    with open(os.path.join(ROOT, "lab", "topologies", "default.yml")) as handle:
        topology = yaml.safe_load(handle)
    for datacenter in topology["datacenters"]:
        for vm in datacenter.get("vms") or []:
            if vm["name"] == "gpu-vm-01":
                vm["guest_ip"] = "127.0.0.1"
    path = tmp_path / "guest-ip.yml"
    path.write_text(yaml.safe_dump(topology))
    lab = labs(topology=str(path))
    direct = Direct(lab)
    try:
        assert not direct.vm("gpu-vm-01").guest.ipAddress  # powered off: Tools reports nothing
        direct.shared_direct("esxi-01.lab.local")
        direct.add_vgpu("gpu-vm-01", "grid_p40-8q")
        direct.add_vgpu("gpu-vm-04", "grid_p40-8q")
        direct.power_on("gpu-vm-01")
        reported = direct.vm("gpu-vm-01").guest.ipAddress
        nics = [(nic.ipAddress, nic.connected) for nic in direct.vm("gpu-vm-01").guest.net]
    finally:
        direct.close()
    assert reported == "127.0.0.1" and nics == [(["127.0.0.1"], True)]

    with lab_guest("inventory-guest", 120) as guest:
        with open(guest["inventory"]) as handle:
            written = yaml.safe_load(handle)["all"]["children"]["gpu_guests"]
        user_vars = dict((key, value) for key, value in written["vars"].items() if key != "ansible_host")
        inventory = tmp_path / "inventory"
        (inventory / "group_vars").mkdir(parents=True)
        (inventory / "host_vars").mkdir()
        (inventory / "group_vars" / "gpu_guests.yml").write_text(yaml.safe_dump(user_vars))
        (inventory / "host_vars" / "gpu-vm-01.yml").write_text(yaml.safe_dump(
            {"ansible_port": written["hosts"]["inventory-guest"]["ansible_port"]}))
        found = listed(lab, inventory, name="gpu.vcenter_gpu.yml", clusters=["gpu-cluster"])
        hostvars = found["_meta"]["hostvars"]
        assert (hostvars["gpu-vm-01"]["vm_guest_ip"], hostvars["gpu-vm-01"]["ansible_host"]) == (reported, reported)
        assert "ansible_host" not in hostvars["gpu-vm-04"]  # powered off: no address, rather than a wrong one

        proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible"), "-i", str(inventory),
                               "gpu-vm-01", "-m", "ansible.builtin.command", "-a", "hostname"],
                              env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
                                       ANSIBLE_NOCOLOR="1"),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=300,
                              check=False)
        assert proc.returncode == 0, proc.stdout[-3000:]
        assert "inventory-guest" in proc.stdout  # the container's own hostname, answered over SSH
