# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/upgrade.yml with the guests: gpu-cluster's hosts move from vGPU 15.2 (R525) to 16.0 (R535) and the
GRID driver of the running vGPU VMs' guests follows in the planned order, or goes first where the plan says so.

The lab is test_role_driver_upgrade's (R525 image on every host, gpu-vm-01 and gpu-vm-02 running on esxi-01,
gpu-vm-04 on esxi-02). Lab guest containers stand for those VMs (labctl.start_guests with ``vgpu_vm``): their GRID
driver stand-in asks the lab vCenter for the host its VM runs on, and loads (licenses, answers nvidia-smi) only under
a vGPU Manager that accepts its branch; at each start of its daemon it records what it found, with the number of the
lab's vgpu_events so far. Together with /lab/state's vgpu_events that gives the whole sequence: which guest driver
each VM ran at every vGPU start, under which host driver.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from conftest import LAB_CONTROL, PORT_OFFSET, ROOT, _results_from_json
from guest_run import PLAYBOOK, lab_inventory, on_guest
# lab and bundles are fixtures.
from test_role_driver_upgrade import (  # noqa: F401  pylint: disable=unused-import
    NEW,
    NEW_IMAGE,
    bundles,
    cluster_truth,
    hot_migrate,
    lab,
    replay,
)
from vlcm_lab import GPU_HOSTS

NEW_GUEST = "535.54.03"
R525_GUEST = "525.105.17"
ARTIFACTS = "/srv/lab-artifacts/"
GUESTS_YML = os.path.join(ROOT, "playbooks", "guests.yml")
UPGRADE_YML = os.path.join(ROOT, "playbooks", "upgrade.yml")
LOCK_TASKS = ["Take or renew the lock of each GPU cluster", "Release the lock of each GPU cluster"]
ACCEPTS = {"525": ("525", "510"), "535": ("535", "525", "470")}  # vGPU Manager branch: guest branches (catalog)


@pytest.fixture
def guests(lab, request):  # noqa: F811  (lab is the fixture imported above)
    """Lab guest containers bound to the VMs ``request.param`` names, on ports of their own."""
    vms = request.param
    state_dir = os.path.join(ROOT, ".tmp", "upgrade-guests-%d" % PORT_OFFSET)
    os.makedirs(state_dir, exist_ok=True)
    specs = [{"name": "up-%s" % vm, "vgpu_vm": vm, "ssh_port": LAB_CONTROL.GUEST_SSH_PORT + 120 + index}
             for index, vm in enumerate(vms)]
    started = LAB_CONTROL.start_guests(specs, state_dir, PORT_OFFSET, lab={
        "url": lab.services["vcenter"]["lab"], "cafile": lab.certificate,
        "catalog": os.path.join(lab.state_dir, "catalog.json")})
    for spec in specs:
        started[spec["name"]]["vm"] = spec["vgpu_vm"]
    inventory = lab_inventory.write_inventory(os.path.join(state_dir, "inventory.yml"), started, state_dir)
    try:
        yield {"names": dict((spec["vgpu_vm"], started[spec["name"]]["container"]) for spec in specs),
               "inventory": inventory}
    finally:
        LAB_CONTROL.stop_guests([guest["container"] for guest in started.values()])


def playbook(lab, guests, path, extra, *args):
    """ansible-playbook ``path`` on the lab's inventory and the guests'; returns (rc, output, results)."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0",
               ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1")
    argv = [PLAYBOOK] + lab.inventory_args + ["-i", guests["inventory"], path, "-e", json.dumps(extra)] + list(args)
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    results = _results_from_json(proc.stdout) if "{" in proc.stdout else []
    assert proc.returncode == 0, (json.dumps([r for r in results if r.get("failed")], indent=1)[:6000]
                                  + proc.stderr[-3000:])
    return results


def install_guest_driver(lab, guests, driver_file, *tags):
    playbook(lab, guests, GUESTS_YML, {"grid_driver_src": "", "grid_driver_remote_src": ARTIFACTS + driver_file},
             "--tags", ",".join(("grid_driver", "grid_license") + tags))


def upgrade(lab, guests, tmp_path, bundle_urls, **extra):
    variables = {"driver_upgrade_bundles": bundle_urls, "driver_upgrade_target_host_driver": NEW,
                 "driver_upgrade_accept_eula": True, "driver_upgrade_remediation_s": 600,
                 "vgpu_clusters": ["gpu-cluster"],
                 "vcenter_port": lab.connection["port"], "grid_driver_src": "",
                 "grid_driver_remote_src": ARTIFACTS + "nvidia-linux-grid-535_535.54.03_amd64.deb"}
    variables.update(extra)
    return playbook(lab, guests, UPGRADE_YML, variables, "--tags", "upgrade_hosts,upgrade_guests")


def guest_truth(container):
    """The guest's own view: packaged driver, nvidia-smi, daemon, and every driver load it recorded."""
    def run(*command):
        return LAB_CONTROL.podman("exec", container, *command, check=False).stdout
    smi = run("nvidia-smi", "-q")
    packages = run("dpkg-query", "-W", "-f", "${Package} ${Version} ${Status}\n", "nvidia-linux-grid-*").splitlines()
    return {"packages": sorted(line for line in packages if line.endswith(" ok installed")),
            "driver": ([line.split(":", 1)[1].strip() for line in smi.splitlines()
                        if line.startswith("Driver Version")] or [None])[0],
            "licensed": "License Status                    : Licensed" in smi,
            "gridd": run("systemctl", "is-active", "nvidia-gridd").strip(),
            "loads": json.loads(run("cat", "/var/lib/gpuops-lab/vgpu-loads.json") or "[]")}


def guest_driver_at_every_start(events, loads):
    """(vm, vGPU Manager, guest driver) at every vGPU start: the driver of the VM's last load before that event."""
    seen = []
    for event in events:
        if event["event"] != "vgpu_start":
            continue
        before = [load for load in loads.get(event["vm"], []) if load["seq"] < event["seq"]]
        if before:
            seen.append((event["vm"], event["host_driver"].split("-")[0], before[-1]["driver"]))
    return seen


def accepted(host_driver, guest_driver):
    return guest_driver.split(".")[0] in ACCEPTS[host_driver.split(".")[0]]


@pytest.mark.parametrize("guests", [("gpu-vm-01", "gpu-vm-02", "gpu-vm-04")], indirect=True)
def test_hosts_then_guests_every_guest_accepted_at_every_step_and_licensed_at_the_end(
        lab, guests, tmp_path, run_tasks, bundles):
    hot_migrate(run_tasks, True)
    install_guest_driver(lab, guests, "nvidia-linux-grid-525_525.105.17_amd64.deb")
    for vm, container in guests["names"].items():
        start = guest_truth(container)
        assert start["driver"] == R525_GUEST and start["licensed"], (vm, start)

    upgrade(lab, guests, tmp_path, bundles)

    state, hosts, vms, _cluster = cluster_truth(lab)
    assert hosts == dict((name, (NEW_IMAGE, False)) for name in GPU_HOSTS)
    assert all(power == "poweredOn" for _host, power in vms.values())
    replay(state)
    last_host_image = max(e["seq"] for e in state["vgpu_events"] if e["event"] == "host_image")
    loads = {}
    for vm, container in guests["names"].items():
        end = guest_truth(container)
        assert end["packages"] == ["nvidia-linux-grid-535 535.54.03 install ok installed"], (vm, end)
        assert end["driver"] == NEW_GUEST and end["licensed"] and end["gridd"] == "active", (vm, end)
        assert all(load["accepted"] for load in end["loads"]), (vm, end["loads"])
        new = [load for load in end["loads"] if load["driver"] == NEW_GUEST]
        assert new and new[0]["seq"] >= last_host_image, "the guest moved only after every host: %s" % new
        assert new[-1]["host"] == vms[vm][0] and new[-1]["host_driver"] == NEW
        loads[vm] = end["loads"]
    seen = guest_driver_at_every_start(state["vgpu_events"], loads)
    assert seen and all(accepted(host, guest) for _vm, host, guest in seen), seen

    second = upgrade(lab, guests, tmp_path, bundles)
    # Only the run's own cluster lock (lock.yml, unlock.yml) is taken and given back.
    assert [r["_task"] for r in second if r.get("changed")] == LOCK_TASKS
    assert cluster_truth(lab)[1] == hosts
    assert [len(guest_truth(c)["loads"]) for c in guests["names"].values()] == [len(v) for v in loads.values()]


@pytest.mark.parametrize("guests", [("gpu-vm-04",)], indirect=True)
def test_a_guest_the_new_manager_would_refuse_moves_before_the_hosts(lab, guests, tmp_path, run_tasks, bundles):
    # gpu-vm-04's guest runs R510 with CUDA 11.6: the R525 managers accept it, R535 would not. Its target is R525's
    # 525.105.17 (which both accept), before any host moves; the other VMs already run it.
    hot_migrate(run_tasks, True)
    install_guest_driver(lab, guests, "nvidia-linux-grid-510_510.47.03_amd64.deb", "cuda_toolkit")
    container = guests["names"]["gpu-vm-04"]
    assert guest_truth(container)["driver"] == "510.47.03"

    results = upgrade(lab, guests, tmp_path, bundles, driver_upgrade_target_guest_driver=R525_GUEST,
                      driver_upgrade_current_guest_driver=R525_GUEST,
                      grid_driver_remote_src=ARTIFACTS + "nvidia-linux-grid-525_525.105.17_amd64.deb")

    state, hosts, _vms, _cluster = cluster_truth(lab)
    assert hosts == dict((name, (NEW_IMAGE, False)) for name in GPU_HOSTS)
    end = guest_truth(container)
    assert end["packages"] == ["nvidia-linux-grid-525 525.105.17 install ok installed"], end
    assert end["driver"] == R525_GUEST and end["licensed"]
    first_new_image = min(e["seq"] for e in state["vgpu_events"]
                          if e["event"] == "host_image" and e["host_driver"].startswith(NEW))
    moved = [load for load in end["loads"] if load["driver"] == R525_GUEST]
    assert moved and moved[0]["seq"] < first_new_image, "the guest moved before the first host: %s" % moved
    assert all(load["accepted"] for load in end["loads"]), end["loads"]
    seen = guest_driver_at_every_start(state["vgpu_events"], {"gpu-vm-04": end["loads"]})
    assert seen and all(accepted(host, guest) for _vm, host, guest in seen), seen
    # The CUDA toolkit was re-checked against the new driver on the guest.
    checks = [r for r in results if r.get("_task", "").endswith("still runs the guest's CUDA toolkit")
              and not r.get("skipped")]
    assert checks and "CUDA 11.6" in checks[0]["msg"] and "525.105.17" in checks[0]["msg"], checks

    # By hand, what the plan keeps from happening: R510 again under the R535 hosts. The runfile refuses to run over the
    # packaged driver; the package takes the R525 one's place, but its vGPU does not load there.
    runfile = on_guest({"container": container}, "sh", ARTIFACTS + "NVIDIA-Linux-x86_64-510.47.03-grid.run", "--silent")
    assert runfile.returncode == 1 and "installed by the package manager" in runfile.stdout
    on_guest({"container": container}, "apt-get", "install", "-y", ARTIFACTS + "nvidia-linux-grid-510_510.47.03_amd64.deb")
    refused = guest_truth(container)
    assert refused["packages"] == ["nvidia-linux-grid-510 510.47.03 install ok installed"], refused
    assert not refused["licensed"] and refused["loads"][-1]["driver"] == "510.47.03"
    assert not refused["loads"][-1]["accepted"] and refused["loads"][-1]["host_driver"] == NEW
    smi = on_guest({"container": container}, "nvidia-smi", "-q")
    assert (smi.returncode, smi.stdout) == (6, "No devices were found\n")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
