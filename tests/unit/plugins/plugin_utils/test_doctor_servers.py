# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's bare-metal GPU servers: driver, fabric, GPUs and NVLink, DCGM, judged from one gpu_guest_info read
of a fake server whose nvidia-smi answers with the recorded outputs (tests/fixtures/nvidia-smi: the 8x H100
bare-metal -q, the 2x H100 PCIe topo -m and nvlink -s, the H100 SXM nvlink -s) and DCGM's recorded diag output
(tests/fixtures/dcgm)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.guest.gpu_state import Guest, GuestFiles, read_gpu_state
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor import Findings, run_checks, table
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_facts import collect
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_servers import FIX, PROBES, server_checks, \
    server_facts
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._fleet_report import build, render_html
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.guest.guest_trees import (
    DRIVER_DOWN,
    FakeGuest,
    dpkg_stanza,
)
from ansible_collections.gpuops.vgpu.tests.unit.plugins.nvidia_smi_fixtures import read as read_fixture

HGX_Q = read_fixture("q_8xH100_80gb_hbm3_baremetal_ecc_on_driver535.161.txt")
PCIE_TOPO = read_fixture("topo_m_2xH100_pcie_NV12_driver555_TABS2SPACES.txt")
PCIE_NVLINK_INACTIVE = read_fixture("nvlink_s_2xH100_pcie_inactive_links_driver555.txt")
SXM_NVLINK = read_fixture("nvlink_s_h100_18links_driver590.txt")
IN_PROGRESS = read_fixture("fabric_section_of_q_h100_sxm_vm_in_progress_driver570_TRUNCATED.txt")
COMPLETED_SECTION = ("    Fabric\n        State                             : Completed\n"
                     "        Status                            : Success\n")
DCGM = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "fixtures", "dcgm"))
# The data center driver's nvidia-smi answers -q -x; the stand-in-style refusal sends the read to -q, the recording.
NO_XML = (2, "", "nvidia-smi: -q -x not recorded\n")
MISMATCH = (18, "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.161\n", "")
HGX_BUSES = ["19", "3b", "4c", "5d", "9b", "bb", "cb", "db"]
PROPRIETARY = (0, "filename:       /lib/modules/6.1.0-18-amd64/updates/dkms/nvidia.ko\nversion:        535.161.08\n"
                  "license:        NVIDIA\n", "")
OPEN = (0, "filename:       /lib/modules/6.1.0-18-amd64/updates/dkms/nvidia.ko\nversion:        535.161.08\n"
           "license:        Dual MIT/GPL\n", "")


def dcgm_output(name):
    with open(os.path.join(DCGM, name)) as handle:
        return handle.read()


def lspci(buses, model="GH100 [H100 SXM5 80GB] [10de:2330]", driver="nvidia"):
    return "".join("%s:00.0 3D controller [0302]: NVIDIA Corporation %s (rev a1)\n%s" % (
        bus, model, "\tKernel driver in use: %s\n" % driver if driver else "") for bus in buses)


def topology(gpus, links):
    """``topo -m`` of ``gpus`` GPUs each linked to every other by ``links`` NVLinks, in the layout of the 2x H100
    recording (its header, rows and legend)."""
    names = ["GPU%d" % index for index in range(gpus)]
    lines = ["        " + "".join("%-8s" % name for name in names) + "CPU Affinity    NUMA Affinity   GPU NUMA ID"]
    for row in names:
        cells = "".join("%-8s" % (" X" if row == col else "NV%d" % links) for col in names)
        lines.append("%-8s%s0-55,112-167    0               N/A" % (row, cells))
    return "\n".join(lines) + "\n\n" + PCIE_TOPO.split("\n\n", 1)[1]


def with_fabric(section, gpus):
    parts = HGX_Q.split(COMPLETED_SECTION)
    assert len(parts) == 9
    return "".join(part + (section if index < gpus else COMPLETED_SECTION)
                   for index, part in enumerate(parts[:-1])) + parts[-1]


@pytest.fixture
def hgx(tmp_path):
    """hgx-01 converged: cuda-drivers-535 at 535.161.08 (proprietary modules) loaded, nvidia-smi answering with the
    8x H100 bare-metal recording, every pair NV18 through the NVSwitches."""
    fake = FakeGuest(tmp_path / "hgx").debian(packages=[("cuda-drivers-535", "535.161.08-1"),
                                                        ("nvidia-driver-535", "535.161.08-1")])
    fake.program("/usr/bin/lspci", {"-nnk -d 10de:": (0, lspci(HGX_BUSES), "")})
    fake.program("/usr/bin/nvidia-smi", {"-q -x": NO_XML, "-q": (0, HGX_Q, ""), "topo -m": (0, topology(8, 18), ""),
                                         "nvlink -s": (0, SXM_NVLINK, ""),
                                         "topo -p2p rw": (0, read_fixture("topo_p2p_r_8xH100_all_ok_TABS2SPACES.txt"), "")})
    fake.file("/proc/modules", "nvidia 56393728 0 - Live 0x0000000000000000 (POE)\n")
    fake.file("/sys/module/nvidia/version", "535.161.08\n")
    fake.answers["modinfo nvidia"] = PROPRIETARY
    return fake


def read(fake):
    return {"changed": False, "gpu_guest": read_gpu_state(Guest(GuestFiles(fake.root), fake.run, path_dirs=[]),
                                                          PROBES)}


def checks(fake, dcgm=None, name="hgx-01.lab.local"):
    out = Findings()
    server_checks(out, [server_facts(name, read(fake), dcgm, "doctor_server_dcgm")])
    return dict((f["check"], f) for f in out.items)


def test_the_converged_hgx_board_passes_with_its_driver_fabric_nvlink_and_dcgm(hgx):
    found = checks(hgx, {"stdout": dcgm_output("diag_r2_text_8xA100_sxm4_80gb_pass_dcgm3.3.3.txt"), "level": 2})
    assert [f["status"] for f in found.values()] == ["PASS"] * 4, found
    assert found["server_driver"]["message"] == (
        "Driver 535.161.08, R535, proprietary kernel modules, CUDA 12.2, from R535 535.161.08 (package "
        "cuda-drivers-535, nvidia-driver-535).")
    assert found["fabric"]["message"] == "The NVSwitch fabric is ready: 8 GPU(s) Completed, Success."
    assert found["gpus_nvlink"]["message"] == (
        "8 GPU(s) (NVIDIA H100 80GB HBM3). NVLink: 28 GPU pair(s) (every pair of 8 GPUs), NV18, every link active.")
    assert found["dcgm"]["message"].startswith("DCGM passed (dcgmi diag output): DCGM 3.3.3 level 2: ")
    # One read: the query, the topology, NVLink, peer-to-peer and the PCI bus, no other nvidia-smi command.
    assert [call for call in hgx.calls if call.startswith("nvidia-smi")] == [
        "nvidia-smi -q -x", "nvidia-smi -q", "nvidia-smi topo -m", "nvidia-smi nvlink -s", "nvidia-smi topo -p2p rw"]


def test_the_open_kernel_modules_are_named_from_modinfo(hgx):
    hgx.answers["modinfo nvidia"] = OPEN
    assert "R535, open kernel modules" in checks(hgx)["server_driver"]["message"]


def test_a_server_without_a_driver_fails_with_the_install_named_and_the_rest_waits(tmp_path):
    fake = FakeGuest(tmp_path / "pcie").debian()
    bus = lspci(["3b", "5e"], "GH100 [H100 PCIe] [10de:2331]", None)
    fake.program("/usr/bin/lspci", {"-nnk -d 10de:": (0, bus, "")})
    found = checks(fake, name="pcie-01.lab.local")
    driver = found["server_driver"]
    assert driver["status"] == "FAIL" and driver["remediation"] == FIX["driver"]
    assert driver["message"].startswith("No NVIDIA data center driver: nvidia-smi fails (not_installed)")
    assert "gpuops.vgpu.nvidia_driver" in driver["remediation"] and "playbooks/servers.yml" in driver["remediation"]
    assert found["fabric"]["status"] == found["gpus_nvlink"]["status"] == found["dcgm"]["status"] == "SKIP"
    assert "(2 GPU(s) on the PCI bus)" in found["gpus_nvlink"]["message"]


def test_a_grid_guest_driver_on_a_server_fails_naming_the_data_center_driver(hgx):
    with open(os.path.join(hgx.root, "var", "lib", "dpkg", "status")) as handle:
        status = handle.read()
    hgx.file("/var/lib/dpkg/status", status + dpkg_stanza("nvidia-linux-grid-535", "535.161.08") + "\n")
    driver = checks(hgx)["server_driver"]
    assert driver["status"] == "FAIL" and driver["remediation"] == FIX["grid"]
    assert driver["message"].startswith("nvidia-smi answers from a GRID guest driver (535.161.08)")


def test_an_installed_driver_waiting_for_its_reboot_names_the_reboot(hgx):
    hgx.answers["nvidia-smi -q -x"] = MISMATCH
    hgx.file("/sys/module/nvidia/version", "530.30.02\n")
    driver = checks(hgx)["server_driver"]
    assert driver["status"] == "FAIL" and driver["remediation"] == FIX["driver_library_mismatch"]
    assert "Driver 535.161.08 is installed, but the kernel module that runs is another (530.30.02)" in \
        driver["message"]


@pytest.mark.parametrize("package,model,words", [
    # Volta cannot use the open modules; Blackwell runs only them; R510 predates Hopper.
    (("nvidia-open-580", "580.65.06-1"), "GV100GL [Tesla V100 SXM2 32GB] [10de:1db5]",
     "cannot use the open kernel modules"),
    (("cuda-drivers-580", "580.65.06-1"), "GB100 [B200] [10de:2901]", "runs only the open kernel modules"),
    (("cuda-drivers-510", "510.47.03-1"), "GH100 [H100 SXM5 80GB] [10de:2330]", "510"),
])
def test_a_driver_the_gpus_cannot_run_is_named_with_the_rule(tmp_path, package, model, words):
    fake = FakeGuest(tmp_path / "server").debian(packages=[package])
    fake.program("/usr/bin/lspci", {"-nnk -d 10de:": (0, lspci(["3b", "5e"], model), "")})
    fake.program("/usr/bin/nvidia-smi", {"-q -x": (6, "No devices were found\n", "")})
    driver = checks(fake)["server_driver"]
    assert driver["status"] == "FAIL" and driver["remediation"] == FIX["gpu_rule"], driver
    assert "which the GPUs cannot run: " in driver["message"] and words in driver["message"], driver["message"]
    assert "nvidia-smi fails (no_devices)" in driver["message"], driver["message"]


def test_a_driver_the_gpus_run_is_not_blamed_for_another_failure(hgx):
    hgx.answers["nvidia-smi -q -x"] = (6, "No devices were found\n", "")
    hgx.answers["nvidia-smi -q"] = (6, "No devices were found\n", "")
    driver = checks(hgx)["server_driver"]
    assert driver["status"] == "FAIL" and "which the GPUs cannot run" not in driver["message"], driver


def test_nouveau_holding_the_gpus_names_the_blacklist_and_reboot(tmp_path):
    fake = FakeGuest(tmp_path / "nouveau").debian(packages=[("cuda-drivers-535", "535.161.08-1")])
    fake.program("/usr/bin/lspci", {"-nnk -d 10de:": (0, lspci(HGX_BUSES, driver="nouveau"), "")})
    fake.program("/usr/bin/nvidia-smi", {"-q -x": DRIVER_DOWN})
    driver = checks(fake)["server_driver"]
    assert driver["status"] == "FAIL" and driver["remediation"] == FIX["nouveau"]


def test_a_fabric_still_in_progress_fails_naming_the_gpus_and_fabric_manager(hgx):
    hgx.answers["nvidia-smi -q"] = (0, with_fabric(IN_PROGRESS, 2), "")
    fabric = checks(hgx)["fabric"]
    assert fabric["status"] == "FAIL" and fabric["remediation"] == FIX["fabric"]
    assert fabric["message"].startswith("The NVSwitch fabric is not ready: waiting on 00000000:19:00.0 (In Progress), "
                                        "00000000:3B:00.0 (In Progress).")
    assert "gpuops.vgpu.fabric_manager" in fabric["remediation"]


def test_gpus_without_a_fabric_need_no_fabric_manager(hgx):
    hgx.answers["nvidia-smi -q"] = (0, with_fabric("", 8), "")
    fabric = checks(hgx)["fabric"]
    assert fabric["status"] == "PASS" and fabric["message"].endswith("No Fabric Manager needed.")


def test_a_gpu_on_the_bus_that_nvidia_smi_does_not_show_fails(hgx):
    hgx.answers["lspci -nnk -d 10de:"] = (0, lspci(HGX_BUSES + ["ec"]), "")
    found = checks(hgx)["gpus_nvlink"]
    assert found["status"] == "FAIL" and found["remediation"] == FIX["gpu_lost"]
    assert found["message"].startswith("8 GPU(s) (NVIDIA H100 80GB HBM3) answer in nvidia-smi, but 9 are on the PCI bus")


def test_inactive_nvlink_links_warn_with_the_links_named(hgx):
    hgx.answers["nvidia-smi topo -m"] = (0, PCIE_TOPO, "")
    hgx.answers["nvidia-smi nvlink -s"] = (0, PCIE_NVLINK_INACTIVE, "")
    found = checks(hgx)["gpus_nvlink"]
    assert found["status"] == "WARN" and found["remediation"] == FIX["nvlink"]
    assert "NVLink links inactive: GPU0 link(s) 4, 5" in found["message"]
    assert "NVLink: 1 GPU pair(s), NV12." in found["message"]


def test_a_topology_that_does_not_answer_is_said_not_read(hgx):
    hgx.answers["nvidia-smi topo -m"] = (3, "", "Failed to run topo\n")
    found = checks(hgx)["gpus_nvlink"]
    assert found["status"] == "PASS" and "NVLink not read: topology:" in found["message"]


def test_a_failed_dcgm_verdict_fails_naming_the_gpus_and_the_fix(hgx):
    found = checks(hgx, {"stdout": dcgm_output("diag_r1_text_8xH200_persistence_fail_dcgm3.1.8.txt"), "level": 1})
    dcgm = found["dcgm"]
    assert dcgm["status"] == "FAIL" and dcgm["remediation"] == FIX["dcgm_failed"]
    # DCGM's GPU ids, with the bus ids the server's nvidia-smi gives them.
    assert "DCGM 3.1.8 level 1: GPU 0 (00000000:19:00.0) failed Persistence Mode: Persistence mode for GPU 0 is " \
        "currently disabled" in dcgm["message"]
    assert "GPU 5 (00000000:BB:00.0) failed Persistence Mode" in dcgm["message"]


def test_gpu_validates_verdict_of_this_run_is_taken_as_it_is(hgx):
    verdict = {"checks": {"dcgm": {"status": "failed", "level": 1, "message": "dcgmi is not installed: install DCGM"}}}
    dcgm = checks(hgx, verdict)["dcgm"]
    assert dcgm["status"] == "FAIL" and dcgm["remediation"] == FIX["dcgm_missing"]
    assert checks(hgx, {"checks": {"dcgm": {"status": "skipped", "message": "not checked"}}})["dcgm"]["status"] == "SKIP"
    assert checks(hgx)["dcgm"]["remediation"] == FIX["dcgm_not_run"]


def test_an_unreachable_server_warns_and_nothing_else_is_checked():
    out = Findings()
    server_checks(out, [server_facts("hgx-01.lab.local", {"unreachable": True, "msg": "ssh: connect refused"})])
    [finding] = out.items
    assert (finding["status"], finding["check"]) == ("WARN", "server_driver")
    assert finding["message"] == "Server not read: unreachable: ssh: connect refused"


def test_the_doctor_shows_servers_in_its_table_and_facts_and_the_fleet_report_draws_them(hgx, tmp_path):
    bare = FakeGuest(tmp_path / "pcie").debian()
    raw = {"vcenter": "vc", "gpu_info": {"hosts": [], "vms": []}, "servers": ["hgx-01.lab.local", "pcie-01.lab.local"],
           "server_reads": {"results": [dict(read(hgx), item="hgx-01.lab.local"),
                                        dict(read(bare), item="pcie-01.lab.local")]},
           "server_dcgm": {"hgx-01.lab.local": {"source": "gpu_validate in this run", "verdict": {
               "stdout": dcgm_output("diag_r2_text_8xA100_sxm4_80gb_pass_dcgm3.3.3.txt"), "level": 2}}}}
    facts = collect(raw)
    assert [s["name"] for s in facts["servers"]] == ["hgx-01.lab.local", "pcie-01.lab.local"]
    assert facts["servers"][0]["installed"]["version"] == "535.161.08"
    findings = run_checks(facts, {"now": "2026-01-01T00:00:00Z"})
    server = [f for f in findings if f["layer"] == "server"]
    assert [(f["object"], f["check"], f["status"]) for f in server] == [
        ("hgx-01.lab.local", "server_driver", "PASS"), ("hgx-01.lab.local", "fabric", "PASS"),
        ("hgx-01.lab.local", "gpus_nvlink", "PASS"), ("hgx-01.lab.local", "dcgm", "PASS"),
        ("pcie-01.lab.local", "server_driver", "FAIL"), ("pcie-01.lab.local", "fabric", "SKIP"),
        ("pcie-01.lab.local", "gpus_nvlink", "SKIP"), ("pcie-01.lab.local", "dcgm", "SKIP")]
    lines = table(findings)
    assert "== server: 4 PASS, 1 FAIL, 3 SKIP ==" in lines
    assert any(line.strip() == "-> " + FIX["driver"] for line in lines)

    data = build({"hosts": []}, {"facts": facts, "findings": findings})
    rows = dict((s["name"], s) for s in data["servers"])
    board = rows["hgx-01.lab.local"]
    assert (board["driver"], board["kernel_module"]) == ("535.161.08", "proprietary")
    assert rows["hgx-01.lab.local"]["status"] == "PASS" and rows["hgx-01.lab.local"]["nvlink_links"] == [18]
    assert rows["pcie-01.lab.local"]["status"] == "FAIL" and rows["pcie-01.lab.local"]["driver"] is None
    assert data["summary"]["servers"] == 2 and data["summary"]["server_gpus"] == 8
    page = render_html(data)
    assert '<tr data-server="hgx-01.lab.local">' in page and '<tr data-server="pcie-01.lab.local">' in page
    assert "<h2>GPU servers</h2>" in page and "gpuops.vgpu.nvidia_driver" in page


def test_no_servers_no_server_findings_and_no_section():
    facts = collect({"vcenter": "vc", "gpu_info": {"hosts": [], "vms": []}})
    findings = run_checks(facts, {"now": "2026-01-01T00:00:00Z"})
    assert facts["servers"] == [] and not [f for f in findings if f["layer"] == "server"]
    assert "GPU servers" not in render_html(build({"hosts": []}, {"facts": facts, "findings": findings}))
