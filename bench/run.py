#!/usr/bin/env python3
"""Benchmarks against the anchors, side by side, on one lab in one run (`make bench`).

1. vGPU profiles on N powered-off VMs: gpuops.vgpu.vm_vgpu in one task vs a loop of community.vmware's
   vmware_guest_vgpu, serial and in parallel (every item started with async and poll 0, then async_status until
   all are done: what users who know Ansible run); wall time of the ansible-playbook run and SOAP requests (the
   lab's counters).
2. The same run again, when nothing needs to change.
3. The GPU inventory of every host: gpuops.vgpu.gpu_info vs a loop of community.vmware.vmware_host_facts asked for
   the same vSphere properties (schema vsphere), the closest community module: it returns the raw properties,
   without the per-profile capacity gpu_info works out.
4. vgpu_plan on 10,000 requests over 2,000 GPUs (bench/bench_planner.py).
5. The guest layer on N lab guests over SSH, this checkout's roles against a baseline commit's
   (bench/bench_guests.py; --guest-sizes, --skip-guests).
6. The whole site.yml on --hosts hosts and --vms VMs with BMCs, host shells and --site-guests guests, first run and
   converged re-run, and the converged re-run of a baseline commit on the same lab (bench/bench_site.py; --skip-site).
7. The converged site.yml on the default lab (make lab's), this checkout against a baseline commit, each first run
   then three converged re-runs (bench/bench_converged.py; --skip-converged).
8. On the lab the converged run leaves up: what a vCenter module task costs with the module run in the task's worker
   and in a module process of its own, and what a debug task costs (bench/bench_in_process.py; --skip-in-process).

Each measurement runs --reps times on a freshly started lab; the table gives the median and the spread (min-max).
Results go to bench/results/latest.json.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))

from conftest import Lab  # noqa: E402  (the integration tests' lab client)

LABCTL = os.path.join(ROOT, "lab", "labctl.py")
STATE_DIR = os.path.join(ROOT, ".tmp", "bench-lab")
PORT_OFFSET = 700
PROFILE = "grid_p40-1q"
PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")


def labctl(*args):
    subprocess.run([sys.executable, LABCTL] + list(args) + ["--state-dir", STATE_DIR], check=True, cwd=ROOT,
                   stdout=subprocess.DEVNULL)


def fresh_lab(topology):
    labctl("down")
    labctl("up", "--topology", topology, "--port-offset", str(PORT_OFFSET), "--no-bmc")
    return Lab(STATE_DIR)


def run_play(lab, tasks, workdir):
    """Wall time and SOAP requests of one ansible-playbook run of ``tasks``."""
    play = [{"hosts": "localhost", "gather_facts": False, "connection": "local",
             "module_defaults": {"group/gpuops.vgpu.vcenter": lab.connection}, "tasks": tasks}]
    path = os.path.join(workdir, "play.yml")
    with open(path, "w") as handle:
        yaml.safe_dump(play, handle)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, ANSIBLE_NOCOLOR="1")
    lab.reset_stats()
    start = time.monotonic()
    proc = subprocess.run([PLAYBOOK, "-i", "localhost,", path], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit("A benchmark play failed:\n%s" % proc.stdout[-4000:])
    return seconds, lab.stats()["soap_requests"]


def anchor_credentials(lab):
    conn = lab.connection
    return {"hostname": conn["hostname"], "port": conn["port"], "username": conn["username"],
            "password": conn["password"], "validate_certs": False}


def vm_names(count):
    return ["gpu-vm-%03d" % number for number in range(1, count + 1)]


def ours_assign(count):
    return [{"name": "vGPU on %d VMs" % count, "gpuops.vgpu.vm_vgpu": {
        "profile": PROFILE, "vms": [{"name": name} for name in vm_names(count)]}}]


def anchor_assign(lab, count):
    args = dict(anchor_credentials(lab), datacenter="lab-dc", name="{{ item }}", vgpu=PROFILE, state="present")
    return [{"name": "vGPU on %d VMs, one at a time" % count, "community.vmware.vmware_guest_vgpu": args,
             "loop": vm_names(count)}]


def anchor_assign_parallel(lab, count):
    """The same loop, every item started at once (async, poll 0) and then waited for with async_status."""
    args = dict(anchor_credentials(lab), datacenter="lab-dc", name="{{ item }}", vgpu=PROFILE, state="present")
    return [
        {"name": "vGPU on %d VMs, all started at once" % count, "community.vmware.vmware_guest_vgpu": args,
         "loop": vm_names(count), "async": 1800, "poll": 0, "register": "jobs"},
        {"name": "Wait for every VM", "ansible.builtin.async_status": {"jid": "{{ item.ansible_job_id }}"},
         "loop": "{{ jobs.results }}", "loop_control": {"label": "{{ item.item }}"}, "register": "job",
         "until": "job.finished", "retries": 1800, "delay": 1},
    ]


ANCHORS = {"anchor": anchor_assign, "anchor_parallel": anchor_assign_parallel}


def ours_inventory():
    return [{"name": "GPU inventory", "gpuops.vgpu.gpu_info": {}}]


def anchor_inventory(lab, hosts):
    args = dict(anchor_credentials(lab), esxi_hostname="{{ item }}", schema="vsphere",
                properties=["name", "config.graphicsInfo", "config.graphicsConfig", "config.sharedPassthruGpuTypes",
                            "hardware.pciDevice"])
    return [{"name": "host facts, one host at a time", "community.vmware.vmware_host_facts": args,
             "loop": hosts}]


def summary(samples):
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples), "samples": samples}


def measure_assignment(topology, count, reps, workdir):
    rows = {}
    for side in ("ours", "anchor", "anchor_parallel"):
        change_t, change_s, same_t, same_s = [], [], [], []
        for _ in range(reps):
            lab = fresh_lab(topology)
            tasks = ours_assign(count) if side == "ours" else ANCHORS[side](lab, count)
            seconds, soap = run_play(lab, tasks, workdir)
            change_t.append(seconds)
            change_s.append(soap)
            truth = dict((vm["name"], vm) for vm in lab.state()["vms"])
            wrong = [name for name in vm_names(count) if [v["profile"] for v in truth[name]["vgpus"]] != [PROFILE]]
            if wrong:
                sys.exit("%s left %d VMs without %s, e.g. %s" % (side, len(wrong), PROFILE, wrong[:3]))
            seconds, soap = run_play(lab, tasks, workdir)
            same_t.append(seconds)
            same_s.append(soap)
        rows[side] = {"change": {"seconds": summary(change_t), "soap": summary(change_s)},
                      "no_change": {"seconds": summary(same_t), "soap": summary(same_s)}}
        print("  %-15s N=%-4d change %6.1f s %5d SOAP | no change %6.1f s %5d SOAP" % (
            side, count, rows[side]["change"]["seconds"]["median"], rows[side]["change"]["soap"]["median"],
            rows[side]["no_change"]["seconds"]["median"], rows[side]["no_change"]["soap"]["median"]), flush=True)
    return rows


def measure_inventory(topology, hosts, reps, workdir):
    rows = {}
    lab = fresh_lab(topology)
    for side in ("ours", "anchor"):
        seconds, soap = [], []
        for _ in range(reps):
            tasks = ours_inventory() if side == "ours" else anchor_inventory(lab, hosts)
            wall, requests = run_play(lab, tasks, workdir)
            seconds.append(wall)
            soap.append(requests)
        rows[side] = {"seconds": summary(seconds), "soap": summary(soap)}
    return rows


def measure_planner(reps):
    out = os.path.join(ROOT, "bench", "results", "planner.json")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_planner.py"), "--runs", str(max(reps, 5)),
                    "--output", out], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    with open(out) as handle:
        return json.load(handle)


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as handle:
            model = next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(),
            "system": platform.platform(), "date": time.strftime("%Y-%m-%d")}


def ratio(anchor, ours):
    return anchor / ours if ours else float("inf")


def print_table(results):
    print()
    print("| measurement | gpuops.vgpu | community.vmware | ratio |")
    print("|---|---|---|---|")
    for count, rows in sorted(results["assignment"].items(), key=lambda item: int(item[0])):
        for phase in ("change", "no_change"):
            for side, how in (("anchor", "serial loop"), ("anchor_parallel", "async loop")):
                if side not in rows:
                    continue
                ours, anchor = rows["ours"][phase], rows[side][phase]
                label = "vGPU on %s VMs%s, %s" % (count, "" if phase == "change" else ", nothing to change", how)
                print("| %s: wall time | %.1f s (%.1f-%.1f) | %.1f s (%.1f-%.1f) | %.1fx |" % (
                    label, ours["seconds"]["median"], ours["seconds"]["min"], ours["seconds"]["max"],
                    anchor["seconds"]["median"], anchor["seconds"]["min"], anchor["seconds"]["max"],
                    ratio(anchor["seconds"]["median"], ours["seconds"]["median"])))
                print("| %s: SOAP requests | %d | %d | %.1fx |" % (
                    label, ours["soap"]["median"], anchor["soap"]["median"],
                    ratio(anchor["soap"]["median"], ours["soap"]["median"])))
    inv = results["inventory"]
    print("| GPU inventory of %d hosts: wall time | %.1f s (%.1f-%.1f) | %.1f s (%.1f-%.1f) | %.1fx |" % (
        results["hosts"], inv["ours"]["seconds"]["median"], inv["ours"]["seconds"]["min"],
        inv["ours"]["seconds"]["max"], inv["anchor"]["seconds"]["median"], inv["anchor"]["seconds"]["min"],
        inv["anchor"]["seconds"]["max"], ratio(inv["anchor"]["seconds"]["median"], inv["ours"]["seconds"]["median"])))
    print("| GPU inventory of %d hosts: SOAP requests | %d | %d | %.1fx |" % (
        results["hosts"], inv["ours"]["soap"]["median"], inv["anchor"]["soap"]["median"],
        ratio(inv["anchor"]["soap"]["median"], inv["ours"]["soap"]["median"])))
    planner = results.get("planner")
    for scenario in (planner or {}).get("scenarios", []):
        print("| vgpu_plan, %s requests over %s GPUs (%s) | %.2f s (%.2f-%.2f), %d placed, %d GPUs (bound %d) | - | |" % (
            planner["requests"], planner["gpus"], scenario["scenario"], scenario["median_s"], scenario["min_s"],
            scenario["max_s"], scenario["placed"], scenario["gpus_used"], scenario["gpus_used_lower_bound"]))
    print()
    print("Machine: %(cpu)s, %(cores)s cores, Python %(python)s, %(date)s" % results["machine"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=32)
    parser.add_argument("--vms", type=int, default=256)
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--skip-planner", action="store_true")
    parser.add_argument("--guest-sizes", type=int, nargs="+", default=[10, 20])
    parser.add_argument("--skip-guests", action="store_true")
    parser.add_argument("--site-guests", type=int, default=20)
    parser.add_argument("--skip-site", action="store_true")
    parser.add_argument("--skip-converged", action="store_true")
    parser.add_argument("--skip-in-process", action="store_true")
    args = parser.parse_args()
    if max(args.sizes) > args.vms:
        sys.exit("--sizes may not exceed --vms.")

    workdir = tempfile.mkdtemp(prefix="gpuops-bench-")
    topology = os.path.join(workdir, "topology.json")
    with open(topology, "w") as handle:
        subprocess.run([sys.executable, os.path.join(ROOT, "lab", "topologies", "generate.py"), "--hosts",
                        str(args.hosts), "--vms", str(args.vms)], stdout=handle, check=True)
    hosts = ["esxi-%03d.lab.local" % number for number in range(1, args.hosts + 1)]
    results = {"machine": machine(), "hosts": args.hosts, "vms": args.vms, "reps": args.reps, "profile": PROFILE,
               "assignment": {}}
    try:
        for count in args.sizes:
            print("vGPU assignment, N=%d (%d runs each)" % (count, args.reps), flush=True)
            results["assignment"][str(count)] = measure_assignment(topology, count, args.reps, workdir)
            save(results)
        print("GPU inventory of %d hosts" % args.hosts, flush=True)
        results["inventory"] = measure_inventory(topology, hosts, args.reps, workdir)
        save(results)
    finally:
        labctl("down")
    if not args.skip_planner:
        results["planner"] = measure_planner(args.reps)
    save(results, complete=True)
    print_table(results)
    if not args.skip_guests:
        print("Guest layer (bench/bench_guests.py)", flush=True)
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_guests.py"), "--sizes"]
                       + [str(size) for size in args.guest_sizes], check=True, cwd=ROOT)
    if not args.skip_converged:
        print("Converged site.yml on the default lab (bench/bench_converged.py)", flush=True)
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_converged.py")], check=True, cwd=ROOT)
        if not args.skip_in_process:
            print("A vCenter module task in the worker and in a module process (bench/bench_in_process.py)", flush=True)
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_in_process.py")], check=True, cwd=ROOT)
    if not args.skip_site:
        print("site.yml at scale (bench/bench_site.py)", flush=True)
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_site.py"), "--hosts", str(args.hosts),
                        "--vms", str(args.vms), "--guests", str(args.site_guests)], check=True, cwd=ROOT)


def save(results, complete=False):
    """Write what was measured so far; a run cut short still leaves its figures (marked incomplete)."""
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "latest.json"), "w") as handle:
        json.dump(dict(results, complete=complete), handle, indent=1)


if __name__ == "__main__":
    main()
