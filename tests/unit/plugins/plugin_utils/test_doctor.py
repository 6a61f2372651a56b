# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's checks over registered results shaped like the modules' own, healthy and broken layer by layer."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _doctor
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _doctor_facts
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import HINTS, parse_query
from ansible_collections.gpuops.vgpu.tests.unit.plugins.nvidia_smi_fixtures import read
from ansible_collections.gpuops.vgpu.tests.unit.plugins.plugin_utils.doctor_data import (
    DAEMON,
    DRIVER,
    HOSTS,
    NOW,
    healthy,
)


def check(raw, **options):
    options.setdefault("now", NOW)
    return _doctor.run_checks(_doctor_facts.collect(raw), options)


def find(findings, check_name, obj=None):
    found = [f for f in findings if f["check"] == check_name and (obj is None or f["object"] == obj)]
    assert found, "no %s finding for %s in %s" % (check_name, obj, [(f["check"], f["object"]) for f in findings])
    return found[0] if obj is not None or len(found) == 1 else found


def statuses(findings):
    return dict(((f["check"], f["object"]), f["status"]) for f in findings)


def test_a_healthy_datacenter_passes_everything_but_what_the_bios_does_not_expose():
    findings = check(healthy())
    not_passing = [(f["check"], f["object"], f["status"]) for f in findings if f["status"] != "PASS"]
    assert not_passing == [("bios_pcie_aer", name, "SKIP") for name in HOSTS]
    assert [f["layer"] for f in findings] == sorted((f["layer"] for f in findings), key=_doctor.LAYERS.index)
    checks = set(f["check"] for f in findings)
    assert checks == {
        "bmc", "bios_cpu_virtualization", "bios_iommu", "bios_sriov", "bios_mmio_above_4g", "bios_pcie_aer",
        "inlet_temperature", "connection", "host_driver", "shared_direct", "one_profile_size", "gpu_temperature",
        "running_vgpus", "vgpu_hotmigrate", "drs", "dpm", "gpus_alike", "host_drivers_alike", "cluster_image", "ecc_alike",
        "capacity", "vgpu_profile", "memory_reserved", "placement", "guest_driver", "driver_compat", "cuda",
        "license"}
    assert find(findings, "capacity", "gpu-cluster grid_p40-8q")["message"].startswith("8 free slot(s)")
    assert find(findings, "placement", "gpu-vm-01")["message"] == \
        "Runs on esxi-01.lab.local GPU 0000:3b:00.0 (grid_p40-8q)."


def test_every_non_pass_has_a_remediation_and_pass_has_none():
    raw = healthy()
    raw["gpu_info"]["hosts"][1]["gpus"][0]["graphics_type"] = "basic"
    raw["settings"]["settings"]["before"]["vgpu.hotmigrate.enabled"] = False
    del raw["host_nvidia_smi"]
    for finding in check(raw):
        assert finding["status"] in _doctor.STATUSES
        assert (finding["remediation"] is None) == (finding["status"] == "PASS"), finding
        assert "\n" not in finding["message"] and "\n" not in (finding["remediation"] or "")


@pytest.mark.parametrize("intent,change,status,words", [
    ("sriov", {"status": "pending", "changed": True}, "FAIL",
     "SR-IOV off: SriovGlobalEnable=Disabled (wanted Enabled)."),
    ("sriov", {"status": "pending", "changed": False}, "WARN", "pending until the next reboot"),
    ("sriov", {"status": "ok", "changed": True}, "WARN", "turns it off at the next reboot"),
    ("mmio_above_4g", {"status": "not_exposed", "attributes": {}, "note": "not exposed by this BIOS"}, "WARN",
     "MMIO above 4 GB: not exposed"),
    ("sriov", {"status": "read_only", "note": "SriovGlobalEnable is read-only while SysProfile is X"}, "FAIL",
     "off and locked"),
])
def test_bios_intents(intent, change, status, words):
    raw = healthy()
    raw["bmc"][HOSTS[0]]["info"]["bios"]["attributes"]["SriovGlobalEnable"] = "Disabled"
    raw["bmc"][HOSTS[0]]["bios"]["intents"][intent].update(change)
    finding = find(check(raw), "bios_" + intent, HOSTS[0])
    assert finding["status"] == status and words in finding["message"], finding
    assert statuses(check(raw))[("bios_" + intent, HOSTS[1])] == "PASS"


def test_an_attribute_set_to_another_value_than_the_profile_wants_is_a_warning():
    raw = healthy()
    intents = raw["bmc"][HOSTS[0]]["bios"]["intents"]
    intents["mmio_above_4g"].update(status="pending", changed=True, attributes={
        "MmioAbove4Gb": "Enabled", "MemoryMappedIOH": "56TB"})
    raw["bmc"][HOSTS[0]]["info"]["bios"]["attributes"]["MemoryMappedIOH"] = "12TB"
    finding = find(check(raw), "bios_mmio_above_4g", HOSTS[0])
    assert (finding["status"], finding["message"]) == ("WARN", "MMIO above 4 GB on, but not as the GPU "
                                                       "virtualisation profile sets it: MemoryMappedIOH=12TB "
                                                       "(wanted 56TB).")


def test_an_implied_intent_follows_the_intent_that_provides_it():
    raw = healthy()
    raw["bmc"][HOSTS[0]]["info"]["bios"]["attributes"]["ProcVirtualization"] = "Disabled"
    for name in ("cpu_virtualization", "iommu"):
        raw["bmc"][HOSTS[0]]["bios"]["intents"][name]["status"] = "pending"
    raw["bmc"][HOSTS[0]]["bios"]["intents"]["cpu_virtualization"]["changed"] = True
    findings = check(raw)
    assert find(findings, "bios_iommu", HOSTS[0])["status"] == "FAIL"
    assert "through cpu_virtualization" in find(findings, "bios_iommu", HOSTS[0])["message"]


def test_bmc_missing_or_silent():
    raw = healthy()
    del raw["bmc"][HOSTS[0]]
    raw["bmc"][HOSTS[1]] = {"address": "https://10.0.0.22", "info": {"failed": True, "msg": "Connection refused"},
                            "bios": {"failed": True, "msg": "Connection refused"}}
    findings = check(raw)
    skipped = find(findings, "bios", HOSTS[0])
    assert skipped["status"] == "SKIP" and "bmc_address" in skipped["remediation"]
    assert find(findings, "bmc", HOSTS[1])["status"] == "WARN"
    assert "Connection refused" in find(findings, "bmc", HOSTS[1])["message"]
    assert find(findings, "bios", HOSTS[1])["status"] == "SKIP"
    assert not [f for f in findings if f["check"] == "inlet_temperature" and f["object"] in HOSTS[:2]]
    raw.update(bmc={}, bmc_gathered=False)
    assert find(check(raw), "bios", HOSTS[2])["remediation"] == "Set doctor_gather_bmc to true."


@pytest.mark.parametrize("inlet,status", [(26.9, "PASS"), (27, "WARN"), (35, "FAIL")])
def test_inlet_temperature_against_thresholds(inlet, status):
    raw = healthy()
    raw["bmc"][HOSTS[2]]["info"]["inlet_celsius"] = inlet
    assert find(check(raw), "inlet_temperature", HOSTS[2])["status"] == status
    assert find(check(raw, inlet_warn_celsius=20), "inlet_temperature", HOSTS[0])["status"] == "WARN"


def test_host_driver_missing_on_one_host_from_the_vlcm_scan():
    raw = healthy()
    del raw["host_nvidia_smi"]
    scanned = raw["vlcm"]["gpu-cluster"]["compliance"]
    scanned["status"] = "NON_COMPLIANT"
    for component in ("NVD-VGPU-800", "nvd-gpu-mgmt-daemon"):
        scanned["hosts"][2]["components"][component]["current"] = None
    findings = check(raw)
    assert find(findings, "host_driver", HOSTS[0])["message"] == \
        "vGPU Manager 525.105.14, R525, vGPU 15 (vLCM scan)."
    missing = find(findings, "host_driver", HOSTS[2])
    assert missing["status"] == "FAIL" and "No NVIDIA vGPU host driver" in missing["message"]
    alike = find(findings, "host_drivers_alike", "gpu-cluster")
    assert alike["status"] == "FAIL" and "esxi-03.lab.local: none" in alike["message"]
    assert find(findings, "cluster_image", "gpu-cluster")["status"] == "WARN"


def test_host_driver_without_daemon_and_unknown_hosts():
    raw = healthy()
    del raw["host_nvidia_smi"]
    del raw["vlcm"]["gpu-cluster"]["compliance"]["hosts"][1]["components"]["nvd-gpu-mgmt-daemon"]
    raw["vlcm"]["gpu-cluster"]["compliance"]["hosts"].pop(2)
    findings = check(raw)
    assert find(findings, "host_driver", HOSTS[1])["status"] == "FAIL"
    assert "without the GPU management daemon" in find(findings, "host_driver", HOSTS[1])["message"]
    assert find(findings, "host_driver", HOSTS[2])["status"] == "SKIP"
    assert find(findings, "host_drivers_alike", "gpu-cluster")["status"] == "WARN"


def test_host_side_nvidia_smi_wins_over_the_vlcm_scan_and_can_show_a_mismatch():
    raw = healthy()
    raw["host_nvidia_smi"][HOSTS[1]]["nvidia_smi"]["driver_version"] = "535.54.06"
    findings = check(raw)
    assert "535.54.06" in find(findings, "host_driver", HOSTS[1])["message"]
    assert "(nvidia-smi)" in find(findings, "host_driver", HOSTS[1])["message"]
    assert find(findings, "host_drivers_alike", "gpu-cluster")["status"] == "FAIL"


def test_given_driver_components_are_used_when_nothing_else_is_known():
    raw = healthy()
    del raw["host_nvidia_smi"]
    del raw["vlcm"]
    raw["host_drivers"] = {HOSTS[0]: {"NVD-VGPU-800": DRIVER, "nvd-gpu-mgmt-daemon": DAEMON}, HOSTS[1]: "525.105.14",
                           HOSTS[2]: {"ESXi": "8.0.2"}}
    findings = check(raw)
    assert [find(findings, "host_driver", h)["status"] for h in HOSTS] == ["PASS", "PASS", "FAIL"]
    assert not [f for f in findings if f["check"] == "cluster_image"]


@pytest.mark.parametrize("active,configured,pending,status,words", [
    ("basic", "shared", True, "FAIL", "is basic, not Shared Direct"),
    ("shared", "shared", False, "FAIL", "is shared, not Shared Direct"),
    ("basic", "sharedDirect", True, "FAIL", "Xorg was not restarted"),
    ("sharedDirect", "shared", True, "WARN", "next Xorg restart"),
])
def test_shared_direct(active, configured, pending, status, words):
    raw = healthy()
    raw["gpu_info"]["hosts"][1]["gpus"][0].update(
        graphics_type=active, configured_graphics_type=configured, xorg_restart_pending=pending)
    finding = find(check(raw), "shared_direct", "esxi-02.lab.local 0000:3b:00.0")
    assert finding["status"] == status and words in finding["message"]


def test_one_profile_size_per_gpu_unless_mixed_size_mode():
    raw = healthy()
    raw["gpu_info"]["hosts"][0]["gpus"][0].update(profiles=["grid_p40-4q", "grid_p40-8q"], profile=None)
    obj = "esxi-01.lab.local 0000:3b:00.0"
    assert find(check(raw), "one_profile_size", obj)["status"] == "FAIL"
    raw["gpu_info"]["hosts"][0]["gpus"][0]["vgpu_mode"] = "mixedSize"
    assert find(check(raw), "one_profile_size", obj)["status"] == "PASS"


def test_ecc_alike_across_the_cluster():
    raw = healthy()
    smi = raw["host_nvidia_smi"]
    smi[HOSTS[2]]["nvidia_smi"]["gpus"][0].update(ecc_mode_current=False, ecc_mode_pending=False)
    ecc = find(check(raw), "ecc_alike", "gpu-cluster")
    assert ecc["status"] == "FAIL" and "esxi-03.lab.local 0000:3b:00.0 off" in ecc["message"]
    assert "nvidia-smi -e" in ecc["remediation"] and "reboot" in ecc["remediation"]
    smi[HOSTS[2]]["nvidia_smi"]["gpus"][0].update(ecc_mode_current=True, ecc_mode_pending=False)
    ecc = find(check(raw), "ecc_alike", "gpu-cluster")
    assert ecc["status"] == "WARN" and "next reset on esxi-03.lab.local" in ecc["message"]
    del raw["host_nvidia_smi"]
    assert find(check(raw), "ecc_alike", "gpu-cluster")["status"] == "SKIP"


@pytest.mark.parametrize("temperature,status", [(79, "PASS"), (80, "WARN"), (90, "FAIL"), (None, "SKIP")])
def test_gpu_temperature(temperature, status):
    raw = healthy()
    raw["host_nvidia_smi"][HOSTS[0]]["nvidia_smi"]["gpus"][0]["temperature_gpu_c"] = temperature
    assert find(check(raw), "gpu_temperature", "esxi-01.lab.local 0000:3b:00.0")["status"] == status


def test_gpu_temperature_skips_per_host_without_nvidia_smi_and_says_how_to_get_it():
    raw = healthy()
    raw["host_nvidia_smi"][HOSTS[1]] = {"unreachable": True, "msg": "ssh: connect to host esxi-02 port 22"}
    del raw["host_nvidia_smi"][HOSTS[2]]
    findings = check(raw)
    assert find(findings, "gpu_temperature", HOSTS[1])["message"] == \
        "No host-side nvidia-smi: unreachable: ssh: connect to host esxi-02 port 22."
    assert "SSH connection variables" in find(findings, "gpu_temperature", HOSTS[2])["remediation"]
    assert find(findings, "running_vgpus", HOSTS[2])["status"] == "SKIP"


def test_running_vgpus_agree_with_vcenter():
    findings = check(healthy())
    first = find(findings, "running_vgpus", "esxi-01.lab.local 0000:3b:00.0")
    assert (first["status"], first["message"]) == ("PASS", "Tesla P40: vGPUs of gpu-vm-01, as vCenter shows.")
    assert find(findings, "running_vgpus", "esxi-02.lab.local 0000:3b:00.0")["message"] == \
        "Tesla P40: no vGPU running, as vCenter shows."


def test_a_vgpu_the_host_runs_but_vcenter_does_not_place_there_fails():
    raw = healthy()
    raw["host_nvidia_smi"][HOSTS[1]]["nvidia_smi"]["vgpu"]["gpus"][0]["vgpus"] = [{"vm_name": "ghost-vm"}]
    raw["host_nvidia_smi"][HOSTS[0]]["nvidia_smi"]["vgpu"]["gpus"][0]["vgpus"] = []
    findings = check(raw)
    ghost = find(findings, "running_vgpus", "esxi-02.lab.local 0000:3b:00.0")
    assert ghost["status"] == "FAIL" and "runs vGPUs of ghost-vm, vCenter places none" in ghost["message"]
    missing = find(findings, "running_vgpus", "esxi-01.lab.local 0000:3b:00.0")
    assert missing["status"] == "FAIL" and "runs vGPUs of no VM, vCenter places gpu-vm-01" in missing["message"]
    assert "vmware.log" in missing["remediation"]


def test_running_vgpus_skip_when_vgpu_q_was_not_read_and_say_why():
    raw = healthy()
    smi = raw["host_nvidia_smi"][HOSTS[0]]["nvidia_smi"]
    del smi["vgpu"]
    smi["errors"] = {"vgpu": {"kind": "not_supported", "msg": "No supported devices in vGPU mode"}}
    finding = find(check(raw), "running_vgpus", HOSTS[0])
    assert finding["status"] == "SKIP" and "not_supported: No supported devices in vGPU mode" in finding["message"]


def test_vcenter_settings_and_cluster_automation():
    raw = healthy()
    raw["settings"]["settings"]["before"]["vgpu.hotmigrate.enabled"] = False
    findings = check(raw)
    assert find(findings, "vgpu_hotmigrate", "vc.example.com")["status"] == "FAIL"
    assert find(findings, "dpm", "gpu-cluster")["status"] == "WARN"
    assert find(check(raw, hotmigrate=False), "vgpu_hotmigrate", "vc.example.com")["status"] == "PASS"

    raw = healthy()
    findings = check(raw, drs_enabled=False, dpm_enabled=True)
    assert (find(findings, "drs", "gpu-cluster")["status"], find(findings, "dpm", "gpu-cluster")["status"]) == (
        "FAIL", "PASS")
    raw["cluster_vgpu_records"]["gpu-cluster"]["state"] = "prepared"
    prepared = find(check(raw), "drs_dpm", "gpu-cluster")
    assert prepared["status"] == "WARN" and "tasks_from: restore" in prepared["remediation"]
    raw["cluster_vgpu_records"]["gpu-cluster"]["state"] = "restored"
    assert not [f for f in check(raw) if f["check"] == "drs_dpm"]
    raw["automation"]["gpu-cluster"]["record"] = {"run": "run-7", "by": "ops@ctl02", "at": "2026-11-28T09:00:00Z",
                                                  "previous": raw["automation"]["gpu-cluster"]["previous"]}
    prepared = find(check(raw), "drs_dpm", "gpu-cluster")
    assert prepared["status"] == "WARN" and "run run-7 by ops@ctl02" in prepared["message"], "the record in vCenter"
    raw["automation"]["gpu-cluster"].update(record=None, record_error="The DRS/DPM record of cluster gpu-cluster "
                                            "(custom attribute gpuops.vgpu.cluster_vgpu.automation) cannot be trusted")
    damaged = find(check(raw), "drs_dpm", "gpu-cluster")
    assert damaged["status"] == "FAIL" and "cannot be trusted" in damaged["message"]
    assert "clear its custom attribute gpuops.vgpu.cluster_vgpu.automation" in damaged["remediation"]
    raw["automation"]["gpu-cluster"] = {"failed": True, "msg": "Cluster 'gpu-cluster' not found."}
    assert find(check(raw), "drs_dpm", "gpu-cluster")["status"] == "SKIP"


def test_capacity_warns_when_a_profile_has_no_free_slot_anywhere():
    raw = healthy()
    for host in raw["gpu_info"]["hosts"]:
        host["supported_profiles"].append({"name": "grid_p40-3q", "max_per_gpu": 8, "capacity": 8, "free": 0,
                                           "cuda": True})
    raw["guests"][0]["profile"] = "grid_p40-3q"
    findings = check(raw)
    assert find(findings, "capacity", "gpu-cluster grid_p40-3q")["status"] == "WARN"
    assert find(findings, "capacity", "gpu-cluster grid_p40-8q")["status"] == "PASS"


def test_vm_layer():
    raw = healthy()
    vm = raw["gpu_info"]["vms"][0]
    vm.update(vgpus=[{"profile": "grid_p40-4q"}], memory_fully_reserved=False)
    findings = check(raw)
    assert find(findings, "vgpu_profile", "gpu-vm-01")["message"] == \
        "Has grid_p40-4q; the inventory asks for grid_p40-8q."
    assert find(findings, "memory_reserved", "gpu-vm-01")["status"] == "FAIL"
    vm["power_state"] = "poweredOff"
    assert find(check(raw), "placement", "gpu-vm-01")["status"] == "WARN"
    vm["power_state"] = "poweredOn"
    raw["gpu_info"]["hosts"][0]["gpus"][0]["vms"] = []
    assert find(check(raw), "placement", "gpu-vm-01")["status"] == "FAIL"


def test_unreadable_vms_and_an_unreadable_vcenter():
    raw = healthy()
    raw["vms_error"] = "VM(s) not found: gpu-vm-99."
    assert find(check(raw), "vm", "(guests)")["status"] == "FAIL"
    raw["gpu_info"] = {"failed": True, "msg": "Cannot connect to vCenter vc.example.com:443."}
    findings = check(raw)
    assert find(findings, "vcenter", "vc.example.com")["status"] == "FAIL"
    assert not [f for f in findings if f["layer"] == "vm"]


@pytest.mark.parametrize("host_driver,guest_driver,status", [
    ("525.105.14", "525.105.17", "PASS"),
    ("525.105.14", "510.47.03", "WARN"),
    ("525.105.14", "535.54.03", "FAIL"),
])
def test_guest_driver_against_the_host_driver(host_driver, guest_driver, status):
    raw = healthy()
    raw["host_nvidia_smi"][HOSTS[0]]["nvidia_smi"]["driver_version"] = host_driver
    raw["guests"][0]["nvidia_smi"]["nvidia_smi"]["driver_version"] = guest_driver
    raw["guests"][0]["cuda"] = None
    finding = find(check(raw), "driver_compat", "trainer.example.com")
    assert finding["status"] == status


@pytest.mark.parametrize("cuda,profile,status,words", [
    ("12.0.1", "grid_p40-8q", "PASS", "fully supported"),
    ("12.1.1", "grid_p40-8q", "WARN", "minor-version compatibility"),
    ("12.2", "grid_p40-8q", "WARN", "minor-version compatibility"),
    ("11.8.0", "grid_p40-2b", "FAIL", "does not run CUDA"),
    (None, "grid_p40-8q", "SKIP", "No CUDA toolkit"),
])
def test_guest_cuda_against_its_driver_and_profile(cuda, profile, status, words):
    raw = healthy()
    raw["guests"][0].update(cuda=cuda, profile=profile)
    finding = find(check(raw), "cuda", "trainer.example.com")
    assert finding["status"] == status and words in finding["message"], finding


def test_cuda_the_guest_driver_cannot_run_fails():
    raw = healthy()
    raw["guests"][0]["nvidia_smi"]["nvidia_smi"]["driver_version"] = "510.47.03"
    raw["guests"][0]["cuda"] = "12.1.1"
    assert find(check(raw), "cuda", "trainer.example.com")["status"] == "FAIL"


@pytest.mark.parametrize("licensed,status_text,expiry,status", [
    (True, "Licensed", "2026-03-03T12:00:00Z", "PASS"),
    (True, "Licensed", "2026-03-01T20:00:00Z", "WARN"),
    (True, "Licensed", "2026-02-01T00:00:00Z", "WARN"),
    (False, "Unlicensed (Unrestricted)", None, "FAIL"),
    (None, None, None, "SKIP"),
])
def test_license_status_and_expiry(licensed, status_text, expiry, status):
    raw = healthy()
    raw["guests"][0]["nvidia_smi"]["nvidia_smi"]["gpus"][0].update(
        licensed=licensed, license_status=status_text, license_expiry=expiry)
    finding = find(check(raw), "license", "trainer.example.com")
    assert finding["status"] == status
    if status_text == "Unlicensed (Unrestricted)":
        assert "Unlicensed (Unrestricted)" in finding["message"] and "grid_license" in finding["remediation"]


def test_guests_that_cannot_be_read():
    raw = healthy()
    raw["guests"].append({"name": "down.example.com", "vm": "gpu-vm-02", "profile": "grid_p40-8q",
                          "nvidia_smi": {"unreachable": True, "msg": "Failed to connect to the host via ssh"}})
    raw["guests"].append({"name": "nodriver.example.com", "vm": "gpu-vm-03", "profile": "grid_p40-8q",
                          "nvidia_smi": {"nvidia_smi": {"present": False, "kind": "not_installed",
                                                        "msg": "nvidia-smi is not in PATH", "gpus": []}}})
    raw["guests"].append({"name": "notread.example.com", "vm": "gpu-vm-04", "profile": "grid_p40-8q"})
    findings = check(raw)
    assert find(findings, "guest_driver", "down.example.com")["status"] == "WARN"
    missing = find(findings, "guest_driver", "nodriver.example.com")
    assert missing["status"] == "FAIL" and missing["remediation"] == HINTS["not_installed"]
    assert find(findings, "guest_driver", "notread.example.com")["status"] == "SKIP"
    assert [f["check"] for f in findings if f["object"] == "down.example.com"] == ["guest_driver"]


def test_no_guests_is_one_skip_that_names_the_group():
    raw = healthy()
    raw["guests"] = []
    skipped = find(check(raw), "guests", "gpu_guests")
    assert skipped["status"] == "SKIP"


def _fixture(name):
    return read(name)


def test_a_recorded_licensed_guest_read_through_the_parser():
    facts = parse_query(_fixture("q_vgpu_guest_grid_a100-4c_licensed_expiry_driver510_TRUNCATED.txt"))
    facts["present"] = True
    raw = healthy()
    raw["guests"][0].update(nvidia_smi={"nvidia_smi": facts}, cuda="11.6.2", profile="grid_a100-4c")
    findings = check(raw, now="2022-05-26T20:00:00Z")
    assert find(findings, "guest_driver", "trainer.example.com")["message"] == "Driver 510.47.03, GRID A100-4C."
    assert find(findings, "driver_compat", "trainer.example.com")["status"] == "WARN"
    assert find(findings, "cuda", "trainer.example.com")["status"] == "PASS"
    soon = find(findings, "license", "trainer.example.com")
    assert soon["status"] == "WARN" and "2022-05-27T00:08:28Z (in 4.1 h)" in soon["message"]
    assert find(check(raw, now="2022-05-01T00:00:00Z"), "license", "trainer.example.com")["status"] == "PASS"


def test_collect_puts_host_temperatures_on_the_vcenter_gpus_and_reads_version_json():
    facts = _doctor_facts.collect(healthy())
    host = facts["hosts"][0]
    assert (host["gpus"][0]["temperature_celsius"], host["gpus"][0]["ecc_current"]) == (41, True)
    assert host["driver"] == {"version": "525.105.14", "daemon": None, "source": "nvidia-smi", "components": None}
    assert facts["guests"][0]["cuda_toolkit"] == "12.0.1"
    assert facts["clusters"][0]["image"] == {"NVD-VGPU-800": DRIVER, "nvd-gpu-mgmt-daemon": DAEMON}
    assert json.loads(json.dumps(facts)) == facts


def test_clusters_not_selected_are_left_out():
    raw = healthy()
    raw["gpu_info"]["hosts"][2]["cluster"] = "other"
    facts = _doctor_facts.collect(raw)
    assert [h["name"] for h in facts["hosts"]] == list(HOSTS[:2])
    raw["clusters"] = []
    assert [c["name"] for c in _doctor_facts.collect(raw)["clusters"]] == ["gpu-cluster", "other"]


def test_table_is_fixed_width_grouped_by_layer_with_the_remediation_below():
    raw = healthy()
    raw["gpu_info"]["hosts"][1]["gpus"][0]["graphics_type"] = "basic"
    findings = check(raw)
    lines = _doctor.table(findings)
    headers = [line for line in lines if line.startswith("== ")]
    assert [h.split(":")[0][3:] for h in headers] == [layer for layer in _doctor.LAYERS
                                                      if any(f["layer"] == layer for f in findings)]
    rows = [line for line in lines if line[:4] in _doctor.STATUSES]
    assert len(rows) == len(findings)
    column = 6 + max(len(f["object"]) for f in findings) + 2 + max(len(f["check"]) for f in findings) + 2
    for row, finding in zip(rows, findings):
        assert row[column:] == finding["message"] and row[column - 2:column] == "  "
        assert row[6:6 + len(finding["object"])] == finding["object"]
    failing = lines.index(next(line for line in rows if line.startswith("FAIL")))
    assert lines[failing + 1] == " " * column + "-> Restart Xorg on the host with its vGPU VMs off (role " \
        "gpuops.vgpu.host_graphics)."
    assert lines[-1] == "doctor: %d checks: %d PASS, 0 WARN, 1 FAIL, 3 SKIP" % (len(findings), len(findings) - 4)


def test_summary_counts_and_worst():
    findings = check(healthy())
    summary = _doctor.summarize(findings)
    assert (summary["FAIL"], summary["WARN"], summary["SKIP"], summary["worst"]) == (0, 0, 3, "SKIP")
    assert summary["total"] == len(findings) == summary["PASS"] + 3


def test_options_from_the_command_line_are_read_as_numbers_and_flags():
    findings = check(healthy(), inlet_warn_celsius="20", hotmigrate="false", drs_enabled="yes", dpm_enabled=None)
    assert find(findings, "inlet_temperature", HOSTS[0])["message"] == "Inlet 23 °C (warn at 20, fail at 35)."
    assert find(findings, "vgpu_hotmigrate", "vc.example.com")["status"] == "FAIL"
    assert find(findings, "drs", "gpu-cluster")["message"] == "DRS on (fullyAutomated), as expected."
    with pytest.raises(ValueError, match="inlet_fail_celsius must be a number, got 'hot'"):
        check(healthy(), inlet_fail_celsius="hot")
    with pytest.raises(ValueError, match="drs_enabled must be true, false or null, got 'sometimes'"):
        check(healthy(), drs_enabled="sometimes")
