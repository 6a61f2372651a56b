#!/usr/bin/env python3
"""The inventory from vCenter: gpuops.vgpu.vcenter_gpu against community.vmware.vmware_vm_inventory (from the
`ansible` package pinned in tests/requirements.txt), on the same lab in one run, at --sizes VMs (default 200 and
1,000) over --hosts hosts with a Tesla P40 each; a quarter of the VMs carry a vGPU (grid_p40-1q, set through the
API before the runs). Each side runs `ansible-inventory --list` --reps times in turn on the same lab, the caches off;
per run the wall time (ansible-inventory's start-up included, for both sides) and the SOAP requests the lab counted
(/lab/stats). community.vmware runs with its default properties and without tags (no vSphere Automation SDK), the
way its documentation's first example does; it lists every VM, without the GPU groups.

Starts its own lab per size in .tmp/bench-inventory-lab (ports shifted by --port-offset, default LAB_PORT_OFFSET or
900; no BMCs, no host shells) and stops it after. Results go to bench/results/inventory.json.
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
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from bench_converged import machine  # noqa: E402
from conftest import Lab  # noqa: E402  (the integration tests' lab client)
from vsphere_direct import Direct  # noqa: E402

LABCTL = os.path.join(ROOT, "lab", "labctl.py")
STATE_DIR = os.path.join(ROOT, ".tmp", "bench-inventory-lab")
INVENTORY = os.path.join(os.path.dirname(sys.executable), "ansible-inventory")
PROFILE = "grid_p40-1q"
SIDES = {"gpuops.vgpu.vcenter_gpu": "gpu.vcenter_gpu.yml",
         "community.vmware.vmware_vm_inventory": "all.vmware_vm_inventory.yml"}


def labctl(*args):
    subprocess.run([sys.executable, LABCTL] + list(args) + ["--state-dir", STATE_DIR], check=True, cwd=ROOT,
                   stdout=subprocess.DEVNULL)


def start_lab(workdir, hosts, vms, port_offset):
    topology = os.path.join(workdir, "topology-%d.json" % vms)
    with open(topology, "w") as handle:
        subprocess.run([sys.executable, os.path.join(ROOT, "lab", "topologies", "generate.py"), "--hosts", str(hosts),
                        "--vms", str(vms)], stdout=handle, check=True)
    labctl("down")
    labctl("up", "--topology", topology, "--port-offset", str(port_offset), "--no-bmc", "--no-shells")
    lab = Lab(STATE_DIR)
    direct = Direct(lab)
    try:
        for number in range(1, hosts + 1):
            direct.shared_direct("esxi-%03d.lab.local" % number)
        for number in range(1, vms // 4 + 1):
            direct.add_vgpu("gpu-vm-%03d" % number, PROFILE)
    finally:
        direct.close()
    return lab


def write_configs(workdir, lab):
    connection = {"hostname": "127.0.0.1", "port": lab.port, "username": lab.vcenter_vars["vcenter_username"],
                  "password": lab.vcenter_vars["vcenter_password"], "validate_certs": False}
    paths = {}
    for side, name in SIDES.items():
        paths[side] = os.path.join(workdir, name)
        with open(paths[side], "w") as handle:
            yaml.safe_dump(dict(connection, plugin=side), handle)
    return paths


def run(lab, path):
    """One ``ansible-inventory --list``: ``(seconds, SOAP requests, inventory hosts)``."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="1")
    lab.reset_stats()
    started = time.monotonic()
    proc = subprocess.run([INVENTORY, "-i", path, "--list"], cwd=os.path.dirname(path), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    seconds = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit("ansible-inventory -i %s failed:\n%s" % (path, proc.stderr[-3000:]))
    stats = lab.stats()
    return seconds, stats["soap_requests"], len(json.loads(proc.stdout)["_meta"]["hostvars"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--port-offset", type=int, default=int(os.environ.get("LAB_PORT_OFFSET") or 900))
    args = parser.parse_args()
    host = machine()
    results = {"machine": host, "hosts": args.hosts, "reps": args.reps, "profile": PROFILE, "sizes": {}}
    try:
        with tempfile.TemporaryDirectory() as workdir:
            for size in args.sizes:
                lab = start_lab(workdir, args.hosts, size, args.port_offset)
                paths = write_configs(workdir, lab)
                runs = dict((side, []) for side in SIDES)
                for _rep in range(args.reps):
                    for side in SIDES:
                        runs[side].append(run(lab, paths[side]))
                results["sizes"][str(size)] = dict((side, {
                    "seconds": [round(r[0], 2) for r in values],
                    "median_seconds": round(statistics.median(r[0] for r in values), 2),
                    "soap_requests": [r[1] for r in values],
                    "inventory_hosts": values[0][2]}) for side, values in runs.items())
    finally:
        labctl("down")
    with open("/proc/loadavg") as handle:
        host["load_after"] = handle.read().split()[:3]
    print("ansible-inventory --list, %d hosts, a quarter of the VMs with a vGPU; median of %d runs (commit %s, load "
          "before %s, after %s)" % (args.hosts, args.reps, host["commit"], " ".join(host["load_before"]),
                                    " ".join(host["load_after"])))
    print("| VMs | plugin | wall time | SOAP requests | inventory hosts |")
    print("|---|---|---|---|---|")
    for size, sides in results["sizes"].items():
        for side, numbers in sides.items():
            print("| %s | %s | %.1f s (%.1f-%.1f) | %s | %d |" % (
                size, side, numbers["median_seconds"], min(numbers["seconds"]), max(numbers["seconds"]),
                statistics.median(numbers["soap_requests"]), numbers["inventory_hosts"]))
    with open(os.path.join(ROOT, "bench", "results", "inventory.json"), "w") as handle:
        json.dump(results, handle, indent=1, sort_keys=True)
        handle.write("\n")


if __name__ == "__main__":
    main()
