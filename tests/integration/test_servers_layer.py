# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The servers layer's first play (playbooks/servers.yml, --tags bios,cooling) on the lab's bare-metal GPU servers:
each has a BMC of its own in the lab (topology ``servers:``), and the existing bios and bmc_cooling roles take it
from the controller as they take an ESXi host's, without vCenter. Checked against the BMCs' ground truth."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import yaml

from conftest import ROOT
from redfish_direct import LabBmc
from test_bios_settings import PROFILE

SERVERS = ["hgx-01.lab.local", "pcie-01.lab.local"]


def run_layer(lab, tmp_path, *args):
    """playbooks/servers.yml on the lab's GPU servers, reached only through their BMCs (no SSH in these plays)."""
    inventory = tmp_path / "gpu-servers.yml"
    with open(os.path.join(ROOT, "inventories", "lab", "group_vars", "bmc_hosts.yml")) as handle:
        credentials = yaml.safe_load(handle)
    inventory.write_text(yaml.safe_dump({"all": {"children": {"gpu_servers": {
        "vars": dict(credentials, ansible_connection="local",
                     ansible_python_interpreter=sys.executable),
        "hosts": dict((name, {"bmc_address": lab.bmcs[name]["baseuri"]}) for name in SERVERS)}}}}))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
            os.path.join(ROOT, "playbooks", "servers.yml"), "--tags", "bios,cooling",
            "-e", "bios_maintenance_record=%s" % (tmp_path / "bios.json")] + list(args)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0")
    return subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)


def test_the_gpu_servers_bios_and_cooling_are_set_through_their_own_bmcs(lab, tmp_path):
    bmcs = dict((name, LabBmc(lab, name)) for name in SERVERS)
    assert [bmc.vendor for bmc in bmcs.values()] == ["supermicro", "dell_idrac9"]
    before = dict((name, bmc.state()) for name, bmc in bmcs.items())
    assert all(state["bios"]["pending"] == {} for state in before.values())

    proc = run_layer(lab, tmp_path)
    assert proc.returncode == 0, proc.stdout[-6000:]
    assert "Waiting for a reboot:" in proc.stdout
    for name, bmc in bmcs.items():
        truth = bmc.state()
        assert truth["bios"]["pending"] == PROFILE[bmc.vendor]["changes"], name
        # Values wait for the server's next restart: nothing was restarted.
        assert truth["resets"] == before[name]["resets"] and truth["power_state"] == "On"
        assert truth["cooling"] != before[name]["cooling"], "%s: cooling not set for the GPUs" % name

    again = run_layer(lab, tmp_path)
    assert again.returncode == 0, again.stdout[-6000:]
    recap = [line for line in again.stdout.split("PLAY RECAP")[-1].splitlines() if "ok=" in line]
    assert len(recap) == 2 and all("changed=0" in line and "failed=0" in line for line in recap), recap
