# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/passthrough.yml (gpu_passthrough, then gpu_validate in the guests) against the lab.

Two lab guest containers stand for pt-vm-01 and pt-vm-02 (labctl.start_guests with ``passthrough: true``): they
start without a driver; once the playbook installed the data center driver (nvidia_driver), their nvidia-smi answers
from the GPUs the lab vCenter gave their VM. The end state is read from /lab/state and from the
guests themselves.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from conftest import LAB_CONTROL, PORT_OFFSET, ROOT

HOST = "esxi-31.lab.local"
PAIRS = [["0000:3b:00.0", "0000:5e:00.0"], ["0000:86:00.0", "0000:af:00.0"]]
GUESTS = {"pt-guest-01": "pt-vm-01", "pt-guest-02": "pt-vm-02"}
PLAYBOOK = os.path.join(ROOT, "playbooks", "passthrough.yml")
STATE_DIR = os.path.join(ROOT, ".tmp", "passthrough-guests-%d" % PORT_OFFSET)
GIVE_TASK = "Give the VMs their GPUs, in one task for all of them"
PLAN_TASK = "Read the VMs, their hosts and what passthrough would change"
HOST_STEPS = "Hand the hosts' GPUs to passthrough where a host differs"


@pytest.fixture(scope="module")
def guests(labs):
    lab = labs()
    os.makedirs(STATE_DIR, exist_ok=True)
    specs = [{"name": name, "vm": vm, "passthrough": True, "ssh_port": LAB_CONTROL.GUEST_SSH_PORT + 110 + index}
             for index, (name, vm) in enumerate(sorted(GUESTS.items()))]
    started = LAB_CONTROL.start_guests(specs, STATE_DIR, PORT_OFFSET, lab={
        "url": lab.services["vcenter"]["lab"], "cafile": lab.certificate,
        "catalog": os.path.join(lab.state_dir, "catalog.json")})
    yield started
    LAB_CONTROL.stop_guests([guest["container"] for guest in started.values()])


def inventory(tmp_path, guests, gpus, nvlink=True):
    common = "-o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s" % os.path.join(STATE_DIR, "guest_known_hosts")
    group = {"vars": {"ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_user": "root",
                      "ansible_python_interpreter": "/usr/bin/python3", "ansible_ssh_common_args": common,
                      "ansible_ssh_private_key_file": os.path.join(STATE_DIR, "guest_ssh_key"),
                      "passthrough_nvlink": nvlink,
                      # The CUDA toolkit, NCCL and nccl-tests (its all_reduce_perf) as job.yml has them for the
                      # lab's passthrough guest: the layer installs them before it validates.
                      "cuda_toolkit_remote_src": "/srv/lab-artifacts/cuda_12.1.1_530.30.02_linux.run",
                      "cuda_toolkit_override": True, "cuda_toolkit_no_man_page": True,
                      "nccl_version": "2.21.5-1", "nccl_tests_prerequisites": ["make"],
                      "nccl_tests_remote_src": "/srv/lab-artifacts/nccl-tests-2.13.6.tar.gz",
                      # The data center driver from the lab's stand-in of NVIDIA's CUDA repository, as job.yml has it.
                      "nvidia_driver_branch": "535", "nvidia_driver_rebuild_initramfs": False},
             "hosts": dict((name, {"ansible_port": guest["ssh_port"], "passthrough_vm_name": GUESTS[name],
                                   "passthrough_gpus": gpus[name]})
                           for name, guest in guests.items() if name in gpus)}
    # esxi-31 runs no vGPU manager, so its shell has no nvidia-smi: the sets come from the inventory.
    vcenter = {"vars": {"passthrough_nvlink_sets": {HOST: PAIRS}}}
    path = tmp_path / "passthrough-guests.yml"
    path.write_text(yaml.safe_dump({"all": {"children": {"passthrough_guests": group, "vcenter": vcenter}}}))
    return path


def run_playbook(lab, guests_inventory, *args):
    """The playbook with the json callback; returns (rc, per-task results, stdout)."""
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook")] + lab.inventory_args + [
        "-i", str(guests_inventory),
        "-e", json.dumps({"vcenter_port": lab.port}), PLAYBOOK] + list(args)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
               ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0")
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    document = json.loads(proc.stdout[proc.stdout.index("{"):])
    results = {}
    for play in document["plays"]:
        for task in play["tasks"]:
            for host, result in task["hosts"].items():
                results.setdefault(task["task"]["name"].split(" : ")[-1], {})[host] = result
    return proc.returncode, results, proc.stdout + proc.stderr


def held(lab):
    return dict((vm["name"], (vm["power_state"], sorted(d["gpu"] or "" for d in vm["passthrough"])))
                for vm in lab.state()["vms"] if vm["name"] in GUESTS.values())


def on_guest(guests, name, *command):
    return LAB_CONTROL.podman("exec", guests[name]["container"], *command, check=False).stdout


def test_each_vm_gets_a_complete_nvlink_pair_and_its_guest_check_passes(lab, guests, tmp_path):
    path = inventory(tmp_path, guests, {"pt-guest-01": 2, "pt-guest-02": 2})
    rc, results, output = run_playbook(lab, path)
    assert rc == 0, output[-6000:]
    truth = held(lab)
    assert sorted(gpus for _power, gpus in truth.values()) == PAIRS
    assert all(power == "poweredOn" for power, _gpus in truth.values())
    host = next(h for h in lab.state()["hosts"] if h["name"] == HOST)
    assert all(gpu["passthru_enabled"] and gpu["passthru_active"] for gpu in host["gpus"])
    for name in GUESTS:
        # The guest had no driver: the playbook installed branch 535 from the lab's CUDA repository stand-in.
        packages = on_guest(guests, name, "dpkg-query", "-W", "-f", "${db:Status-Abbrev}${Package}\n", "cuda-drivers-*")
        assert [line.split()[1] for line in packages.splitlines() if line.startswith("ii")] == ["cuda-drivers-535"]
        assert re.search(r"^Driver Version\s+: 535\.161\.08$", on_guest(guests, name, "nvidia-smi", "-q"), re.M)
        assert "NV12" in on_guest(guests, name, "nvidia-smi", "topo", "-m")
        checks = results["Report the checks"][name]["ansible_facts"]["gpu_validate_result"]
        assert checks["passed"] is True, checks
        assert [checks["checks"][c]["status"] for c in ("passthrough_gpus", "nvlink_topology", "nvlink_status",
                                                        "p2p", "fabric_manager")] == [
            "ok", "ok", "ok", "ok", "skipped"]
        # NCCL's all-reduce ran on the pair and was judged against the NVLink topology read with it.
        assert checks["checks"]["nccl"]["status"] == "ok", checks["checks"]["nccl"]
        assert "over NVLink" in checks["checks"]["nccl"]["message"] and "NV12" in checks["checks"]["nccl"]["message"]

    before = lab.state()
    rc, again, output = run_playbook(lab, path)
    assert rc == 0, output[-6000:]
    plan = again[PLAN_TASK]["localhost"]
    assert plan["host_differences"] == [] and again[HOST_STEPS]["localhost"]["skipped"] is True
    # esxi-31 has a shell in the inventory, so its NVLink sets may come from its own nvidia-smi: the VM step reads
    # them and vm_passthrough judges the VMs (the lab job sets gpu_passthrough_host_nvidia_smi false instead).
    assert plan["vm_differences"] == ["%s: its host's NVLink sets come from the host's nvidia-smi" % vm
                                      for vm in sorted(GUESTS.values())]
    assert again[GIVE_TASK]["localhost"]["changed"] is False
    assert not [name for name, hosts in again.items() if hosts.get("localhost", {}).get("changed")
                and "lock of each GPU cluster" not in name]
    assert held(lab) == truth and lab.state()["vms"] == before["vms"]


def test_guest_check_fails_naming_the_split_pair(lab, guests, tmp_path, run_tasks):
    split = [PAIRS[0][0], PAIRS[1][0]]
    run_tasks([{"gpuops.vgpu.host_passthrough": {"esxi_hostnames": [HOST], "models": ["A100-40"]}},
               {"gpuops.vgpu.vm_passthrough": {"vms": [{"name": "pt-vm-01", "devices": split}], "power_on": True}}])
    assert held(lab)["pt-vm-01"] == ("poweredOn", split)
    path = inventory(tmp_path, guests, {"pt-guest-01": split})
    # As if on an NVSwitch board: the guest has no fabric manager running.
    rc, results, output = run_playbook(lab, path, "--tags", "gpu_validate", "-e",
                                       "gpu_validate_passthrough_nvswitch=true")
    assert rc != 0
    checks = results["Report the checks"]["pt-guest-01"]["ansible_facts"]["gpu_validate_result"]["checks"]
    assert checks["passthrough_gpus"]["status"] == "ok"
    assert checks["nvlink_topology"]["status"] == "failed"
    assert "GPU0, GPU1 have no NVLink peer in this VM" in checks["nvlink_topology"]["message"]
    assert "all links are inActive" in checks["nvlink_status"]["message"]
    assert checks["fabric_manager"]["status"] == "failed"
    assert checks["fabric_manager"]["message"].startswith("nvidia-fabricmanager is ")
    failure = results["Show the checks, and fail when one failed"]["pt-guest-01"]["msg"]
    assert "nvlink_topology" in failure and "its NVLink set was split" in failure
    assert held(lab)["pt-vm-01"] == ("poweredOn", split)


def test_role_refuses_half_a_pair_and_leaves_the_vms_as_they_were(lab, guests, tmp_path):
    path = inventory(tmp_path, guests, {"pt-guest-01": 3})
    before = lab.state()
    rc, results, output = run_playbook(lab, path)
    assert rc != 0
    assert GIVE_TASK in results, output[-4000:]
    assert "as whole NVLink sets" in results[GIVE_TASK]["localhost"]["msg"]
    after = lab.state()
    assert [vm for vm in after["vms"] if vm["name"] in GUESTS.values()] == \
        [vm for vm in before["vms"] if vm["name"] in GUESTS.values()]


def doctor_and_report(run_tasks, out):
    tasks = [
        {"name": "doctor", "ansible.builtin.include_role": {"name": "gpuops.vgpu.doctor"}, "vars": {
            "doctor_verdict": False, "doctor_output_dir": str(out), "doctor_clusters": ["hpc-cluster"],
            "doctor_gather_bmc": False, "doctor_passthrough_nvlink_sets": {HOST: PAIRS}}},
        {"name": "fleet", "ansible.builtin.include_role": {"name": "gpuops.vgpu.fleet_report"}, "vars": {
            "fleet_report_output_dir": str(out), "fleet_report_clusters": ["hpc-cluster"]}},
    ]
    run_tasks(tasks)
    with open(str(out / "doctor.json")) as handle:
        findings = json.load(handle)["findings"]
    return dict((f["check"], f) for f in findings if f["object"] == HOST), (out / "fleet-report.html").read_text()


def test_doctor_and_fleet_report_show_the_pairs_and_who_holds_them(lab, run_tasks, tmp_path):
    run_tasks([{"gpuops.vgpu.host_passthrough": {"esxi_hostnames": [HOST], "models": ["A100-40"]}},
               {"gpuops.vgpu.vm_passthrough": {"vms": [{"name": "pt-vm-01", "gpus": 2}], "nvlink": True,
                                               "nvlink_sets": {HOST: PAIRS}, "power_on": True}}])
    assert held(lab)["pt-vm-01"] == ("poweredOn", PAIRS[0])
    checks, html = doctor_and_report(run_tasks, tmp_path / "whole")
    assert checks["passthrough"]["status"] == "PASS"
    assert "%s (NVLink) -> pt-vm-01 (poweredOn); %s (NVLink) -> free" % ("+".join(PAIRS[0]), "+".join(PAIRS[1])) \
        in checks["passthrough"]["message"]
    assert checks["host_driver"]["status"] == "PASS" and "shared_direct" not in checks
    assert 'data-pci="%s" data-vm="pt-vm-01"' % PAIRS[0][1] in html and "NVLink set %s" % " + ".join(PAIRS[0]) in html

    run_tasks([{"gpuops.vgpu.vm_passthrough": {"vms": [{"name": "pt-vm-02", "devices": [PAIRS[1][0]]}],
                                               "power_on": True}}])
    checks, _html = doctor_and_report(run_tasks, tmp_path / "split")
    assert checks["passthrough"]["status"] == "WARN"
    assert "NVLink set split between VMs: %s" % "+".join(PAIRS[1]) in checks["passthrough"]["message"]


# Login, every VM, the host tree, logout.
CONVERGED_SOAP_REQUESTS = 11


def test_a_converged_rerun_of_the_role_reads_once_and_changes_nothing(lab, run_tasks, tmp_path):
    """The role alone (no guest is reached): the first run hands esxi-31's GPUs over and gives pt-vm-01 a pair; the
    second reads once, runs neither step and makes no change."""
    path = tmp_path / "pt.yml"
    path.write_text(yaml.safe_dump({"all": {"children": {
        "passthrough_guests": {"hosts": {"pt-guest-01": {"passthrough_vm_name": "pt-vm-01", "passthrough_gpus": 2,
                                                         "passthrough_nvlink": True}}},
        "vcenter": {"vars": {"passthrough_nvlink_sets": {HOST: PAIRS}, "gpu_passthrough_host_nvidia_smi": False}}}}}))
    role = [{"name": "gpu_passthrough", "ansible.builtin.include_role": {"name": "gpuops.vgpu.gpu_passthrough"}}]
    first = run_tasks(role, inventories=[path])
    assert [task.split(" : ")[-1] for task in first.module_runs] == [
        PLAN_TASK, "Hand the hosts' GPUs to passthrough", GIVE_TASK]
    assert held(lab)["pt-vm-01"] == ("poweredOn", PAIRS[0])

    before = lab.state()
    lab.reset_stats()
    again = run_tasks(role, inventories=[path])
    stats = lab.stats()
    assert [task.split(" : ")[-1] for task in again.module_runs] == [PLAN_TASK], "the read alone runs a module"
    plan = next(r for r in again.results if r["_task"].endswith(PLAN_TASK))
    assert (plan["host_differences"], plan["vm_differences"]) == ([], [])
    assert [r["_task"] for r in again.results if r.get("changed")] == []
    assert lab.state() == before
    assert stats["soap_requests"] <= CONVERGED_SOAP_REQUESTS, stats
    assert not [method for method in stats["by_method"] if method.endswith("_Task") or "Passthru" in method], stats
