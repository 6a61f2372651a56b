#!/usr/bin/env python3
"""The converged site run on the default lab (`make bench`, converged section): `playbooks/site.yml` on
`inventories/lab`, as `make lab` runs it, for this checkout and for a baseline commit (extracted with `git archive`
into a temporary collection), each on a freshly started default lab: the first run, then --reps re-runs with
nothing to change. Per run: wall time, changes, SOAP and REST requests (the lab's counters), task executions and
module runs, and seconds per layer (the test tree's remote_tasks callback). Results go to
bench/results/converged.json.

The default lab is make lab-up's own (its ports and state directory): the benchmark restarts it, and leaves it up
and converged by this checkout.
"""

import argparse
import json
import os
import re
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from baseline import baseline_collection  # noqa: E402

# The last commit before the converged layers decided from one read.
BASELINE = "97b43b5"
STATE_DIR = os.path.join(ROOT, ".tmp", "bench-converged")
LAB_STATE = os.path.join(ROOT, ".tmp", "lab")
PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
LABCTL = [sys.executable, os.path.join(ROOT, "lab", "labctl.py")]
RECAP = re.compile(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)")
# The site's plays by layer: a layer's lock and unlock plays count as "locks".
LAYERS = [
    ("locks", ("One run at a time on the GPU clusters", "Let the next run change the GPU clusters")),
    ("recover", ("Finish what an interrupted run left",)),
    ("bios", ("BIOS ready for GPU virtualisation",)),
    ("hosts", ("NVIDIA host driver and Shared Direct graphics",)),
    ("cluster", ("Prepare the GPU clusters for vGPU work",)),
    ("vms", ("Put vGPU profiles on the guests' VMs",)),
    ("passthrough", ("Give the passthrough guests' VMs their GPUs", "Check the passthrough guests from inside",
                     "Install the data center driver and check the passthrough guests from inside")),
    ("cluster_restore", ("Restore DRS and DPM of the GPU clusters",)),
    ("guests", ("Licensed, CUDA-ready vGPU guests",)),
    ("servers", ("BIOS and cooling of the GPU servers through their BMCs",
                 "NVIDIA's data center driver stack on the GPU servers")),
    ("gpu_inventory", ("GPU inventory",)),
    ("doctor", ("Doctor, reads on the hosts and guests", "Doctor, reads on the hosts, guests and bare-metal GPU servers",
                "Doctor")),
    ("fleet_report", ("Fleet report",)),
]


# What every run changes: the run's lock on each cluster (taken, released) and the reports it writes.
EVERY_RUN = ("Take or renew the lock of each GPU cluster", "Release the lock of each GPU cluster",
             "Write the JSON report", "Write the report's data", "Write the HTML report")
TASK_LINE = re.compile(r"^TASK \[(?:[^:\]]+ : )?(.*)\] \**$")


def changed_tasks(output):
    """The names of the tasks that reported a change, each once, from ansible-playbook's default output."""
    changed, task = [], None
    for line in output.splitlines():
        match = TASK_LINE.match(line)
        if match:
            task = match.group(1)
        elif line.startswith("changed: [") and task not in changed:
            changed.append(task)
    return changed


def layer_of(play):
    return next((layer for layer, plays in LAYERS if play in plays), "other")


def restart_lab():
    subprocess.run(LABCTL + ["down", "--state-dir", LAB_STATE], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(LABCTL + ["up", "--guests", "--topology", os.path.join(ROOT, "lab", "topologies", "default.yml"),
                             "--state-dir", LAB_STATE], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(LAB_STATE, "services.json")) as handle:
        return json.load(handle)


def lab_request(services, method, path):
    context = ssl._create_unverified_context()
    request = urllib.request.Request(services["vcenter"]["lab"] + path, method=method,
                                     data=b"" if method == "POST" else None)
    with urllib.request.urlopen(request, context=context, timeout=30) as answer:
        text = answer.read()
    return json.loads(text) if text else None


def run_site(services, collections, name):
    """One site.yml run of the collection under ``collections`` on inventories/lab; its figures."""
    report = os.path.join(STATE_DIR, "remote-tasks-%s.json" % name)
    records = os.path.join(STATE_DIR, "records-%s" % name.split("-")[0])
    variables = {"doctor_output_dir": records, "fleet_report_output_dir": records,
                 "cluster_vgpu_state_file": "%s/{{ vcenter_hostname }}_{{ cluster_vgpu_cluster }}.json" % records,
                 "doctor_cluster_vgpu_state_dir": records, "doctor_verdict": False,
                 "bios_maintenance_record": os.path.join(records, "bios_maintenance.json")}
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections, ANSIBLE_FORKS="20", ANSIBLE_NOCOLOR="1",
               ANSIBLE_RETRY_FILES_ENABLED="0", ANSIBLE_CALLBACK_PLUGINS=os.path.join(ROOT, "tests", "callback_plugins"),
               ANSIBLE_CALLBACKS_ENABLED="remote_tasks", GPUOPS_REMOTE_TASKS_FILE=report,
               CONTAINERS_CONF=os.path.join(ROOT, ".tmp", "molecule", "containers.conf"))
    env.pop("ANSIBLE_ROLES_PATH", None)
    playbook = os.path.join(collections, "ansible_collections", "gpuops", "vgpu", "playbooks", "site.yml")
    lab_request(services, "POST", "/stats/reset")
    started = time.monotonic()
    proc = subprocess.run([PLAYBOOK, "-i", os.path.join(ROOT, "inventories", "lab"), "-e", json.dumps(variables),
                           playbook], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    seconds = time.monotonic() - started
    log = os.path.join(STATE_DIR, "site-%s.log" % name)
    with open(log, "w") as handle:
        handle.write(proc.stdout)
    recap = [match.groups() for match in map(RECAP.match, proc.stdout.splitlines()) if match]
    failed = [host for host, _ok, _changed, unreachable, fail in recap if int(fail) or int(unreachable)]
    if proc.returncode != 0 or failed:
        sys.exit("site.yml failed (%s) on %s; whole output in %s" % (name, ", ".join(failed) or "?", log))
    stats = lab_request(services, "GET", "/stats")
    with open(report) as handle:
        counts = json.load(handle)
    layers = {}
    for play, play_seconds in counts["play_seconds"]:
        layers[layer_of(play)] = round(layers.get(layer_of(play), 0.0) + play_seconds, 2)
    return {"seconds": round(seconds, 1), "changed": sum(int(row[2]) for row in recap),
            "changed_tasks": [task for task in changed_tasks(proc.stdout) if task not in EVERY_RUN],
            "soap_requests": stats["soap_requests"], "rest_requests": stats["rest_requests"],
            "executions": sum(counts["executions"].values()), "module_runs": sum(counts["module_runs"].values()),
            "layer_seconds": layers}


def measure(side, collections, reps):
    services = restart_lab()
    first = run_site(services, collections, "%s-first" % side)
    print("  %-8s first run     %6.1f s, %d changed" % (side, first["seconds"], first["changed"]), flush=True)
    converged = []
    for rep in range(reps):
        run = run_site(services, collections, "%s-converged-%d" % (side, rep + 1))
        if run["changed_tasks"]:
            sys.exit("%s: the converged re-run %d changed more than the lock and the reports: %s (site-%s-converged-"
                     "%d.log)" % (side, rep + 1, ", ".join(run["changed_tasks"]), side, rep + 1))
        converged.append(run)
        print("  %-8s converged %d   %6.1f s, %d SOAP and %d REST requests, %d task executions, %d module runs"
              % (side, rep + 1, run["seconds"], run["soap_requests"], run["rest_requests"], run["executions"],
                 run["module_runs"]), flush=True)
    return {"first": first, "converged": converged}


def median(runs, key, layer=None):
    values = [run["layer_seconds"].get(layer, 0.0) if layer else run[key] for run in runs]
    return statistics.median(values)


def print_table(results, baseline):
    old, new = results["baseline"]["converged"], results["current"]["converged"]
    print()
    print("| converged site.yml, default lab (median of %d) | %s (baseline) | this checkout | ratio |" % (
        len(new), baseline))
    print("|---|---|---|---|")
    for key in ("seconds", "soap_requests", "rest_requests", "executions", "module_runs"):
        a, b = median(old, key), median(new, key)
        print("| %s | %g | %g | %.2f |" % (key, a, b, b / a if a else 0))
    for layer, _plays in LAYERS:
        a, b = median(old, None, layer), median(new, None, layer)
        print("| %s (s) | %.1f | %.1f | %.2f |" % (layer, a, b, b / a if a else 0))
    a, b = results["baseline"]["first"]["seconds"], results["current"]["first"]["seconds"]
    print("| first run (s) | %.1f | %.1f | %.2f |" % (a, b, b / a))


def machine():
    with open("/proc/loadavg") as handle:
        load = handle.read().split()[:3]
    return {"cores": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M"), "load_before": load,
            "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, stdout=subprocess.PIPE,
                                     universal_newlines=True, check=True).stdout.strip()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    os.makedirs(STATE_DIR, exist_ok=True)
    host = machine()
    print("converged site.yml on the default lab: %s against this checkout (%s), %d re-runs each"
          % (args.baseline, host["commit"], args.reps), flush=True)
    results = {"baseline_commit": args.baseline, "machine": host}
    with tempfile.TemporaryDirectory() as workdir:
        results["baseline"] = measure("baseline", baseline_collection(args.baseline, workdir), args.reps)
    results["current"] = measure("current", os.path.join(ROOT, ".tmp", "collections"), args.reps)
    print_table(results, args.baseline)
    with open(os.path.join(ROOT, "bench", "results", "converged.json"), "w") as handle:
        json.dump(results, handle, indent=1, sort_keys=True)
        handle.write("\n")


if __name__ == "__main__":
    main()
