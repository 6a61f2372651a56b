# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An inventory of lab GPU servers started by ``servers.start_servers`` at any port offset, for tests and
benchmarks: the gpu_servers group with the site run's choices (inventories/lab/job.yml), reached over SSH with the
lab's key as hosts.yml reaches the default lab's servers; only the ports, BMCs and state directory differ."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOB = os.path.join(ROOT, "inventories", "lab", "job.yml")
BMC = os.path.join(ROOT, "inventories", "lab", "group_vars", "bmc_hosts.yml")


def write_inventory(path, servers, state_dir, bmcs, extra_vars=None):
    """Writes an inventory of ``servers`` (``start_servers``' answer) into ``path``; ``bmcs`` maps a server's name
    to its BMC's base URI (labctl's ``services["bmc"]["hosts"]``). Returns ``path``."""
    with open(JOB) as handle:
        job = yaml.safe_load(handle)["all"]["children"]["gpu_servers"]
    with open(BMC) as handle:
        group = yaml.safe_load(handle)
    state_dir = os.path.abspath(state_dir)
    group.update(job["vars"])
    group.update(ansible_connection="ssh", ansible_host="127.0.0.1", ansible_user="root",
                 ansible_python_interpreter="/usr/bin/python3", ansible_ssh_pipelining=True,
                 ansible_ssh_private_key_file=os.path.join(state_dir, "guest_ssh_key"),
                 ansible_ssh_common_args="-o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s"
                                         % os.path.join(state_dir, "server_known_hosts"))
    group.update(extra_vars or {})
    hosts = {}
    for name, server in servers.items():
        hosts[name] = dict(job["hosts"].get(name) or {}, ansible_port=server["ssh_port"],
                           gpu_monitoring_metrics_url="http://127.0.0.1:%d/metrics" % server["metrics_port"])
        if name in bmcs:
            hosts[name]["bmc_address"] = bmcs[name]["baseuri"]
    with open(path, "w") as handle:
        yaml.safe_dump({"all": {"children": {"gpu_servers": {"vars": group, "hosts": hosts}}}}, handle)
    return path
