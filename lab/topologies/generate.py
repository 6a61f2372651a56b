#!/usr/bin/env python3
"""Write a lab topology of any size, for scale tests and benchmarks.

    generate.py --hosts 32 --gpus-per-host 1 --gpu P40 --vms 256 [--clusters 1] [--bmc-base-port 0]
                [--shell-base-port 0] [--guests 0] > big.json

Hosts are spread over the clusters, VMs over the hosts (powered off). With --bmc-base-port, every host gets a
BMC on consecutive ports, cycling through the lab's vendor profiles; with --shell-base-port, an ESXi shell (sshd)
on consecutive ports. --guests N adds N guest containers standing for the first N VMs.
"""

import argparse
import json
import sys

VENDORS = ["dell_idrac8", "dell_idrac9", "hpe_ilo5", "supermicro"]


def build(args):
    clusters = []
    for index in range(args.clusters):
        clusters.append({"name": "gpu-cluster" if index == 0 else "gpu-cluster-%02d" % (index + 1),
                         "drs": {"enabled": True, "behavior": "fullyAutomated"},
                         "dpm": {"enabled": False, "behavior": "manual"}, "hosts": []})
    hosts = []
    for number in range(1, args.hosts + 1):
        host = {"name": "esxi-%03d.lab.local" % number, "gpus": [{"model": args.gpu, "count": args.gpus_per_host}]}
        if args.bmc_base_port:
            host["bmc"] = {"vendor": VENDORS[(number - 1) % len(VENDORS)], "port": args.bmc_base_port + number - 1}
        if args.shell_base_port:
            host["shell"] = {"port": args.shell_base_port + number - 1}
        clusters[(number - 1) % args.clusters]["hosts"].append(host)
        hosts.append(host["name"])
    vms = [{"name": "gpu-vm-%03d" % number, "host": hosts[(number - 1) % len(hosts)], "memory_mb": 8192,
            "cpus": 2, "power_state": "poweredOff", "guest_id": "ubuntu64Guest"}
           for number in range(1, args.vms + 1)]
    topology = {"datacenters": [{"name": "lab-dc", "clusters": clusters, "hosts": [], "vms": vms}]}
    if args.guests:
        topology["guests"] = [{"name": "guest-%03d" % number, "vm": vm["name"]}
                              for number, vm in enumerate(vms[:args.guests], 1)]
    return topology


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, required=True)
    parser.add_argument("--gpus-per-host", type=int, default=1)
    parser.add_argument("--gpu", default="P40")
    parser.add_argument("--vms", type=int, default=0)
    parser.add_argument("--clusters", type=int, default=1)
    parser.add_argument("--bmc-base-port", type=int, default=0)
    parser.add_argument("--shell-base-port", type=int, default=0)
    parser.add_argument("--guests", type=int, default=0)
    args = parser.parse_args()
    if args.hosts < 1 or args.clusters < 1 or args.clusters > args.hosts:
        sys.exit("--hosts must be at least 1 and at least --clusters.")
    if args.guests > args.vms:
        sys.exit("--guests %d is more than --vms %d: each guest stands for a VM." % (args.guests, args.vms))
    json.dump(build(args), sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
