#!/usr/bin/env python3
"""The host layer's converged re-run: playbooks/hosts.yml (host_driver, then host_graphics, on each GPU cluster)
on the lab's default topology and inventory (inventories/lab, two GPU clusters), the roles of this checkout
against those of a baseline commit (checked out into a temporary collection with `git archive`), on the same lab in
the same run.

For each side, on the lab reset to its start: the first converge, then --reps converged re-runs. Per run: the wall
time of ansible-playbook, the REST and SOAP requests the lab vCenter served (/lab/stats), and per role the task
executions per cluster (tasks that ran, a loop counting each item that ran, the roles' argument validation aside)
and the seconds per cluster (every task of the role, skipped ones and the argument validation included, from the
ansible.posix.json callback's task durations). Results go to bench/results/host_layer.json.
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

from conftest import LABCTL, Lab  # noqa: E402

# The commit before the host roles decided their steps from one read.
BASELINE = "97b43b5"
STATE_DIR = os.path.join(ROOT, ".tmp", "bench-host-layer")
PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
ROLES = ("host_driver", "host_graphics")


def baseline_collection(commit, workdir):
    """The collection as it was at ``commit``, under ``workdir``; returns the collections path."""
    path = os.path.join(workdir, "baseline")
    tree = os.path.join(path, "ansible_collections", "gpuops", "vgpu")
    os.makedirs(tree)
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, stdout=subprocess.PIPE).stdout
    subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
    return path


def start_lab(port_offset):
    for command in (["down"], ["up", "--port-offset", str(port_offset), "--no-bmc", "--no-shells"]):
        subprocess.run([sys.executable, LABCTL, command[0], "--state-dir", STATE_DIR] + command[1:], cwd=ROOT,
                       check=True, stdout=subprocess.DEVNULL)
    return Lab(STATE_DIR)


def _seconds(duration):
    stamp = "%Y-%m-%dT%H:%M:%S.%fZ"
    return (datetime.datetime.strptime(duration["end"], stamp)
            - datetime.datetime.strptime(duration["start"], stamp)).total_seconds()


def role_costs(document, clusters):
    """Per role: task executions and seconds per cluster, and the names of the tasks that ran."""
    costs = dict((role, {"executions": 0, "seconds": 0.0, "ran": [], "changed": [], "tasks": []}) for role in ROLES)
    for play in document["plays"]:
        for task in play["tasks"]:
            name = task["task"]["name"]
            role = next((r for r in ROLES if name.startswith("gpuops.vgpu.%s : " % r)), None)
            if role is None:
                continue
            costs[role]["seconds"] += _seconds(task["task"]["duration"])
            costs[role]["tasks"].append([name.split(" : ", 1)[1], round(_seconds(task["task"]["duration"]), 3)])
            if "Validating arguments" in name:
                continue
            for result in task["hosts"].values():
                if result.get("skipped"):
                    continue
                items = result.get("results")
                ran = len([item for item in items if not item.get("skipped")]) if isinstance(items, list) else 1
                costs[role]["executions"] += ran
                costs[role]["ran"].append(name.split(" : ", 1)[1])
                if result.get("changed"):
                    costs[role]["changed"].append(name.split(" : ", 1)[1])
    for cost in costs.values():
        cost["executions"] = round(cost["executions"] / float(clusters), 1)
        cost["seconds"] = round(cost["seconds"] / clusters, 2)
    return costs


def run_hosts_layer(lab, collections, name):
    playbook = os.path.join(collections, "ansible_collections", "gpuops", "vgpu", "playbooks", "hosts.yml")
    inventory = os.path.join(ROOT, "inventories", "lab")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections, ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
               ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0")
    env.pop("ANSIBLE_ROLES_PATH", None)
    argv = [PLAYBOOK, "-i", os.path.join(inventory, "hosts.yml"), "-i", os.path.join(inventory, "job.yml"),
            playbook, "-e", json.dumps({"vcenter_port": lab.port})]
    lab.reset_stats()
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    seconds = time.monotonic() - started
    stats = lab.stats()
    if proc.returncode != 0:
        log = os.path.join(STATE_DIR, "failed-%s.log" % name)
        with open(log, "w") as handle:
            handle.write(proc.stdout + proc.stderr)
        sys.exit("playbooks/hosts.yml failed (%s); its output is in %s" % (name, log))
    document = json.loads(proc.stdout[proc.stdout.index("{"):])
    roles = role_costs(document, len(lab.vcenter_vars["vgpu_clusters"]))
    # The lock play takes and gives back the clusters' lock on every run; the roles' changes are what counts.
    changed = [task for cost in roles.values() for task in cost["changed"]]
    return {"seconds": round(seconds, 2), "rest_requests": stats["rest_requests"],
            "soap_requests": stats["soap_requests"], "changed": changed, "roles": roles}


def measure(lab, sides, reps):
    results = {}
    for side, collections in sides:
        lab.reset()
        runs = {"first": run_hosts_layer(lab, collections, side + "-first"), "converged": []}
        for rep in range(reps):
            again = run_hosts_layer(lab, collections, "%s-converged-%d" % (side, rep))
            if again["changed"]:
                sys.exit("%s: a converged re-run changed something: %s" % (side, ", ".join(again["changed"])))
            runs["converged"].append(again)
        results[side] = runs
        for label, run in [("first", runs["first"])] + [("converged", run) for run in runs["converged"]]:
            print("  %-8s %-9s %6.2f s  REST %3d  SOAP %3d  %s" % (side, label, run["seconds"], run["rest_requests"],
                  run["soap_requests"], "  ".join("%s %.1f tasks %.2f s" % (role, cost["executions"], cost["seconds"])
                                                  for role, cost in run["roles"].items())), flush=True)
    return results


def print_table(results):
    def median(side, key, role=None):
        runs = results["sides"][side]["converged"]
        return statistics.median(run["roles"][role][key] if role else run[key] for run in runs)

    print()
    print("Converged re-run of playbooks/hosts.yml, medians of %d runs, per cluster where it says so:" % results["reps"])
    print("| measure | %s (baseline) | this checkout |" % results["baseline"])
    print("|---|---|---|")
    for role in ROLES:
        print("| %s: task executions per cluster | %.1f | %.1f |" % (
            role, median("baseline", "executions", role), median("current", "executions", role)))
        print("| %s: seconds per cluster | %.2f | %.2f |" % (
            role, median("baseline", "seconds", role), median("current", "seconds", role)))
    for key, label in (("rest_requests", "REST requests"), ("soap_requests", "SOAP requests"),
                       ("seconds", "wall time of the run (lock play included), s")):
        print("| %s | %s | %s |" % (label, median("baseline", key), median("current", key)))
    first = dict((side, results["sides"][side]["first"]) for side in ("baseline", "current"))
    print("First converge: %s" % "; ".join("%s %.2f s, %s" % (side, run["seconds"], ", ".join(
        "%s %.1f tasks %.2f s per cluster" % (role, cost["executions"], cost["seconds"])
        for role, cost in run["roles"].items())) for side, run in first.items()))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--port-offset", type=int, default=800, help="the lab's ports, shifted (default 800)")
    args = parser.parse_args()
    os.makedirs(STATE_DIR, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="gpuops-bench-host-layer-")
    sides = [("baseline", baseline_collection(args.baseline, workdir)),
             ("current", os.path.join(ROOT, ".tmp", "collections"))]
    lab = start_lab(args.port_offset)
    try:
        results = {"baseline": args.baseline, "reps": args.reps, "machine": machine(),
                   "sides": measure(lab, sides, args.reps)}
    finally:
        subprocess.run([sys.executable, LABCTL, "down", "--state-dir", STATE_DIR], cwd=ROOT, check=False,
                       stdout=subprocess.DEVNULL)
    save(results)
    print_table(results)


def machine():
    with open("/proc/cpuinfo") as handle:
        model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), "unknown")
    load = os.getloadavg()[0]
    return {"cpu": model, "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M"), "load_average": load}


def save(results):
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "host_layer.json"), "w") as handle:
        json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
