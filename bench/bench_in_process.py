#!/usr/bin/env python3
"""What a vCenter module task costs on the controller (`make bench`, in-process section): N separate
`gpuops.vgpu.gpu_info` tasks on the default lab's vCenter host, with the module run in the task's worker process
(plugins/plugin_utils/_in_process.py) and in a module process of its own (GPUOPS_MODULES_IN_PROCESS=false), and
the same number of `ansible.builtin.debug` tasks, Ansible's own cost of a task on the controller. Runs alternate,
--reps of each; medians per task. Results go to bench/results/in_process.json.

Needs the default lab up (make lab-up); changes nothing in it.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench_converged import machine  # noqa: E402

PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
KINDS = {
    "in the worker": ({"gpuops.vgpu.gpu_info": {"cluster": "gpu-cluster"}}, {}),
    "module process": ({"gpuops.vgpu.gpu_info": {"cluster": "gpu-cluster"}}, {"GPUOPS_MODULES_IN_PROCESS": "false"}),
    "debug (Ansible's own cost)": ({"ansible.builtin.debug": {"msg": "x"}}, {}),
}


def playbook(path, task, count):
    tasks = [dict(task, name="task %d" % index) for index in range(count)]
    play = [{"name": "in-process bench", "hosts": "vcenter", "gather_facts": False,
             "vars_files": [os.path.join(ROOT, "playbooks", "vars", "vcenter.yml")],
             "module_defaults": {"group/gpuops.vgpu.vcenter": "{{ playbook_vcenter_connection }}"}, "tasks": tasks}]
    with open(path, "w") as handle:
        yaml.safe_dump(play, handle, sort_keys=False)


def run(path, extra_env):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_RETRY_FILES_ENABLED="0", **extra_env)
    started = time.monotonic()
    proc = subprocess.run([PLAYBOOK, "-i", os.path.join(ROOT, "inventories", "lab"), path], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    if proc.returncode != 0:
        sys.exit("the bench playbook failed:\n" + proc.stdout[-3000:])
    return time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    host = machine()
    seconds = dict((kind, []) for kind in KINDS)
    with tempfile.TemporaryDirectory() as workdir:
        books = {}
        for index, (kind, (task, _env)) in enumerate(KINDS.items()):
            books[kind] = os.path.join(workdir, "play-%d.yml" % index)
            playbook(books[kind], task, args.tasks)
        for _rep in range(args.reps):
            for kind, (_task, env) in KINDS.items():
                seconds[kind].append(run(books[kind], env))
    results = {"machine": host, "tasks": args.tasks, "reps": args.reps,
               "runs": dict((kind, [round(value, 2) for value in values]) for kind, values in seconds.items())}
    print("%d separate tasks per run, median of %d runs (commit %s, load before %s)"
          % (args.tasks, args.reps, host["commit"], " ".join(host["load_before"])))
    print("| task | whole run | per task |")
    print("|---|---|---|")
    for kind, values in seconds.items():
        middle = statistics.median(values)
        results.setdefault("median_seconds", {})[kind] = round(middle, 2)
        print("| %s | %.1f s | %.2f s |" % (kind, middle, middle / args.tasks))
    saved = (results["median_seconds"]["module process"] - results["median_seconds"]["in the worker"]) / args.tasks
    results["saved_per_task"] = round(saved, 3)
    print("A module run in the worker saves %.2f s per task." % saved)
    with open(os.path.join(ROOT, "bench", "results", "in_process.json"), "w") as handle:
        json.dump(results, handle, indent=1, sort_keys=True)
        handle.write("\n")


if __name__ == "__main__":
    main()
