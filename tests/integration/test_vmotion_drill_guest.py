# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/vmotion_drill.yml with a guest: gpu-vm-01 (grid_p40-8q on esxi-01, every gpu-cluster host on the R525
vGPU Manager, the lab of test_role_driver_upgrade) moves live to another host, its guest is checked there over SSH
(same boot, licensed, nvidia-smi, nvcc and a CUDA program) and it moves back. A lab guest container stands for the
VM: its GRID driver stand-in asks the lab vCenter where the VM runs and loads only under a vGPU Manager that
accepts it. Then the doctor reports the drill's record."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess

import pytest

from conftest import LAB_CONTROL, PORT_OFFSET, ROOT, _results_from_json
from guest_run import PLAYBOOK, lab_inventory, on_guest
# lab is the fixture of test_role_driver_upgrade: R525 on every host, gpu-vm-01 and gpu-vm-02 on esxi-01,
# gpu-vm-04 on esxi-02, esxi-03 idle in Shared Direct.
from test_role_driver_upgrade import hot_migrate, lab  # noqa: F401  pylint: disable=unused-import

VM = "gpu-vm-01"
GUEST = "drill-guest"
ARTIFACTS = "/srv/lab-artifacts/"
DRILL = os.path.join(ROOT, "playbooks", "vmotion_drill.yml")
GUESTS_YML = os.path.join(ROOT, "playbooks", "guests.yml")
DOCTOR = os.path.join(ROOT, "playbooks", "doctor.yml")


@pytest.fixture
def guest(lab):  # noqa: F811  (lab is the fixture imported above)
    state_dir = os.path.join(ROOT, ".tmp", "vmotion-drill-%d" % PORT_OFFSET)
    os.makedirs(state_dir, exist_ok=True)
    started = LAB_CONTROL.start_guests(
        [{"name": GUEST, "vgpu_vm": VM, "ssh_port": LAB_CONTROL.GUEST_SSH_PORT + 135}], state_dir, PORT_OFFSET,
        lab={"url": lab.services["vcenter"]["lab"], "cafile": lab.certificate,
             "catalog": os.path.join(lab.state_dir, "catalog.json")})
    started[GUEST]["vm"] = VM
    inventory = lab_inventory.write_inventory(os.path.join(state_dir, "inventory.yml"), started, state_dir)
    try:
        yield {"container": started[GUEST]["container"], "inventory": inventory, "state_dir": state_dir}
    finally:
        LAB_CONTROL.stop_guests([started[GUEST]["container"]])


def playbook(lab, guest, path, extra, *args):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0",
               ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1")
    argv = [PLAYBOOK] + lab.inventory_args + ["-i", guest["inventory"], path, "-e", json.dumps(extra)] + list(args)
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    results = _results_from_json(proc.stdout) if "{" in proc.stdout else []
    return proc.returncode, results, proc.stderr


def test_the_drill_moves_the_vm_checks_its_guest_there_and_brings_it_back(lab, guest, run_tasks, tmp_path):
    hot_migrate(run_tasks, True)
    rc, results, err = playbook(lab, guest, GUESTS_YML, {
        "grid_driver_src": "", "grid_driver_remote_src": ARTIFACTS + "nvidia-linux-grid-525_525.105.17_amd64.deb"},
        "--tags", "grid_driver,grid_license,cuda_toolkit")
    assert rc == 0, (json.dumps([r for r in results if r.get("failed")], indent=1)[:4000], err[-2000:])
    boot = on_guest(guest, "cat", "/proc/sys/kernel/random/boot_id").stdout
    record = str(tmp_path / "vmotion_drill.json")
    events = len(lab.state()["vgpu_events"])

    rc, results, err = playbook(lab, guest, DRILL, {
        "vcenter_port": lab.connection["port"], "vgpu_vmotion_drill_vms": [{"name": VM}],
        "vgpu_vmotion_drill_record": record, "gpu_validate_cuda_program": True})
    assert rc == 0, (json.dumps([r for r in results if r.get("failed")], indent=1)[:6000], err[-2000:])
    # ECC and the vGPU Manager came from the hosts' shells, the GRID driver from the guest.
    there, back = [r["invocation"]["module_args"] for r in results if (r.get("action") or "").endswith("vgpu_vmotion")]
    assert there["guest_drivers"] == back["guest_drivers"] == {VM: "525.105.17"}, there
    assert all(there["host_facts"][host] == {"ecc": True, "driver": "525.105.14"}
               for host in ("esxi-01.lab.local", "esxi-03.lab.local")), there

    # The VM ran on esxi-03 (the idle P40) and is back on esxi-01, powered on throughout.
    vm = lab.vm(VM)
    assert (vm["host"], vm["power_state"]) == ("esxi-01.lab.local", "poweredOn")
    moves = [(e["event"], e["host"]) for e in lab.state()["vgpu_events"][events:] if e.get("vm") == VM]
    assert moves == [("vgpu_stop", "esxi-01.lab.local"), ("vgpu_start", "esxi-03.lab.local"),
                     ("vgpu_stop", "esxi-03.lab.local"), ("vgpu_start", "esxi-01.lab.local")], moves
    # The guest was checked while its VM ran on esxi-03, and never restarted.
    with open(record) as handle:
        written = json.load(handle)
    move, = written["moves"]
    assert (move["source"], move["target"], move["moved"], move["returned"]) == (
        "esxi-01.lab.local", "esxi-03.lab.local", True, False)
    assert written["back"][0]["moved"] and written["back"][0]["target"] == "esxi-01.lab.local"
    assert move["unchecked"] == [] and written["back"][0]["unchecked"] == []
    assert written["guests"][GUEST]["boot_unchanged"] is True
    validated = written["validated"][GUEST]
    assert validated["passed"], validated
    assert all(validated["checks"][name]["status"] == "ok" for name in ("driver", "license", "nvcc", "cuda_program"))
    assert on_guest(guest, "cat", "/proc/sys/kernel/random/boot_id").stdout == boot
    loads = json.loads(on_guest(guest, "cat", "/var/lib/gpuops-lab/vgpu-loads.json").stdout or "[]")
    assert all(load["accepted"] for load in loads), loads

    # The doctor reports the drill.
    rc, results, err = playbook(lab, guest, DOCTOR, {
        "vcenter_port": lab.connection["port"], "doctor_vmotion_drill_file": record, "doctor_verdict": False,
        "doctor_output_dir": str(tmp_path), "doctor_gather_bmc": False, "doctor_gather_k8s": False})
    assert rc == 0, err[-3000:]
    with open(str(tmp_path / "doctor.json")) as handle:
        findings = json.load(handle)["findings"]
    drill, = [f for f in findings if f["check"] == "vmotion_drill"]
    assert drill["status"] == "PASS" and "gpu-vm-01 esxi-01.lab.local->esxi-03.lab.local" in drill["message"], drill
