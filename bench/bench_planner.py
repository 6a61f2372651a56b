#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of the vGPU placement planner: 10,000 requests over 2,000 GPUs.

    .venv/bin/python bench/bench_planner.py [--runs 7] [--seed 1] [--output bench/results/planner.json]

Builds a datacenter of 750 hosts in 30 clusters with eight GPU models (Pascal to Hopper, 2,000 GPUs), some GPUs
already running vGPUs, and 10,000 requests in a realistic mix of profiles (mostly one vGPU per VM, a few with two or
four, 5 % pinned to a host). Plans it in several modes, each several times, and prints the median and spread of the
wall time together with what the plan achieved. Writes everything as JSON.
"""

from __future__ import absolute_import, division, print_function

import argparse
import atexit
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# model, hosts, GPUs per host, share of hosts whose GPUs run in MIG mode, profile suffixes with their weight among
# that model's requests. Requests go to the models in proportion to how many VMs of that mix their GPUs hold.
FLEET = [
    ("P40", 150, 2, 0.0, {"1b": 3, "2b": 4, "2q": 4, "3q": 4, "4q": 2, "8q": 2, "24q": 1}),
    ("T4", 100, 4, 0.0, {"1b": 3, "2b": 3, "2q": 4, "4q": 3, "8q": 1, "4c": 2, "16q": 0.5}),
    ("A10", 125, 2, 0.0, {"1b": 2, "2b": 3, "2q": 3, "4q": 3, "6q": 1, "8q": 2, "12q": 1, "8c": 1, "24q": 0.5}),
    ("A16", 50, 8, 0.0, {"1b": 4, "2b": 5, "2q": 3, "4q": 3, "8q": 1}),
    ("L40S", 100, 2, 0.0, {"2q": 3, "4q": 3, "6q": 2, "8q": 2, "12q": 1, "16q": 1, "24q": 1, "48q": 0.3, "12c": 1,
                           "24c": 1}),
    ("L4", 50, 4, 0.0, {"1b": 2, "2q": 3, "3q": 3, "4q": 3, "6q": 2, "8q": 1, "12q": 0.5, "24q": 0.3}),
    ("A100-40", 100, 1, 0.4, {"4c": 2, "5c": 2, "10c": 3, "20c": 1, "40c": 0.5, "1-5c": 2, "3-20c": 1, "1-10c": 1}),
    ("H100-80", 75, 2, 0.4, {"4c": 2, "5c": 2, "8c": 2, "10c": 2, "20c": 2, "40c": 1, "80c": 0.3, "1-10c": 2,
                             "3-40c": 1}),
]
CLUSTER_SIZE = 25
REQUESTS = 10000
RUNNING_SHARE = 0.15
PINNED_SHARE = 0.05

SCENARIOS = [
    ("equal_size, each host's policy", {}),
    ("equal_size, consolidation", {"assignment_policy": "consolidation"}),
    ("equal_size, symmetric", {"symmetric": True}),
    ("equal_size, headroom 2", {"headroom": 2}),
    ("mixed_size", {"mode": "mixed_size"}),
]


def import_planner():
    """Import the planner from this checkout through a temporary ansible_collections tree."""
    root = tempfile.mkdtemp(prefix="gpuops-bench-")
    atexit.register(shutil.rmtree, root)  # removes the link, never the checkout it points to
    os.makedirs(os.path.join(root, "ansible_collections", "gpuops"))
    os.symlink(REPO, os.path.join(root, "ansible_collections", "gpuops", "vgpu"))
    sys.path.insert(0, root)
    from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog
    from ansible_collections.gpuops.vgpu.plugins.module_utils.planner import _planner
    return _catalog, _planner


def build(catalog, seed):
    rng = random.Random(seed)
    hosts, weights = [], []
    number = 0
    for model_id, host_count, per_host, mig_share, mix in FLEET:
        model = catalog.gpu_model(model_id)
        prefix = model["profile_prefix"]
        maxima = dict((p["name"], p["max_per_gpu"]) for p in model["profiles"])
        for _ in range(host_count):
            mig = rng.random() < mig_share
            profiles = [name for name in ("grid_%s-%s" % (prefix, suffix) for suffix in mix)
                        if catalog.parse_profile(name)["mig"] == mig]
            number += 1
            host = {
                "name": "esxi-%04d.dc.example" % number,
                "cluster": "cluster-%02d" % ((number - 1) // CLUSTER_SIZE + 1),
                "connection_state": "connected",
                "maintenance_mode": False,
                "graphics_config": {"default_graphics_type": "sharedDirect",
                                    "assignment_policy": rng.choice(["performance", "performance", "consolidation"])},
                "gpus": [],
                "supported_profiles": [{"name": p["name"], "max_per_gpu": p["max_per_gpu"]}
                                       for p in model["profiles"]],
            }
            for index in range(per_host):
                gpu = {"pci_id": "0000:%02x:00.0" % (0x3b + index), "model": model_id, "device_name":
                       model["device_name"], "graphics_type": "sharedDirect",
                       "vgpu_mode": "multiInstanceGpu" if mig else "sameSize",
                       "profile": None, "profiles": [], "vms": [], "used": 0}
                if rng.random() < RUNNING_SHARE:
                    name = rng.choice(profiles)
                    used = rng.randint(1, maxima[name])
                    gpu.update(profile=name, profiles=[name], used=used,
                               vms=["run-%04d-%d-%d" % (number, index, k) for k in range(used)])
                host["gpus"].append(gpu)
            hosts.append(host)
        gpus_per_vm = sum(w / maxima["grid_%s-%s" % (prefix, s)] for s, w in mix.items()) / sum(mix.values())
        capacity = host_count * per_host / gpus_per_vm
        for suffix, weight in mix.items():
            weights.append(("grid_%s-%s" % (prefix, suffix), model_id, capacity * weight / sum(mix.values())))
    by_model = {}
    for host in hosts:
        by_model.setdefault(host["gpus"][0]["model"], []).append(host["name"])
    total = sum(w for _, _, w in weights)
    requests = []
    for number in range(REQUESTS):
        pick = rng.random() * total
        for name, model_id, weight in weights:
            pick -= weight
            if pick <= 0:
                break
        request = {"vm": "vm-%05d" % number, "profile": name}
        draw = rng.random()
        if draw < 0.01:
            request["count"] = 4
        elif draw < 0.05:
            request["count"] = 2
        if rng.random() < PINNED_SHARE:
            request["host"] = rng.choice(by_model[model_id])
        requests.append(request)
    # A few requests for running VMs, so that keeping VMs in place is part of the work.
    running = [(h, g) for h in hosts for g in h["gpus"] if g["vms"]]
    for number, (host, gpu) in enumerate(rng.sample(running, min(200, len(running)))):
        requests[number] = {"vm": gpu["vms"][0], "profile": gpu["profile"]}
    return hosts, requests


def measure(planner, hosts, requests, options, runs):
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = planner.plan(hosts, requests, **options)
        times.append(time.perf_counter() - start)
    stats = result["stats"]
    return {
        "options": options,
        "runs": runs,
        "median_s": round(statistics.median(times), 4),
        "min_s": round(min(times), 4),
        "max_s": round(max(times), 4),
        "stdev_s": round(statistics.stdev(times), 4) if runs > 1 else 0.0,
        "placed": stats["placed"],
        "kept": stats["kept"],
        "unplaced": stats["unplaced"],
        "gpus_used": stats["gpus_used"],
        "gpus_used_lower_bound": stats["gpus_used_lower_bound"],
        "gpus_reserved": stats["gpus_reserved"],
        "suggestions": len(result["suggestions"]),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--output", default=os.path.join(REPO, "bench", "results", "planner.json"))
    args = parser.parse_args()
    catalog, planner = import_planner()
    hosts, requests = build(catalog, args.seed)
    gpus = sum(len(h["gpus"]) for h in hosts)
    print("planner benchmark: %d requests, %d hosts, %d GPUs, %d runs per scenario, Python %s, %d CPUs"
          % (len(requests), len(hosts), gpus, args.runs, platform.python_version(), os.cpu_count()))
    results = []
    for label, options in SCENARIOS:
        row = measure(planner, hosts, requests, options, args.runs)
        row["scenario"] = label
        results.append(row)
        print("%-32s median %.3f s (min %.3f, max %.3f, stdev %.3f)  placed %d/%d  GPUs used %d (bound %d)"
              % (label, row["median_s"], row["min_s"], row["max_s"], row["stdev_s"], row["placed"], len(requests),
                 row["gpus_used"], row["gpus_used_lower_bound"]))
    report = {
        "benchmark": "vgpu_plan",
        "requests": len(requests),
        "hosts": len(hosts),
        "gpus": gpus,
        "seed": args.seed,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "scenarios": results,
    }
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as handle:
        json.dump(report, handle, indent=1)
        handle.write("\n")
    print("written to %s" % os.path.relpath(args.output))


if __name__ == "__main__":
    main()
