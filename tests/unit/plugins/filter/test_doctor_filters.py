# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor and fleet report filters: thin bridges to module_utils that refuse input they cannot use."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.vgpu.plugins.filter import doctor, fleet_report
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _doctor
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _doctor_facts
from ansible_collections.gpuops.vgpu.tests.unit.plugins.plugin_utils.doctor_data import NOW, healthy


def test_filter_names():
    assert sorted(doctor.FilterModule().filters()) == ["doctor_checks", "doctor_cuda_as_file", "doctor_facts", "doctor_gathered",
                                                       "doctor_outcome", "doctor_summary", "doctor_table",
                                                       "hosts_alike"]
    assert sorted(fleet_report.FilterModule().filters()) == ["fleet_report_data", "fleet_report_html"]


def test_the_filters_chain_like_the_role_does():
    raw = healthy()
    facts = doctor.doctor_facts(raw, driver_components=["NVD-VGPU-*"], daemon_components=[])
    findings = doctor.doctor_checks(facts, now=NOW, drs_enabled=False)
    assert findings == _doctor.run_checks(_doctor_facts.collect(raw), {"now": NOW, "drs_enabled": False})
    assert doctor.doctor_summary(findings)["FAIL"] == 1
    assert doctor.doctor_table(findings)[-1].startswith("doctor: %d checks" % len(findings))
    data = fleet_report.fleet_report_data(raw["gpu_info"], doctor={"findings": findings, "facts": facts})
    assert "<!DOCTYPE html>" in fleet_report.fleet_report_html(data)


def test_the_outcome_is_the_chain_in_one_pass():
    raw = healthy()
    outcome = doctor.doctor_outcome(raw, now=NOW, drs_enabled=False, driver_components=["NVD-VGPU-*"],
                                    daemon_components=[])
    facts = doctor.doctor_facts(raw, driver_components=["NVD-VGPU-*"], daemon_components=[])
    findings = doctor.doctor_checks(facts, now=NOW, drs_enabled=False, driver_components=["NVD-VGPU-*"],
                                    daemon_components=[])
    assert outcome == {"facts": facts, "findings": findings, "summary": doctor.doctor_summary(findings),
                       "table": doctor.doctor_table(findings)}
    with pytest.raises(AnsibleFilterError, match="unknown option"):
        doctor.doctor_outcome(raw, thresholds=1)


@pytest.mark.parametrize("call,words", [
    (lambda: doctor.doctor_facts(["not", "a", "dict"]), "doctor_facts: expects the registered results (a dict)"),
    (lambda: doctor.doctor_facts({}, thresholds=1), "doctor_facts: unknown option(s) thresholds"),
    (lambda: doctor.doctor_checks({"gpu_info": {}}), "expects the output of gpuops.vgpu.doctor_facts"),
    (lambda: doctor.doctor_checks(_doctor_facts.collect(healthy()), now="yesterday"), "doctor_checks: time data"),
    (lambda: doctor.doctor_table([{"status": "PASS"}]), "doctor_table: expects the findings list"),
    (lambda: doctor.doctor_summary([{"layer": "host", "object": "h", "check": "c", "status": "OK", "message": ""}]),
     "doctor_summary: unknown status OK"),
    (lambda: fleet_report.fleet_report_data({"vms": []}), "expects a gpuops.vgpu.gpu_info result"),
    (lambda: fleet_report.fleet_report_data({"hosts": []}, doctor="doctor.json"), "doctor must be the doctor's"),
    (lambda: fleet_report.fleet_report_html({"title": "x"}), "expects the output of gpuops.vgpu.fleet_report_data"),
])
def test_bad_input_names_the_filter_and_what_it_expects(call, words):
    with pytest.raises(AnsibleFilterError) as err:
        call()
    assert words in str(err.value)


def _registered(results):
    """A loop's registered result, as the doctor role keeps it."""
    return {"changed": False, "results": [dict(result, item=item) for item, result in results.items()]}


def test_registered_loops_give_the_same_facts_as_keyed_results():
    raw = healthy()
    keyed = doctor.doctor_facts(raw)
    guests = raw.pop("guests")
    bmc = raw.pop("bmc")
    raw.update(
        automation=_registered(raw["automation"]), vlcm=_registered(raw["vlcm"]),
        host_nvidia_smi=_registered(raw["host_nvidia_smi"]),
        bmc_addresses=dict((host, entry["address"]) for host, entry in bmc.items()),
        bmc_info=_registered(dict((host, entry["info"]) for host, entry in bmc.items())),
        bios=_registered(dict((host, entry["bios"]) for host, entry in bmc.items())),
        guests=[dict((k, g[k]) for k in ("name", "vm", "profile")) for g in guests],
        guest_nvidia_smi=_registered(dict((g["name"], g["nvidia_smi"]) for g in guests)),
        guest_cuda=_registered(dict((g["name"], g["cuda"]) for g in guests)))
    assert doctor.doctor_facts(raw) == keyed


def test_given_facts_win_over_what_was_gathered():
    raw = healthy()
    host = sorted(raw["host_nvidia_smi"])[0]
    raw["host_nvidia_smi_given"] = {host: {"nvidia_smi": {"present": True, "driver_version": "535.54.03",
                                                          "gpus": []}}}
    guest = raw["guests"][0]["name"]
    raw["guests"][0].pop("nvidia_smi")
    raw["guest_facts"] = {guest: {"cuda_version": "11.8"}}
    raw["guest_nvidia_smi"] = {guest: {"unreachable": True, "msg": "no route"}}
    facts = doctor.doctor_facts(raw)
    assert next(h for h in facts["hosts"] if h["name"] == host)["driver"]["version"] == "535.54.03"
    assert facts["guests"][0]["cuda_toolkit"] == "11.8"
    assert facts["guests"][0]["error"] == "unreachable: no route"


HOSTS_ALIKE = {"hosts": [
    {"name": "esxi-01", "gpus": [{"pci_id": "0000:3b:00.0", "device_name": "Tesla P40"}]},
    {"name": "esxi-02", "gpus": [{"pci_id": "0000:3b:00.0", "device_name": "Tesla P40"}]},
]}


def _smi(*ecc):
    return {"present": True, "gpus": [{"pci_bus_id": "00000000:%02X:00.0" % (0x3B + n), "ecc_mode_current": value,
                                       "ecc_mode_pending": value} for n, value in enumerate(ecc)]}


def test_hosts_alike_by_the_doctors_rules():
    alike = doctor.hosts_alike(HOSTS_ALIKE, {"esxi-01": _smi(True), "esxi-02": {"nvidia_smi": _smi(True)}})
    assert alike == {"gpus_alike": True, "gpus": {"esxi-01": "Tesla P40", "esxi-02": "Tesla P40"},
                     "ecc_alike": True, "ecc": {"esxi-01 0000:3b:00.0": "on", "esxi-02 0000:3b:00.0": "on"},
                     "ecc_pending": []}
    assert doctor.hosts_alike(HOSTS_ALIKE["hosts"])["ecc"] == {}, "no nvidia-smi: nothing to compare"


def test_hosts_that_differ():
    hosts = HOSTS_ALIKE["hosts"] + [{"name": "esxi-03", "gpus": [
        {"pci_id": "0000:3b:00.0", "device_name": "Tesla T4"}, {"pci_id": "0000:3c:00.0", "device_name": "Tesla T4"}]}]
    alike = doctor.hosts_alike(hosts, {"esxi-01": _smi(True), "esxi-03": _smi(True, False), "elsewhere": _smi(False)})
    assert not alike["gpus_alike"] and alike["gpus"]["esxi-03"] == "Tesla T4 + Tesla T4"
    assert not alike["ecc_alike"]
    assert alike["ecc"] == {"esxi-01 0000:3b:00.0": "on", "esxi-03 0000:3b:00.0": "on", "esxi-03 0000:3c:00.0": "off"}
    with pytest.raises(AnsibleFilterError, match="hosts_alike: expects a gpuops.vgpu.gpu_info result"):
        doctor.hosts_alike({"msg": "failed"})


def test_doctor_gathered_hands_the_hosts_own_reads_on_like_a_loop():
    hostvars = {
        "esxi-01": {"doctor_gathered_host_nvidia_smi": {"nvidia_smi": {"gpus": [1]}},
                    "doctor_gathered_bmc_info": {"changed": False}},
        "esxi-02": {"doctor_gathered_bmc_info": {"changed": True},
                    "doctor_gathered_host_nvidia_smi": {"skipped": True, "changed": False}},
        "esxi-03": {},
    }
    smi = doctor.doctor_gathered(hostvars, ["esxi-01", "esxi-02", "esxi-03", "not-in-inventory"], "host_nvidia_smi")
    assert smi == [{"nvidia_smi": {"gpus": [1]}, "item": "esxi-01"}]
    bmc = doctor.doctor_gathered(hostvars, ["esxi-02", "esxi-01"], "bmc_info")
    assert [result["item"] for result in bmc] == ["esxi-02", "esxi-01"]
    assert _doctor_facts._by_item({"results": bmc})["esxi-02"]["changed"] is True
    with pytest.raises(AnsibleFilterError, match="unknown kind 'smi'"):
        doctor.doctor_gathered(hostvars, ["esxi-01"], "smi")


def test_a_guests_cuda_comes_with_its_nvidia_smi_read_unless_read_as_a_file():
    read = {"nvidia_smi": {"driver_version": "535.54.03"}, "cuda": {"toolkits": []}}
    version_json = {"content": "e30=", "encoding": "base64"}
    hostvars = {
        "guest-01": {"doctor_gathered_guest_nvidia_smi": read},
        "guest-02": {"doctor_gathered_guest_nvidia_smi": read, "doctor_gathered_guest_cuda": version_json},
        "guest-03": {"doctor_gathered_guest_cuda": {"skipped": True}},
    }
    cuda = doctor.doctor_gathered(hostvars, ["guest-01", "guest-02", "guest-03"], "guest_cuda")
    assert cuda == [dict(read, item="guest-01"), dict(version_json, item="guest-02")]
