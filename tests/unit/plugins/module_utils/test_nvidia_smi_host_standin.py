# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's parsers read the lab's ESXi host nvidia-smi stand-in (lab/hosts) as they read the real
recordings: same shapes, and the values the lab's state holds."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os
import subprocess
import sys

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import (
    NvidiaSmiError,
    detect_error,
    parse_csv,
    parse_list,
    parse_nvlink_remote,
    parse_nvlink_status,
    parse_query,
    parse_topology,
    parse_vgpu_query,
)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "unit", "plugins"))
from nvidia_smi_fixtures import read  # noqa: E402

DRIVER = "525.105.14-1OEM.800.1.0.20613240"


def _standin():
    path = os.path.join(REPO, "lab", "hosts", "nvidia_smi.py")
    spec = importlib.util.spec_from_file_location("gpuops_lab_host_smi", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STANDIN = _standin()


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    out = tmp_path_factory.mktemp("catalog") / "catalog.json"
    subprocess.run([sys.executable, os.path.join(REPO, "lab", "tools", "export_catalog.py"), str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    return STANDIN.lab_catalog(str(out))


def gpu(pci_id, model, name, memory, ecc="enabled", temperature=34, vms=()):
    return {"pci_id": pci_id, "model": model, "device_name": name, "device_id": "0x20f1" if model != "P40" else
            "0x1b38", "memory_mib": memory, "graphics_type": "sharedDirect", "ecc_mode": ecc,
            "temperature_c": temperature, "vms": list(vms)}


def state(components=None):
    """A /lab/state with an A100 host (a bridged pair and one GPU with ECC off) and a P40 host running two vGPUs."""
    components = {"ESXi": "8.0.2", "NVD-VGPU-800": DRIVER} if components is None else components
    return {
        "hosts": [
            {"name": "a100.lab", "components": components, "nvlink": [["0000:3b:00.0", "0000:5e:00.0"]], "gpus": [
                gpu("0000:5e:00.0", "A100-40", "NVIDIA A100-PCIE-40GB", 40960),
                gpu("0000:3b:00.0", "A100-40", "NVIDIA A100-PCIE-40GB", 40960),
                gpu("0000:86:00.0", "A100-40", "NVIDIA A100-PCIE-40GB", 40960, ecc="disabled", temperature=88)]},
            {"name": "p40.lab", "components": components, "nvlink": [], "gpus": [
                gpu("0000:3b:00.0", "P40", "Tesla P40", 24576, vms=("vm-a", "vm-b"))]},
        ],
        "vms": [
            {"name": "vm-a", "uuid": "4c4c0358-7e49-5379-a09c-af166a68dc35", "host": "p40.lab",
             "power_state": "poweredOn", "vgpus": [{"key": 13000, "profile": "grid_p40-8q", "gpu": "0000:3b:00.0"}]},
            {"name": "vm-b", "uuid": "4c1c8032-b060-5502-bdf2-e158b08a710b", "host": "p40.lab",
             "power_state": "poweredOn", "vgpus": [{"key": 13000, "profile": "grid_p40-8q", "gpu": "0000:3b:00.0"}]},
            {"name": "vm-off", "uuid": "fe97e8a1-28d4-545a-bb15-9182528a7e5d", "host": "p40.lab",
             "power_state": "poweredOff", "vgpus": [{"key": 13000, "profile": "grid_p40-8q", "gpu": None}]},
        ],
    }


def smi(catalog, host, *args, **kwargs):
    return STANDIN.answer(STANDIN.machine(state(**kwargs), host, catalog), list(args))


def _comparable(facts):
    return dict((k, v) for k, v in facts.items() if k not in ("format", "timestamp"))


def test_q_text_and_xml_read_the_same_and_follow_the_state(catalog):
    text, xml = parse_query(smi(catalog, "a100.lab", "-q")), parse_query(smi(catalog, "a100.lab", "-q", "-x"))
    assert (text["format"], xml["format"]) == ("text", "xml")
    assert _comparable(text) == _comparable(xml)
    assert (text["driver_version"], text["attached_gpus"]) == ("525.105.14", 3)
    gpus = text["gpus"]
    assert [g["pci_bus_id"] for g in gpus] == ["00000000:3B:00.0", "00000000:5E:00.0", "00000000:86:00.0"]
    ecc = [(g["ecc_mode_current"], g["ecc_mode_pending"]) for g in gpus]
    assert ecc == [(True, True), (True, True), (False, False)]
    assert [g["temperature_gpu_c"] for g in gpus] == [34, 34, 88]
    assert set(g["virtualization_mode"] for g in gpus) == {"Host VGPU"}
    assert gpus[0]["uuid"] != gpus[1]["uuid"] and gpus[0]["uuid"].startswith("GPU-")


def test_the_standin_gives_every_field_the_recorded_host_output_gives(catalog):
    recorded = parse_query(read("q_host_vgpu_sriov_a16_gpu0_ahv_driver470.txt"))["gpus"][0]
    ours = parse_query(smi(catalog, "a100.lab", "-q"))["gpus"][0]
    assert set(ours) == set(recorded)
    given = sorted(k for k, v in recorded.items() if v not in (None, [], False))
    missing = [k for k in given if ours[k] in (None, [])]
    assert missing == []
    assert (ours["virtualization_mode"], recorded["virtualization_mode"]) == ("Host VGPU", "Host VGPU")


def test_q_d_temperature_keeps_the_temperature_only(catalog):
    text = smi(catalog, "a100.lab", "-q", "-d", "TEMPERATURE")
    facts = parse_query(text)
    assert [g["temperature_gpu_c"] for g in facts["gpus"]] == [34, 34, 88]
    assert facts["gpus"][0]["memory_total_mib"] is None and "GPU Shutdown Temp" in text
    one = parse_query(smi(catalog, "a100.lab", "-q", "-d", "TEMPERATURE", "-i", "2", "-x"))
    assert [(g["pci_bus_id"], g["temperature_gpu_c"]) for g in one["gpus"]] == [("00000000:86:00.0", 88)]


def test_vgpu_q_lists_the_running_vgpus_only(catalog):
    gpus = parse_vgpu_query(smi(catalog, "p40.lab", "vgpu", "-q"))["gpus"]
    assert [(g["pci_bus_id"], g["active_vgpus"]) for g in gpus] == [("00000000:3B:00.0", 2)]
    assert [(v["vm_name"], v["vgpu_name"], v["fb_total_mib"], v["licensed"]) for v in gpus[0]["vgpus"]] == [
        ("vm-a", "GRID P40-8Q", 8192, None), ("vm-b", "GRID P40-8Q", 8192, None)]
    assert gpus[0]["vgpus"][0]["vm_uuid"] == "4c4c0358-7e49-5379-a09c-af166a68dc35"
    assert parse_query(smi(catalog, "p40.lab", "-q"))["gpus"][0]["memory_used_mib"] == 16384
    summary = smi(catalog, "p40.lab", "vgpu")
    assert "vm-a" in summary and "GRID P40-8Q" in summary
    assert len(set(len(line) for line in summary.splitlines()[1:])) == 1  # every table line equally wide


def test_topology_and_nvlink_read_like_the_recordings(catalog):
    ours = parse_topology(smi(catalog, "a100.lab", "topo", "-m"))
    recorded = parse_topology(read("topo_m_2xH100_pcie_NV12_driver555_TABS2SPACES.txt"))
    assert ours["nvlink_pairs"] == recorded["nvlink_pairs"] == [{"a": "GPU0", "b": "GPU1", "links": 12}]
    assert set(ours) == set(recorded) and ours["matrix"]["GPU2"]["GPU0"] in ("SYS", "NODE")
    status = parse_nvlink_status(smi(catalog, "a100.lab", "nvlink", "-s"))["gpus"]
    assert [(g["active_links"], g["error"] is None) for g in status] == [(12, True), (12, True), (0, False)]
    unbridged = parse_nvlink_status(read("nvlink_s_2xA100_pcie_no_nvlink_all_inactive_driver555.txt"))["gpus"][0]
    assert status[2]["error"] == unbridged["error"]
    remote = parse_nvlink_remote(smi(catalog, "a100.lab", "nvlink", "-R"))["gpus"]
    assert set(link["remote_pci_bus_id"] for link in remote[0]["links"]) == {"00000000:5E:00.0"}
    assert smi(catalog, "p40.lab", "nvlink", "-s") == ""  # as nvlink_status_a10_empty_output.txt


def test_list_and_csv(catalog):
    listed = parse_list(smi(catalog, "a100.lab", "-L"))["gpus"]
    queried = parse_query(smi(catalog, "a100.lab", "-q"))["gpus"]
    assert [g["uuid"] for g in listed] == [g["uuid"] for g in queried]
    csv = parse_csv(smi(catalog, "a100.lab", "--query-gpu=index,pci.bus_id,temperature.gpu,ecc.mode.current,"
                                             "memory.total,power.limit", "--format=csv"))
    assert csv["units"] == {"memory.total": "MiB", "power.limit": "W"}
    assert [(r["pci.bus_id"], r["temperature.gpu"], r["ecc.mode.current"], r["memory.total"]) for r in csv["rows"]] \
        == [("00000000:3B:00.0", "34", "Enabled", 40960), ("00000000:5E:00.0", "34", "Enabled", 40960),
            ("00000000:86:00.0", "88", "Disabled", 40960)]
    bare = smi(catalog, "a100.lab", "--query-gpu=memory.total", "--format=csv,noheader,nounits")
    assert bare.splitlines() == ["40960"] * 3


@pytest.mark.parametrize("args, kind", [
    (("--query-gpu=bogus.field", "--format=csv"), None),
    (("-x",), "not_supported"),
])
def test_failures_print_what_nvidia_smi_prints(catalog, args, kind):
    with pytest.raises(STANDIN.Fail) as raised:
        smi(catalog, "a100.lab", *args)
    assert raised.value.rc == 2
    if kind:
        assert detect_error(str(raised.value), raised.value.rc).kind == kind
    else:
        assert str(raised.value) == 'Field "bogus.field" is not a valid field to query.'


def test_without_the_vgpu_manager_there_is_no_nvidia_smi(catalog):
    with pytest.raises(STANDIN.Fail) as raised:
        smi(catalog, "a100.lab", "-q", components={"ESXi": "8.0.2"})
    error = detect_error(str(raised.value), raised.value.rc)
    assert isinstance(error, NvidiaSmiError) and (error.kind, raised.value.rc) == ("not_installed", 127)
