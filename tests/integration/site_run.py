# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/site.yml against a test's lab: the lab inventory's infrastructure and the site run's choices
(inventories/lab/job.yml) without the guest containers, the BMCs and vCenter where this lab runs them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SITE = os.path.join(ROOT, "playbooks", "site.yml")


def site_inventory(lab, path):
    """The job's choices for the infrastructure layers, pointed at ``lab``; the guests are left out."""
    with open(os.path.join(ROOT, "inventories", "lab", "job.yml")) as handle:
        job = yaml.safe_load(handle)
    children = dict((name, group) for name, group in job["all"]["children"].items() if name != "gpu_guests")
    children["esxi_hosts"] = {"hosts": dict((name, {"bmc_address": bmc["baseuri"]})
                                            for name, bmc in lab.bmcs.items() if name.startswith("esxi-0")
                                            or name.startswith("esxi-1"))}
    path.write_text(yaml.safe_dump({"all": {"children": children}}))
    return path


def site_command(lab, inventory, state_dir, extra=None):
    """argv and environment of one site run; records (the DRS/DPM snapshot, reports) go to ``state_dir``."""
    variables = {"vcenter_port": lab.port, "doctor_output_dir": str(state_dir),
                 "fleet_report_output_dir": str(state_dir), "cluster_vgpu_state_file":
                 "%s/{{ vcenter_hostname }}_{{ cluster_vgpu_cluster }}.json" % state_dir,
                 "doctor_cluster_vgpu_state_dir": str(state_dir), "doctor_verdict": False}
    variables.update(extra or {})
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", lab.inventory,
            "-i", str(inventory), "-e", json.dumps(variables), SITE]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0",
               ANSIBLE_HOST_KEY_CHECKING="0")
    return argv, env


def run_site(lab, inventory, state_dir, extra=None, timeout=900):
    argv, env = site_command(lab, inventory, state_dir, extra)
    return subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=timeout)
