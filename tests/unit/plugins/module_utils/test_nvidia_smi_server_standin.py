# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's parsers read the lab's bare-metal server nvidia-smi stand-in (lab/servers) as they read the real
recordings: the Fabric section follows the driver and Fabric Manager, and the failures are nvidia-smi's."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import (
    detect_error,
    parse_nvlink_status,
    parse_query,
    parse_topology,
)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
STANDINS = os.path.join(REPO, "lab", "servers", "standins")
DRIVER = {"version": "535.161.08", "cuda": "12.2"}


def _servers():
    spec = importlib.util.spec_from_file_location("gpuops_lab_servers", os.path.join(REPO, "lab", "servers",
                                                                                     "servers.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    out = tmp_path_factory.mktemp("catalog") / "catalog.json"
    subprocess.run([sys.executable, os.path.join(REPO, "lab", "tools", "export_catalog.py"), str(out)], check=True)
    return json.loads(out.read_text())["gpus"]


@pytest.fixture
def server(tmp_path, catalog):
    """An HGX H100 board's files as labctl writes them, and a function that runs the stand-in on them."""
    spec = {"name": "hgx-01.lab.local", "gpus": [{"model": "H100-SXM5-80", "count": 8}], "nvswitches": 4}
    paths = dict((name, tmp_path / (name + ".json")) for name in ("server", "driver", "kernel", "fabric"))
    paths["server"].write_text(json.dumps(_servers().describe(spec, catalog)))
    paths["driver"].write_text(json.dumps(DRIVER))
    paths["kernel"].write_text(json.dumps({"bound": "nvidia", "nvidia": {"version": "535.161.08", "flavour": "open"}}))
    env = dict(os.environ, **dict(("GPUOPS_LAB_" + name.upper(), str(path)) for name, path in paths.items()))
    # The stand-in imports lab/hosts' modules from its own folder, as build.py lays them out.
    folder = tmp_path / "standin"
    folder.mkdir()
    for source in (os.path.join(STANDINS, "nvidia-smi"),) + tuple(
            os.path.join(REPO, "lab", "hosts", name) for name in ("nvidia_smi.py", "smi_models.py", "smi_render.py")):
        (folder / os.path.basename(source)).write_text(open(source).read())

    def run(*args):
        proc = subprocess.run([sys.executable, str(folder / "nvidia-smi")] + list(args), env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
        return proc.returncode, proc.stdout

    run.paths = paths
    return run


def fabric(text):
    return [(gpu["fabric_state"], gpu["fabric_status"]) for gpu in parse_query(text)["gpus"]]


def test_the_board_reads_like_the_recorded_bare_metal_hgx(server):
    rc, text = server("-q")
    assert rc == 0
    query = parse_query(text)
    assert query["driver_version"] == "535.161.08" and query["cuda_version"] == "12.2"
    assert [gpu["pci_bus_id"] for gpu in query["gpus"]] == [
        "00000000:19:00.0", "00000000:3B:00.0", "00000000:4C:00.0", "00000000:5D:00.0", "00000000:9B:00.0",
        "00000000:BB:00.0", "00000000:CB:00.0", "00000000:DB:00.0"]
    assert set(gpu["name"] for gpu in query["gpus"]) == {"NVIDIA H100 80GB HBM3"}
    assert set(gpu["virtualization_mode"] for gpu in query["gpus"]) == {"None"}
    topology = parse_topology(server("topo", "-m")[1])
    assert len(topology["nvlink_pairs"]) == 28 and set(pair["links"] for pair in topology["nvlink_pairs"]) == {18}
    assert [len(gpu["links"]) for gpu in parse_nvlink_status(server("nvlink", "-s")[1])["gpus"]] == [18] * 8


@pytest.mark.parametrize("args", [("-q",), ("-q", "-x")], ids=["text", "xml"])
def test_the_fabric_is_in_progress_until_fabric_manager_completes_it_for_the_loaded_module(server, args):
    assert fabric(server(*args)[1]) == [("In Progress", None)] * 8
    server.paths["fabric"].write_text(json.dumps({"driver": "535.161.08", "state": "Completed", "status": "Success"}))
    assert fabric(server(*args)[1]) == [("Completed", "Success")] * 8
    server.paths["fabric"].write_text(json.dumps({"driver": "535.154.05", "state": "Completed", "status": "Success"}))
    assert fabric(server(*args)[1]) == [("In Progress", None)] * 8


def test_without_a_loaded_module_or_with_another_one_nvidia_smi_fails_as_the_real_one(server):
    server.paths["kernel"].write_text(json.dumps({"bound": "nvidia", "nvidia": {"version": "535.154.05"}}))
    rc, text = server("-q")
    assert (rc, detect_error(text, rc).kind) == (18, "driver_library_mismatch")
    server.paths["kernel"].write_text(json.dumps({"bound": None}))
    rc, text = server("-q")
    assert (rc, detect_error(text, rc).kind) == (9, "driver_unreachable")
