#!/usr/bin/env python3
"""The vCenter layers of a converged re-run: playbooks/cluster.yml, vms.yml, passthrough.yml and cluster_restore.yml
on the default lab topology, once everything is as the lab's job asks (inventories/lab/job.yml).

The lab runs on ports shifted by ``LAB_PORT_OFFSET`` (default 23500), away from ``make lab`` and from the integration
tests' labs. ``site.yml`` converges it first (without guest containers, as the site tests run it), then
``passthrough.yml`` gives pt-vm-01 its NVLink pair; then the four layers run ``--reps`` times, each playbook on its
own and on the controller only (``--limit localhost``: the guests' checks are left out). Per layer: the seconds of
its play, its task executions that were not skipped, the module runs among them (the lock and unlock plays left
out), and the whole playbook's wall time and SOAP requests (the lab's counters, lock and unlock included). Printed
as JSON, every sample and the medians; ``--keep`` leaves the lab running, ``--reuse`` measures it again.

    LAB_PORT_OFFSET=23500 python bench/bench_vm_layers.py --reps 3
"""

import argparse
import datetime
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("LAB_PORT_OFFSET", "23500")
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import conftest  # noqa: E402
import site_run  # noqa: E402

LAYERS = {
    "cluster.yml": "Prepare the GPU clusters for vGPU work",
    "vms.yml": "Put vGPU profiles on the guests' VMs",
    "passthrough.yml": "Give the passthrough guests' VMs their GPUs",
    "cluster_restore.yml": "Restore DRS and DPM of the GPU clusters",
}


def write_inventory(lab, state_dir):
    """site_run's inventory of the job, and the same with the passthrough guest's variables (its VM's request)."""
    site = site_run.site_inventory(lab, state_dir / "site.yml")
    document = yaml.safe_load(site.read_text())
    document["all"]["children"]["passthrough_guests"] = {"hosts": {"lab-guest-pt-01": {
        "passthrough_vm_name": "pt-vm-01", "passthrough_gpus": 2, "passthrough_nvlink": True}}}
    layers = state_dir / "layers.yml"
    layers.write_text(yaml.safe_dump(document))
    return site, layers


def ansible_playbook(lab, inventory, state_dir, playbook):
    """One playbook on the controller with the json callback: the finished process and its wall time."""
    argv, env = site_run.site_command(lab, inventory, state_dir)
    argv = argv[:-1] + [os.path.join(ROOT, "playbooks", playbook), "--limit", "localhost"]
    env = dict(env, ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1")
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit("%s failed:\n%s%s" % (playbook, proc.stdout[-4000:], proc.stderr[-2000:]))
    return proc.stdout, time.monotonic() - started


def seconds(duration):
    start, end = (datetime.datetime.fromisoformat(duration[key].rstrip("Z")) for key in ("start", "end"))
    return (end - start).total_seconds()


def play_figures(stdout, play_name):
    """Seconds, task executions, module runs and changes of the play named ``play_name``."""
    document = json.loads(stdout[stdout.index("{"):])
    play = next(play for play in document["plays"] if play["play"]["name"] == play_name)
    figures = {"seconds": round(seconds(play["play"]["duration"]), 2), "tasks": 0, "module_runs": 0, "changed": 0,
               "modules": []}
    for task in play["tasks"]:
        for result in task["hosts"].values():
            if result.get("skipped"):
                continue
            figures["tasks"] += 1
            figures["changed"] += bool(result.get("changed"))
            if (result.get("action") or "").split(".")[-1] not in conftest.CONTROLLER_ACTIONS:
                runs = len(result.get("results") or []) or 1
                figures["module_runs"] += runs
                figures["modules"].append("%s x%d" % (task["task"]["name"], runs))
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="leave the lab running")
    parser.add_argument("--reuse", action="store_true", help="measure the lab that runs, without converging it")
    args = parser.parse_args()
    state_dir = pathlib.Path(ROOT) / ".tmp" / ("bench-vm-layers-%d" % conftest.PORT_OFFSET)
    state_dir.mkdir(parents=True, exist_ok=True)
    lab = conftest.Lab(conftest.DEFAULT_STATE_DIR) if args.reuse else conftest.start_lab()
    try:
        site, layers = write_inventory(lab, state_dir)
        if not args.reuse:
            run = site_run.run_site(lab, site, state_dir, timeout=1800)
            if run.returncode != 0:
                raise SystemExit("site.yml failed:\n" + run.stdout[-4000:])
            ansible_playbook(lab, layers, state_dir, "passthrough.yml")
        samples = []
        for _rep in range(args.reps):
            sample = {}
            for playbook, play_name in LAYERS.items():
                lab.reset_stats()
                stdout, wall = ansible_playbook(lab, layers, state_dir, playbook)
                sample[playbook] = dict(play_figures(stdout, play_name), playbook_wall_s=round(wall, 2),
                                        playbook_soap_requests=lab.stats()["soap_requests"])
            samples.append(sample)
        medians = dict((playbook, dict((key, statistics.median(sample[playbook][key] for sample in samples))
                                       for key in ("seconds", "tasks", "module_runs", "changed", "playbook_wall_s",
                                                   "playbook_soap_requests")))
                       for playbook in LAYERS)
        print(json.dumps({"load_average": os.getloadavg(), "medians": medians, "samples": samples}, indent=1))
    finally:
        if not args.keep and not args.reuse:
            conftest.labctl("down", conftest.DEFAULT_STATE_DIR)


if __name__ == "__main__":
    main()
