# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers of ``topo -m``, ``nvlink -s/-R``, ``mig -lgip/-lgi``, ``-L``, ``--format=csv`` and ``vgpu -q``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


import pytest

from ansible_collections.gpuops.vgpu.tests.unit.plugins.nvidia_smi_fixtures import read
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import (
    NvidiaSmiError,
    parse_csv,
    parse_list,
    parse_mig,
    parse_nvlink_remote,
    parse_nvlink_status,
    parse_p2p,
    parse_topology,
    parse_vgpu_query,
)


DRIVER_DOWN = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
               "latest NVIDIA driver is installed and running.\n")


# --- topo -m ----------------------------------------------------------------------------------------------------

def test_topology_ansi_escapes_and_double_tab():
    topo = parse_topology(read("topo_m_1xH100_ansi_escapes_driver590.txt"))
    assert topo["devices"] == ["GPU0"]
    assert topo["matrix"] == {"GPU0": {"GPU0": "X"}}
    assert topo["nvlink_pairs"] == []
    assert (topo["cpu_affinity"], topo["numa_affinity"], topo["gpu_numa_id"]) == (
        {"GPU0": "0-19"}, {"GPU0": "0"}, {"GPU0": None})


def test_topology_nv12_with_tabs_turned_into_spaces():
    topo = parse_topology(read("topo_m_2xH100_pcie_NV12_driver555_TABS2SPACES.txt"))
    assert topo["devices"] == ["GPU0", "GPU1"]
    assert topo["matrix"] == {"GPU0": {"GPU0": "X", "GPU1": "NV12"}, "GPU1": {"GPU0": "NV12", "GPU1": "X"}}
    assert topo["nvlink_pairs"] == [{"a": "GPU0", "b": "GPU1", "links": 12}]
    assert topo["cpu_affinity"] == {"GPU0": "32-63,96-127", "GPU1": "32-63,96-127"}
    assert topo["numa_affinity"] == {"GPU0": "1", "GPU1": "1"}


# Layout of a 4-GPU, 2-NIC server: NIC rows end in empty cells and a NIC legend follows the link legend. The GPU
# NUMA ids are set, as on systems whose GPU memory is a NUMA node, so the double tab before them is exercised.
TOPO_WITH_NICS = (
    "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tNV4\tNV4\tSYS\tPXB\tSYS\t0-15\t0\t\t2\n"
    "GPU1\tNV4\t X \tSYS\tNV4\tPXB\tSYS\t0-15\t0\t\t3\n"
    "GPU2\tNV4\tSYS\t X \tNV4\tSYS\tPXB\t16-31\t1\t\t4\n"
    "GPU3\tSYS\tNV4\tNV4\t X \tSYS\tPXB\t16-31\t1\t\t5\n"
    "NIC0\tPXB\tPXB\tSYS\tSYS\t X \tSYS\t\t\t\t\n"
    "NIC1\tSYS\tSYS\tPXB\tPXB\tSYS\t X \t\t\t\t\n"
    "\nLegend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n"
    "\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n\n"
)


def test_topology_nic_rows_empty_cells_and_pairs_once():
    topo = parse_topology(TOPO_WITH_NICS)
    assert topo["devices"] == ["GPU0", "GPU1", "GPU2", "GPU3", "NIC0", "NIC1"]
    assert topo["nvlink_pairs"] == [{"a": "GPU0", "b": "GPU1", "links": 4}, {"a": "GPU0", "b": "GPU2", "links": 4},
                                    {"a": "GPU1", "b": "GPU3", "links": 4}, {"a": "GPU2", "b": "GPU3", "links": 4}]
    assert topo["matrix"]["NIC0"]["GPU1"] == "PXB" and topo["matrix"]["GPU3"]["NIC1"] == "PXB"
    assert topo["cpu_affinity"] == {"GPU0": "0-15", "GPU1": "0-15", "GPU2": "16-31", "GPU3": "16-31"}
    assert topo["numa_affinity"] == {"GPU0": "0", "GPU1": "0", "GPU2": "1", "GPU3": "1"}
    assert topo["gpu_numa_id"] == {"GPU0": "2", "GPU1": "3", "GPU2": "4", "GPU3": "5"}
    assert "NIC0" not in topo["cpu_affinity"]
    assert topo["nics"] == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}


@pytest.mark.parametrize("text, rc_kind", [
    ("ERROR: Option -m is missing its value\n", "not_supported"),  # topo -m on Windows
    (DRIVER_DOWN, "driver_unreachable"),
    ("\n\n", "unparsable"),
])
def test_topology_errors(text, rc_kind):
    with pytest.raises(NvidiaSmiError) as raised:
        parse_topology(text)
    assert raised.value.kind == rc_kind


# --- nvlink -s / --status / -R ----------------------------------------------------------------------------------

NVLINK_CASES = {  # file: [(index, name, links printed, active links, error)]
    "nvlink_s_h100_18links_driver590.txt": [(0, "NVIDIA H100 80GB HBM3", 18, 18, None)],
    "nvlink_s_2xH100_pcie_inactive_links_driver555.txt": [(0, "NVIDIA H100 PCIe", 18, 12, None),
                                                          (1, "NVIDIA H100 PCIe", 18, 12, None)],
    "nvlink_status_8xA100_sxm4_80gb_12links.txt": [(i, "NVIDIA A100-SXM4-80GB", 12, 12, None) for i in range(8)],
    "nvlink_s_2xA100_pcie_no_nvlink_all_inactive_driver555.txt": [
        (i, "NVIDIA A100-PCIE-40GB", 0, 0, "NVML: Unable to retrieve NVLink information as all links are inActive")
        for i in range(2)],
    "nvlink_status_a10_empty_output.txt": [],
}


@pytest.mark.parametrize("name", sorted(NVLINK_CASES))
def test_nvlink_status(name):
    gpus = parse_nvlink_status(read(name))["gpus"]
    assert [(g["index"], g["name"], len(g["links"]), g["active_links"], g["error"]) for g in gpus] == NVLINK_CASES[name]


def test_nvlink_link_speeds_and_inactive_links():
    gpu0 = parse_nvlink_status(read("nvlink_s_2xH100_pcie_inactive_links_driver555.txt"))["gpus"][0]
    assert gpu0["uuid"] == "GPU-6968dfc2-d444-d92c-c36b-6abe53445cb9"
    assert [link["link"] for link in gpu0["links"] if not link["active"]] == [4, 5, 10, 11, 16, 17]
    assert gpu0["links"][4] == {"link": 4, "active": False, "speed_gbps": None, "status": "<inactive>"}
    assert gpu0["links"][0] == {"link": 0, "active": True, "speed_gbps": 26.562, "status": "26.562 GB/s"}
    a100 = parse_nvlink_status(read("nvlink_status_8xA100_sxm4_80gb_12links.txt"))["gpus"][7]
    assert (a100["uuid"], a100["links"][11]["speed_gbps"]) == ("GPU-754035b4-4708-efcd-b261-623aea38bcad", 25.0)


def test_nvlink_remote_map():
    gpus = parse_nvlink_remote(read("nvlink_R_2xH100_pcie_remote_links_driver555.txt"))["gpus"]
    assert [(g["index"], len(g["links"])) for g in gpus] == [(0, 12), (1, 12)]
    assert gpus[0]["links"][4] == {"link": 4, "remote_pci_bus_id": "00000000:D5:00.0", "remote_link": 6}
    assert gpus[1]["links"][11] == {"link": 11, "remote_pci_bus_id": "00000000:C2:00.0", "remote_link": 15}


def test_nvlink_driver_error():
    with pytest.raises(NvidiaSmiError) as raised:
        parse_nvlink_status(DRIVER_DOWN)
    assert raised.value.kind == "driver_unreachable"


# --- mig -lgip / -lgi -------------------------------------------------------------------------------------------

def test_mig_instance_profiles():
    profiles = parse_mig(read("mig_lgip_a100_pcie_40gb_esxi_driver510.txt"))["gpu_instance_profiles"]
    assert [(p["name"], p["profile_id"], p["instances_total"], p["memory_gib"]) for p in profiles] == [
        ("1g.5gb", 19, 7, 4.75), ("1g.5gb+me", 20, 1, 4.75), ("2g.10gb", 14, 3, 9.75), ("3g.20gb", 9, 2, 19.62),
        ("4g.20gb", 5, 1, 19.62), ("7g.40gb", 0, 1, 39.5)]
    assert profiles[1] == {"gpu": 0, "name": "1g.5gb+me", "profile_id": 20, "instances_free": 0,
                           "instances_total": 1, "memory_gib": 4.75, "p2p": False, "sm": 14, "dec": 1, "enc": 0,
                           "ce": 1, "jpeg": 1, "ofa": 1}
    assert (profiles[5]["sm"], profiles[5]["dec"], profiles[5]["ce"]) == (98, 5, 7)


def test_mig_instances():
    instances = parse_mig(read("mig_lgi_a100_pcie_40gb_4instances_esxi_driver510.txt"))["gpu_instances"]
    assert [(i["gpu"], i["name"], i["profile_id"], i["instance_id"], i["placement_start"], i["placement_size"])
            for i in instances] == [(0, "1g.5gb", 19, 11, 0, 1), (0, "1g.5gb", 19, 12, 1, 1),
                                    (0, "2g.10gb", 14, 6, 2, 2), (0, "3g.20gb", 9, 1, 4, 4)]


def test_mig_on_but_nothing_carved():
    assert parse_mig("No GPU instances found: Not Found\n") == {"gpu_instances": []}


@pytest.mark.parametrize("text, kind", [
    ("+----+\n| GPU instance profiles: |\n| GPU   Name   ID |\n|   0  MIG 1g.5gb  19  new-column |\n", "unparsable"),
    ("+----+\n| GPU instances: |\n+----+\n", "unparsable"),
    ("No MIG-enabled devices found.\n", "not_supported"),
    ("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", "not_supported"),
    (DRIVER_DOWN, "driver_unreachable"),
])
def test_mig_errors(text, kind):
    with pytest.raises(NvidiaSmiError) as raised:
        parse_mig(text)
    assert raised.value.kind == kind


# --- -L ---------------------------------------------------------------------------------------------------------

def test_list_with_mig_devices():
    gpus = parse_list(read("L_list_gpus_h100_mig_devices_driver590.txt"))["gpus"]
    assert [(g["index"], g["name"], g["uuid"]) for g in gpus] == [
        (0, "NVIDIA H100 80GB HBM3", "GPU-00000000-0000-0000-0000-000000000000")]
    assert [(d["profile"], d["index"], d["uuid"]) for d in gpus[0]["mig_devices"]] == [
        ("3g.40gb", 0, "MIG-00000000-0000-0000-0000-000000000000"),
        ("2g.20gb", 1, "MIG-00000001-0000-0000-0000-000000000001"),
        ("1g.10gb", 2, "MIG-00000002-0000-0000-0000-000000000002"),
        ("1g.10gb", 3, "MIG-00000003-0000-0000-0000-000000000003")]


def test_list_single_mig_device_on_esxi():
    gpus = parse_list(read("L_list_gpus_a100_with_mig_device_driver510.txt"))["gpus"]
    assert gpus == [{"index": 0, "name": "NVIDIA A100-PCIE-40GB", "uuid": "GPU-14ac2834-0d81-0508-69eb-e25264c08d21",
                     "mig_devices": [{"profile": "1g.5gb", "index": 0,
                                      "uuid": "MIG-b6cd45f2-9655-5269-9b96-65446729d5dc"}]}]


@pytest.mark.parametrize("text, kind", [("No devices were found\n", "no_devices"), ("", "unparsable")])
def test_list_errors(text, kind):
    with pytest.raises(NvidiaSmiError) as raised:
        parse_list(text)
    assert raised.value.kind == kind


# --- --query-gpu --format=csv -----------------------------------------------------------------------------------

def test_csv_h100_mig_all_fields():
    parsed = parse_csv(read("csv_query_gpu_allfields_h100_mig_driver590.csv"))
    assert len(parsed["fields"]) == 212 and len(parsed["rows"]) == 1
    row = parsed["rows"][0]
    assert (row["name"], row["pci.bus_id"], row["driver_version"]) == (
        "NVIDIA H100 80GB HBM3", "00000000:00:09.0", "590.48.01")
    assert (row["memory.total"], parsed["units"]["memory.total"]) == (81559, "MiB")
    assert (row["power.draw"], row["power.draw.instant"], parsed["units"]["power.draw"]) == (71.15, 70.72, "W")
    assert (row["mig.mode.current"], row["ecc.mode.current"], row["temperature.gpu"]) == ("Enabled", "Enabled", "42")
    assert row["clocks_event_reasons_counters.sw_power_cap"] == 0 and parsed["units"][
        "clocks_event_reasons_counters.sw_power_cap"] == "us"
    assert (row["hostname"], row["fabric.health.summary"], row["module.power.draw.average"]) == (None, None, None)
    assert row["fan.speed"] is None  # [N/A] on a passively cooled board


def test_csv_windows_driver471_old_field_names():
    parsed = parse_csv(read("csv_query_gpu_allfields_rtx2080super_windows_driver471.csv"))
    row = parsed["rows"][0]
    assert len(parsed["fields"]) == 115
    assert (row["name"], row["uuid"], row["driver_model.current"]) == (
        "NVIDIA GeForce RTX 2080 SUPER", "GPU-df6e7a7c-7314-46f8-abc4-b88b36dcf3aa", "WDDM")
    assert (row["fan.speed"], row["memory.total"], row["power.draw"]) == (38, 8192, 32.7)
    assert row["clocks_throttle_reasons.gpu_idle"] == "Active"
    assert (row["mig.mode.current"], row["ecc.mode.current"], row["serial"]) == (None, None, None)


def test_csv_noheader_nounits():
    parsed = parse_csv("NVIDIA A10, 23028, 33\nNVIDIA A10, [N/A], 35\n",
                       fields=["name", "memory.total [MiB]", "temperature.gpu"])
    assert parsed["rows"] == [{"name": "NVIDIA A10", "memory.total": 23028, "temperature.gpu": "33"},
                              {"name": "NVIDIA A10", "memory.total": None, "temperature.gpu": "35"}]


@pytest.mark.parametrize("text, kind", [
    ("No devices were found\n", "no_devices"),
    (DRIVER_DOWN, "driver_unreachable"),
    ("name, memory.total [MiB]\nNVIDIA A10\n", "unparsable"),
])
def test_csv_errors(text, kind):
    with pytest.raises(NvidiaSmiError) as raised:
        parse_csv(text)
    assert raised.value.kind == kind


# --- vgpu -q ----------------------------------------------------------------------------------------------------
# No captured `nvidia-smi vgpu -q` is among the fixtures: this sample follows the layout NVIDIA's host driver prints
# (GPU header, "Active vGPUs", one "vGPU ID" block per vGPU), with an idle GPU, a vGPU whose guest driver is not up
# (empty VM UUID, "N/A (Expiry: N/A)") and a licensed one. An empty value keeps the space after its colon.
VGPU_QUERY = """GPU 00000000:3B:00.0
    Active vGPUs                          : 2
    vGPU ID                               : 3251634177
        VM UUID                           : 420a6f5e-91d2-7c1b-3e55-0b6a2d4c8f10
        VM Name                           : ml-train-01
        vGPU Name                         : GRID A100-4C
        vGPU Type                         : 473
        vGPU UUID                         : 6c3b1f0a-0c42-11ef-9d2a-2a0b1c4d5e6f
        MDEV UUID                         : 9f1c2d3e-4b5a-6c7d-8e9f-0a1b2c3d4e5f
        Guest Driver Version              : 535.104.05
        License Status                    : Licensed (Expiry: 2025-11-3 14:5:9 GMT)
        GPU Instance ID                   : N/A
        Placement ID                      : 0
        Accounting Mode                   : Disabled
        ECC Mode                          : Enabled
        PCI
            Bus Id                        : 00000000:02:00.0
        FB Memory Usage
            Total                         : 4096 MiB
            Used                          : 612 MiB
            Free                          : 3484 MiB
        Utilization
            Gpu                           : 7 %
            Memory                        : 1 %
    vGPU ID                               : 3251634182
        VM UUID                           :
        VM Name                           : ml-train-02
        vGPU Name                         : GRID A100-4C
        vGPU Type                         : 473
        vGPU UUID                         :
        Guest Driver Version              : N/A
        License Status                    : N/A (Expiry: N/A)
        GPU Instance ID                   : N/A
        Placement ID                      : 4
        FB Memory Usage
            Total                         : 4096 MiB
            Used                          : 0 MiB
            Free                          : 4096 MiB
GPU 00000000:AF:00.0
    Active vGPUs                          : 0
""".replace(":\n", ": \n")


def test_vgpu_query():
    gpus = parse_vgpu_query(VGPU_QUERY)["gpus"]
    assert [(g["pci_bus_id"], g["active_vgpus"], len(g["vgpus"])) for g in gpus] == [
        ("00000000:3B:00.0", 2, 2), ("00000000:AF:00.0", 0, 0)]
    first, second = gpus[0]["vgpus"]
    assert first == {
        "vgpu_id": 3251634177, "vm_name": "ml-train-01", "vm_uuid": "420a6f5e-91d2-7c1b-3e55-0b6a2d4c8f10",
        "vgpu_name": "GRID A100-4C", "vgpu_type": 473, "vgpu_uuid": "6c3b1f0a-0c42-11ef-9d2a-2a0b1c4d5e6f",
        "mdev_uuid": "9f1c2d3e-4b5a-6c7d-8e9f-0a1b2c3d4e5f", "guest_driver_version": "535.104.05",
        "license_status": "Licensed", "licensed": True, "license_expiry": "2025-11-03T14:05:09Z",
        "gpu_instance_id": None, "placement_id": 0, "pci_bus_id": "00000000:02:00.0", "fb_total_mib": 4096,
        "fb_used_mib": 612, "utilization_gpu_pct": 7}
    assert (second["vm_name"], second["vm_uuid"], second["guest_driver_version"]) == ("ml-train-02", None, None)
    assert (second["license_status"], second["licensed"], second["placement_id"]) == (None, None, 4)
    assert (second["mdev_uuid"], second["pci_bus_id"], second["fb_total_mib"]) == (None, None, 4096)


def test_vgpu_query_unlicensed_status_keeps_its_words():
    text = VGPU_QUERY.replace("Licensed (Expiry: 2025-11-3 14:5:9 GMT)", "Unlicensed (Restricted)")
    first = parse_vgpu_query(text)["gpus"][0]["vgpus"][0]
    assert (first["license_status"], first["licensed"], first["license_expiry"]) == (
        "Unlicensed (Restricted)", False, None)


@pytest.mark.parametrize("text, kind", [
    ("No supported devices in vGPU mode\n", "not_supported"),
    ("Not supported devices in vGPU mode\n", "not_supported"),
    (DRIVER_DOWN, "driver_unreachable"),
    ("GPU 00000000:3B:00.0\n    Product Name : NVIDIA A16\n", "unparsable"),
])
def test_vgpu_query_errors(text, kind):
    with pytest.raises(NvidiaSmiError) as raised:
        parse_vgpu_query(text)
    assert raised.value.kind == kind


def test_mig_compute_instances_with_placement():
    instances = parse_mig(read("mig_lci_a100_80gb_7x1g_driverunknown.txt"))["compute_instances"]
    assert [(i["gpu"], i["gpu_instance_id"], i["name"], i["profile_id"], i["instance_id"])
            for i in instances] == [(0, gid, "1g.10gb", 0, 0) for gid in range(7, 14)]
    assert set((i["placement_start"], i["placement_size"]) for i in instances) == {(0, 1)}


def test_mig_compute_instances_sharing_a_gpu_instance_without_placement_column():
    instances = parse_mig(read("mig_lci_1c_shared_gi_no_placement.txt"))["compute_instances"]
    assert [(i["gpu_instance_id"], i["name"], i["instance_id"], i["placement_start"]) for i in instances] == [
        (1, "1c.3g.20gb", 0, None), (1, "1c.3g.20gb", 1, None), (1, "1c.3g.20gb", 2, None)]


def test_mig_no_compute_instances():
    assert parse_mig("No compute instances found: Not Found\n") == {"compute_instances": []}


# --- topo -p2p --------------------------------------------------------------------------------------------------

def test_p2p_all_ok_on_an_nvswitch_node():
    p2p = parse_p2p(read("topo_p2p_r_8xH100_all_ok_TABS2SPACES.txt"))
    assert p2p["gpus"] == ["GPU%d" % n for n in range(8)]
    assert p2p["matrix"]["GPU3"]["GPU3"] == "X"
    assert len(p2p["pairs"]) == 28
    assert all(pair["ok"] for pair in p2p["pairs"])


def test_p2p_chipset_not_supported_without_legend():
    p2p = parse_p2p(read("topo_p2p_r_2xL4_cns_TRUNCATED_TABS2SPACES.txt"))
    assert p2p["pairs"] == [{"a": "GPU0", "b": "GPU1", "status": "CNS", "status_back": "CNS", "ok": False}]


def test_p2p_tabs_and_a_title_line():
    text = "P2P Connectivity Matrix\n\tGPU0\tGPU1\tGPU2\t\n GPU0\tX\tOK\tNS\t\n GPU1\tOK\tX\tNS\t\n GPU2\tNS\tNS\tX\t\n"
    pairs = dict(((p["a"], p["b"]), p["ok"]) for p in parse_p2p(text)["pairs"])
    assert pairs == {("GPU0", "GPU1"): True, ("GPU0", "GPU2"): False, ("GPU1", "GPU2"): False}


def test_p2p_error_text_is_an_error_kind():
    with pytest.raises(NvidiaSmiError) as err:
        parse_p2p(DRIVER_DOWN)
    assert err.value.kind == "driver_unreachable"
