# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""200 running VMs get a new vGPU profile with power: shutdown_guest and power_on; the controller dies (SIGKILL of
ansible-playbook, its workers and the module) at a seeded moment inside the run, then one more run: every VM that
was on is on, every VM has exactly one vGPU, the asked one, and no power record is left. The same under chaos (a
tenth of the SOAP requests failing, changes applied with their answer lost among them) during both runs, and with a
run that asks for nothing.

GPUOPS_VM_CRASH_SEEDS chooses the seeds (default: one; make soak runs many); a failure names its seed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import random
import subprocess
import sys
import time

import pytest
import yaml

from conftest import ROOT
from site_run import kill_tree, log_trial, seeds
from vsphere_direct import Direct

VMS, HOSTS = 200, 10
OLD, NEW = "grid_p40-1q", "grid_p40-2q"
FIELD = "gpuops.vgpu.vm_vgpu.power"
MAX_RUNS = 3


@pytest.fixture
def big_lab(labs, tmp_path_factory):
    topology = tmp_path_factory.mktemp("topology") / "vms.json"
    with open(str(topology), "w") as handle:
        subprocess.run([sys.executable, os.path.join(ROOT, "lab", "topologies", "generate.py"), "--hosts",
                        str(HOSTS), "--gpus-per-host", "2", "--vms", str(VMS)], stdout=handle, check=True)
    lab = labs(topology=str(topology), extra=("--no-bmc", "--no-shells"))
    direct = Direct(lab)
    try:
        for host in sorted(h["name"] for h in lab.state()["hosts"]):
            direct.shared_direct(host)
    finally:
        direct.close()
    return lab


def playbook(lab, path, vms, chaos=None):
    """argv and environment of one vm_vgpu run on ``vms`` (names) to the new profile."""
    task = {"gpuops.vgpu.vm_vgpu": {"profile": NEW, "vms": [{"name": name} for name in vms], "power": "shutdown_guest",
                                    "power_on": True, "parallel": 16, "shutdown_timeout": 60}}
    defaults = {"group/gpuops.vgpu.vcenter": lab.connection}
    play = [{"hosts": "localhost", "gather_facts": False, "module_defaults": defaults, "tasks": [task]}]
    path.write_text(yaml.safe_dump(play))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
            "-e", "ansible_python_interpreter=%s" % sys.executable, str(path)]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0")
    return argv, env


def run(lab, path, vms):
    argv, env = playbook(lab, path, vms)
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=900)
    try:
        plays = json.loads(proc.stdout[proc.stdout.index("{"):])["plays"]
        result = list(plays[0]["tasks"][0]["hosts"].values())[0]
    except (ValueError, KeyError, IndexError):
        result = {"msg": proc.stdout[-3000:]}
    if result.get("module_stderr") or result.get("module_stdout"):
        result["msg"] = "%s\n%s%s" % (result.get("msg"), result.get("module_stdout", "")[-2000:],
                                      result.get("module_stderr", "")[-3000:])
    return proc.returncode, result


def run_and_kill(lab, path, vms, delay):
    """Start a run and SIGKILL it and everything below it ``delay`` seconds in; the seconds it took when it ended
    before that, else None."""
    argv, env = playbook(lab, path, vms)
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    while time.monotonic() - started < delay and proc.poll() is None:
        time.sleep(0.02)
    ended = round(time.monotonic() - started, 2) if proc.poll() is not None else None
    kill_tree(proc.pid)
    proc.wait()
    return ended


def running_with(lab, profile):
    """All VMs on with ``profile``, powered on through vm_vgpu itself (the setup a datacenter starts from)."""
    names = sorted(vm["name"] for vm in lab.state()["vms"])
    direct = Direct(lab)
    try:
        for name in names:
            direct.add_vgpu(name, profile)
            direct.power_on(name)
    finally:
        direct.close()
    return names


def problems(lab, names, asked):
    """What is not as it must be: a VM off, a VM without exactly one vGPU of an allowed profile, a record left."""
    found = []
    for vm in lab.state()["vms"]:
        if vm["name"] not in names:
            continue
        profiles = [vgpu["profile"] for vgpu in vm["vgpus"]]
        if vm["power_state"] != "poweredOn":
            found.append("%s is %s" % (vm["name"], vm["power_state"]))
        if len(profiles) != 1 or profiles[0] not in asked:
            found.append("%s has %s" % (vm["name"], profiles))
        if not vm["memory_reservation_locked_to_max"]:
            found.append("%s has no memory lock" % vm["name"])
        if (vm.get("custom_values") or {}).get(FIELD):
            found.append("%s still carries a power record" % vm["name"])
    return found


def left_off(lab, names):
    return sum(1 for vm in lab.state()["vms"] if vm["name"] in names and vm["power_state"] != "poweredOn")


def left_off_after_kill(lab, names):
    """The VMs off once the killed run's last guest shutdowns have ended: ShutdownGuest returns at once and the
    guest goes off a moment later (200 ms in the lab, lab/vcenter/vm.go), so a VM asked just before the kill goes off
    after it. Read until two reads half a second apart agree."""
    time.sleep(1.0)
    before = left_off(lab, names)
    for _attempt in range(20):
        time.sleep(0.5)
        now = left_off(lab, names)
        if now == before:
            return now
        before = now
    return before


@pytest.mark.parametrize("chaos", [False, True], ids=["plain", "chaos"])
@pytest.mark.parametrize("seed", seeds("GPUOPS_VM_CRASH_SEEDS", "11"))
def test_vm_layer_killed_at_a_seeded_moment_leaves_no_running_vm_off_after_the_next_run(
        big_lab, tmp_path, seed, chaos):
    lab = big_lab
    names = running_with(lab, OLD)
    rng = random.Random(seed * 2 + chaos)
    # A whole run of the 200 VMs takes about 7 s (2 s of it ansible-playbook starting), under chaos longer: most
    # kills land inside it.
    delay = round(rng.uniform(1.0, 15.0 if chaos else 7.0), 2)
    if chaos:
        lab.request("POST", "/lab/chaos", {"seed": seed, "rate": 0.1, "seconds": 600})
    try:
        ended = run_and_kill(lab, tmp_path / "killed.yml", names, delay)
        off_after_kill = left_off_after_kill(lab, names)
        recovered, runs = [], 0
        for runs in range(1, MAX_RUNS + 1):
            rc, result = run(lab, tmp_path / "next.yml", names)
            recovered.append(len(result.get("recovered") or []))
            if rc == 0:
                break
    finally:
        if chaos:
            lab.request("DELETE", "/lab/chaos")
    left = problems(lab, names, [NEW])
    log_trial("vm_crash", vms=VMS, seed=seed, chaos=chaos, delay=delay, ended_before_kill=ended, off_after_kill=off_after_kill,
              runs=runs, recovered=recovered, vms_left_off=left_off(lab, names), converged=rc == 0 and not left)
    assert rc == 0, "seed %d, killed after %s s: %s" % (seed, delay, result.get("msg"))
    assert left == [], "seed %d, killed after %s s: %s" % (seed, delay, left[:10])


@pytest.mark.parametrize("seed", seeds("GPUOPS_VM_CRASH_SEEDS", "11"))
def test_after_a_kill_a_run_that_asks_for_nothing_powers_every_vm_back_on(big_lab, tmp_path, seed):
    lab = big_lab
    names = running_with(lab, OLD)
    delay = round(random.Random(seed).uniform(1.0, 7.0), 2)
    run_and_kill(lab, tmp_path / "killed.yml", names, delay)
    off_after_kill = left_off_after_kill(lab, names)
    rc, result = run(lab, tmp_path / "recover.yml", [])
    assert rc == 0, result.get("msg")
    assert problems(lab, names, [OLD, NEW]) == [], "seed %d, killed after %s s" % (seed, delay)
    powered_on = [entry["name"] for entry in result["recovered"] if entry["ended"] == "powered on"]
    assert len(powered_on) == off_after_kill
    assert all(entry["summary"].startswith(entry["name"]) for entry in result["recovered"])
