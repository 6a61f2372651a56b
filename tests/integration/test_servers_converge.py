# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The whole servers layer (playbooks/servers.yml) on the lab's bare-metal GPU servers as they come from their
installer, without a driver: BIOS and cooling through their BMCs, NVIDIA's data center driver from the lab's stand-in
of NVIDIA's CUDA repository, Fabric Manager on the HGX board, the CUDA toolkit, metrics and the validation. Each
server's own nvidia-smi then answers from its GPUs with the installed driver's version, the HGX fabric completed;
a second run changes nothing.

The servers are containers of the test's own (labctl.start_servers with the default topology's servers), their BMCs
the lab's; the end state is read from the servers themselves: dpkg, systemd, their nvidia-smi -q.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys
import time

import pytest
import yaml

from conftest import LAB_CONTROL, PORT_OFFSET, ROOT

sys.path.insert(0, os.path.join(ROOT, "lab", "servers"))
import server_inventory  # noqa: E402  pylint: disable=wrong-import-position

sys.path.insert(0, os.path.join(ROOT, ".tmp", "collections"))
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import parse_query  # noqa: E402

HGX, PCIE = "hgx-01.lab.local", "pcie-01.lab.local"
# A converged server: the layer's one shared read, nvidia-smi's topology read and NCCL's all-reduce test.
MAX_CONVERGED_REMOTE_TASKS = 3
STATE_DIR = os.path.join(ROOT, ".tmp", "servers-layer-%d" % PORT_OFFSET)


@pytest.fixture
def servers(lab):
    """The default topology's servers as they start in the lab (no driver), with the lab's BMCs."""
    with open(os.path.join(ROOT, "lab", "topologies", "default.yml")) as handle:
        specs = [dict(s, ssh_port=s["ssh_port"] + 200) for s in yaml.safe_load(handle)["servers"]]
    os.makedirs(STATE_DIR, exist_ok=True)
    catalog = os.path.join(STATE_DIR, "catalog.json")
    subprocess.run([sys.executable, LAB_CONTROL.EXPORT_CATALOG, catalog], check=True)
    started = LAB_CONTROL.start_servers(specs, STATE_DIR, PORT_OFFSET, catalog)
    try:
        server_inventory.write_inventory(os.path.join(STATE_DIR, "inventory.yml"), started, STATE_DIR, lab.bmcs)
        yield started
    finally:
        LAB_CONTROL.stop_guests([server["container"] for server in started.values()])


def on(server, *command):
    return LAB_CONTROL.podman("exec", server["container"], *command, check=False).stdout


def run_layer(tmp_path, name="run"):
    """playbooks/servers.yml on both servers; returns (rc, the recap per host, the changed tasks per host,
    gpu_validate's checks per host, output, the remote_tasks callback's report)."""
    counts_file = str(tmp_path / ("remote-tasks-%s.json" % name))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
            "-i", os.path.join(STATE_DIR, "inventory.yml"), os.path.join(ROOT, "playbooks", "servers.yml"),
            "-e", "bios_maintenance_record=%s" % (tmp_path / "bios.json")]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
               ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0",
               ANSIBLE_CALLBACK_PLUGINS=os.path.join(ROOT, "tests", "callback_plugins"),
               ANSIBLE_CALLBACKS_ENABLED="remote_tasks", GPUOPS_REMOTE_TASKS_FILE=counts_file)
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    output = proc.stdout + proc.stderr
    assert "{" in proc.stdout, output
    # The JSON document, then the remote_tasks callback's summary lines.
    document = json.JSONDecoder().raw_decode(proc.stdout[proc.stdout.index("{"):])[0]
    changed, checks = {}, {}
    for play in document["plays"]:
        for task in play["tasks"]:
            for host, result in task["hosts"].items():
                if result.get("changed"):
                    changed.setdefault(host, []).append(task["task"]["name"])
                report = (result.get("ansible_facts") or {}).get("gpu_validate_result")
                if report:
                    checks[host] = dict((name, check["status"]) for name, check in report["checks"].items())
    with open(counts_file) as handle:
        counts = json.load(handle)
    return proc.returncode, document["stats"], changed, checks, output, counts


def query(server):
    """nvidia-smi -q of the server, parsed; the text when it failed."""
    text = on(server, "nvidia-smi", "-q")
    return parse_query(text) if "==============NVSMI LOG==============" in text else text


def test_servers_converge_from_no_driver_to_their_own_gpus_and_a_second_run_changes_nothing(servers, tmp_path):
    for server in servers.values():
        assert on(server, "sh", "-c", "command -v nvidia-smi; ls /usr/share/nvidia/lab-dc 2>/dev/null; true") == "", \
            "a lab server starts without a driver"

    started = time.monotonic()
    rc, stats, changed, checks, output, _counts = run_layer(tmp_path, "first")
    first_seconds = time.monotonic() - started
    assert rc == 0, output[-8000:]
    assert all(stats[name]["failures"] == 0 and stats[name]["unreachable"] == 0 for name in (HGX, PCIE)), stats
    for name, gpus, model in ((HGX, 8, "NVIDIA H100 80GB HBM3"), (PCIE, 2, "NVIDIA H100 PCIe")):
        server = servers[name]
        report = query(server)
        assert isinstance(report, dict), "%s: %s" % (name, report)
        assert report["driver_version"] == "535.161.08", name
        assert [gpu["name"] for gpu in report["gpus"]] == [model] * gpus, name
        packages = on(server, "dpkg-query", "-W", "-f", "${Package} ${Version}\\n", "cuda-drivers-535")
        assert packages.split() == ["cuda-drivers-535", "535.161.08-1"], name
        assert on(server, "test", "-x", "/usr/local/cuda-12.1/bin/nvcc") == "" and "/usr/local/cuda-12.1" in on(
            server, "readlink", "/usr/local/cuda"), name
    fabric = [(gpu["fabric_state"], gpu["fabric_status"]) for gpu in query(servers[HGX])["gpus"]]
    assert fabric == [("Completed", "Success")] * 8
    assert on(servers[HGX], "systemctl", "is-active", "nvidia-fabricmanager").strip() == "active"
    assert on(servers[PCIE], "sh", "-c", "dpkg -l 'nvidia-fabricmanager*' 2>/dev/null | grep ^ii || true") == ""

    for name in (HGX, PCIE):
        # NCCL's all-reduce across the server's GPUs, and the checks of a machine that owns whole GPUs.
        assert [checks[name].get(check) for check in ("nccl", "passthrough_gpus", "p2p")] == ["ok"] * 3, checks

    started = time.monotonic()
    rc, again, changed, _checks, output, counts = run_layer(tmp_path, "second")
    second_seconds = time.monotonic() - started
    assert rc == 0, output[-8000:]
    assert changed == {}, changed
    assert all(again[name]["changed"] == 0 and again[name]["failures"] == 0 for name in (HGX, PCIE)), again
    # Each server is reached at most three times: everything the roles decide comes from one shared read.
    assert all(counts["remote_tasks"][name] <= MAX_CONVERGED_REMOTE_TASKS for name in (HGX, PCIE)), counts["tasks"]
    print("servers.yml remote tasks on the second run: %s" % counts["remote_tasks"])
    print("servers.yml (ok, changed) first run %.0f s: %s; second run %.0f s: %s; checks: %s" % (
        first_seconds, dict((name, (stats[name]["ok"], stats[name]["changed"])) for name in (HGX, PCIE)),
        second_seconds, dict((name, (again[name]["ok"], again[name]["changed"])) for name in (HGX, PCIE)), checks))
