# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An inventory of lab guests started by ``labctl.start_guests`` at any port offset, for tests and benchmarks.

The guests get the site run's choices for gpu_guests (inventories/lab/job.yml) and are reached over SSH with the
lab's key, exactly as job.yml reaches the default lab's guests; only the ports and the state directory differ.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JOB = os.path.join(ROOT, "inventories", "lab", "job.yml")


def guest_vars(state_dir):
    """job.yml's gpu_guests vars with the paths of the lab in ``state_dir``."""
    with open(JOB) as handle:
        job = yaml.safe_load(handle)
    group = dict(job["all"]["children"]["gpu_guests"]["vars"])
    group.update(lab_state_dir=os.path.abspath(state_dir), lab_standins=os.path.join(os.path.abspath(state_dir), "standins"))
    return group


def write_inventory(path, guests, state_dir, extra_vars=None):
    """Writes an inventory of ``guests`` (``start_guests``' answer) into ``path`` and returns ``path``."""
    group = guest_vars(state_dir)
    group.update(extra_vars or {})
    hosts = dict((name, {"ansible_port": guest["ssh_port"], "vgpu_vm_name": guest.get("vm", name)})
                 for name, guest in guests.items())
    for name, guest in guests.items():
        if guest.get("metrics_port"):
            hosts[name]["gpu_monitoring_metrics_url"] = "http://127.0.0.1:%d/metrics" % guest["metrics_port"]
    with open(path, "w") as handle:
        yaml.safe_dump({"all": {"children": {"gpu_guests": {"vars": group, "hosts": hosts}}}}, handle)
    return path
