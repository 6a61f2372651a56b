# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/cooling.yml (the bmc_cooling role's by_temperature entry point) against the lab: GPU temperatures
staged in the lab vCenter show in the ESXi host shell's nvidia-smi, and the host's BMC setting and fan speeds
follow them, with the curve's hysteresis."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

from conftest import ROOT
from redfish_direct import LabBmc
from test_bmc_cooling import PASSIVE_GPU, fan_readings, redfish_fan_readings
from vlcm_lab import driver_topology

HOST = "esxi-11.lab.local"  # iDRAC9, two T4 (slowdown 93 C), vGPU manager installed below
NO_SHELL = "esxi-sa-01.lab.local"  # Supermicro; its GPUs given in a variable
PLAYBOOK = os.path.join(ROOT, "playbooks", "cooling.yml")
FACTORY = {"ThermalSettings.1.ThermalProfile": "Default Thermal Profile Settings",
           "ThermalSettings.1.FanSpeedOffset": "Off"}
MAX_COOLING = {"ThermalSettings.1.ThermalProfile": "Maximum Performance", "ThermalSettings.1.FanSpeedOffset": "Max"}


@pytest.fixture
def lab(labs, tmp_path_factory):
    """The default lab with the vGPU manager on HOST, so that its shell's nvidia-smi reports the GPUs."""
    return labs(driver_topology(tmp_path_factory.getbasetemp(), HOST, "cooling-topology.json"))


@pytest.fixture
def bmc(lab):
    found = {}
    for host in (HOST, NO_SHELL):
        found[host] = LabBmc(lab, host)
        found[host].wait_up()
        found[host].factory_reset()
    yield found
    for each in found.values():
        assert each.state()["sessions_open"] == 0


def cooling_playbook(lab, tmp_path, limit, check=False, extra=None):
    """ansible-playbook playbooks/cooling.yml as a schedule runs it, on this lab's BMC ports and host shells."""
    overlay = tmp_path / "bmcs.yml"
    overlay.write_text(yaml.safe_dump({"all": {"hosts": dict(
        (name, {"bmc_address": bmc["baseuri"]}) for name, bmc in lab.bmcs.items() if name in (HOST, NO_SHELL))}}))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook")] + lab.inventory_args + [
        "-i", str(overlay), "-l", limit, PLAYBOOK]
    if check:
        argv.append("--check")
    if extra:
        argv += ["-e", json.dumps(extra)]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0",
               ANSIBLE_HOST_KEY_CHECKING="0")
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stdout[-5000:]
    return proc.stdout


def stage(lab, celsius):
    lab.request("POST", "/lab/gpus", {"host": HOST, "temperature_c": celsius})


def thermal(bmc):
    settings = bmc.state()["cooling"]["settings"]
    return dict((name, settings[name]) for name in FACTORY)


def test_cooling_follows_the_gpu_temperature_with_hysteresis(lab, bmc, tmp_path):
    dell = bmc[HOST]
    factory_fans = dell.state()["cooling"]["fans"]

    def percents():
        return [fan["percent"] for fan in dell.state()["cooling"]["fans"]]

    stage(lab, 80)  # 13 C below slowdown: within 20, above 10
    cooling_playbook(lab, tmp_path, HOST, check=True)
    assert thermal(dell) == FACTORY and dell.state()["cooling"]["fans"] == factory_fans

    output = cooling_playbook(lab, tmp_path, HOST)
    assert thermal(dell) == PASSIVE_GPU["dell_idrac9"], output[-3000:]
    assert all(now > before["percent"] for now, before in zip(percents(), factory_fans))
    assert redfish_fan_readings(dell) == fan_readings(dell)
    passive_fans = percents()

    stage(lab, 86)  # 7 C: the most cooling
    cooling_playbook(lab, tmp_path, HOST)
    assert thermal(dell) == MAX_COOLING and percents() == [100] * len(passive_fans)

    stage(lab, 80)  # 13 C: inside max_cooling's band (10 + 5): kept
    cooling_playbook(lab, tmp_path, HOST)
    assert thermal(dell) == MAX_COOLING

    stage(lab, 71)  # 22 C: out of max_cooling's band, inside passive_gpu's (20 + 5): one level down
    cooling_playbook(lab, tmp_path, HOST)
    assert thermal(dell) == PASSIVE_GPU["dell_idrac9"] and percents() == passive_fans

    stage(lab, 69)  # 24 C: still inside the band
    dell.lab("POST", "/stats/reset")
    cooling_playbook(lab, tmp_path, HOST)
    assert thermal(dell) == PASSIVE_GPU["dell_idrac9"] and dell.writes() == {}

    stage(lab, 60)  # 33 C: back to the factory policy
    cooling_playbook(lab, tmp_path, HOST)
    assert thermal(dell) == FACTORY and dell.state()["cooling"]["fans"] == factory_fans


def test_host_without_a_shell_gives_its_gpus_in_a_variable(lab, bmc, tmp_path):
    supermicro = bmc[NO_SHELL]
    hot = [{"index": 0, "temperature_gpu_c": 78, "temperature_slowdown_c": 93}]
    cooling_playbook(lab, tmp_path, NO_SHELL, extra={"bmc_cooling_gpus": hot})
    assert supermicro.state()["cooling"]["settings"] == {"Mode": "HeavyIO"}
    assert redfish_fan_readings(supermicro) == [(75, fan["rpm"]) for fan in supermicro.state()["cooling"]["fans"]]
    cool = [{"index": 0, "temperature_gpu_c": 50, "temperature_slowdown_c": 93}]
    cooling_playbook(lab, tmp_path, NO_SHELL, extra={"bmc_cooling_gpus": cool})
    assert supermicro.state()["cooling"]["settings"] == {"Mode": "Standard"}
