# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/site.yml against a test's lab: the lab inventory's infrastructure and the site run's choices
(inventories/lab/job.yml) without the guest containers, the BMCs and vCenter where this lab runs them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import signal
import subprocess
import sys
import time

import yaml

from conftest import LAB_CONTROL

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SITE = os.path.join(ROOT, "playbooks", "site.yml")


def site_inventory(lab, path):
    """The job's choices for the infrastructure layers, pointed at ``lab``; the guests (vGPU and passthrough) and the
    GPU servers, whose containers a test lab does not start, are left out."""
    with open(os.path.join(ROOT, "inventories", "lab", "job.yml")) as handle:
        job = yaml.safe_load(handle)
    children = dict((name, group) for name, group in job["all"]["children"].items()
                    if name not in ("gpu_guests", "passthrough_guests", "gpu_servers"))
    children["esxi_hosts"] = {"hosts": dict((name, {"bmc_address": bmc["baseuri"]})
                                            for name, bmc in lab.bmcs.items() if name.startswith("esxi-0")
                                            or name.startswith("esxi-1"))}
    # Without the passthrough guests the passthrough layer does nothing, so its hosts and their clusters are left to
    # it: the doctor checks the vGPU clusters only.
    servers = children.get("servers") or {}
    passthrough_hosts = set(((servers.get("children") or {}).pop("passthrough_hosts", None) or {}).get("hosts") or {})
    if servers and not servers.get("children"):
        servers.pop("children", None)
    vcenter_vars = children["vcenter"].get("vars") or {}
    if passthrough_hosts and "doctor_clusters" in vcenter_vars:
        vcenter_vars["doctor_clusters"] = [
            cluster["name"] for datacenter in lab.topology["datacenters"] for cluster in datacenter.get("clusters", [])
            if cluster["name"] in vcenter_vars["doctor_clusters"]
            and not passthrough_hosts.intersection(host["name"] for host in cluster.get("hosts", []))]
    path.write_text(yaml.safe_dump({"all": {"children": children}}))
    return path


def site_command(lab, inventory, state_dir, extra=None):
    """argv and environment of one site run; records (the DRS/DPM snapshot, reports) go to ``state_dir``."""
    variables = {"vcenter_port": lab.port, "doctor_output_dir": str(state_dir),
                 "fleet_report_output_dir": str(state_dir), "cluster_vgpu_state_file":
                 "%s/{{ vcenter_hostname }}_{{ cluster_vgpu_cluster }}.json" % state_dir,
                 "doctor_cluster_vgpu_state_dir": str(state_dir), "doctor_verdict": False}
    variables.update(extra or {})
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook")] + lab.inventory_args + [
        "-i", str(inventory), "-e", json.dumps(variables), SITE]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0",
               ANSIBLE_HOST_KEY_CHECKING="0")
    return argv, env


def run_site(lab, inventory, state_dir, extra=None, timeout=900):
    argv, env = site_command(lab, inventory, state_dir, extra)
    return subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=timeout)


def job_requests():
    with open(os.path.join(ROOT, "inventories", "lab", "job.yml")) as handle:
        job = yaml.safe_load(handle)
    return job["all"]["children"]["vcenter"]["vars"]["vgpu_assign_requests"]


def bmc_truth(lab):
    return dict((name, lab_json(bmc["baseuri"] + "/lab/state")) for name, bmc in lab.bmcs.items())


def lab_json(url):
    import ssl
    import urllib.request
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with urllib.request.urlopen(url, context=context, timeout=30) as answer:
        return json.loads(answer.read())


def half_done(state):
    """Objects /lab/state shows half configured, wherever a run stopped: a vGPU VM whose memory is not reserved
    (a vGPU VM does not power on without it), a host left disconnected or a vLCM draft left open."""
    problems = []
    for vm in state["vms"]:
        if vm["vgpus"] and not (vm["memory_reservation_locked_to_max"]
                                or vm["memory_reservation_mb"] >= vm["memory_mb"]):
            problems.append("VM %s has a vGPU without its memory reservation" % vm["name"])
    for host in state["hosts"]:
        if host["connection_state"] != "connected":
            problems.append("host %s is %s" % (host["name"], host["connection_state"]))
    return problems


def not_converged(lab, start, state_dir):
    """What a converged site run would have set and the lab does not show; empty when the run converged."""
    state = lab.state()
    problems = half_done(state)
    for cluster in state["clusters"]:
        before = next(c for c in start["clusters"] if c["name"] == cluster["name"])
        for key in ("drs", "dpm"):
            if cluster[key] != before[key]:
                problems.append("cluster %s: %s %s, was %s" % (cluster["name"], key, cluster[key], before[key]))
        if cluster["drafts"]:
            problems.append("cluster %s: %d vLCM draft(s) left" % (cluster["name"], cluster["drafts"]))
        if any(name.startswith("gpuops.vgpu.lock.") for name in cluster["custom_values"]):
            problems.append("cluster %s is still locked" % cluster["name"])
        if cluster["custom_values"].get("gpuops.vgpu.cluster_vgpu.automation"):
            problems.append("cluster %s still carries its DRS/DPM record (not restored)" % cluster["name"])
    for host in state["hosts"]:
        if host["maintenance_mode"]:
            problems.append("host %s is in maintenance mode" % host["name"])
    vms = dict((vm["name"], vm) for vm in state["vms"])
    for request in job_requests():
        vm = vms[request["name"]]
        if [vgpu.get("profile") for vgpu in vm["vgpus"]] != [request["profile"]] or vm["power_state"] != "poweredOn":
            problems.append("VM %s: vGPUs %s, %s" % (vm["name"], vm["vgpus"], vm["power_state"]))
    for vm in start["vms"]:
        if vm["power_state"] == "poweredOn" and vms[vm["name"]]["power_state"] != "poweredOn":
            problems.append("VM %s was on and is %s" % (vm["name"], vms[vm["name"]]["power_state"]))
    for name, bmc in bmc_truth(lab).items():
        if name.startswith("esxi-0") and bmc["bios"].get("pending"):
            problems.append("BMC of %s: BIOS change pending %s" % (name, bmc["bios"]["pending"]))
    return problems


def runs_until_success(run_once, max_runs):
    """``run_once()`` again until a run exits 0, ``max_runs`` at most; every run's CompletedProcess, the last one last."""
    runs = []
    for _attempt in range(max_runs):
        runs.append(run_once())
        if runs[-1].returncode == 0:
            break
    return runs


def kill_at_task(argv, env, kill_at, delay, when_done=False):
    """Run ``argv`` and SIGKILL it with its workers and modules ``delay`` seconds into its kill_at-th task banner
    (mid-task, where a change may be on its way), or into the first banner that contains ``kill_at`` when it is
    text; with ``when_done``, the moment that task's first result is printed instead, before the next task starts.
    The task's banner, or None when the run ended first."""
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            universal_newlines=True, start_new_session=True)
    seen, banner, killed = 0, None, None
    for line in proc.stdout:
        if line.startswith("TASK ["):
            seen += 1
            if seen == kill_at or (not isinstance(kill_at, int) and kill_at in line):
                banner = line.strip()
                if not when_done:
                    time.sleep(delay)
                    killed = _kill(proc, banner)
                    break
        elif banner and line.startswith(("ok: ", "changed: ", "skipping: ", "fatal: ")):
            killed = _kill(proc, banner)
            break
    proc.stdout.close()
    proc.wait()
    return killed


def _kill(proc, banner):
    kill_tree(proc.pid)
    return banner


def kill_tree(pid):
    """SIGKILL ``pid`` and every process below it, as a dying controller loses them all: ansible-playbook's workers
    run in sessions of their own (``os.setsid`` in ansible-core's WorkerProcess), so killing the process group
    leaves them, and the modules they run, going on. Each process is stopped first, so none forks or is handed to
    init while the tree is walked."""
    stopped = []
    while True:
        fresh = [found for found in [pid] + LAB_CONTROL.shells.descendants(pid) if found not in stopped]
        if not fresh:
            break
        for found in fresh:
            _signal(found, signal.SIGSTOP)
        stopped.extend(fresh)
    for found in stopped:
        _signal(found, signal.SIGKILL)


def _signal(pid, number):
    try:
        os.kill(pid, number)
    except OSError:
        pass  # ended on its own meanwhile


def seeds(variable, default):
    """Seeds from the environment (``3`` or ``1-40`` or ``1,5,9``), so a failure replays with its seed alone."""
    text = os.environ.get(variable) or default
    found = []
    for part in text.split(","):
        low, _dash, high = part.partition("-")
        found.extend(range(int(low), int(high or low) + 1))
    return found


def log_trial(kind, **figures):
    """One line per trial in $GPUOPS_SOAK_LOG (make soak sums them up)."""
    path = os.environ.get("GPUOPS_SOAK_LOG")
    if path:
        with open(path, "a") as handle:
            handle.write(json.dumps(dict(figures, kind=kind), sort_keys=True) + "\n")
