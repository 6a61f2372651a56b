# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's ESXi host shells: Ansible over SSH, the vGPU manager's nvidia-smi answering from the lab's state.

The lab here is the default datacenter with the vGPU host driver installed on every host and esxi-12 holding two
A100s on an NVLink bridge plus a third one with ECC off. Every assertion compares with GET /lab/state.
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

from conftest import DEFAULT_TOPOLOGY, LAB_CONTROL, PORT_OFFSET, ROOT, labctl
from vlcm_lab import DRIVER, DRIVER_VERSION
from vsphere_direct import Direct

sys.path.insert(0, os.path.join(ROOT, ".tmp", "collections"))
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import (  # noqa: E402
    parse_nvlink_remote,
    parse_nvlink_status,
    parse_query,
    parse_topology,
)

P40_HOSTS = ("esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local")
NVLINK_HOST = "esxi-12.lab.local"


def shells_topology(directory):
    with open(DEFAULT_TOPOLOGY) as handle:
        topology = yaml.safe_load(handle)
    datacenter = topology["datacenters"][0]
    for host in [h for c in datacenter["clusters"] for h in c["hosts"]] + datacenter["hosts"]:
        host["components"] = {DRIVER: DRIVER_VERSION}
        if host["name"] == NVLINK_HOST:
            host["gpus"] = [{"model": "A100-40", "count": 2}, {"model": "A100-40", "count": 1, "ecc": "disabled"}]
            host["nvlink"] = [[0, 1]]
    topology.pop("guests", None)
    path = os.path.join(str(directory), "host-shells-topology.json")
    with open(path, "w") as handle:
        json.dump(topology, handle)
    return path


@pytest.fixture
def lab(labs, tmp_path_factory):
    return labs(shells_topology(tmp_path_factory.getbasetemp()), extra=("--no-bmc",))


def on_shell(run_tasks, lab, host, tasks, **options):
    """Tasks run on the ESXi host itself, over its SSH connection from the lab inventory."""
    return run_tasks(tasks, hosts=host, **options)


def raw(run_tasks, lab, host, command):
    return on_shell(run_tasks, lab, host, [{"name": "raw", "ansible.builtin.raw": command}]).result(0)["stdout"]


def smi_info(run_tasks, lab, host, **options):
    task = {"name": "nvidia_smi_info", "gpuops.vgpu.nvidia_smi_info": options}
    return on_shell(run_tasks, lab, host, [task]).result(0)["nvidia_smi"]


def bus(pci_id):
    return "0000" + pci_id.upper()


def test_nvidia_smi_info_over_ssh_reads_the_hosts_gpus(lab, run_tasks):
    host = lab.host(NVLINK_HOST)
    facts = smi_info(run_tasks, lab, NVLINK_HOST)
    assert facts["driver_version"] == DRIVER_VERSION.split("-", maxsplit=1)[0]
    assert [g["pci_bus_id"] for g in facts["gpus"]] == sorted(bus(g["pci_id"]) for g in host["gpus"])
    by_bus = dict((bus(g["pci_id"]), g) for g in host["gpus"])
    for gpu in facts["gpus"]:
        truth = by_bus[gpu["pci_bus_id"]]
        assert (gpu["name"], gpu["memory_total_mib"]) == (truth["device_name"], truth["memory_mib"])
        assert gpu["ecc_mode_current"] is (truth["ecc_mode"] == "enabled")
        assert gpu["temperature_gpu_c"] == truth["temperature_c"]
        assert gpu["virtualization_mode"] == "Host VGPU"
    assert [g["ecc_mode_current"] for g in facts["gpus"]] == [True, True, False]
    assert facts["topology"]["nvlink_pairs"] == [{"a": "GPU0", "b": "GPU1", "links": 12}]
    nvlink = dict((g["index"], g) for g in facts["nvlink"]["gpus"])
    assert (nvlink[0]["active_links"], nvlink[1]["active_links"], nvlink[2]["active_links"]) == (12, 12, 0)
    assert "all links are inActive" in nvlink[2]["error"]


def test_raw_and_the_parser_read_topo_and_nvlink_alike(lab, run_tasks):
    pairs = lab.host(NVLINK_HOST)["nvlink"]
    topology = parse_topology(raw(run_tasks, lab, NVLINK_HOST, "nvidia-smi topo -m"))
    assert len(pairs) == 1 and topology["matrix"]["GPU1"]["GPU0"] == "NV12"
    status = parse_nvlink_status(raw(run_tasks, lab, NVLINK_HOST, "nvidia-smi nvlink -s"))
    assert [g["active_links"] for g in status["gpus"]] == [12, 12, 0]
    remote = parse_nvlink_remote(raw(run_tasks, lab, NVLINK_HOST, "nvidia-smi nvlink -R"))
    assert set(link["remote_pci_bus_id"] for link in remote["gpus"][0]["links"]) == {bus(pairs[0][1])}
    # A P40 has no NVLink: nvlink -s prints nothing there, as on a real board without it.
    assert raw(run_tasks, lab, P40_HOSTS[0], "nvidia-smi nvlink -s").strip() == ""


def test_running_vgpus_follow_the_lab_vcenter(lab, run_tasks):
    direct = Direct(lab)
    try:
        direct.shared_direct(P40_HOSTS[0])
        direct.add_vgpu("gpu-vm-01", "grid_p40-8q")
        direct.add_vgpu("gpu-vm-02", "grid_p40-8q")
        before = smi_info(run_tasks, lab, P40_HOSTS[0], gather=["vgpu"])
        assert before["vgpu"]["gpus"][0]["active_vgpus"] == 0
        direct.power_on("gpu-vm-01")
        direct.power_on("gpu-vm-02")
    finally:
        direct.close()
    gpu = lab.host(P40_HOSTS[0])["gpus"][0]
    assert sorted(gpu["vms"]) == ["gpu-vm-01", "gpu-vm-02"]
    facts = smi_info(run_tasks, lab, P40_HOSTS[0], gather=["vgpu"])
    seen = facts["vgpu"]["gpus"][0]
    assert seen["pci_bus_id"] == bus(gpu["pci_id"]) and seen["active_vgpus"] == 2
    assert sorted((v["vm_name"], v["vm_uuid"], v["vgpu_name"], v["fb_total_mib"]) for v in seen["vgpus"]) == [
        (name, lab.vm(name)["uuid"], "GRID P40-8Q", 8192) for name in ("gpu-vm-01", "gpu-vm-02")]
    assert facts["gpus"][0]["memory_used_mib"] == 2 * 8192
    summary = raw(run_tasks, lab, P40_HOSTS[0], "nvidia-smi vgpu")
    assert "gpu-vm-01" in summary and "GRID P40-8Q" in summary


def test_a_temperature_raised_through_the_lab_shows_in_q_d_temperature(lab, run_tasks):
    pci_id = lab.host(P40_HOSTS[1])["gpus"][0]["pci_id"]
    lab.request("POST", "/lab/gpus", {"host": P40_HOSTS[1], "pci_id": pci_id, "temperature_c": 87})
    assert lab.host(P40_HOSTS[1])["gpus"][0]["temperature_c"] == 87
    text = raw(run_tasks, lab, P40_HOSTS[1], "nvidia-smi -q -d TEMPERATURE")
    gpu = parse_query(text)["gpus"][0]
    assert (gpu["pci_bus_id"], gpu["temperature_gpu_c"]) == (bus(pci_id), 87)
    assert "FB Memory Usage" not in text and "GPU Slowdown Temp" in text
    csv = raw(run_tasks, lab, P40_HOSTS[1], "nvidia-smi --query-gpu=pci.bus_id,temperature.gpu --format=csv,noheader")
    assert csv.strip() == "%s, 87" % bus(pci_id)


def test_the_lab_refuses_a_bad_gpu_change_and_changes_nothing(lab):
    before = lab.state()
    for body, words in (({"host": "esxi-99.lab.local", "temperature_c": 50}, "no host"),
                        ({"host": P40_HOSTS[0], "pci_id": "0000:01:00.0", "ecc_mode": "disabled"}, "has no GPU"),
                        ({"host": P40_HOSTS[0], "ecc_mode": "off"}, "is not enabled or disabled"),
                        ({"host": P40_HOSTS[0], "temperature_c": 500}, "outside 0 to")):
        with pytest.raises(Exception) as raised:
            lab.request("POST", "/lab/gpus", body)
        assert words in raised.value.read().decode()
    assert lab.state() == before


def test_doctor_host_checks_run_from_the_shells_and_ecc_mismatch_fails(lab, run_tasks):
    lab.request("POST", "/lab/gpus", {"host": P40_HOSTS[2], "ecc_mode": "disabled"})
    task = {"name": "doctor", "ansible.builtin.include_role": {"name": "gpuops.vgpu.doctor"}, "vars": {
        "doctor_gather_bmc": False, "doctor_gather_guests": False, "doctor_fail_on": "never",
        "doctor_clusters": ["gpu-cluster"], "doctor_output_dir": str(lab.state_dir) + "/doctor-test"}}
    run = run_tasks([task])
    findings = [r["ansible_facts"]["doctor_findings"] for r in run.results
                if "doctor_findings" in r.get("ansible_facts", {})][-1]
    found = dict(((f["check"], f["object"]), f) for f in findings)
    for name in P40_HOSTS:
        gpu = "%s %s" % (name, lab.host(name)["gpus"][0]["pci_id"])
        assert found[("host_driver", name)]["message"] == "vGPU Manager 525.105.14, R525, vGPU 15 (nvidia-smi)."
        assert found[("gpu_temperature", gpu)]["status"] == "PASS"
        assert found[("running_vgpus", gpu)]["status"] == "PASS"
    ecc = found[("ecc_alike", "gpu-cluster")]
    assert ecc["status"] == "FAIL" and "esxi-03.lab.local 0000:3b:00.0 off" in ecc["message"]
    assert "nvidia-smi -e" in ecc["remediation"]


def test_lab_down_leaves_no_sshd_behind(tmp_path):
    state_dir = str(tmp_path / "lab")
    labctl("up", state_dir, "--topology", DEFAULT_TOPOLOGY, "--no-bmc", "--port-offset", str(PORT_OFFSET + 500))
    try:
        services = LAB_CONTROL.read_services(state_dir)
        shells = services["shells"]
        with open(DEFAULT_TOPOLOGY) as handle:
            topology = yaml.safe_load(handle)
        names = [host["name"] for dc in topology["datacenters"] for cluster in dc.get("clusters", [])
                 for host in cluster["hosts"]] + [host["name"] for dc in topology["datacenters"]
                                                  for host in dc.get("hosts", [])]
        assert sorted(shells["hosts"]) == sorted(names)  # every host of the default topology has a shell
        port = shells["hosts"][P40_HOSTS[0]]["port"]
        # A session left open, as Ansible's ControlPersist leaves one: its sshd runs in a session of its own.
        session = subprocess.Popen(["ssh", "-i", shells["private_key"], "-o", "UserKnownHostsFile=" + shells[
            "known_hosts"], "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-p", str(port),
            "root@127.0.0.1", "nvidia-smi -L; sleep 120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 20
        while not LAB_CONTROL.shells.descendants(shells["hosts"][P40_HOSTS[0]]["pid"]) and time.monotonic() < deadline:
            time.sleep(0.2)
        pids = [h["pid"] for h in shells["hosts"].values()]
        children = [c for pid in pids for c in LAB_CONTROL.shells.descendants(pid)]
        assert pids and children
    finally:
        labctl("down", state_dir)
    session.wait(timeout=30)
    assert not [pid for pid in pids + children if LAB_CONTROL.pid_alive(pid) and not _zombie(pid)]
    processes = subprocess.run(["ps", "-eo", "args"], stdout=subprocess.PIPE, universal_newlines=True,
                               check=True).stdout.splitlines()
    assert not [line for line in processes if state_dir in line]


def _zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
