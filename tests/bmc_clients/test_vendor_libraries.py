# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Redfish client libraries against the lab BMCs: OpenStack's sushy against every vendor profile, HPE's
python-ilorest-library against the iLO 5 profile. They run in a virtual environment of their own
(tools/bmc_clients_venv.sh); each change is checked against the BMC's ground truth."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess

import pytest

from conftest import ROOT, VENDORS

HERE = os.path.dirname(os.path.abspath(__file__))
BIOS_CHANGE = {"dell_idrac8": {"SriovGlobalEnable": "Enabled"}, "dell_idrac9": {"MemoryMappedIOH": "56TB"},
               "hpe_ilo5": {"Sriov": "Enabled"}, "supermicro": {"QuietBoot": False}}


@pytest.fixture(scope="session")
def clients_python():
    made = subprocess.run([os.path.join(ROOT, "tools", "bmc_clients_venv.sh")], capture_output=True, text=True,
                          check=False)
    assert made.returncode == 0, made.stderr
    return made.stdout.strip().splitlines()[-1]


def run_client(python, script, bmc, attributes, *extra):
    result = subprocess.run([python, os.path.join(HERE, "clients", script), bmc.baseuri, bmc.credentials[0],
                             bmc.credentials[1], bmc.cert, json.dumps(attributes)] + list(extra),
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("vendor", VENDORS)
def test_sushy_reads_changes_bios_and_powers_off(fresh, clients_python, vendor):
    bmc = fresh[vendor]
    before = bmc.state()
    # The lab's iLO, like a real one on a port other than 443, names sessions by URLs without the port.
    seen = run_client(clients_python, "sushy_client.py", bmc, BIOS_CHANGE[vendor], *(["basic"] if vendor == "hpe_ilo5" else []))
    truth = bmc.state()
    assert seen["system"]["serial"] == before["identity"]["SerialNumber"]
    assert seen["system"]["power_state"] == "On" and truth["power_state"] == "Off"
    assert seen["bios"]["attributes"] == before["bios"]["current"]
    assert [s["serial"] for s in seen["supplies"]] == [s["serial"] for s in truth["power"]["supplies"]]
    assert truth["bios"]["pending"] == BIOS_CHANGE[vendor]
    assert truth["sessions_open"] == 0


def test_ilorest_changes_bios_settings(fresh, clients_python):
    bmc = fresh["hpe_ilo5"]
    seen = run_client(clients_python, "ilorest_bios.py", bmc, BIOS_CHANGE["hpe_ilo5"])
    truth = bmc.state()
    assert seen["system"]["serial"] == truth["identity"]["SerialNumber"]
    assert seen["bios"]["attributes"] == truth["bios"]["current"]
    assert seen["patch"]["status"] == 200
    assert [m["MessageId"] for m in seen["patch"]["body"]["error"]["@Message.ExtendedInfo"]] == [
        "iLO.2.15.SystemResetRequired"]
    assert truth["bios"]["pending"] == BIOS_CHANGE["hpe_ilo5"]
    assert truth["sessions_open"] == 0
