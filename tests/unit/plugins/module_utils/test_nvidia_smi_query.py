# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``parse_query`` over every captured ``nvidia-smi -q`` / ``-q -x`` output, and the error texts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.gpuops.vgpu.tests.unit.plugins.nvidia_smi_fixtures import FIXTURES, read
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import (
    NvidiaSmiError,
    detect_error,
    parse_csv,
    parse_list,
    parse_query,
)


ZERO_UUID = "GPU-00000000-0000-0000-0000-000000000000"
H100 = "NVIDIA H100 80GB HBM3"
H100_8X = [  # bus id, uuid, temperature, power draw (values read from the file)
    ("00000000:19:00.0", "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa", 29, 67.74),
    ("00000000:3B:00.0", "GPU-47daa2ad-a218-6286-252b-af45f0dfaf00", 29, 69.52),
    ("00000000:4C:00.0", "GPU-167d8376-ee13-fca4-938a-a05167c43cdc", 30, 70.55),
    ("00000000:5D:00.0", "GPU-afe9f2ed-9dd0-572c-3cd8-b42b58b3bc99", 30, 71.37),
    ("00000000:9B:00.0", "GPU-2b6f61f9-8b00-3b57-d912-b62792120662", 31, 70.33),
    ("00000000:BB:00.0", "GPU-980ea11b-91dc-db7b-72ac-0685abc43658", 32, 70.21),
    ("00000000:CB:00.0", "GPU-4ef109e9-e925-4834-2b85-0771b4ef696c", 32, 71.05),
    ("00000000:DB:00.0", "GPU-b0fe4996-1f7c-91f6-0ccd-08ae3b7e23c5", 31, 72.27),
]
GPU_KEYS = ("pci_bus_id", "name", "uuid", "memory_total_mib", "temperature_gpu_c", "ecc_mode_current",
            "ecc_mode_pending", "mig_mode_current", "virtualization_mode", "host_vgpu_mode", "power_draw_w")


def gpu(*values):
    return dict(zip(GPU_KEYS, values))


# file: (format, driver, cuda, attached_gpus, [gpu(...)]); gpu() follows GPU_KEYS
QUERY_CASES = {
    "q_h100_80gb_hbm3_passthrough_ecc_on_driver590.txt": ("text", "590.48.01", "13.1", 1, [
        gpu("00000000:00:09.0", H100, ZERO_UUID, 81559, 41, True, True, False, "Pass-Through", None, 69.85)]),
    "q_h100_80gb_mig_enabled_driver590.txt": ("text", "590.48.01", "13.1", 1, [
        gpu("00000000:00:09.0", H100, ZERO_UUID, 81559, 42, True, True, True, "Pass-Through", None, 71.27)]),
    "q_rtx2080super_driver610_deprecated_version_annotations.txt": ("text", "610.57.04", "13.3", 1, [
        gpu("00000000:0C:00.0", "NVIDIA GeForce RTX 2080 SUPER", ZERO_UUID, 8192, 33, None, None, None, "None", None,
            38.89)]),
    "q_l40s_ada_passthrough_driver595.txt": ("text", "595.80", "13.2", 1, [
        gpu("00000000:01:00.0", "NVIDIA L40S", ZERO_UUID, 46068, 64, True, True, None, "Pass-Through", None, 183.28)]),
    "q_rtx2080super_windows_wddm_driver591.txt": ("text", "591.86", "13.1", 1, [
        gpu("00000000:0C:00.0", "NVIDIA GeForce RTX 2080 SUPER", ZERO_UUID, 8192, 40, None, None, None, "None", None,
            38.92)]),
    "q_8xH100_80gb_hbm3_baremetal_ecc_on_driver535.161.txt": ("text", "535.161.08", "12.2", 8, [
        gpu(bus, H100, uuid, 81559, temp, True, True, False, "None", None, watts) for bus, uuid, temp, watts in H100_8X]),
    "q_a10_passthrough_ecc_on_driver535.129.txt": ("text", "535.129.03", "12.2", 1, [
        gpu("00000000:07:00.0", "NVIDIA A10", "GPU-73d12ef7-f589-f867-4259-c7090ab44736", 23028, 33, True, True, None,
            "Pass-Through", None, 43.89)]),
    "q_titan_v_volta_driver560.txt": ("text", "560.35.03", "12.6", 1, [
        gpu("00000000:01:00.0", "NVIDIA TITAN V", "GPU-f4c353ff-b56c-c1de-bcb9-7dad861b589a", 12288, 44, None, None,
            None, "None", None, 29.02)]),
    "q_host_vgpu_sriov_a16_gpu0_ahv_driver470.txt": ("text", "470.129.04", None, 4, [
        gpu("00000000:13:00.0", "NVIDIA A16", "GPU-2039ae9a-7b32-009f-d7dc-b5acf0e7aaba", 15105, 48, True, True, None,
            "Host VGPU", "SR-IOV", 16.41)]),
    "q_vgpu_guest_grid_a100-4c_unlicensed_unrestricted_driver510_TRUNCATED.txt": ("text", "510.47.03", "11.6", 1, [
        gpu("00000000:02:01.0", "GRID A100-4C", "GPU-62f13b27-1eda-11b2-a8b5-0869ebe25264", None, None, None, None,
            False, "VGPU", None, None)]),
    "q_vgpu_guest_grid_a100-4c_licensed_expiry_driver510_TRUNCATED.txt": ("text", "510.47.03", "11.6", 1, [
        gpu("00000000:02:01.0", "GRID A100-4C", "GPU-62f13b27-1eda-11b2-a8b5-0869ebe25264", None, None, None, None,
            False, "VGPU", None, None)]),
    "xml_nodoctype_quadro_p400_pascal_driver418_REFORMATTED.xml": ("xml", "418.43", "10.1", 1, [
        gpu("00000000:43:00.0", "Quadro P400", "GPU-8f750be4-dfbc-23b9-b33f-da729a536494", 1998, 33, None, None, None,
            "None", None, None)]),
    "xml_v11_grid_p4-1q_vgpu_guest_licensed_windows_driver513.xml": ("xml", "513.46", "11.6", 1, [
        gpu("00000000:00:0B.0", "GRID P4-1Q", "GPU-1b1ea7c7-1c4b-ed49-1c72-26c65f2dd207", 1024, 0, None, None, None,
            "VGPU", None, None)]),
    "xml_v11_tesla_t4_passthrough_ecc_on_driver515_REFORMATTED.xml": ("xml", "515.105.01", "11.7", 1, [
        gpu("00000000:00:1E.0", "Tesla T4", "GPU-d37e67a5-91dd-3774-a5cb-99096249601a", 15360, 40, True, True, None,
            "Pass-Through", None, 26.78)]),
    "xml_v11_a10g_passthrough_ecc_on_driver515_REFORMATTED.xml": ("xml", "515.105.01", "11.7", 1, [
        gpu("00000000:00:1E.0", "NVIDIA A10G", "GPU-9a9a6c50-2a47-2f51-a902-b82c3b127e94", 23028, 17, True, True, None,
            "Pass-Through", None, 25.58)]),
    "xml_v12_a100_sxm4_80gb_mig_enabled_driver535_REFORMATTED.xml": ("xml", "535.54.03", "12.2", 4, [
        gpu("00000000:01:00.0", "NVIDIA A100-SXM4-80GB", "GPU-513536b6-7d19-9063-b049-1e69664bb298", 81920, 27, True,
            True, True, "None", None, 67.03)]),
    "xml_v12_quadro_p2000_pascal_driver525.xml": ("xml", "525.125.06", "12.0", 1, [
        gpu("00000000:17:00.0", "Quadro P2000", "GPU-396caaed-39ca-3199-2e68-717cdb786ec6", 5120, 34, None, None, None,
            "None", None, 4.61)]),
    "xml_v13_rtx4000_sff_ada_ecc_disabled_driver595.xml": ("xml", "595.84", "13.2", 1, [
        gpu("00000000:06:00.0", "NVIDIA RTX 4000 SFF Ada Generation", "GPU-37037c3f-65c8-ec4d-24a9-420204ad8026",
            20475, 38, False, False, None, "None", None, 8.81)]),
    "xml_v13_2x_rtx_a5000_ecc_disabled_driver590.xml": ("xml", "590.44.01", "13.1", 2, [
        gpu("00000000:81:00.0", "NVIDIA RTX A5000", "GPU-12345678-aaaa-bbbb-cccc-0123456789ab", 24564, 13, False,
            False, None, "None", None, 6.41),
        gpu("00000000:C1:00.0", "NVIDIA RTX A5000", "GPU-12345678-aaaa-bbbb-cccc-0123456789cd", 24564, 15, False,
            False, None, "None", None, 13.6)]),
}

LICENSE_CASES = {  # file: (license_product, license_status, licensed, license_expiry)
    "q_vgpu_guest_grid_a100-4c_licensed_expiry_driver510_TRUNCATED.txt": (
        "NVIDIA Virtual Compute Server", "Licensed", True, "2022-05-27T00:08:28Z"),
    "q_vgpu_guest_grid_a100-4c_unlicensed_unrestricted_driver510_TRUNCATED.txt": (
        "NVIDIA Virtual Compute Server", "Unlicensed (Unrestricted)", False, None),
    "xml_v11_grid_p4-1q_vgpu_guest_licensed_windows_driver513.xml": (
        "NVIDIA RTX Virtual Workstation", "Licensed", True, "2022-09-22T06:57:30Z"),
}


@pytest.mark.parametrize("name", sorted(QUERY_CASES))
def test_query_fixture(name):
    fmt, driver, cuda, attached, gpus = QUERY_CASES[name]
    facts = parse_query(read(name))
    assert (facts["format"], facts["driver_version"], facts["cuda_version"]) == (fmt, driver, cuda)
    assert facts["attached_gpus"] == attached
    assert [dict((key, g[key]) for key in GPU_KEYS) for g in facts["gpus"]] == gpus
    assert [g["index"] for g in facts["gpus"]] == list(range(len(gpus)))
    product, status, licensed, expiry = LICENSE_CASES.get(name, (None, None, None, None))
    for g in facts["gpus"]:
        assert (g["license_product"], g["license_status"], g["licensed"], g["license_expiry"]) == (
            product, status, licensed, expiry)


def test_every_query_fixture_is_covered():
    on_disk = set(name for name in os.listdir(FIXTURES) if name.startswith(("q_", "xml_")))
    assert on_disk == set(QUERY_CASES)


def test_driver_610_annotations_are_dropped_and_new_keys_exposed():
    facts = parse_query(read("q_rtx2080super_driver610_deprecated_version_annotations.txt"))
    assert (facts["driver_version"], facts["kmd_version"]) == ("610.57.04", "610.57.04")
    assert (facts["cuda_version"], facts["cuda_umd_version"]) == ("13.3", "13.3")
    assert facts["gpus"][0]["power_limit_w"] == 250.0  # nested under "GPU Ceiling Power Limit" in 610


def test_before_610_kmd_and_umd_versions_are_none():
    facts = parse_query(read("q_titan_v_volta_driver560.txt"))
    assert (facts["kmd_version"], facts["cuda_umd_version"]) == (None, None)


def test_old_key_names_of_a_vgpu_host():
    # 470 prints "Ecc Mode", "Clocks Throttle Reasons", "Power Readings" with "Power Limit" and "Enforced Power Limit".
    facts = parse_query(read("q_host_vgpu_sriov_a16_gpu0_ahv_driver470.txt"))
    host = facts["gpus"][0]
    assert (host["ecc_mode_current"], host["power_limit_w"], host["persistence_mode"]) == (True, 62.5, True)
    assert len(facts["gpus"]) == 1 and facts["attached_gpus"] == 4  # queried with -i 0


def test_average_power_draw_is_preferred_and_instant_is_the_fallback():
    l40s = parse_query(read("q_l40s_ada_passthrough_driver595.txt"))["gpus"][0]
    assert l40s["power_draw_w"] == 183.28  # Average; Instantaneous is 119.88
    turing = parse_query(read("q_rtx2080super_driver610_deprecated_version_annotations.txt"))["gpus"][0]
    assert turing["power_draw_w"] == 38.89  # Average is N/A


def test_mig_devices_text_and_xml():
    text = parse_query(read("q_h100_80gb_mig_enabled_driver590.txt"))["gpus"][0]
    assert [(d["index"], d["gpu_instance_id"], d["multiprocessor_count"], d["memory_total_mib"])
            for d in text["mig_devices"]] == [(0, 2, 60, 40448), (1, 3, 32, 20096), (2, 9, 16, 9984), (3, 10, 16, 9984)]
    assert text["mig_mode_pending"] is True
    assert text["utilization_gpu_pct"] is None  # N/A while MIG is on
    xml = parse_query(read("xml_v12_a100_sxm4_80gb_mig_enabled_driver535_REFORMATTED.xml"))["gpus"][0]
    assert [(d["index"], d["gpu_instance_id"], d["compute_instance_id"], d["memory_total_mib"])
            for d in xml["mig_devices"]] == [(0, 3, 0, 19968), (1, 4, 0, 19968), (2, 5, 0, 19968), (3, 6, 0, 19968)]


def test_processes_text_and_xml():
    titan = parse_query(read("q_titan_v_volta_driver560.txt"))["gpus"][0]
    assert [(p["pid"], p["type"], p["name"], p["used_memory_mib"]) for p in titan["processes"]] == [
        (100607, "G", "/usr/lib/xorg/Xorg", 142), (100838, "G", "/usr/bin/gnome-shell", 33),
        (101815, "G", "/opt/test", 111)]
    windows = parse_query(read("q_rtx2080super_windows_wddm_driver591.txt"))["gpus"][0]
    assert len(windows["processes"]) == 10
    assert windows["processes"][0] == {"pid": 2056, "type": "C+G", "name": "C:\\Windows\\System32\\dwm.exe",
                                       "used_memory_mib": None, "gpu_instance_id": None, "compute_instance_id": None}
    assert windows["driver_model_current"] == "WDDM"
    a10g = parse_query(read("xml_v11_a10g_passthrough_ecc_on_driver515_REFORMATTED.xml"))["gpus"][0]
    assert [(p["pid"], p["name"], p["used_memory_mib"]) for p in a10g["processes"]] == [(725, "/usr/lib/xorg/Xorg", 22)]


def test_same_shape_for_every_fixture():
    shapes = set()
    for name in QUERY_CASES:
        facts = parse_query(read(name))
        shapes.add(tuple(sorted(facts)))
        for g in facts["gpus"]:
            shapes.add(tuple(sorted(g)))
    top = [shape for shape in shapes if "driver_version" in shape]
    per_gpu = [shape for shape in shapes if "pci_bus_id" in shape]
    assert len(top) == 1 and len(per_gpu) == 1 and len(shapes) == 2


TYPES = {
    "memory_total_mib": int, "temperature_gpu_c": int, "power_draw_w": float, "power_limit_w": float,
    "ecc_mode_current": bool, "ecc_mode_pending": bool, "mig_mode_current": bool, "licensed": bool,
    "pci_bus_id": str, "name": str, "uuid": str, "virtualization_mode": str, "license_expiry": str,
}


def _is(value, kind):
    return isinstance(value, kind) and (kind is bool or not isinstance(value, bool))


def test_value_types_agree_between_xml_and_text():
    for name in QUERY_CASES:
        for g in parse_query(read(name))["gpus"]:
            for key, kind in TYPES.items():
                assert g[key] is None or _is(g[key], kind), (name, key, g[key])


# The same vGPU guest written in both forms, laid out as the P4 guest's XML and the A100-4C guest's -q text.
SAME_GUEST_XML = """<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
\t<timestamp>Tue Mar 18 09:12:01 2025</timestamp>
\t<driver_version>525.105.17</driver_version>
\t<cuda_version>12.0</cuda_version>
\t<attached_gpus>1</attached_gpus>
\t<gpu id="00000000:02:00.0">
\t\t<product_name>GRID P40-8Q</product_name>
\t\t<mig_mode>
\t\t\t<current_mig>N/A</current_mig>
\t\t\t<pending_mig>N/A</pending_mig>
\t\t</mig_mode>
\t\t<uuid>GPU-5a1e0b2c-0000-4000-8000-000000000001</uuid>
\t\t<gpu_virtualization_mode>
\t\t\t<virtualization_mode>VGPU</virtualization_mode>
\t\t\t<host_vgpu_mode>N/A</host_vgpu_mode>
\t\t</gpu_virtualization_mode>
\t\t<vgpu_software_licensed_product>
\t\t\t<licensed_product_name>NVIDIA RTX Virtual Workstation</licensed_product_name>
\t\t\t<license_status>Licensed (Expiry: 2025-3-19 7:29:4 GMT)</license_status>
\t\t</vgpu_software_licensed_product>
\t\t<pci>
\t\t\t<pci_bus_id>00000000:02:00.0</pci_bus_id>
\t\t</pci>
\t\t<fb_memory_usage>
\t\t\t<total>8192 MiB</total>
\t\t</fb_memory_usage>
\t\t<ecc_mode>
\t\t\t<current_ecc>N/A</current_ecc>
\t\t\t<pending_ecc>N/A</pending_ecc>
\t\t</ecc_mode>
\t\t<temperature>
\t\t\t<gpu_temp>N/A</gpu_temp>
\t\t</temperature>
\t\t<power_readings>
\t\t\t<power_draw>N/A</power_draw>
\t\t</power_readings>
\t\t<processes>
\t\t</processes>
\t</gpu>
</nvidia_smi_log>
"""

SAME_GUEST_TEXT = """
==============NVSMI LOG==============

Timestamp                                 : Tue Mar 18 09:12:01 2025
Driver Version                            : 525.105.17
CUDA Version                              : 12.0

Attached GPUs                             : 1
GPU 00000000:02:00.0
    Product Name                          : GRID P40-8Q
    MIG Mode
        Current                           : N/A
        Pending                           : N/A
    GPU UUID                              : GPU-5a1e0b2c-0000-4000-8000-000000000001
    GPU Virtualization Mode
        Virtualization Mode               : VGPU
        Host VGPU Mode                    : N/A
    vGPU Software Licensed Product
        Product Name                      : NVIDIA RTX Virtual Workstation
        License Status                    : Licensed (Expiry: 2025-3-19 7:29:4 GMT)
    PCI
        Bus Id                            : 00000000:02:00.0
    FB Memory Usage
        Total                             : 8192 MiB
    Ecc Mode
        Current                           : N/A
        Pending                           : N/A
    Temperature
        GPU Current Temp                  : N/A
    Power Readings
        Power Draw                        : N/A
    Processes                             : None

"""


def test_xml_and_text_of_the_same_guest_agree():
    xml, text = parse_query(SAME_GUEST_XML), parse_query(SAME_GUEST_TEXT)
    assert (xml.pop("format"), text.pop("format")) == ("xml", "text")
    assert xml == text
    guest = xml["gpus"][0]
    assert (guest["license_status"], guest["licensed"], guest["license_expiry"]) == (
        "Licensed", True, "2025-03-19T07:29:04Z")
    assert (guest["temperature_gpu_c"], guest["power_draw_w"], guest["ecc_mode_current"]) == (None, None, None)


def test_query_agrees_with_csv_and_list_from_the_same_capture():
    # The H100 MIG capture holds -q, --query-gpu csv and -L taken on the same machine.
    query = parse_query(read("q_h100_80gb_mig_enabled_driver590.txt"))
    row = parse_csv(read("csv_query_gpu_allfields_h100_mig_driver590.csv"))["rows"][0]
    listed = parse_list(read("L_list_gpus_h100_mig_devices_driver590.txt"))["gpus"]
    g = query["gpus"][0]
    assert (row["driver_version"], row["name"], row["uuid"], row["pci.bus_id"]) == (
        query["driver_version"], g["name"], g["uuid"], g["pci_bus_id"])
    assert (row["memory.total"], int(row["temperature.gpu"])) == (g["memory_total_mib"], g["temperature_gpu_c"])
    assert (row["ecc.mode.current"] == "Enabled", row["mig.mode.current"] == "Enabled") == (
        g["ecc_mode_current"], g["mig_mode_current"])
    assert (listed[0]["uuid"], len(listed[0]["mig_devices"])) == (g["uuid"], len(g["mig_devices"]))


def test_warning_lines_before_the_log_are_kept():
    text = "WARNING: infoROM is corrupted at gpu 0000:07:00.0\n" + read("q_a10_passthrough_ecc_on_driver535.129.txt")
    facts = parse_query(text)
    assert facts["warnings"] == ["WARNING: infoROM is corrupted at gpu 0000:07:00.0"]
    assert facts["gpus"][0]["name"] == "NVIDIA A10"


# nvidia-smi's own words, as it prints them.
ERROR_TEXTS = [
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
     "NVIDIA driver is installed and running.\n\n", 9, "driver_unreachable"),
    ("No devices were found\n", 6, "no_devices"),
    ("Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124\n", 18,
     "driver_library_mismatch"),
    ("Failed to initialize NVML: Driver/library version mismatch\n", 18, "driver_library_mismatch"),
    ("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display "
     "Driver is properly installed and present in your system.\nPlease also try adding directory that contains "
     "libnvidia-ml.so to your system PATH.\n", 12, "not_installed"),
    ("Failed to initialize NVML: Unknown Error\n", 255, "driver_unreachable"),
    ("Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system to recover "
     "this GPU\n", 15, "gpu_lost"),
    ("No supported devices in vGPU mode\n", 6, "not_supported"),
    ("Not supported devices in vGPU mode\n", 6, "not_supported"),
    ("No MIG-enabled devices found.\n", 6, "not_supported"),
    ("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", 2, "not_supported"),
    ("ERROR: Option -m is missing its value\n", 255, "not_supported"),
    ("/bin/sh: 1: nvidia-smi: command not found\n", 127, "not_installed"),
]


@pytest.mark.parametrize("text, rc, kind", ERROR_TEXTS)
def test_error_texts(text, rc, kind):
    found = detect_error(text, rc)
    assert found.kind == kind and found.rc == rc
    assert found.message == " ".join(line.strip() for line in text.splitlines() if line.strip())
    assert found.hint
    with pytest.raises(NvidiaSmiError) as raised:
        parse_query(text)
    assert raised.value.kind == kind and raised.value.message == found.message


def test_unknown_exit_codes_and_silence():
    assert detect_error("", 0) is None
    assert detect_error("Fan Speed : Not Supported", None) is None
    assert detect_error("", 9).kind == "driver_unreachable"
    assert detect_error("something new went wrong", 42).kind == "command_failed"


@pytest.mark.parametrize("text", ["", "hello", "<nvidia_smi_log><gpu id='x'>", "Timestamp : now\n"])
def test_unparsable_query_output(text):
    with pytest.raises(NvidiaSmiError) as raised:
        parse_query(text)
    assert raised.value.kind == "unparsable"


def test_slowdown_and_shutdown_temperatures_text_and_xml():
    titan = parse_query(read("q_titan_v_volta_driver560.txt"))["gpus"][0]
    a10g = parse_query(read("xml_v11_a10g_passthrough_ecc_on_driver515_REFORMATTED.xml"))["gpus"][0]
    guest = parse_query(read("xml_v11_grid_p4-1q_vgpu_guest_licensed_windows_driver513.xml"))["gpus"][0]
    assert (titan["temperature_slowdown_c"], titan["temperature_shutdown_c"]) == (97, 100)
    assert (a10g["temperature_slowdown_c"], a10g["temperature_shutdown_c"]) == (95, 98)
    assert guest["temperature_slowdown_c"] is None  # N/A inside a vGPU guest
