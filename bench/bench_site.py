#!/usr/bin/env python3
"""The whole job at scale (`make bench`, site section): playbooks/site.yml on a lab of 32 hosts (a Tesla P40 each,
a BMC each cycling through the vendor profiles, an ESXi shell each) and 256 VMs, 8 of a P40's 3Q vGPUs per host,
with N guest containers standing for the first N VMs. The first run, then the converged re-run; wall time, changes
in the recap, SOAP requests from the lab's counters, and the seconds per layer from the test tree's remote_tasks
callback; then the converged re-run of a baseline commit's collection (`git archive`) on the same converged lab, so
that both converged figures come from one run. Each converged re-run starts once the machine has settled (the
1-minute load average under SETTLED_LOAD, or after SETTLE_SECONDS), with the load at its start in the results.
Results go to bench/results/site.json.
"""

import argparse
import json
import os
import re
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "lab", "guests"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import inventory as lab_inventory  # noqa: E402
from baseline import baseline_collection  # noqa: E402
from bench_converged import BASELINE, layer_of, machine  # noqa: E402

STATE_DIR = os.path.join(ROOT, ".tmp", "bench-site")
PORT_OFFSET = 800
# Clear of the guests' published node exporters (9101 and up, lab/labctl.py) and of the integration tests' labs.
BMC_BASE_PORT, SHELL_BASE_PORT = 9500, 2600
# A measured re-run starts once the 1-minute load average is under this, or after SETTLE_SECONDS.
SETTLED_LOAD, SETTLE_SECONDS = 2.0, 240
PROFILE = "grid_p40-3q"  # 8 per P40: every host full
PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
LABCTL = [sys.executable, os.path.join(ROOT, "lab", "labctl.py")]
RECAP = re.compile(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)")


def labctl(*args):
    subprocess.run(LABCTL + list(args) + ["--state-dir", STATE_DIR], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def start_lab(hosts, vms, guests):
    topology = os.path.join(STATE_DIR, "topology-input.json")
    with open(topology, "w") as handle:
        subprocess.run([sys.executable, os.path.join(ROOT, "lab", "topologies", "generate.py"), "--hosts", str(hosts),
                        "--vms", str(vms), "--gpu", "P40", "--bmc-base-port", str(BMC_BASE_PORT),
                        "--shell-base-port", str(SHELL_BASE_PORT), "--guests", str(guests)], stdout=handle, check=True)
    labctl("down")
    labctl("up", "--topology", topology, "--port-offset", str(PORT_OFFSET), "--guests")
    with open(os.path.join(STATE_DIR, "services.json")) as handle:
        return json.load(handle)


def load(path):
    with open(os.path.join(ROOT, path)) as handle:
        return yaml.safe_load(handle)


def write_inventory(services, vms):
    """inventories/lab's connection settings and job choices, pointed at this lab's hosts, VMs and guests."""
    lab_hosts = load("inventories/lab/hosts.yml")["all"]["children"]
    job = load("inventories/lab/job.yml")["all"]["children"]
    shells = services["shells"]
    common = "-o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes" % shells["known_hosts"]
    server_vars = dict(lab_hosts["servers"]["vars"], ansible_ssh_private_key_file=shells["private_key"],
                       ansible_ssh_common_args=common, **load("inventories/lab/group_vars/bmc_hosts.yml"))
    esxi = dict((name, {"bmc_address": bmc["baseuri"], "ansible_port": shells["hosts"][name]["port"]})
                for name, bmc in services["bmc"]["hosts"].items())
    vcenter_vars = dict(job["vcenter"]["vars"], vgpu_assign_requests=[
        {"name": "gpu-vm-%03d" % number, "profile": PROFILE} for number in range(1, vms + 1)])
    guests = services.get("guests", {}).get("hosts", {})
    guest_vars = lab_inventory.guest_vars(STATE_DIR)
    guest_vars.pop("vgpu_profile", None)
    all_vars = dict(load("inventories/lab/group_vars/all.yml"), vcenter_port=services["vcenter"]["port"],
                    vgpu_clusters=["gpu-cluster"])
    inventory = {"all": {"vars": all_vars, "children": {
        "vcenter": {"hosts": lab_hosts["vcenter"]["hosts"], "vars": vcenter_vars},
        "servers": {"vars": server_vars, "children": {"esxi_hosts": {"hosts": esxi}}},
        "gpu_guests": {"vars": guest_vars, "hosts": dict(
            (name, {"ansible_port": guest["ssh_port"], "vgpu_vm_name": "gpu-vm-%s" % name.split("-")[-1]})
            for name, guest in guests.items())}}}}
    path = os.path.join(STATE_DIR, "inventory.yml")
    with open(path, "w") as handle:
        yaml.safe_dump(inventory, handle)
    return path


def lab_request(services, method, path):
    context = ssl._create_unverified_context()
    request = urllib.request.Request(services["vcenter"]["lab"] + path, method=method, data=b"" if method == "POST"
                                     else None)
    with urllib.request.urlopen(request, context=context, timeout=30) as answer:
        text = answer.read()
    return json.loads(text) if text else None


def settle(below=SETTLED_LOAD, longest=SETTLE_SECONDS):
    """Wait until the 1-minute load average is under ``below`` (at most ``longest`` s): a run right after the first
    one would share the cores with what the first run left working in the guests. Returns the load then."""
    deadline = time.monotonic() + longest
    while os.getloadavg()[0] >= below and time.monotonic() < deadline:
        time.sleep(5)
    return round(os.getloadavg()[0], 2)


def run_site(services, inventory, name, forks, collections=None):
    load_at_start = settle() if name != "first" else round(os.getloadavg()[0], 2)
    report = os.path.join(STATE_DIR, "remote-tasks-%s.json" % name)
    records = os.path.join(STATE_DIR, "records")
    os.makedirs(records, exist_ok=True)
    variables = {"doctor_output_dir": records, "fleet_report_output_dir": records,
                 "cluster_vgpu_state_file": "%s/{{ vcenter_hostname }}_{{ cluster_vgpu_cluster }}.json" % records,
                 "doctor_cluster_vgpu_state_dir": records, "doctor_verdict": False,
                 "bios_maintenance_record": os.path.join(records, "bios_maintenance.json")}
    collections = collections or os.path.join(ROOT, ".tmp", "collections")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections, ANSIBLE_FORKS=str(forks), ANSIBLE_NOCOLOR="1",
               ANSIBLE_RETRY_FILES_ENABLED="0", ANSIBLE_CALLBACK_PLUGINS=os.path.join(ROOT, "tests", "callback_plugins"),
               ANSIBLE_CALLBACKS_ENABLED="remote_tasks", GPUOPS_REMOTE_TASKS_FILE=report,
               CONTAINERS_CONF=os.path.join(ROOT, ".tmp", "molecule", "containers.conf"))
    env.pop("ANSIBLE_ROLES_PATH", None)
    lab_request(services, "POST", "/stats/reset")
    started = time.monotonic()
    proc = subprocess.run([PLAYBOOK, "-i", inventory, "-e", json.dumps(variables),
                           os.path.join(collections, "ansible_collections", "gpuops", "vgpu", "playbooks", "site.yml")],
                          cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    seconds = time.monotonic() - started
    log = os.path.join(STATE_DIR, "site-%s.log" % name)
    with open(log, "w") as handle:
        handle.write(proc.stdout)
    recap = [RECAP.match(line) for line in proc.stdout.splitlines()]
    recap = [match.groups() for match in recap if match]
    failed = [host for host, _ok, _changed, unreachable, fail in recap if int(fail) or int(unreachable)]
    if proc.returncode != 0 or failed:
        sys.exit("site.yml failed (%s) on %s; whole output in %s" % (name, ", ".join(failed) or "?", log))
    stats = lab_request(services, "GET", "/stats")
    with open(report) as handle:
        counts = json.load(handle)
    guests = [count for host, count in counts["remote_tasks"].items() if host.startswith("guest-")]
    layers = {}
    for play, play_seconds in counts["play_seconds"]:
        layers[layer_of(play)] = round(layers.get(layer_of(play), 0.0) + play_seconds, 2)
    return {"seconds": round(seconds, 1), "load_at_start": load_at_start,
            "load_at_end": round(os.getloadavg()[0], 2), "changed": sum(int(row[2]) for row in recap),
            "soap_requests": stats["soap_requests"], "rest_requests": stats["rest_requests"],
            "remote_tasks_per_guest_max": max(guests) if guests else None,
            "executions": sum(counts["executions"].values()), "module_runs": sum(counts["module_runs"].values()),
            "layer_seconds": layers, "play_seconds": counts["play_seconds"], "role_seconds": counts["role_seconds"]}


def report(run, name):
    print("  %-18s %7.1f s (load %s at the start), %d changed, %d SOAP and %d REST requests, %d task executions, "
          "%d module runs, at most %s remote tasks per guest" % (
              name, run["seconds"], run["load_at_start"], run["changed"], run["soap_requests"], run["rest_requests"],
              run["executions"], run["module_runs"], run["remote_tasks_per_guest_max"]), flush=True)
    for layer, seconds in sorted(run["layer_seconds"].items(), key=lambda item: -item[1]):
        print("    %-20s %7.1f s" % (layer, seconds), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=32)
    parser.add_argument("--vms", type=int, default=256)
    parser.add_argument("--guests", type=int, default=20)
    parser.add_argument("--baseline", default=BASELINE, help="commit whose converged re-run is measured too")
    parser.add_argument("--forks", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="leave the lab running afterwards")
    args = parser.parse_args()
    if args.vms > 8 * args.hosts:
        sys.exit("--vms %d: at most 8 %s vGPUs fit on each of the %d hosts." % (args.vms, PROFILE, args.hosts))
    os.makedirs(STATE_DIR, exist_ok=True)
    host = machine()
    print("site.yml on %d hosts, %d VMs, %d guests (forks %d)" % (args.hosts, args.vms, args.guests, args.forks),
          flush=True)
    services = start_lab(args.hosts, args.vms, args.guests)
    try:
        inventory = write_inventory(services, args.vms)
        first = run_site(services, inventory, "first", args.forks)
        report(first, "first run")
        again = run_site(services, inventory, "converged", args.forks)
        report(again, "converged run")
        with tempfile.TemporaryDirectory() as workdir:
            baseline = run_site(services, inventory, "baseline-converged", args.forks,
                                baseline_collection(args.baseline, workdir))
        report(baseline, "%s converged" % args.baseline)
    finally:
        if not args.keep:
            labctl("down")
    results = {"hosts": args.hosts, "vms": args.vms, "guests": args.guests, "forks": args.forks,
               "machine": host,
               "first": first, "converged": again, "baseline_commit": args.baseline, "baseline_converged": baseline}
    with open(os.path.join(ROOT, "bench", "results", "site.json"), "w") as handle:
        json.dump(results, handle, indent=1, sort_keys=True)
        handle.write("\n")


if __name__ == "__main__":
    main()
