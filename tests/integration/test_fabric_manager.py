# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fabric Manager on the lab's bare-metal GPU servers (lab/servers): the fabric_manager role installs NVIDIA Fabric
Manager of the driver's exact version on the HGX H100 board (four NVSwitches) and waits until the server's own
nvidia-smi reports the fabric Completed, Success; it refuses any other version and leaves the server as it was; the
PCIe server (no NVSwitch) gets nothing.

The servers are containers of the test's own (labctl.start_servers, the default topology's servers, here with the
driver stand-in pre-installed); the end state is read from the server itself: dpkg, systemd, its nvidia-smi -q.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import pytest
import yaml

from conftest import LAB_CONTROL, PORT_OFFSET, ROOT, run_playbook, systemd_drop_in

sys.path.insert(0, os.path.join(ROOT, "lab", "servers"))
import server_inventory  # noqa: E402  pylint: disable=wrong-import-position

sys.path.insert(0, os.path.join(ROOT, ".tmp", "collections"))
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import NvidiaSmiError, parse_query  # noqa: E402

HGX, PCIE = "hgx-01.lab.local", "pcie-01.lab.local"
STATE_DIR = os.path.join(ROOT, ".tmp", "fabric-servers-%d" % PORT_OFFSET)
MATCHING = "/srv/lab-artifacts/nvidia-fabricmanager-535_535.161.08-1_amd64.deb"
OTHER = "/srv/lab-artifacts/nvidia-fabricmanager-535_535.154.05-1_amd64.deb"
WAIT = "Wait until nvidia-smi reports the fabric Completed with Success on every GPU"


@pytest.fixture(scope="module")
def servers():
    with open(os.path.join(ROOT, "lab", "topologies", "default.yml")) as handle:
        specs = [dict(s, ssh_port=s["ssh_port"] + 100, driver="preinstalled")
                 for s in yaml.safe_load(handle)["servers"]]
    os.makedirs(STATE_DIR, exist_ok=True)
    catalog = os.path.join(STATE_DIR, "catalog.json")
    subprocess.run([sys.executable, LAB_CONTROL.EXPORT_CATALOG, catalog], check=True)
    started = LAB_CONTROL.start_servers(specs, STATE_DIR, PORT_OFFSET, catalog)
    server_inventory.write_inventory(os.path.join(STATE_DIR, "inventory.yml"), started, STATE_DIR, {})
    yield started
    LAB_CONTROL.stop_guests([server["container"] for server in started.values()])


@pytest.fixture
def fresh(servers):
    """Both servers without Fabric Manager and with their fabric unconfigured (the driver loaded), as a server is
    after the driver's install and reboot."""
    for server in servers.values():
        on(server, "sh", "-c", "systemctl stop nvidia-fabricmanager 2>/dev/null; dpkg --purge nvidia-fabricmanager-535"
                               " >/dev/null 2>&1; rm -f /run/gpuops-lab/fabric.json; true")
    return servers


def on(server, *command):
    return LAB_CONTROL.podman("exec", server["container"], *command, check=False).stdout


def fabric(server):
    """Each GPU's (State, Status) in the server's own nvidia-smi -q, or what nvidia-smi said when it failed."""
    text = on(server, "nvidia-smi", "-q")
    try:
        return [(gpu["fabric_state"], gpu["fabric_status"]) for gpu in parse_query(text)["gpus"]]
    except NvidiaSmiError:
        return text


def snapshot(server):
    listed = on(server, "sh", "-c", "dpkg-query -W -f '${db:Status-Abbrev} ${Package} ${Version}\\n' "
                                    "'nvidia-fabricmanager*' 2>/dev/null")
    return {"packages": [line.split()[1:] for line in listed.splitlines() if line.startswith("ii")],
            "service": on(server, "systemctl", "is-active", "nvidia-fabricmanager").strip(),
            "enabled": on(server, "systemctl", "is-enabled", "nvidia-fabricmanager").strip(),
            "fabric": fabric(server)}


def play(tmp_path, limit, *args, **role_vars):
    """The fabric_manager role on ``limit``; returns (rc, {host: {task: result}}, output)."""
    playbook = tmp_path / "fabric.yml"
    playbook.write_text(yaml.safe_dump([{"name": "Fabric Manager", "hosts": "gpu_servers", "gather_facts": False,
                                         "roles": [{"role": "gpuops.vgpu.fabric_manager", "vars": role_vars}]}]))
    return run_playbook(os.path.join(STATE_DIR, "inventory.yml"), playbook, "-l", limit, *args)


def changed(results):
    return sorted(name for name, result in results.items() if result.get("changed"))


def test_fabric_manager_completes_the_hgx_fabric_at_the_drivers_version_and_a_second_run_changes_nothing(
        fresh, tmp_path):
    hgx = fresh[HGX]
    assert fabric(hgx) == [("In Progress", None)] * 8, "the driver alone leaves the fabric unconfigured"

    rc, predicted, output = play(tmp_path, HGX, "--check")
    assert rc == 0, output[-4000:]
    assert changed(predicted[HGX]) == ["Install Fabric Manager from its .deb file"]
    assert snapshot(hgx)["packages"] == [] and fabric(hgx) == [("In Progress", None)] * 8, "check mode changed it"

    rc, first, output = play(tmp_path, HGX)
    assert rc == 0, output[-6000:]
    assert changed(first[HGX]) == ["Enable and start Fabric Manager after the driver",
                                   "Install Fabric Manager from its .deb file"]
    state = snapshot(hgx)
    assert state["packages"] == [["nvidia-fabricmanager-535", "535.161.08-1"]]
    assert (state["service"], state["enabled"]) == ("active", "enabled")
    assert state["fabric"] == [("Completed", "Success")] * 8
    assert on(hgx, "nv-fabricmanager", "--version").strip() == "Fabric Manager version is : 535.161.08"
    verdict = first[HGX]["Record the fabric"]["ansible_facts"]["fabric_manager_fabric"]
    assert verdict["ready"] is True and len(verdict["completed"]) == 8

    rc, again, output = play(tmp_path, HGX)
    assert rc == 0, output[-4000:]
    assert changed(again[HGX]) == []
    assert snapshot(hgx) == state


def test_a_fabric_manager_running_the_program_its_package_replaced_is_restarted(fresh, tmp_path):
    hgx = fresh[HGX]
    rc, _results, output = play(tmp_path, HGX)
    assert rc == 0, output[-6000:]
    started = main_pid(hgx)
    assert started not in ("", "0")
    # What a run stopped between Fabric Manager's upgrade and its restart leaves: the package put a new
    # nv-fabricmanager in place (it has no maintainer script to restart it) while the old daemon keeps running.
    on(hgx, "dpkg", "-i", MATCHING)
    assert main_pid(hgx) == started

    rc, results, output = play(tmp_path, HGX)
    assert rc == 0, output[-6000:]
    assert changed(results[HGX]) == ["Enable and start Fabric Manager after the driver"]
    now = main_pid(hgx)
    assert now not in ("", "0", started), "Fabric Manager still runs the replaced program"
    assert snapshot(hgx)["fabric"] == [("Completed", "Success")] * 8

    rc, again, output = play(tmp_path, HGX)
    assert rc == 0, output[-4000:]
    assert changed(again[HGX]) == [] and main_pid(hgx) == now


def main_pid(server):
    return on(server, "systemctl", "show", "-p", "MainPID", "--value", "nvidia-fabricmanager").strip()


@pytest.mark.parametrize("role_vars", [{"fabric_manager_remote_src": OTHER},
                                       {"fabric_manager_version": "535.154.05"}], ids=["package-file", "version"])
def test_another_version_than_the_drivers_is_refused_and_the_server_is_left_as_it_was(fresh, tmp_path, role_vars):
    hgx = fresh[HGX]
    before = snapshot(hgx)
    rc, results, output = play(tmp_path, HGX, **role_vars)
    assert rc != 0
    failure = results[HGX]["Choose Fabric Manager's package, refusing any version but the driver's"]
    assert "Fabric Manager 535.154.05 does not match the NVIDIA driver 535.161.08 on this machine" in failure["msg"]
    assert "exactly the driver's version" in failure["msg"]
    assert snapshot(hgx) == before


def test_a_fabric_manager_of_another_version_never_completes_the_fabric(fresh, tmp_path):
    """What the refusal spares a server: the stand-in, like NVIDIA's daemon, aborts at start next to another
    driver version and the fabric stays In Progress; the role, asked for the driver's version, then puts it right."""
    hgx = fresh[HGX]
    on(hgx, "dpkg", "-i", OTHER)
    on(hgx, "systemctl", "start", "nvidia-fabricmanager")
    assert on(hgx, "systemctl", "is-active", "nvidia-fabricmanager").strip() == "failed"
    journal = on(hgx, "journalctl", "-u", "nvidia-fabricmanager", "--no-pager")
    assert ("fabric manager NVIDIA GPU driver interface version 535.154.05 don't match with driver version "
            "535.161.08") in journal
    assert fabric(hgx) == [("In Progress", None)] * 8

    rc, results, output = play(tmp_path, HGX, fabric_manager_remote_src=MATCHING)
    assert rc == 0, output[-6000:]
    assert snapshot(hgx)["packages"] == [["nvidia-fabricmanager-535", "535.161.08-1"]]
    assert fabric(hgx) == [("Completed", "Success")] * 8


def test_the_pcie_server_without_nvswitch_gets_no_fabric_manager(fresh, tmp_path):
    pcie = fresh[PCIE]
    before = snapshot(pcie)
    assert before["fabric"] == [(None, None)] * 2
    rc, results, output = play(tmp_path, PCIE)
    assert rc == 0, output[-4000:]
    assert changed(results[PCIE]) == []
    assert "no NVSwitch on the PCI bus" in results[PCIE]["Say why nothing is installed"]["msg"]
    assert snapshot(pcie) == before and before["packages"] == []


def test_a_server_whose_driver_does_not_run_is_refused_before_any_change(fresh, tmp_path):
    hgx = fresh[HGX]
    kernel = on(hgx, "cat", "/var/lib/gpuops-lab/kernel.json")
    on(hgx, "sh", "-c", "echo '{\"bound\": null}' > /var/lib/gpuops-lab/kernel.json")
    try:
        before = snapshot(hgx)
        assert "couldn't communicate with the NVIDIA driver" in before["fabric"]
        rc, results, output = play(tmp_path, HGX)
        assert rc != 0
        message = results[HGX]["Refuse a machine whose driver does not run, or another driver than the one asked "
                               "for, before any change"]["msg"]
        assert "the NVIDIA driver does not run" in message and "couldn't communicate with the NVIDIA driver" in message
        assert snapshot(hgx) == before
    finally:
        on(hgx, "sh", "-c", "cat > /var/lib/gpuops-lab/kernel.json <<'EOF'\n%s\nEOF" % kernel.strip())


# Seconds the lab's Fabric Manager takes to configure the fabric after it starts: longer than the play takes to its
# first read, shorter than the role's wait.
FABRIC_SECONDS = 25
LATER_READ = "Read nvidia-smi as a later role of the run does"


def test_a_fabric_still_in_progress_at_the_first_read_is_waited_for_and_read_again_by_the_later_reads(fresh, tmp_path):
    """Fabric Manager runs and the fabric is In Progress at the play's first read, as right after a boot: the role
    waits for it, and a later read of the same run (gpu_guest_info's reuse, as in playbooks/servers.yml) reads
    nvidia-smi again rather than answer with the first read's In Progress."""
    hgx = fresh[HGX]
    rc, _results, output = play(tmp_path, HGX)
    assert rc == 0, output[-6000:]
    playbook = tmp_path / "fabric-then-read.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Fabric Manager, then a later read", "hosts": "gpu_servers", "gather_facts": False,
        "vars": {"gpu_guest_info_reuse": True}, "roles": ["gpuops.vgpu.fabric_manager"],
        "tasks": [{"name": LATER_READ, "gpuops.vgpu.gpu_guest_info": {"gather": ["nvidia_smi"], "reuse": True}}]}]))
    slow = "[Service]\nEnvironment=GPUOPS_LAB_FABRIC_SECONDS=%d\n" % FABRIC_SECONDS
    with systemd_drop_in(hgx["container"], "nvidia-fabricmanager.service", slow):
        on(hgx, "systemctl", "restart", "nvidia-fabricmanager")
        assert fabric(hgx) == [("In Progress", None)] * 8
        rc, results, output = run_playbook(os.path.join(STATE_DIR, "inventory.yml"), playbook, "-l", HGX)
    assert rc == 0, output[-6000:]
    # The run went as meant: the role found the fabric In Progress and waited until Fabric Manager completed it.
    assert results[HGX][WAIT].get("attempts", 1) > 1, results[HGX][WAIT]
    assert changed(results[HGX]) == []
    later = results[HGX][LATER_READ]["gpu_guest"]["nvidia_smi"]["gpus"]
    completed = [("Completed", "Success")] * 8
    assert [(gpu["fabric_state"], gpu["fabric_status"]) for gpu in later] == fabric(hgx) == completed
