# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA DCGM on a passthrough guest of the lab: the dcgm role installs it from package files and starts its host
engine; gpu_validate's DCGM check runs dcgmi diag and judges DCGM's own output.

A lab guest container stands for pt-vm-01 (labctl.start_guests with ``passthrough: true``); its nvidia-smi and the
DCGM stand-in (lab/guests/standins/dcgm, packaged like NVIDIA's DCGM 4) answer from the GPUs the lab vCenter gave
the VM, whose temperature POST /lab/gpus raises. The end state is read from the guest itself (dpkg, systemd) and
from /lab/state.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

import pytest
import yaml

from conftest import LAB_CONTROL, PORT_OFFSET, ROOT, run_playbook

HOST = "esxi-31.lab.local"
PAIR = ["0000:3b:00.0", "0000:5e:00.0"]
GUEST, VM = "pt-dcgm-01", "pt-vm-01"
STATE_DIR = os.path.join(ROOT, ".tmp", "dcgm-guests-%d" % PORT_OFFSET)
PACKAGES = ["/srv/lab-artifacts/datacenter-gpu-manager-4-core_4.2.3-1_amd64.deb",
            "/srv/lab-artifacts/datacenter-gpu-manager-4-cuda12_4.2.3-1_amd64.deb"]
REPORT = "Report the checks"
SHOW = "Show the checks, and fail when one failed"
COMMANDS = "Run the checks' commands on the guest"


@pytest.fixture(scope="module")
def guest(labs):
    lab = labs()
    os.makedirs(STATE_DIR, exist_ok=True)
    started = LAB_CONTROL.start_guests(
        [{"name": GUEST, "vm": VM, "passthrough": True, "ssh_port": LAB_CONTROL.GUEST_SSH_PORT + 130}], STATE_DIR,
        PORT_OFFSET, lab={"url": lab.services["vcenter"]["lab"], "cafile": lab.certificate,
                          "catalog": os.path.join(lab.state_dir, "catalog.json")})
    # The guest starts without a driver (gpuops.vgpu.nvidia_driver installs it in passthrough.yml); DCGM needs one.
    LAB_CONTROL.podman("exec", started[GUEST]["container"], "dpkg", "-i",
                       "/srv/lab-artifacts/cuda-repo/cuda-drivers-535_535.161.08-1_amd64.deb")
    yield started[GUEST]
    LAB_CONTROL.stop_guests([started[GUEST]["container"]])


@pytest.fixture
def pair(lab, guest, run_tasks):
    """pt-vm-01 powered on with the NVLink pair of esxi-31 (the lab is reset before each test)."""
    run_tasks([{"gpuops.vgpu.host_passthrough": {"esxi_hostnames": [HOST], "models": ["A100-40"]}},
               {"gpuops.vgpu.vm_passthrough": {"vms": [{"name": VM, "devices": PAIR}], "power_on": True}}])
    vm = next(v for v in lab.state()["vms"] if v["name"] == VM)
    assert vm["power_state"] == "poweredOn" and sorted(d["gpu"] for d in vm["passthrough"]) == PAIR
    return PAIR


def on_guest(guest, *command):
    return LAB_CONTROL.podman("exec", guest["container"], *command, check=False).stdout


def play(tmp_path, guest, roles, *args):
    """A play of ``roles`` on the guest with the json callback; returns (rc, per-task results, output)."""
    common = "-o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s" % os.path.join(STATE_DIR, "guest_known_hosts")
    inventory = tmp_path / "dcgm-guests.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"passthrough_guests": {"hosts": {GUEST: {
        "ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": guest["ssh_port"],
        "ansible_user": "root", "ansible_python_interpreter": "/usr/bin/python3", "ansible_ssh_common_args": common,
        "ansible_ssh_private_key_file": os.path.join(STATE_DIR, "guest_ssh_key"), "passthrough_vm_name": VM,
        "passthrough_gpus": 2, "passthrough_nvlink": True,
        "gpu_validate_nccl": False}}}}}}))
    playbook = tmp_path / "dcgm.yml"
    playbook.write_text(yaml.safe_dump([{"name": "DCGM", "hosts": "passthrough_guests", "gather_facts": False,
                                         "roles": roles}]))
    rc, results, output = run_playbook(inventory, playbook, *args)
    return rc, results.get(GUEST, {}), output


def dcgm_role(**variables):
    return {"role": "gpuops.vgpu.dcgm", "vars": dict({"dcgm_package_files": PACKAGES}, **variables)}


def validate(level, **variables):
    return {"role": "gpuops.vgpu.gpu_validate", "vars": dict(
        {"gpu_validate_dcgm_level": level, "gpu_validate_nvcc": False, "gpu_validate_license": False}, **variables)}


def dcgm_installed(guest):
    return sorted(line.split()[-1] for line in on_guest(
        guest, "dpkg-query", "-W", "-f", "${db:Status-Abbrev} ${Package}\n").splitlines()
        if line.startswith("ii") and line.split()[-1].startswith("datacenter-gpu-manager"))


def purge_dcgm(guest):
    on_guest(guest, "sh", "-c", "systemctl stop nvidia-dcgm 2>/dev/null; dpkg --purge "
                                "datacenter-gpu-manager-4-cuda12 datacenter-gpu-manager-4-core >/dev/null 2>&1; true")


def test_the_role_installs_dcgm_and_starts_its_host_engine_and_the_check_passes(guest, pair, tmp_path):
    purge_dcgm(guest)
    rc, predicted, output = play(tmp_path, guest, [dcgm_role()], "--check")
    assert rc == 0, output[-4000:]
    would = predicted["Tell what the .deb files would install"]
    assert would["changed"] is True and would["msg"] == "Would install %s" % ", ".join(PACKAGES)
    assert dcgm_installed(guest) == [], "check mode installed something"

    rc, first, output = play(tmp_path, guest, [dcgm_role(), validate(2)])
    assert rc == 0, output[-6000:]
    assert dcgm_installed(guest) == ["datacenter-gpu-manager-4-core", "datacenter-gpu-manager-4-cuda12"]
    assert on_guest(guest, "systemctl", "is-active", "nvidia-dcgm").strip() == "active"
    assert on_guest(guest, "systemctl", "is-enabled", "nvidia-dcgm").strip() == "enabled"
    dcgm = first[REPORT]["ansible_facts"]["gpu_validate_result"]["checks"]["dcgm"]
    assert dcgm["status"] == "ok", dcgm
    assert dcgm["message"] == "DCGM 4.2.3 level 2: software, memory, pcie pass"
    assert dcgm["format"] == "json" and dcgm["tests"]["memory"]["gpus"] == {"0": "Pass", "1": "Pass"}

    # Again, through the host engine the role started: nothing changes, the check passes the same.
    rc, again, output = play(tmp_path, guest, [dcgm_role(), validate(1, gpu_validate_dcgm_host="127.0.0.1")])
    assert rc == 0, output[-6000:]
    assert [name for name, result in again.items() if result.get("changed")] == []
    assert again[REPORT]["ansible_facts"]["gpu_validate_result"]["checks"]["dcgm"]["message"] == \
        "DCGM 4.2.3 level 1: software pass"


def main_pid(guest, unit):
    return on_guest(guest, "systemctl", "show", "-p", "MainPID", "--value", unit).strip()


def test_a_host_engine_running_the_program_its_package_replaced_is_started_anew(guest, tmp_path):
    rc, _results, output = play(tmp_path, guest, [dcgm_role()])
    assert rc == 0, output[-4000:]
    started = main_pid(guest, "nvidia-dcgm")
    assert started not in ("", "0")
    # What a run stopped between DCGM's upgrade and the restart leaves: the package put a new nv-hostengine in place
    # (the core package has no maintainer script to restart it) while the old one keeps running.
    on_guest(guest, "dpkg", "-i", PACKAGES[0])
    assert main_pid(guest, "nvidia-dcgm") == started

    rc, results, output = play(tmp_path, guest, [dcgm_role()])
    assert rc == 0, output[-4000:]
    restart = "Enable and start the host engine, anew where it runs a replaced program"
    assert [name for name, result in results.items() if result.get("changed")] == [restart]
    assert results[restart]["state"] == "started"
    now = main_pid(guest, "nvidia-dcgm")
    assert now not in ("", "0", started), "the host engine still runs the replaced program"
    assert on_guest(guest, "systemctl", "is-active", "nvidia-dcgm").strip() == "active"

    rc, again, output = play(tmp_path, guest, [dcgm_role()])
    assert rc == 0, output[-4000:]
    assert [name for name, result in again.items() if result.get("changed")] == []
    assert main_pid(guest, "nvidia-dcgm") == now


def test_a_hot_gpu_fails_the_check_naming_the_gpu_the_tests_and_dcgms_message(lab, guest, pair, tmp_path):
    rc, _results, output = play(tmp_path, guest, [dcgm_role()])
    assert rc == 0, output[-4000:]
    # The second GPU of the VM (the host's 0000:5e:00.0, the guest's GPU 1 on 0000:13:00.0) above its slowdown
    # temperature (89 C on an A100-40).
    lab.request("POST", "/lab/gpus", {"host": HOST, "pci_id": PAIR[1], "temperature_c": 95})
    gpus = dict((g["pci_id"], g["temperature_c"]) for h in lab.state()["hosts"] if h["name"] == HOST
                for g in h["gpus"])
    assert gpus[PAIR[1]] == 95 and gpus[PAIR[0]] < 89

    rc, results, output = play(tmp_path, guest, [validate(2)])
    assert rc != 0
    checks = results[REPORT]["ansible_facts"]["gpu_validate_result"]
    dcgm = checks["checks"]["dcgm"]
    assert checks["failed"] == ["dcgm"] and dcgm["status"] == "failed"
    assert [(item["gpu"], item["test"]) for item in dcgm["failures"]] == [("1", "memory"), ("1", "pcie")]
    assert dcgm["tests"]["memory"]["gpus"] == {"0": "Pass", "1": "Fail"}
    assert dcgm["message"].startswith("DCGM 4.2.3 level 2: GPU 1 (00000000:13:00.0) failed memory, pcie: "
                                      "Temperature 95 of GPU 1 exceeded user-specified maximum allowed "
                                      "temperature 89")
    assert "Take the GPU out of service" in dcgm["message"]
    failure = results[SHOW]["msg"]
    assert "dcgm: DCGM 4.2.3 level 2: GPU 1 (00000000:13:00.0) failed memory, pcie" in failure
    # The verdict outlives the run, beside the playbook, for a later run's doctor.
    record = json.loads((tmp_path / "reports" / "dcgm" / ("%s.json" % GUEST)).read_text())
    assert (record["status"], record["host"], record["message"]) == ("failed", GUEST, dcgm["message"]), record
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", record["taken"]), record

    # Level 1 (software) does not load the GPUs: the same GPU passes it.
    rc, results, output = play(tmp_path, guest, [validate(1)])
    assert rc == 0, output[-4000:]
    assert results[REPORT]["ansible_facts"]["gpu_validate_result"]["checks"]["dcgm"]["status"] == "ok"
    assert json.loads((tmp_path / "reports" / "dcgm" / ("%s.json" % GUEST)).read_text())["status"] == "ok"


def test_the_check_is_off_unless_asked_and_refuses_bad_levels_before_anything_runs(guest, pair, tmp_path):
    rc, results, output = play(tmp_path, guest, [validate(0)])
    assert rc == 0, output[-4000:]
    assert not (tmp_path / "reports").exists(), "a DCGM verdict was kept where DCGM did not run"
    assert results[REPORT]["ansible_facts"]["gpu_validate_result"]["checks"]["dcgm"] == {
        "status": "skipped", "message": "not checked (gpu_validate_dcgm_level is 0)", "level": 0}
    assert "dcgm_diag" not in results[COMMANDS].get("outcomes", {})

    for level in (5, "x"):
        rc, results, output = play(tmp_path, guest, [validate(level)])
        assert rc != 0
        assert "gpu_validate_dcgm_level" in output
        # The role's argument validation is all that ran: no check reached the guest.
        assert [name for name in results if not name.startswith("Validating arguments")] == [], list(results)

    # GPUs that are not the machine's own (a vGPU guest): dcgmi is not run, and the check says what to do.
    rc, results, output = play(tmp_path, guest, [validate(1, gpu_validate_whole_gpus=False)])
    assert rc != 0
    assert "dcgm_diag" not in results[COMMANDS].get("outcomes", {})
    dcgm = results[REPORT]["ansible_facts"]["gpu_validate_result"]["checks"]["dcgm"]
    assert dcgm["status"] == "failed" and "runs only on whole GPUs" in dcgm["message"]
    assert "set gpu_validate_dcgm_level to 0" in dcgm["message"]


def test_the_role_refuses_files_that_are_not_packages_and_changes_nothing(guest, pair, tmp_path):
    purge_dcgm(guest)
    rc, results, output = play(tmp_path, guest, [dcgm_role(dcgm_package_files=["/srv/lab-artifacts/dcgm/dcgmi"])])
    assert rc != 0
    assert "/srv/lab-artifacts/dcgm/dcgmi are not .deb or .rpm files" in \
        results["Refuse what cannot be installed, before any change"]["msg"]
    assert dcgm_installed(guest) == []
    assert on_guest(guest, "systemctl", "is-active", "nvidia-dcgm").strip() != "active"

    # The check asked for on a machine without DCGM fails saying what to install.
    rc, results, output = play(tmp_path, guest, [validate(1)])
    assert rc != 0
    dcgm = results[REPORT]["ansible_facts"]["gpu_validate_result"]["checks"]["dcgm"]
    assert dcgm["status"] == "failed" and "dcgmi is not installed" in dcgm["message"]


def test_the_role_refuses_dcgm_4_where_nvidia_smi_gives_no_cuda_version(lab, guest, tmp_path):
    # After the lab's reset pt-vm-01 holds no GPU: the guest's nvidia-smi finds no device.
    assert "No devices were found" in on_guest(guest, "nvidia-smi", "-q")
    purge_dcgm(guest)
    rc, results, output = play(tmp_path, guest, [{"role": "gpuops.vgpu.dcgm"}])
    assert rc != 0
    refusal = results["Refuse what cannot be installed, before any change"]["msg"]
    assert "nvidia-smi gives no CUDA version" in refusal and "set dcgm_cuda_major" in refusal
    assert "Nothing was changed." in refusal
    assert dcgm_installed(guest) == []
