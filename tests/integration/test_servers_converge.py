# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The whole servers layer (playbooks/servers.yml) on the lab's bare-metal GPU servers as they come from their
installer, without a driver: BIOS and cooling through their BMCs, NVIDIA's data center driver from the lab's stand-in
of NVIDIA's CUDA repository, Fabric Manager on the HGX board, the CUDA toolkit, NCCL for it with nccl-tests built
from the lab's stand-in source archive, metrics and the validation. Each server's own nvidia-smi then answers from
its GPUs with the installed driver's version, the HGX fabric completed, NCCL's all-reduce test passing across its
GPUs; a second run changes nothing, and the nccl role's refusals leave a server as it was.

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

from conftest import LAB_CONTROL, PORT_OFFSET, ROOT, lab_servers

sys.path.insert(0, os.path.join(ROOT, ".tmp", "collections"))
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import parse_query  # noqa: E402
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._nccl_tests import check_from_outputs  # noqa: E402

HGX, PCIE = "hgx-01.lab.local", "pcie-01.lab.local"
# A converged server: the layer's one shared read, nvidia-smi's topology read and NCCL's all-reduce test.
MAX_CONVERGED_REMOTE_TASKS = 3
STATE_DIR = os.path.join(ROOT, ".tmp", "servers-layer-%d" % PORT_OFFSET)


@pytest.fixture
def servers(lab):
    """The default topology's servers as they start in the lab (no driver), with the lab's BMCs."""
    with lab_servers(lab, STATE_DIR, 200) as started:
        yield started


def on(server, *command):
    return LAB_CONTROL.podman("exec", server["container"], *command, check=False).stdout


NCCL = ["libnccl2 2.21.5-1+cuda12.1", "libnccl-dev 2.21.5-1+cuda12.1"]
PROGRAMS = ["all_gather_perf", "all_reduce_perf", "alltoall_perf", "broadcast_perf", "reduce_perf",
            "reduce_scatter_perf"]
NCCL_READ = "Read the machine's OS, GPUs, packages, CUDA toolkits and the role's files"


def run_layer(tmp_path, playbook=None, *args, state_dir=STATE_DIR, **env_vars):
    """playbooks/servers.yml (or ``playbook``) on both servers (the inventory in ``state_dir``); returns (rc, the recap
    per host, the changed tasks per host, gpu_validate's checks per host, output)."""
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
            "-i", os.path.join(state_dir, "inventory.yml"), playbook or os.path.join(ROOT, "playbooks", "servers.yml"),
            "-e", "bios_maintenance_record=%s" % (tmp_path / "bios.json")] + list(args)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
               ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0")
    env.update(env_vars)
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    output = proc.stdout + proc.stderr
    assert "{" in proc.stdout, output
    # raw_decode: a callback that adds its summary after the JSON (tests/callback_plugins/remote_tasks) is allowed.
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
                    checks[host]["nccl_check"] = report["checks"].get("nccl")
    return proc.returncode, document["stats"], changed, checks, output


def query(server):
    """nvidia-smi -q of the server, parsed; the text when it failed."""
    text = on(server, "nvidia-smi", "-q")
    return parse_query(text) if "==============NVSMI LOG==============" in text else text


def test_servers_converge_from_no_driver_to_their_own_gpus_and_a_second_run_changes_nothing(servers, tmp_path):
    for server in servers.values():
        assert on(server, "sh", "-c", "command -v nvidia-smi; ls /usr/share/nvidia/lab-dc 2>/dev/null; true") == "", \
            "a lab server starts without a driver"

    started = time.monotonic()
    rc, stats, changed, checks, output = run_layer(tmp_path)
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

    for name, gpus in ((HGX, 8), (PCIE, 2)):
        server = servers[name]
        # NCCL for the installed CUDA 12.1 from the lab's CUDA repository, with the files NVIDIA's packages install.
        installed = on(server, "dpkg-query", "-W", "-f", "${Package} ${Version}\\n", "libnccl2", "libnccl-dev")
        assert sorted(installed.splitlines()) == sorted(NCCL), (name, installed)
        assert on(server, "readlink", "/usr/lib/x86_64-linux-gnu/libnccl.so.2").strip() == "libnccl.so.2.21.5", name
        assert "#define NCCL_MINOR 21" in on(server, "cat", "/usr/include/nccl.h"), name
        # nccl-tests built from the stand-in archive with that toolkit and NCCL, installed where gpu_validate runs them.
        assert on(server, "ls", "/opt/nccl-tests/bin").split() == PROGRAMS, name
        stamp = json.loads(on(server, "cat", "/opt/nccl-tests/.gpuops-nccl-tests.json"))
        assert (stamp["archive"], stamp["nccl"], stamp["cuda"]) == (
            "nccl-tests-2.13.6.tar.gz", "2.21.5-1+cuda12.1", "12.1.1"), stamp
        assert on(server, "sh", "-c", "ls /var/tmp/gpuops-nccl-tests/src 2>/dev/null; true") == "", "source removed"
        # NCCL's all-reduce across the server's GPUs, and the checks of a machine that owns whole GPUs.
        assert [checks[name].get(check) for check in ("nccl", "passthrough_gpus", "p2p")] == ["ok"] * 3, checks
        # gpu_validate's verdict is the one the installed program's own output gives against the server's topology.
        output_now = on(server, "/opt/nccl-tests/bin/all_reduce_perf", "-b", "8M", "-e", "128M", "-f", "2", "-g",
                        str(gpus))
        assert "#  Rank  %d Group  0" % (gpus - 1) in output_now and "# Avg bus bandwidth" in output_now, output_now
        pcie = on(server, "nvidia-smi", "--query-gpu=pcie.link.gen.current,pcie.link.width.current",
                  "--format=csv,noheader,nounits")
        verdict = check_from_outputs(output_now, on(server, "nvidia-smi", "topo", "-m"),
                                     on(server, "nvidia-smi", "nvlink", "-s"), pcie, 0.5, True)
        assert verdict["status"] == "ok" and verdict["message"] == checks[name]["nccl_check"]["message"], (
            verdict, checks[name]["nccl_check"])
    assert "NV18" in checks[HGX]["nccl_check"]["message"], checks[HGX]["nccl_check"]
    # The HGX board's NVSwitches, seen on its PCI bus, make gpu_validate check Fabric Manager; the PCIe server has none.
    assert (checks[HGX]["fabric_manager"], checks[PCIE]["fabric_manager"]) == ("ok", "skipped"), checks

    counts = tmp_path / "remote-tasks.json"
    started = time.monotonic()
    rc, again, changed, _checks, output = run_layer(
        tmp_path, None, ANSIBLE_CALLBACK_PLUGINS=os.path.join(ROOT, "tests", "callback_plugins"),
        ANSIBLE_CALLBACKS_ENABLED="remote_tasks", GPUOPS_REMOTE_TASKS_FILE=str(counts))
    second_seconds = time.monotonic() - started
    assert rc == 0, output[-8000:]
    assert changed == {}, changed
    assert all(again[name]["changed"] == 0 and again[name]["failures"] == 0 for name in (HGX, PCIE)), again
    # A converged server: the nccl role answers from the layer's shared read, without a task of its own on it.
    remote = json.loads(counts.read_text())
    for name in (HGX, PCIE):
        assert not [task for task in remote["tasks"][name] if task.startswith("gpuops.vgpu.nccl ")], remote["tasks"]
    print("servers.yml converged: tasks that reached each server %s" % remote["remote_tasks"])
    # Each server is reached at most three times: everything the roles decide comes from one shared read.
    assert all(remote["remote_tasks"][name] <= MAX_CONVERGED_REMOTE_TASKS for name in (HGX, PCIE)), remote["tasks"]
    print("servers.yml (ok, changed) first run %.0f s: %s; second run %.0f s: %s; checks: %s" % (
        first_seconds, dict((name, (stats[name]["ok"], stats[name]["changed"])) for name in (HGX, PCIE)),
        second_seconds, dict((name, (again[name]["ok"], again[name]["changed"])) for name in (HGX, PCIE)), checks))


def nccl_play(tmp_path, **variables):
    """A playbook of the nccl role alone on the servers, with ``variables`` over the inventory's."""
    playbook = tmp_path / "nccl.yml"
    playbook.write_text(yaml.safe_dump([{"name": "NCCL", "hosts": "gpu_servers", "gather_facts": False,
                                         "roles": [{"role": "gpuops.vgpu.nccl", "vars": variables}]}]))
    return str(playbook)


def nccl_state(server):
    """What the nccl role manages on a server, as the server has it."""
    return on(server, "sh", "-c", "dpkg-query -W -f '${Package} ${Version}\\n' 'libnccl*' 2>/dev/null; "
                                  "ls -l --time-style=+%s /opt/nccl-tests/bin 2>/dev/null; "
                                  "sha1sum /opt/nccl-tests/.gpuops-nccl-tests.json 2>/dev/null; true")


def test_nccl_refusals_and_check_mode_leave_a_converged_server_as_it_was(servers, tmp_path):
    rc, _stats, _changed, _checks, output = run_layer(tmp_path)
    assert rc == 0, output[-8000:]
    before = dict((name, nccl_state(server)) for name, server in servers.items())
    assert "libnccl2 2.21.5-1+cuda12.1" in before[HGX] and "all_reduce_perf" in before[HGX], before

    refusals = [
        ({"nccl_cuda_version": "11.0"}, "NCCL 2.21.5-1+cuda11.0 is built for CUDA 11.0, but the toolkit at "
                                        "/usr/local/cuda is CUDA 12.1.1: use a build for CUDA 12.x"),
        ({"nccl_tests_remote_src": "/srv/lab-artifacts/nccl-tests-missing.tar.gz"},
         "the nccl-tests archive /srv/lab-artifacts/nccl-tests-missing.tar.gz does not exist there"),
        ({"nccl_tests_remote_src": ""}, "has 8 GPUs, so nccl-tests are built there from NVIDIA's source archive"),
        ({"nccl_cuda_home": "/usr/local/cuda-11.8"}, "no CUDA toolkit at /usr/local/cuda-11.8"),
        ({"nccl_source": "packages", "nccl_package_files": [
            "/srv/lab-artifacts/cuda-repo/libnccl2_2.21.5-1+cuda11.0_amd64.deb",
            "/srv/lab-artifacts/cuda-repo/libnccl-dev_2.21.5-1+cuda11.0_amd64.deb"]}, "is built for CUDA 11.0"),
    ]
    for variables, words in refusals:
        rc, stats, changed, _checks, output = run_layer(tmp_path, nccl_play(tmp_path, **variables))
        assert rc != 0 and stats[HGX]["failures"] == 1, (variables, output[-4000:])
        assert words in output and "Nothing was changed." in output, (variables, output[-4000:])
        assert changed == {}, (variables, changed)
        assert dict((name, nccl_state(server)) for name, server in servers.items()) == before, variables

    # Check mode with other make options: the rebuild is announced, nothing is built.
    rc, stats, changed, _checks, output = run_layer(
        tmp_path, nccl_play(tmp_path, nccl_tests_make_options=["NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90"]),
        "--check")
    assert rc == 0, output[-4000:]
    assert changed[HGX] == ["gpuops.vgpu.nccl : Record what nccl-tests were built from"], changed
    assert dict((name, nccl_state(server)) for name, server in servers.items()) == before

    # The same for real: built again with the new options, the stamp says so, and a run after it changes nothing.
    rc, stats, changed, _checks, output = run_layer(
        tmp_path, nccl_play(tmp_path, nccl_tests_make_options=["NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90"]))
    built = "gpuops.vgpu.nccl : Unpack nccl-tests, build them with the installed CUDA and NCCL, and install the programs"
    assert rc == 0 and built in changed[HGX], (changed, output[-4000:])
    assert "NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90" in on(
        servers[HGX], "cat", "/opt/nccl-tests/.gpuops-nccl-tests.json")
    rc, stats, changed, _checks, output = run_layer(
        tmp_path, nccl_play(tmp_path, nccl_tests_make_options=["NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90"]))
    assert rc == 0 and changed == {}, (changed, output[-4000:])
