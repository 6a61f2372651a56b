#!/usr/bin/env python3
"""The guest layer at fleet scale (`make bench`, guest section): playbooks/guests.yml on N lab guests reached over
SSH, the roles of this checkout against the roles of a baseline commit (checked out into a temporary collection
with `git archive`), in the same run on the same machine.

For each N and each side, on freshly started guests: the first converge (driver, license, CUDA, cuDNN,
validation) and the converged re-run; wall time of the ansible-playbook run, and the remote task executions per
guest from the test tree's remote_tasks callback (tests/callback_plugins). Forks = N.
Results go to bench/results/guests.json.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.path.insert(0, os.path.join(ROOT, "lab", "guests"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from baseline import baseline_collection  # noqa: E402
from conftest import LAB_CONTROL  # noqa: E402  (lab/labctl.py, loaded once)
import inventory as lab_inventory  # noqa: E402

# The commit before the guest roles read the guest once.
BASELINE = "cb7344a"
STATE_DIR = os.path.join(ROOT, ".tmp", "bench-guests")
PORT_OFFSET = 700
PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")


def start(count):
    guests = [{"name": "bench-guest-%02d" % number} for number in range(1, count + 1)]
    started = LAB_CONTROL.start_guests(guests, STATE_DIR, PORT_OFFSET)
    return started, lab_inventory.write_inventory(os.path.join(STATE_DIR, "inventory.yml"), started, STATE_DIR)


def converge(collections, inventory, count, name):
    report = os.path.join(STATE_DIR, "remote-tasks-%s.json" % name)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections, ANSIBLE_FORKS=str(count), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CALLBACK_PLUGINS=os.path.join(ROOT, "tests", "callback_plugins"),
               ANSIBLE_CALLBACKS_ENABLED="remote_tasks", GPUOPS_REMOTE_TASKS_FILE=report)
    env.pop("ANSIBLE_ROLES_PATH", None)
    playbook = os.path.join(collections, "ansible_collections", "gpuops", "vgpu", "playbooks", "guests.yml")
    started = time.monotonic()
    proc = subprocess.run([PLAYBOOK, "-i", inventory, playbook], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    seconds = time.monotonic() - started
    if proc.returncode != 0:
        log = os.path.join(STATE_DIR, "failed-%s.log" % name)
        with open(log, "w") as handle:
            handle.write(proc.stdout)
        failures = [line for line in proc.stdout.splitlines() if line.startswith(("fatal:", "failed:"))]
        sys.exit("The guest layer failed (%s; whole output in %s):\n%s" % (name, log, "\n".join(failures)[-5000:]))
    with open(report) as handle:
        counts = json.load(handle)["remote_tasks"]
    changed = sum(int(line.split("changed=")[1].split()[0]) for line in proc.stdout.splitlines()
                  if "changed=" in line and line.startswith("bench-guest-"))
    return {"seconds": round(seconds, 1), "remote_tasks_per_guest": statistics.mean(counts.values()),
            "remote_tasks_max": max(counts.values()), "changed": changed}


def measure(sides, count):
    rows = {}
    for side, collections in sides:
        started, inventory = start(count)
        try:
            first = converge(collections, inventory, count, "%s-%d-first" % (side, count))
            again = converge(collections, inventory, count, "%s-%d-again" % (side, count))
        finally:
            LAB_CONTROL.stop_guests(sorted(guest["container"] for guest in started.values()))
        if again["changed"]:
            sys.exit("%s: the converged re-run on %d guests changed %d things" % (side, count, again["changed"]))
        rows[side] = {"first": first, "converged": again}
        print("  %-8s N=%-3d first %6.1f s %5.1f remote tasks/guest | converged %6.1f s %5.1f remote tasks/guest"
              % (side, count, first["seconds"], first["remote_tasks_per_guest"], again["seconds"],
                 again["remote_tasks_per_guest"]), flush=True)
    return rows


def print_table(results):
    print()
    print("| guests | run | %s (baseline) | this checkout | ratio |" % results["baseline"])
    print("|---|---|---|---|---|")
    for count, rows in sorted(results["sizes"].items(), key=lambda item: int(item[0])):
        for phase in ("first", "converged"):
            old, new = rows["baseline"][phase], rows["current"][phase]
            print("| %s | %s: wall time | %.1f s | %.1f s | %.1fx |" % (
                count, phase, old["seconds"], new["seconds"], old["seconds"] / new["seconds"]))
            print("| %s | %s: remote tasks per guest | %.1f | %.1f | %.1fx |" % (
                count, phase, old["remote_tasks_per_guest"], new["remote_tasks_per_guest"],
                old["remote_tasks_per_guest"] / new["remote_tasks_per_guest"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20])
    parser.add_argument("--baseline", default=BASELINE)
    args = parser.parse_args()
    os.makedirs(STATE_DIR, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="gpuops-bench-guests-")
    sides = [("baseline", baseline_collection(args.baseline, workdir)),
             ("current", os.path.join(ROOT, ".tmp", "collections"))]
    results = {"baseline": args.baseline, "machine": machine(), "sizes": {}}
    for count in args.sizes:
        print("Guest layer, N=%d" % count, flush=True)
        results["sizes"][str(count)] = measure(sides, count)
        save(results)
    print_table(results)


def machine():
    with open("/proc/cpuinfo") as handle:
        model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), "unknown")
    return {"cpu": model, "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M")}


def save(results):
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "guests.json"), "w") as handle:
        json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
