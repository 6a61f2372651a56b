# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor role against the lab: findings follow the lab's ground truth, and the doctor changes nothing.

Each test starts from the fresh lab; the lab after (part of) the job is set up with plain pyVmomi and Redfish calls
and the vLCM modules.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys

import pytest
import yaml
from pyVmomi import vim

from conftest import ROOT
from redfish_direct import LabBmc
from vlcm_lab import DAEMON, DAEMON_VERSION, DRIVER, DRIVER_VERSION, Depot
from vsphere_direct import Direct

sys.path.insert(0, os.path.join(ROOT, ".tmp", "collections"))
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import HINTS, parse_query  # noqa: E402

HOSTS = ("esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local")
GPU = "0000:3b:00.0"
# QueryConfigTarget: gpu_info reads vCenter's vGPU profile facts from the clusters' environment browsers.
READS = {"RetrieveServiceContent", "Login", "Logout", "CreateContainerView", "DestroyView", "RetrievePropertiesEx",
         "ContinueRetrievePropertiesEx", "QueryConfigTarget"}
GUEST_FIXTURE = "q_vgpu_guest_grid_a100-4c_licensed_expiry_driver510_TRUNCATED.txt"
# A recorded host-side output passed in as doctor_host_nvidia_smi (it wins over the host's shell): its GPU is not
# the lab's P40, which shows that such facts are taken as given.
HOST_FIXTURE = "xml_v11_tesla_t4_passthrough_ecc_on_driver515_REFORMATTED.xml"


def inventory(lab, path, guests=None):
    """Every ESXi host with the address of its BMC in this lab (whose ports may be shifted), and the guests."""
    data = {"esxi_hosts": {"hosts": dict((name, {"bmc_address": bmc["baseuri"]}) for name, bmc in lab.bmcs.items())}}
    if guests:
        data["gpu_guests"] = {"hosts": guests}
    path.write_text(yaml.safe_dump(data))
    return path


def run_doctor(run_tasks, lab, tmp_path, inventories, check=False, expect_failure=False, **variables):
    task = {"name": "doctor", "ansible.builtin.include_role": {"name": "gpuops.vgpu.doctor"}, "vars": variables}
    return run_tasks([task], check=check, expect_failure=expect_failure, inventories=inventories)


def findings_of(run):
    facts = [r["ansible_facts"]["doctor_findings"] for r in run.results
             if "doctor_findings" in r.get("ansible_facts", {})]
    return facts[-1]


def by_key(findings):
    return dict(((f["check"], f["object"]), f) for f in findings)


def vcenter_writes(lab):
    return dict((method, count) for method, count in lab.stats()["by_method"].items() if method not in READS)


def rest_writes(lab):
    return dict((route, count) for route, count in lab.stats()["rest_by_route"].items()
                if not route.startswith("GET ") and not route.endswith(" /api/session"))


@pytest.fixture
def bmcs(lab):
    found = dict((name, LabBmc(lab, name)) for name in lab.bmcs)
    for bmc in found.values():
        bmc.wait_up()
    return found


def test_fresh_lab_read_only_in_check_mode_and_not(lab, run_tasks, tmp_path, bmcs):
    extra = inventory(lab, tmp_path / "esxi.yml")
    before = lab.state()
    bios_before = dict((name, bmc.state()["bios"]) for name, bmc in bmcs.items())
    lab.reset_stats()
    for bmc in bmcs.values():
        bmc.lab("POST", "/stats/reset")

    checked = run_doctor(run_tasks, lab, tmp_path, [extra], check=True, doctor_fail_on="never")
    run = run_doctor(run_tasks, lab, tmp_path, [extra], expect_failure=True)

    assert lab.state() == before
    assert vcenter_writes(lab) == {} and rest_writes(lab) == {}
    for name, bmc in bmcs.items():
        assert bmc.writes() == {} and bmc.state()["bios"] == bios_before[name]
    assert not [r for r in run.results + checked.results if r.get("changed") and "report" not in r["_task"]
                and "output directory" not in r["_task"]]

    findings = findings_of(run)
    assert findings == findings_of(checked)
    found = by_key(findings)
    clusters = lab.vcenter_vars.get("vgpu_clusters") or [lab.vcenter_vars["vcenter_cluster"]]
    for host in before["hosts"]:
        name = host["name"]
        if host["cluster"] not in clusters:
            assert not [f for f in findings if f["object"].startswith(name)]
            continue
        for gpu in host["gpus"]:
            finding = found[("shared_direct", "%s %s" % (name, gpu["pci_id"]))]
            assert finding["status"] == ("PASS" if gpu["graphics_type"] == "sharedDirect" else "FAIL")
            assert gpu["graphics_type"] in finding["message"]
        bmc = LabBmc(lab, name).state()
        inlet = [t["reading"] for t in bmc["thermal"]["temperatures"] if t["context"] == "Intake"][0]
        assert found[("inlet_temperature", name)]["message"].startswith("Inlet %s °C" % inlet)
        # The host shells answer, but a fresh lab has no vGPU manager installed: no nvidia-smi on the hosts.
        assert found[("host_driver", name)]["status"] == "FAIL"
        assert found[("host_driver", name)]["message"].startswith("nvidia-smi on the host fails: not_installed")
        assert found[("gpu_temperature", name)]["status"] == "SKIP"
        if name in HOSTS:
            for intent, attribute in (("sriov", "SriovGlobalEnable"), ("mmio_above_4g", "MmioAbove4Gb"),
                                      ("cpu_virtualization", "ProcVirtualization")):
                current = bmc["bios"]["current"][attribute]
                assert found[("bios_" + intent, name)]["status"] == ("PASS" if current == "Enabled" else "FAIL")
                assert "%s=%s" % (attribute, current) in found[("bios_" + intent, name)]["message"]
    for truth in before["clusters"]:
        if truth["name"] not in clusters:
            continue
        assert found[("drs", truth["name"])]["message"] == "DRS %s (%s)." % (
            "on" if truth["drs"]["enabled"] else "off", truth["drs"]["behavior"])
        assert found[("dpm", truth["name"])]["message"] == "DPM %s (%s)." % (
            "on" if truth["dpm"]["enabled"] else "off", truth["dpm"]["behavior"])
    assert found[("vgpu_hotmigrate", "127.0.0.1")]["status"] == (
        "PASS" if before["settings"].get("vgpu.hotmigrate.enabled") is True else "FAIL")
    assert found[("guests", "gpu_guests")]["status"] == "SKIP"

    table = next(r["msg"] for r in run.results if r["_task"].endswith("Show the findings"))
    counts = dict((s, sum(1 for f in findings if f["status"] == s)) for s in ("PASS", "WARN", "FAIL", "SKIP"))
    assert table[-1] == "doctor: %d checks: %d PASS, %d WARN, %d FAIL, %d SKIP" % (
        len(findings), counts["PASS"], counts["WARN"], counts["FAIL"], counts["SKIP"])
    report = json.loads((tmp_path / "reports" / "doctor.json").read_text())
    assert report["findings"] == findings and report["summary"]["FAIL"] == counts["FAIL"] > 0
    assert report["facts"]["hosts"][0]["name"] == "esxi-01.lab.local"
    failed = run.failed[0]["msg"]
    assert failed.startswith("%d check(s) FAIL: " % counts["FAIL"]) and str(tmp_path / "reports") in failed


def test_bad_input_fails_before_anything_is_read(lab, run_tasks, tmp_path):
    extra = inventory(lab, tmp_path / "esxi.yml")
    lab.reset_stats()
    run = run_doctor(run_tasks, lab, tmp_path, [extra], expect_failure=True, doctor_fail_on="sometimes",
                     doctor_inlet_warn_celsius="warm")
    message = run.failed[0]["msg"]
    assert "doctor_fail_on must be one of: fail, warn, never, got: sometimes" in message
    assert "doctor_inlet_warn_celsius" in message
    assert lab.stats()["soap_requests"] == 0
    assert "Passw0rd" not in run.stdout + run.stderr


def _install_driver(lab, run_tasks, hosts):
    """Import the NVIDIA bundles, add them to gpu-cluster's image and remediate only ``hosts``."""
    depot = Depot(lab)
    run_tasks([
        {"name": "import", "gpuops.vgpu.vlcm_depot": {"location": "{{ item }}"},
         "loop": [depot.url(depot.driver()), depot.url(depot.daemon())]},
        {"name": "image", "gpuops.vgpu.vlcm_cluster_image": {"cluster": "gpu-cluster", "components": {
            DRIVER: DRIVER_VERSION, DAEMON: DAEMON_VERSION}}},
        {"name": "remediate", "gpuops.vgpu.vlcm_remediate": {"cluster": "gpu-cluster", "hosts": list(hosts),
                                                             "accept_eula": True}},
    ])


def _fixture(name):
    """nvidia-smi facts parsed from a recorded output, as nvidia_smi_info would return them."""
    with open(os.path.join(ROOT, "tests", "fixtures", "nvidia-smi", name)) as handle:
        facts = parse_query(handle.read())
    facts["present"] = True
    return facts


def test_after_the_job_the_findings_follow_the_lab(lab, run_tasks, tmp_path, bmcs):
    _install_driver(lab, run_tasks, HOSTS[:2])
    direct = Direct(lab)
    try:
        for host in HOSTS:
            direct.shared_direct(host)
        direct.content.setting.UpdateOptions(changedValue=[
            vim.option.OptionValue(key="vgpu.hotmigrate.enabled", value=True)])
        direct.add_vgpu("gpu-vm-01", "grid_p40-8q")
        direct.power_on("gpu-vm-01")
    finally:
        direct.close()
    _status, systems = bmcs[HOSTS[0]].redfish("GET", "/redfish/v1/Systems")
    _status, system = bmcs[HOSTS[0]].redfish("GET", systems["Members"][0]["@odata.id"])
    _status, bios = bmcs[HOSTS[0]].redfish("GET", system["Bios"]["@odata.id"])
    settings = bios["@Redfish.Settings"]["SettingsObject"]["@odata.id"]
    status, answer = bmcs[HOSTS[0]].redfish("PATCH", settings, {"Attributes": {"SriovGlobalEnable": "Enabled"}})
    assert status < 300, answer

    guests = {
        "trainer.lab": {"vgpu_vm_name": "gpu-vm-01", "vgpu_profile": "grid_p40-8q"},
        "bare.lab": {"vgpu_vm_name": "gpu-vm-02", "vgpu_profile": "grid_p40-8q", "ansible_connection": "local",
                     "ansible_python_interpreter": sys.executable},
        "offline.lab": {"vgpu_vm_name": "gpu-vm-03", "vgpu_profile": "grid_p40-8q", "ansible_host": "127.0.0.1",
                        "ansible_port": 9, "ansible_connection": "ssh"},
    }
    extra = inventory(lab, tmp_path / "site.yml", guests)
    before = lab.state()
    lab.reset_stats()
    run = run_doctor(run_tasks, lab, tmp_path, [extra], expect_failure=True, doctor_gather_timeout=30,
                     doctor_guest_facts={"trainer.lab": {"nvidia_smi": _fixture(GUEST_FIXTURE),
                                                         "cuda_version": "11.6.2"}},
                     doctor_host_nvidia_smi={HOSTS[1]: {"changed": False, "nvidia_smi": _fixture(HOST_FIXTURE)}})
    assert lab.state() == before and vcenter_writes(lab) == {} and rest_writes(lab) == {}
    found = by_key(findings_of(run))

    truth = dict((h["name"], h) for h in before["hosts"])
    for name in (HOSTS[0], HOSTS[2]):
        installed = truth[name]["components"].get(DRIVER)
        assert found[("host_driver", name)]["status"] == ("PASS" if installed else "FAIL")
        if installed:
            # Read from the host's own nvidia-smi over SSH, which answers from the lab's state.
            assert installed.startswith("525.105.14") and found[("host_driver", name)]["message"] == \
                "vGPU Manager 525.105.14, R525, vGPU 15 (nvidia-smi)."
            gpu = truth[name]["gpus"][0]
            assert found[("gpu_temperature", "%s %s" % (name, GPU))]["message"].startswith(
                "Tesla P40 at %d °C" % gpu["temperature_c"])
            assert found[("running_vgpus", "%s %s" % (name, GPU))]["status"] == "PASS"
        else:
            assert found[("gpu_temperature", name)]["status"] == "SKIP"
    assert found[("host_driver", HOSTS[1])]["message"] == "vGPU Manager 515.105.01, R515 (nvidia-smi)."
    assert found[("gpu_temperature", HOSTS[1] + " 00000000:00:1E.0")]["message"] == \
        "Tesla T4 at 40 °C (warn at 80, fail at 90)."
    assert found[("ecc_alike", "gpu-cluster")]["message"] == \
        "ECC is on for the GPUs read; not known for esxi-03.lab.local."
    for name in HOSTS:
        assert found[("shared_direct", "%s %s" % (name, GPU))]["status"] == "PASS"
        pending = bmcs[name].state()["bios"]["pending"]
        assert found[("bios_sriov", name)]["status"] == ("WARN" if pending.get("SriovGlobalEnable") == "Enabled"
                                                         else "FAIL")
    assert bmcs[HOSTS[0]].state()["bios"]["pending"] == {"SriovGlobalEnable": "Enabled"}
    assert found[("host_drivers_alike", "gpu-cluster")]["status"] == "FAIL"
    assert found[("cluster_image", "gpu-cluster")]["status"] == "WARN"
    assert found[("vgpu_hotmigrate", "127.0.0.1")]["status"] == "PASS"
    assert found[("dpm", "gpu-cluster")]["status"] == "PASS"

    vm = next(v for v in before["vms"] if v["name"] == "gpu-vm-01")
    assert found[("placement", "gpu-vm-01")]["message"] == "Runs on %s GPU %s (grid_p40-8q)." % (
        vm["host"], vm["vgpus"][0]["gpu"])
    assert found[("vgpu_profile", "gpu-vm-01")]["status"] == "PASS"
    assert found[("memory_reserved", "gpu-vm-01")]["status"] == "PASS"
    assert found[("vgpu_profile", "gpu-vm-02")]["status"] == "FAIL"
    assert found[("memory_reserved", "gpu-vm-02")]["status"] == "FAIL"
    assert found[("placement", "gpu-vm-02")]["status"] == "WARN"

    free = dict((name, 3 - len(truth[name]["gpus"][0]["vms"]) if truth[name]["gpus"][0]["profile"] == "grid_p40-8q"
                 else (3 if not truth[name]["gpus"][0]["vms"] else 0)) for name in HOSTS)
    assert found[("capacity", "gpu-cluster grid_p40-8q")]["message"].startswith(
        "%d free slot(s)" % sum(free.values()))

    assert found[("guest_driver", "trainer.lab")]["message"] == "Driver 510.47.03, GRID A100-4C."
    assert found[("driver_compat", "trainer.lab")]["status"] == "WARN"
    assert found[("cuda", "trainer.lab")]["status"] == "PASS"
    assert found[("license", "trainer.lab")]["status"] == "WARN"
    assert "2022-05-27T00:08:28Z has passed" in found[("license", "trainer.lab")]["message"]
    bare = found[("guest_driver", "bare.lab")]
    assert bare["status"] == "FAIL" and bare["remediation"] == HINTS["not_installed"]
    offline = found[("guest_driver", "offline.lab")]
    assert offline["status"] == "WARN" and offline["message"].startswith("Guest not read: unreachable")


def test_a_missing_vm_is_a_finding_and_the_hosts_are_still_checked(lab, run_tasks, tmp_path):
    extra = inventory(lab, tmp_path / "ghost.yml", {"ghost.lab": {"vgpu_profile": "grid_p40-8q"}})
    run = run_doctor(run_tasks, lab, tmp_path, [extra], doctor_fail_on="never", doctor_gather_guests=False)
    found = by_key(findings_of(run))
    assert found[("vm", "(guests)")]["status"] == "FAIL" and "ghost.lab" in found[("vm", "(guests)")]["message"]
    for host in lab.state()["hosts"][:3]:
        assert found[("shared_direct", "%s %s" % (host["name"], GPU))]["status"] == (
            "PASS" if host["gpus"][0]["graphics_type"] == "sharedDirect" else "FAIL")
    assert found[("guest_driver", "ghost.lab")]["status"] == "SKIP"


def test_a_damaged_cluster_vgpu_record_is_refused_naming_the_file_and_the_fix(lab, run_tasks, tmp_path):
    records = tmp_path / "records"
    records.mkdir()
    damaged = records / "127.0.0.1_gpu-cluster.json"
    damaged.write_text('{"cluster": "gpu-cluster", "state": "prep')
    extra = inventory(lab, tmp_path / "esxi.yml")
    run = run_doctor(run_tasks, lab, tmp_path, [extra], expect_failure=True, doctor_fail_on="never",
                     doctor_gather_guests=False, doctor_cluster_vgpu_state_dir=str(records))
    # The records of all clusters are read in one task: its message names the damaged one.
    message = run.failed[0]["msg"]
    assert "The record %s is damaged: it is not complete JSON" % damaged in message
    assert "Check DRS and DPM of the cluster in vCenter" in message and "then delete %s" % damaged in message


def test_a_prepare_not_restored_is_read_from_vcenter_and_a_foreign_record_fails(lab, run_tasks, tmp_path):
    # A prepare from another controller: its record is in vCenter only (no file in doctor_cluster_vgpu_state_dir).
    run_tasks([{"name": "prepare elsewhere", "gpuops.vgpu.cluster_automation": {
        "cluster": "gpu-cluster", "drs_enabled": False, "dpm_enabled": False, "record": True,
        "run_id": "run-elsewhere"}}])
    extra = inventory(lab, tmp_path / "esxi.yml")
    before = vcenter_writes(lab)
    run = run_doctor(run_tasks, lab, tmp_path, [extra], doctor_fail_on="never", doctor_gather_guests=False,
                     doctor_clusters=["gpu-cluster"], doctor_cluster_vgpu_state_dir=str(tmp_path / "none"))
    found = by_key(findings_of(run))[("drs_dpm", "gpu-cluster")]
    assert found["status"] == "WARN" and "run run-elsewhere" in found["message"]
    assert vcenter_writes(lab) == before, "the doctor changes nothing"

    direct = Direct(lab)
    try:
        cluster = direct._find(vim.ClusterComputeResource, "gpu-cluster")
        manager = direct.content.customFieldsManager
        field = next(f for f in manager.field if f.name == "gpuops.vgpu.cluster_vgpu.automation")
        manager.SetField(entity=cluster, key=field.key, value='{"v": 1, "run": "r')
    finally:
        direct.close()
    run = run_doctor(run_tasks, lab, tmp_path, [extra], doctor_fail_on="never", doctor_gather_guests=False,
                     doctor_clusters=["gpu-cluster"], doctor_cluster_vgpu_state_dir=str(tmp_path / "none"))
    found = by_key(findings_of(run))[("drs_dpm", "gpu-cluster")]
    assert found["status"] == "FAIL" and "cannot be trusted" in found["message"] and "cut short" in found["message"]
    assert "gpuops.vgpu.cluster_vgpu.automation" in found["remediation"]
