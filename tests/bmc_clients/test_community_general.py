# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""community.general's redfish_info/command/config, idrac_redfish_* and ilo_redfish_* against one lab BMC per vendor
profile, in one playbook whose every change is checked against the BMC's ground truth."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
# What each profile lets BIOS staging change, and the redfish_info commands a vendor's BMC does not implement
# (community.general answers them with ret false or a module failure, as it does against the real BMC).
BIOS_CHANGE = {"dell_idrac8": {"SriovGlobalEnable": "Enabled"}, "dell_idrac9": {"SriovGlobalEnable": "Enabled"},
               "hpe_ilo5": {"Sriov": "Enabled"}, "supermicro": {"QuietBoot": False}}
INFO_SKIPPED = {"supermicro": {"Chassis": ["GetFanInventory", "GetChassisThermals"]}}


def inventory(bmcs, path):
    hosts = {}
    for vendor, bmc in bmcs.items():
        hosts[vendor] = {"bmc_address": bmc.address, "bmc_username": bmc.credentials[0],
                         "bmc_password": bmc.credentials[1], "bios_change": BIOS_CHANGE[vendor],
                         "info_skipped": INFO_SKIPPED.get(vendor, {}), "dell": vendor.startswith("dell"),
                         "ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    groups = {"bmcs": {"hosts": dict((name, None) for name in hosts)},
              "dell": {"hosts": dict((name, None) for name in hosts if name.startswith("dell"))},
              "hpe": {"hosts": dict((name, None) for name in hosts if name.startswith("hpe"))}}
    with open(path, "w") as handle:
        yaml.safe_dump({"all": {"hosts": hosts, "children": groups}}, handle)


def test_community_general_modules_against_every_vendor(fresh, tmp_path):
    inventory(fresh, str(tmp_path / "inventory.yml"))
    env = dict(os.environ, ANSIBLE_FORKS="4", ANSIBLE_NOCOLOR="1", ANSIBLE_HOST_KEY_CHECKING="0",
               ANSIBLE_DEPRECATION_WARNINGS="0")
    result = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i",
                             str(tmp_path / "inventory.yml"), os.path.join(HERE, "playbooks", "community_general.yml")],
                            env=env, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "failed=0" in result.stdout and "failed=1" not in result.stdout
    # The end state, read once more outside the playbook: the BIOS change applied (on the Dell BMCs, whose play
    # ends with the value staged again and its job scheduled), the clearable logs empty, the server on.
    for vendor, bmc in fresh.items():
        truth = bmc.state()
        if vendor.startswith("dell"):
            assert truth["bios"]["pending"] == BIOS_CHANGE[vendor]
            assert [job["JobState"] for job in truth["jobs"]] == ["Scheduled"]
        else:
            assert all(truth["bios"]["current"][name] == value for name, value in BIOS_CHANGE[vendor].items())
            assert all(log["entries"] == [] for log in truth["logs"].values() if log["cleared"])
        assert truth["power_state"] == "On" and truth["sessions_open"] == 0
