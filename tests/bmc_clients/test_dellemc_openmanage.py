# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Dell's dellemc.openmanage collection (shipped in the `ansible` package the test environment pins) against the lab's
iDRAC9: idrac_bios stages BIOS values with their job in Dell's OEM job service."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
CHANGE = {"MemoryMappedIOH": "56TB"}


def test_idrac_bios_stages_values_and_their_job(fresh, tmp_path):
    bmc = fresh["dell_idrac9"]
    host = {"bmc_address": bmc.address, "bmc_username": bmc.credentials[0], "bmc_password": bmc.credentials[1],
            "bios_change": CHANGE, "ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {"dell_idrac9": host}}}))
    result = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
                             os.path.join(HERE, "playbooks", "dellemc_openmanage.yml")],
                            env=dict(os.environ, ANSIBLE_NOCOLOR="1"), capture_output=True, text=True, timeout=300,
                            check=False)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    truth = bmc.state()
    assert truth["bios"]["pending"] == CHANGE and [job["JobState"] for job in truth["jobs"]] == ["Scheduled"]
