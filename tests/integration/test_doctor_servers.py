# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor and the fleet report on the lab's bare-metal GPU servers: hgx-01 converged (NVIDIA's data center
driver and Fabric Manager from the lab's stand-ins), pcie-01 left as it comes, without a driver. The doctor's server
verdicts follow what the servers themselves say (dpkg, their nvidia-smi -q); it names pcie-01 with the fix and
passes hgx-01; its read of hgx-01 asks the server only for what the driver role's read of the same run lacks (the
topology); the fleet report's files have both servers.

The servers are containers of the test's own (labctl.start_servers with the default topology's servers), their BMCs
the lab's; the vCenter part of the doctor reads the lab's vCenter as test_role_doctor does.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

from conftest import LAB_CONTROL, PORT_OFFSET, ROOT, lab_servers

sys.path.insert(0, os.path.join(ROOT, ".tmp", "collections"))
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import parse_query  # noqa: E402
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_servers import FIX  # noqa: E402

HGX, PCIE = "hgx-01.lab.local", "pcie-01.lab.local"
STATE_DIR = os.path.join(ROOT, ".tmp", "doctor-servers-%d" % PORT_OFFSET)
# DCGM's recorded level-2 pass on an 8-GPU board (tests/fixtures/dcgm/SOURCES.md), given as hgx-01's last verdict.
DCGM_PASS = os.path.join(ROOT, "tests", "fixtures", "dcgm", "diag_r2_text_8xA100_sxm4_80gb_pass_dcgm3.3.3.txt")
GATHER = "Read the server's driver, GPUs, fabric and NVLink"


@pytest.fixture
def servers(lab):
    """The default topology's servers as they start in the lab (no driver), on ports of their own."""
    with lab_servers(lab, STATE_DIR, 250) as started:
        yield started


def on(server, *command):
    return LAB_CONTROL.podman("exec", server["container"], *command, check=False).stdout


def run(lab, tmp_path, plays):
    """``plays`` with the lab's inventory and the servers'; returns (rc, {(play, task, host): result}, output)."""
    playbook = tmp_path / "doctor-servers.yml"
    playbook.write_text(yaml.safe_dump(plays, sort_keys=False))
    argv = ([os.path.join(os.path.dirname(sys.executable), "ansible-playbook")] + lab.inventory_args
            + ["-i", os.path.join(STATE_DIR, "inventory.yml"), str(playbook)])
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
               ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0")
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    output = proc.stdout + proc.stderr
    assert "{" in proc.stdout, output[-6000:]
    document = json.loads(proc.stdout[proc.stdout.index("{"):])
    results = {}
    for play in document["plays"]:
        for task in play["tasks"]:
            for host, result in task["hosts"].items():
                results[(play["play"]["name"], task["task"]["name"].split(" : ")[-1], host)] = result
    return proc.returncode, results, output


def driver_play(reuse=False):
    return {"name": "Driver", "hosts": HGX, "gather_facts": False,
            "vars": {"gpu_guest_info_reuse": reuse},
            "tasks": [{"name": "NVIDIA's data center driver",
                       "ansible.builtin.include_role": {"name": "gpuops.vgpu.nvidia_driver"}},
                      {"name": "Fabric Manager",
                       "ansible.builtin.include_role": {"name": "gpuops.vgpu.fabric_manager"}}]}


def doctor_plays(lab, tmp_path, dcgm=None):
    if dcgm is None:
        with open(DCGM_PASS) as handle:
            dcgm = {HGX: {"stdout": handle.read(), "level": 2}}
    return [
        {"name": "Gather", "hosts": "gpu_servers", "gather_facts": False,
         "vars": {"doctor_settings_host": "localhost"},
         "tasks": [{"name": "gather",
                    "ansible.builtin.include_role": {"name": "gpuops.vgpu.doctor", "tasks_from": "gather"}}]},
        {"name": "Doctor", "hosts": "localhost", "gather_facts": False,
         "module_defaults": {"group/gpuops.vgpu.vcenter": lab.connection},
         "vars": {"doctor_fail_on": "never", "doctor_output_dir": str(tmp_path / "reports"),
                  "doctor_server_dcgm": dcgm, "fleet_report_output_dir": str(tmp_path / "reports")},
         "tasks": [{"name": "doctor", "ansible.builtin.include_role": {"name": "gpuops.vgpu.doctor"}},
                   {"name": "fleet", "ansible.builtin.include_role": {"name": "gpuops.vgpu.fleet_report"}}]},
    ]


def test_the_doctor_passes_the_converged_server_and_names_the_one_without_a_driver_with_its_fix(
        lab, servers, tmp_path):
    rc, _results, output = run(lab, tmp_path, [driver_play()])
    assert rc == 0, output[-8000:]
    # Ground truth on the servers: hgx-01 runs the installed driver with its fabric completed, pcie-01 has none.
    hgx = parse_query(on(servers[HGX], "nvidia-smi", "-q"))
    assert hgx["driver_version"] == "535.161.08"
    assert [(gpu["fabric_state"], gpu["fabric_status"]) for gpu in hgx["gpus"]] == [("Completed", "Success")] * 8
    assert on(servers[HGX], "dpkg-query", "-W", "-f", "${Version}", "cuda-drivers-535") == "535.161.08-1"
    assert on(servers[PCIE], "sh", "-c", "command -v nvidia-smi; dpkg -l 'cuda-drivers*' 2>/dev/null | grep ^ii; "
                                         "true") == ""

    # The driver role's read on the converged server, then the doctor's in the same run.
    rc, results, output = run(lab, tmp_path, [driver_play(reuse=True)] + doctor_plays(lab, tmp_path))
    assert rc == 0, output[-8000:]
    assert not [key for key, result in results.items() if key[0] in ("Gather", "Doctor") and result.get("changed")
                and "report" not in key[1] and "Write" not in key[1]], "the doctor changed something"
    gathered = dict((host, results[("Gather", GATHER, host)]) for host in (HGX, PCIE))
    # hgx-01: answered from the driver role's read, the server asked only for the topology it lacked.
    assert gathered[HGX]["invocation"]["module_args"]["gather"] == ["topology"], gathered[HGX]["invocation"]
    assert "topology" in gathered[HGX]["gpu_guest"]["gathered"] and "packages" in gathered[HGX]["gpu_guest"]["gathered"]
    # pcie-01: nothing read before in this run, so one whole read.
    assert gathered[PCIE]["invocation"]["module_args"]["gather"] == [
        "pci", "packages", "driver", "nvidia_smi", "topology"]

    report = json.loads((tmp_path / "reports" / "doctor.json").read_text())
    found = dict(((f["object"], f["check"]), f) for f in report["findings"] if f["layer"] == "server")
    assert sorted(found) == sorted((name, check) for name in (HGX, PCIE)
                                   for check in ("server_driver", "fabric", "gpus_nvlink", "dcgm"))
    assert [found[(HGX, check)]["status"] for check in ("server_driver", "fabric", "gpus_nvlink", "dcgm")] == \
        ["PASS"] * 4, [found[(HGX, c)] for c in ("server_driver", "fabric", "gpus_nvlink", "dcgm")]
    assert found[(HGX, "server_driver")]["message"].startswith(
        "Driver %s, R535, proprietary kernel modules" % hgx["driver_version"])
    assert found[(HGX, "fabric")]["message"] == "The NVSwitch fabric is ready: 8 GPU(s) Completed, Success."
    assert found[(HGX, "gpus_nvlink")]["message"].startswith("8 GPU(s) (%s)." % hgx["gpus"][0]["name"])
    assert "every pair of 8 GPUs" in found[(HGX, "gpus_nvlink")]["message"]

    bad = found[(PCIE, "server_driver")]
    assert bad["status"] == "FAIL" and bad["remediation"] == FIX["driver"]
    assert bad["message"].startswith("No NVIDIA data center driver: nvidia-smi fails (not_installed)")
    assert [found[(PCIE, check)]["status"] for check in ("fabric", "gpus_nvlink", "dcgm")] == ["SKIP"] * 3
    table = next(r["msg"] for key, r in results.items() if key[1] == "Show the findings")
    assert any(line.startswith("== server: ") for line in table)
    assert any("FAIL" in line and PCIE in line and "server_driver" in line for line in table)

    # The fleet report: its data and its page have both servers, with what the servers say.
    data = json.loads((tmp_path / "reports" / "fleet-report.json").read_text())
    rows = dict((server["name"], server) for server in data["servers"])
    assert (rows[HGX]["driver"], rows[HGX]["status"], len(rows[HGX]["gpus"])) == ("535.161.08", "PASS", 8)
    assert (rows[PCIE]["driver"], rows[PCIE]["status"]) == (None, "FAIL")
    page = (tmp_path / "reports" / "fleet-report.html").read_text()
    assert '<tr data-server="%s">' % HGX in page and '<tr data-server="%s">' % PCIE in page
    assert "gpuops.vgpu.nvidia_driver" in page

    # Without the gather play the doctor reads each server itself, once, and comes to the same verdicts.
    alone = tmp_path / "alone"
    alone.mkdir()
    rc, results, output = run(lab, alone, doctor_plays(lab, alone)[1:])
    assert rc == 0, output[-8000:]
    reads = results[("Doctor", "Read the servers' driver, GPUs, fabric and NVLink", "localhost")]["results"]
    assert sorted(read["item"] for read in reads) == [HGX, PCIE]
    again = json.loads((alone / "reports" / "doctor.json").read_text())
    assert [(f["object"], f["check"], f["status"]) for f in again["findings"] if f["layer"] == "server"] == [
        (f["object"], f["check"], f["status"]) for f in report["findings"] if f["layer"] == "server"]


def test_a_dcgm_verdict_gpu_validate_kept_is_judged_in_a_later_run_and_a_damaged_one_refused(lab, servers, tmp_path):
    rc, _results, output = run(lab, tmp_path, [driver_play()])
    assert rc == 0, output[-8000:]
    # What gpu_validate keeps beside the playbook after DCGM's diagnostic failed on the board in an earlier run.
    records = tmp_path / "reports" / "dcgm"
    records.mkdir(parents=True)
    verdict = {"status": "failed", "level": 2, "version": "4.2.3", "host": HGX, "taken": "2026-11-28T03:10:00Z",
               "message": "DCGM 4.2.3 level 2: GPU 1 (00000000:3B:00.0) failed memory: Temperature 95 of GPU 1 "
                          "exceeded user-specified maximum allowed temperature 89",
               "failures": [{"gpu": "1", "test": "memory"}]}
    (records / ("%s.json" % HGX)).write_text(json.dumps(verdict))
    rc, results, output = run(lab, tmp_path, doctor_plays(lab, tmp_path, dcgm={}))
    assert rc == 0, output[-8000:]
    report = json.loads((tmp_path / "reports" / "doctor.json").read_text())
    dcgm = next(f for f in report["findings"] if f["object"] == HGX and f["check"] == "dcgm")
    assert dcgm["status"] == "FAIL", dcgm
    assert dcgm["message"].startswith("DCGM failed (gpu_validate at 2026-11-28T03:10:00Z): "), dcgm
    assert "GPU 1 (00000000:3B:00.0) failed memory" in dcgm["message"], dcgm

    # A record cut short is refused with its file named, before any verdict.
    (records / ("%s.json" % HGX)).write_text('{"status": "fa')
    rc, results, output = run(lab, tmp_path, doctor_plays(lab, tmp_path, dcgm={}))
    assert rc != 0 and "%s.json" % HGX in output and "delete" in output, output[-4000:]
