# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_info against the lab vCenter, checked against the lab's ground truth."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

from conftest import INVENTORY, ROOT, labctl, start_lab
from vsphere_direct import Direct

P40_PROFILES_MAX = {"grid_p40-1q": 24, "grid_p40-2q": 12, "grid_p40-3q": 8, "grid_p40-4q": 6, "grid_p40-6q": 4,
                    "grid_p40-8q": 3, "grid_p40-12q": 2, "grid_p40-24q": 1, "grid_p40-8c": 3, "grid_p40-24c": 1}


def gpu_info(run_tasks, **options):
    return run_tasks([{"name": "gpu_info", "gpuops.vgpu.gpu_info": options}]).result(0)


def test_cluster_hosts_match_ground_truth(lab, run_tasks):
    result = gpu_info(run_tasks, cluster="gpu-cluster")
    truth = dict((host["name"], host) for host in lab.state()["hosts"] if host["cluster"] == "gpu-cluster")

    assert result["changed"] is False
    assert [host["name"] for host in result["hosts"]] == sorted(truth)
    for host in result["hosts"]:
        real = truth[host["name"]]
        assert host["cluster"] == "gpu-cluster"
        assert host["datacenter"] == "lab-dc"
        assert host["connection_state"] == real["connection_state"]
        assert host["maintenance_mode"] == real["maintenance_mode"]
        assert host["graphics_config"]["default_graphics_type"] == real["graphics_config"]["default_graphics_type"]
        assert host["graphics_config"]["assignment_policy"] == real["graphics_config"]["assignment_policy"]
        assert [(gpu["pci_id"], gpu["model"], gpu["graphics_type"], gpu["memory_mib"]) for gpu in host["gpus"]] == [
            (gpu["pci_id"], gpu["model"], gpu["graphics_type"], gpu["memory_mib"]) for gpu in real["gpus"]]
        assert sorted(p["name"] for p in host["supported_profiles"]) == sorted(real["supported_profiles"])


def test_p40_profiles_and_capacity(lab, run_tasks):
    result = gpu_info(run_tasks, cluster="gpu-cluster")
    for host in result["hosts"]:
        assert [gpu["device_name"] for gpu in host["gpus"]] == ["Tesla P40"]
        profiles = dict((p["name"], p) for p in host["supported_profiles"])
        for name, maximum in P40_PROFILES_MAX.items():
            assert profiles[name]["max_per_gpu"] == maximum, name
            assert profiles[name]["capacity"] == maximum, name
            # A GPU still in basic mode takes no vGPU until it is in Shared Direct.
            assert profiles[name]["free"] == 0, name
        assert profiles["grid_p40-8q"]["framebuffer_mib"] == 8192
        assert profiles["grid_p40-8q"]["series"] == "Q"
        assert profiles["grid_p40-8q"]["cuda"] is True


def test_running_vgpus_show_on_their_gpu(lab, run_tasks):
    direct = Direct(lab)
    try:
        direct.shared_direct("esxi-01.lab.local")
        direct.add_vgpu("gpu-vm-01", "grid_p40-8q")
        direct.add_vgpu("gpu-vm-02", "grid_p40-8q")
        direct.power_on("gpu-vm-01")
        direct.power_on("gpu-vm-02")
    finally:
        direct.close()

    result = gpu_info(run_tasks, esxi_hostnames=["esxi-01.lab.local"], vms=["gpu-vm-01", "gpu-vm-03"])
    truth = lab.host("esxi-01.lab.local")
    gpu = result["hosts"][0]["gpus"][0]
    assert gpu["graphics_type"] == truth["gpus"][0]["graphics_type"] == "sharedDirect"
    assert gpu["profile"] == truth["gpus"][0]["profile"] == "grid_p40-8q"
    assert gpu["vms"] == sorted(truth["gpus"][0]["vms"]) == ["gpu-vm-01", "gpu-vm-02"]
    assert (gpu["used"], gpu["max"], gpu["free"]) == (2, 3, 1)
    profiles = dict((p["name"], p) for p in result["hosts"][0]["supported_profiles"])
    assert profiles["grid_p40-8q"]["free"] == 1
    assert profiles["grid_p40-4q"]["free"] == 0, "a GPU carved for 8Q takes no other size"

    vms = dict((vm["name"], vm) for vm in result["vms"])
    assert [vm["name"] for vm in result["vms"]] == ["gpu-vm-01", "gpu-vm-03"]
    real = lab.vm("gpu-vm-01")
    assert vms["gpu-vm-01"]["power_state"] == real["power_state"] == "poweredOn"
    assert vms["gpu-vm-01"]["host"] == real["host"]
    assert [v["profile"] for v in vms["gpu-vm-01"]["vgpus"]] == [v["profile"] for v in real["vgpus"]]
    assert vms["gpu-vm-01"]["memory_reservation_locked_to_max"] is real["memory_reservation_locked_to_max"] is True
    assert vms["gpu-vm-03"]["vgpus"] == [] and lab.vm("gpu-vm-03")["vgpus"] == []


def test_all_hosts_and_mixed_models(lab, run_tasks):
    result = gpu_info(run_tasks)
    truth = lab.state()["hosts"]
    assert sorted(host["name"] for host in result["hosts"]) == sorted(host["name"] for host in truth)
    by_name = dict((host["name"], host) for host in result["hosts"])
    assert by_name["esxi-sa-01.lab.local"]["cluster"] is None
    assert by_name["esxi-sa-01.lab.local"]["datacenter"] == "lab-dc"
    mixed = by_name["esxi-11.lab.local"]
    assert [gpu["model"] for gpu in mixed["gpus"]] == ["T4", "T4"]
    t4 = dict((p["name"], p) for p in mixed["supported_profiles"])
    assert t4["grid_t4-4c"]["max_per_gpu"] == 4 and t4["grid_t4-4c"]["capacity"] == 8


def test_check_mode_is_the_same_read(lab, run_tasks):
    before = lab.state()
    result = run_tasks([{"name": "gpu_info", "gpuops.vgpu.gpu_info": {"cluster": "gpu-cluster"}}], check=True).result(0)
    assert result["changed"] is False
    assert len(result["hosts"]) == 3
    assert lab.state() == before


@pytest.mark.parametrize("options, words", [
    ({"cluster": "no-such-cluster"}, ["no-such-cluster", "gpu-cluster", "mixed-cluster"]),
    ({"esxi_hostnames": ["esxi-99.lab.local"]}, ["esxi-99.lab.local", "esxi-01.lab.local"]),
    ({"cluster": "gpu-cluster", "esxi_hostnames": ["esxi-11.lab.local"]}, ["esxi-11.lab.local", "gpu-cluster"]),
    ({"vms": ["no-such-vm"]}, ["no-such-vm"]),
    ({"datacenter": "no-such-dc"}, ["no-such-dc", "lab-dc"]),
])
def test_bad_input_fails_with_a_clear_message(lab, run_tasks, options, words):
    run = run_tasks([{"name": "gpu_info", "gpuops.vgpu.gpu_info": options}], expect_failure=True)
    message = run.result(0)["msg"]
    for word in words:
        assert word in message


def test_wrong_password_fails_without_leaking_it(lab, run_tasks):
    secret = "Wr0ng-Secret-Value"
    run = run_tasks([{"name": "gpu_info", "gpuops.vgpu.gpu_info": {"password": secret}}], expect_failure=True,
                    verbosity=3, callback="ansible.builtin.default")
    assert "refused the login" in run.stdout
    assert secret not in run.stdout + run.stderr


def test_certificates_are_verified_by_default(lab, run_tasks):
    options = {"validate_certs": True}
    run = run_tasks([{"name": "gpu_info", "gpuops.vgpu.gpu_info": options}], expect_failure=True)
    assert "could not be verified" in run.result(0)["msg"]
    trusted = run_tasks([{"name": "gpu_info", "gpuops.vgpu.gpu_info": options}],
                        env={"SSL_CERT_FILE": lab.certificate}).result(0)
    assert len(trusted["hosts"]) == len(lab.state()["hosts"])


def test_connection_from_environment(lab, run_tasks):
    conn = lab.connection
    env = {"VMWARE_HOST": conn["hostname"], "VMWARE_PORT": str(conn["port"]), "VMWARE_USER": conn["username"],
           "VMWARE_PASSWORD": conn["password"], "VMWARE_VALIDATE_CERTS": "false"}
    run = run_tasks([{"name": "gpu_info", "gpuops.vgpu.gpu_info": {"cluster": "gpu-cluster"}}],
                    module_defaults={"group/gpuops.vgpu.vcenter": {}}, env=env)
    assert len(run.result(0)["hosts"]) == 3


def _running_vgpus(some_lab, vm_names):
    direct = Direct(some_lab)
    try:
        for host in some_lab.state()["hosts"]:
            if host["gpus"]:
                direct.shared_direct(host["name"])
        for name in vm_names:
            direct.add_vgpu(name, "grid_p40-1q")
            direct.power_on(name)
    finally:
        direct.close()


def _gpu_info_requests(some_lab, tmp_path):
    some_lab.reset_stats()
    result = run_gpu_info_against(some_lab, tmp_path)
    return result, some_lab.stats()


def test_round_trips_do_not_grow_with_hosts_or_vms(tmp_path):
    """The same number of SOAP requests for 3 hosts with 2 vGPU VMs as for 30 hosts with 30 vGPU VMs."""
    labctl("down")
    runs = {}
    for label, hosts, vgpu_vms in (("small", 3, 2), ("big", 30, 30)):
        topology = tmp_path / ("%s.json" % label)
        with open(str(topology), "w") as handle:
            subprocess.run([sys.executable, os.path.join(ROOT, "lab", "topologies", "generate.py"),
                            "--hosts", str(hosts), "--vms", str(hosts * 10)], stdout=handle, check=True)
        state_dir = str(tmp_path / ("lab-%s" % label))
        some_lab = start_lab(state_dir=state_dir, topology=str(topology), extra=("--no-bmc",))
        try:
            _running_vgpus(some_lab, ["gpu-vm-%03d" % n for n in range(1, vgpu_vms + 1)])
            result, stats = _gpu_info_requests(some_lab, tmp_path)
        finally:
            labctl("down", state_dir)
        assert len(result["hosts"]) == hosts
        assert sum(gpu["used"] for host in result["hosts"] for gpu in host["gpus"]) == vgpu_vms
        runs[label] = stats
    start_lab()
    assert runs["big"]["soap_requests"] == runs["small"]["soap_requests"], json.dumps(runs)
    assert runs["big"]["by_method"] == runs["small"]["by_method"], json.dumps(runs)


def run_gpu_info_against(other_lab, tmp_path):
    """gpu_info against a lab instance other than the module's fixture."""
    play = [{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"gpuops.vgpu.gpu_info": other_lab.connection, "register": "out"},
        {"ansible.builtin.copy": {"content": "{{ out | to_json }}", "dest": str(tmp_path / "out.json")}},
    ]}]
    playbook = tmp_path / "gpu_info.yml"
    playbook.write_text(yaml.safe_dump(play))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"))
    subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", INVENTORY,
                    str(playbook)], check=True, env=env, cwd=ROOT, stdout=subprocess.PIPE)
    with open(str(tmp_path / "out.json")) as handle:
        return json.load(handle)
