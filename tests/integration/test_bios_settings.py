# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""bios_settings against every vendor profile of the lab BMCs, checked against the BMCs' ground truth."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import time

import pytest

from redfish_direct import HOSTS, VENDORS, LabBmc

# What the gpu_virtualization profile finds on each lab BMC's factory BIOS.
PROFILE = {
    "dell_idrac8": {
        "changes": {"SriovGlobalEnable": "Enabled", "MmioAbove4Gb": "Enabled"},
        "intents": {"cpu_virtualization": "ok", "iommu": "ok", "sriov": "pending", "mmio_above_4g": "pending",
                    "pcie_aer": "not_exposed"},
        "apply_time": None, "job": True, "vendor": ("dell", "idrac8"),
    },
    "dell_idrac9": {
        "changes": {"ProcVirtualization": "Enabled", "SriovGlobalEnable": "Enabled", "MemoryMappedIOH": "56TB"},
        "intents": {"cpu_virtualization": "pending", "iommu": "pending", "sriov": "pending",
                    "mmio_above_4g": "pending", "pcie_aer": "not_exposed"},
        "apply_time": "OnReset", "job": True, "vendor": ("dell", "idrac9"),
    },
    "hpe_ilo5": {
        "changes": {"IntelProcVtd": "Enabled", "Sriov": "Enabled"},
        "intents": {"cpu_virtualization": "ok", "iommu": "pending", "sriov": "pending", "mmio_above_4g": "not_exposed",
                    "pcie_aer": "not_exposed"},
        "apply_time": None, "job": False, "vendor": ("hpe", "ilo5"),
    },
    "supermicro": {
        "changes": {"IntelVirtualizationTechnology_002B": "Enable", "IntelVTforDirectedI_O_VT_d_0025": "Enable",
                    "SR_IOVSupport_002C": "Enabled", "Above4GDecoding_00B1": "Enabled", "PCIeAERSupport_00A4": "Enable"},
        "intents": {"cpu_virtualization": "pending", "iommu": "pending", "sriov": "pending", "mmio_above_4g": "pending",
                    "pcie_aer": "pending"},
        "apply_time": "OnReset", "job": False, "vendor": ("supermicro", None),
    },
}

# An attribute each BIOS locks until another one changes: (attribute, value, unlocking attribute, its value).
DEPENDENT = {
    "dell_idrac8": ("ProcCStates", "Disabled", "SysProfile", "Custom"),
    "dell_idrac9": ("WorkloadProfile", "VtOptimizedProfile", "SysProfile", "Custom"),
    "hpe_ilo5": ("MinProcIdlePower", "NoCStates", "WorkloadProfile", "Custom"),
    "supermicro": ("SR_IOVSupport_002C", "Enabled", "Above4GDecoding_00B1", "Enabled"),
}


@pytest.fixture
def bmc_for(lab):
    """A factory-fresh lab BMC of a vendor, left without faults and sessions for the next test."""
    used = []

    def get(vendor):
        bmc = LabBmc(lab, HOSTS[vendor])
        bmc.wait_up()
        bmc.wait_settled()
        bmc.factory_reset()
        used.append(bmc)
        return bmc

    yield get
    for bmc in used:
        bmc.wait_up()
        bmc.lab("DELETE", "/faults")
        assert bmc.state()["sessions_open"] == 0, "%s: a session was left open" % bmc.host


@pytest.fixture
def bios(lab, run_tasks):
    """Run tasks with the lab's BMC credentials set once for the redfish action group.

    Each positional argument is a bios_settings option dict, or a complete task (a dict with a name).
    """
    username, password = lab.bmc_credentials
    defaults = {"group/gpuops.vgpu.redfish": {"username": username, "password": password, "validate_certs": False}}

    def run(bmc, *steps, **kwargs):
        tasks = [step if "name" in step else
                 {"name": "bios_settings %d" % i, "gpuops.vgpu.bios_settings": dict(step, baseuri=bmc.baseuri),
                  "diff": True}
                 for i, step in enumerate(steps)]
        return run_tasks(tasks, module_defaults=defaults, **kwargs)

    return run


def tolerated(bmc, options):
    """A bios_settings task whose failure is recorded and does not stop the play."""
    return {"name": "may fail", "gpuops.vgpu.bios_settings": dict(options, baseuri=bmc.baseuri),
            "ignore_errors": True}


def redfish_info_task(lab, bmc):
    """community.general's redfish_info reading the current BIOS attributes: an independent client."""
    username, password = lab.bmc_credentials
    return {"name": "independent read", "community.general.redfish_info": {
        "category": "Systems", "command": "GetBiosAttributes", "baseuri": bmc.baseuri[len("https://"):],
        "username": username, "password": password, "validate_certs": False}}


@pytest.mark.parametrize("vendor", VENDORS)
def test_profile_check_change_rerun_reboot_rerun(lab, bmc_for, bios, vendor):
    expected = PROFILE[vendor]
    bmc = bmc_for(vendor)
    factory = bmc.state()["bios"]["current"]
    profile = {"profile": "gpu_virtualization"}
    check_task = {"name": "check mode", "gpuops.vgpu.bios_settings": dict(profile, baseuri=bmc.baseuri),
                  "check_mode": True, "diff": True}

    checked, first, second = bios(bmc, check_task, profile, profile).results
    assert checked["changed"] is True
    assert checked["changes"] == expected["changes"]
    assert checked["diff"]["before"] == first["diff"]["before"]
    assert checked["diff"]["after"] == first["diff"]["after"]
    # The check-mode task sent nothing: the real run still found the factory BIOS with nothing pending.
    assert first["diff"]["before"] == {"current": dict((k, factory[k]) for k in first["diff"]["wanted"]),
                                       "pending": {}}
    assert first["changed"] is True and second["changed"] is False
    assert (first["vendor"]["family"], first["vendor"]["generation"]) == expected["vendor"]
    assert first["changes"] == expected["changes"]
    assert first["diff"]["after"]["pending"] == expected["changes"]
    assert first["apply_time"] == expected["apply_time"]
    assert dict((k, v["status"]) for k, v in first["intents"].items()) == expected["intents"]
    assert first["pending_reboot"] is True and second["pending_reboot"] is True
    assert second["changes"] == {}
    truth = bmc.state()
    assert truth["bios"] == {"current": factory, "pending": expected["changes"]}
    patches = [key for key in bmc.writes() if key.startswith("PATCH")]
    assert len(patches) == 1 and bmc.writes()[patches[0]] == 1
    if expected["job"]:
        assert [job["JobState"] for job in truth["jobs"]] == ["Scheduled"]
        assert first["job"] == second["job"] == truth["jobs"][0]["@odata.id"]
    else:
        assert truth["jobs"] == [] and first["job"] is None
    assert truth["resets"] == 0

    reboot = dict(profile, reboot="if_needed")
    rebooted, after, independent = bios(bmc, reboot, reboot, redfish_info_task(lab, bmc)).results
    assert rebooted["changed"] is True and rebooted["rebooted"] is True
    assert rebooted["pending_reboot"] is False
    assert after["changed"] is False and after["rebooted"] is False
    assert all(info["status"] in ("ok", "not_exposed") for info in after["intents"].values())
    truth = bmc.state()
    assert truth["bios"]["pending"] == {}
    assert truth["bios"]["current"] == dict(factory, **expected["changes"])
    assert truth["power_state"] == "On" and truth["boots"] == 1
    if expected["job"]:
        assert [job["JobState"] for job in truth["jobs"]] == ["Completed"]
    read_back = independent["redfish_facts"]["bios_attribute"]["entries"][0][1]
    for name, value in expected["changes"].items():
        assert read_back[name] == value


@pytest.mark.parametrize("vendor", VENDORS)
def test_dependent_attribute_needs_its_unlock_in_the_same_task(bios, bmc_for, vendor):
    attribute, value, unlock, unlock_value = DEPENDENT[vendor]
    bmc = bmc_for(vendor)
    failed, done = bios(bmc, tolerated(bmc, {"attributes": {attribute: value}}),
                        {"attributes": {attribute: value, unlock: unlock_value}}).results
    assert failed["failed"] is True
    assert "%s is read-only while %s is" % (attribute, unlock) in failed["msg"]
    assert "writable when %s is %s" % (unlock, unlock_value) in failed["msg"]
    assert done["changed"] is True
    assert done["diff"]["before"]["pending"] == {}
    assert bmc.state()["bios"]["pending"] == {attribute: value, unlock: unlock_value}
    assert sum(count for key, count in bmc.writes().items() if key.startswith("PATCH")) == 1


def test_read_only_attribute_is_refused(bios, bmc_for):
    bmc = bmc_for("dell_idrac8")
    failed = bios(bmc, {"attributes": {"SystemServiceTag": "ABCDEFG"}}, expect_failure=True).result(0)
    assert "SystemServiceTag is read-only" in failed["msg"]
    assert bmc.writes() == {}


@pytest.mark.parametrize("vendor", ["dell_idrac9", "supermicro"])
def test_unknown_attribute_and_value_outside_the_registry(bios, bmc_for, vendor):
    bmc = bmc_for(vendor)
    name = {"dell_idrac9": "SriovGlobalEnable", "supermicro": "SR_IOVSupport_002C"}[vendor]
    failed = bios(bmc, {"attributes": {name + "X": "Enabled", name: "Maybe"}}, expect_failure=True).result(0)
    server = "the %s at %s" % (bmc.state()["identity"]["Model"], bmc.baseuri)
    assert "%sX is not a BIOS attribute of %s (did you mean %s" % (name, server, name) in failed["msg"]
    assert any(p.startswith("%s: 'Maybe' is not one of" % name) and "Enabled" in p for p in failed["problems"])
    assert bmc.writes() == {}
    assert bmc.state()["bios"]["pending"] == {}


def test_strict_profile_fails_before_changing_anything(bios, bmc_for):
    bmc = bmc_for("hpe_ilo5")
    failed = bios(bmc, {"profile": "gpu_virtualization", "strict": True}, expect_failure=True).result(0)
    assert "mmio_above_4g: not exposed by this BIOS" in failed["msg"]
    assert "pcie_aer: not exposed by this BIOS" in failed["msg"]
    assert bmc.writes() == {}


def test_scheduled_dell_job_is_replaced_when_more_values_change(bios, bmc_for):
    bmc = bmc_for("dell_idrac8")
    first, second = bios(bmc, {"attributes": {"SriovGlobalEnable": "Enabled"}},
                         {"attributes": {"MmioAbove4Gb": "Enabled"}}).results
    assert second["changed"] is True
    truth = bmc.state()
    assert truth["bios"]["pending"] == {"SriovGlobalEnable": "Enabled", "MmioAbove4Gb": "Enabled"}
    assert [job["JobState"] for job in truth["jobs"]] == ["Scheduled"]
    assert truth["jobs"][0]["@odata.id"] == second["job"] != first["job"]


def test_wrong_password_is_a_clear_error_without_the_password(lab, run_tasks, bmc_for):
    bmc = bmc_for("hpe_ilo5")
    wrong = "Not-The-Passw0rd"
    outcome = run_tasks([{"name": "wrong password", "gpuops.vgpu.bios_settings": {
        "baseuri": bmc.baseuri, "username": lab.bmc_credentials[0], "password": wrong, "validate_certs": False,
        "attributes": {"Sriov": "Enabled"}}}], expect_failure=True)
    assert "rejected the credentials of user 'root' (HTTP 401)" in outcome.result(0)["msg"]
    assert wrong not in outcome.stdout and wrong not in outcome.stderr
    assert bmc.writes() == {}


def test_default_certificate_validation_refuses_the_lab_certificate(lab, run_tasks, bmc_for):
    bmc = bmc_for("supermicro")
    username, password = lab.bmc_credentials
    failed = run_tasks([{"name": "validate certs", "gpuops.vgpu.bmc_info": {
        "baseuri": bmc.baseuri, "username": username, "password": password}}], expect_failure=True).result(0)
    assert "The TLS certificate of the BMC at %s could not be verified" % bmc.baseuri in failed["msg"]
    assert "validate_certs: false" in failed["msg"]
    assert bmc.stats()["total"] == 0


def test_bmc_down_fails_after_bounded_retries(bios, bmc_for):
    bmc = bmc_for("dell_idrac9")
    bmc.fault(kind="down", seconds=10)
    time.sleep(0.5)
    failed = bios(bmc, {"profile": "gpu_virtualization", "retries": 2}, expect_failure=True).result(0)
    assert "Could not reach the BMC at %s for GET /redfish/v1/: connection refused" % bmc.baseuri in failed["msg"]
    # Two pauses of about 1 and 2 seconds between three attempts.
    assert re.search(r"\(after 3 attempts over [234] s\)", failed["msg"]), failed["msg"]
    bmc.wait_up()
    assert bmc.state()["bios"]["pending"] == {}


def test_bmc_restarting_briefly_is_waited_for(bios, bmc_for):
    bmc = bmc_for("dell_idrac8")
    bmc.fault(kind="down", seconds=2)
    time.sleep(0.5)
    result = bios(bmc, {"attributes": {"SriovGlobalEnable": "Enabled"}}).result(0)
    assert result["changed"] is True
    assert bmc.state()["bios"]["pending"] == {"SriovGlobalEnable": "Enabled"}


def test_busy_answers_are_retried(bios, bmc_for):
    bmc = bmc_for("supermicro")
    bmc.fault(kind="http_error", status=503, count=1, retry_after=1)
    bmc.fault(kind="http_error", status=429, count=1)
    result = bios(bmc, {"attributes": {"SR_IOVSupport_002C": "Enabled", "Above4GDecoding_00B1": "Enabled"}}).result(0)
    assert result["changed"] is True
    truth = bmc.state()
    assert truth["faults"] == []
    assert truth["bios"]["pending"] == {"SR_IOVSupport_002C": "Enabled", "Above4GDecoding_00B1": "Enabled"}


def test_busy_bmc_fails_after_bounded_retries(bios, bmc_for):
    bmc = bmc_for("supermicro")
    bmc.fault(kind="http_error", status=503, count=10, retry_after=1)
    failed = bios(bmc, {"attributes": {"QuietBoot": False}, "retries": 1}, expect_failure=True).result(0)
    assert "kept answering HTTP 503 after 2 attempts" in failed["msg"]
    assert bmc.stats()["total"] == 2


def test_slow_answer_is_retried_after_the_timeout(bios, bmc_for):
    bmc = bmc_for("hpe_ilo5")
    bmc.fault(kind="slow", seconds=3, count=1)
    result = bios(bmc, {"attributes": {"Sriov": "Enabled"}, "timeout": 1}).result(0)
    assert result["changed"] is True
    truth = bmc.state()
    assert truth["faults"] == []
    assert truth["bios"]["pending"] == {"Sriov": "Enabled"}
    assert bmc.stats()["by_path"]["GET /redfish/v1"] == 2


def test_reboot_that_takes_too_long_times_out_clearly(bios, bmc_for):
    bmc = bmc_for("hpe_ilo5")
    bmc.configure(reset_seconds=5)
    failed = bios(bmc, {"attributes": {"Sriov": "Enabled"}, "reboot": "if_needed", "reboot_timeout": 2},
                  expect_failure=True).result(0)
    assert "did not happen within 2 s" in failed["msg"]
    truth = bmc.wait_settled()
    assert truth["bios"]["current"]["Sriov"] == "Enabled"


@pytest.mark.parametrize("vendor, message", [
    ("dell_idrac8", "ended Failed: The BIOS rejected the pending configuration during POST."),
    ("supermicro", "restarted but its BIOS did not apply Above4GDecoding_00B1, SR_IOVSupport_002C (values now: "
                   "Above4GDecoding_00B1=Disabled, SR_IOVSupport_002C=Disabled)"),
])
def test_values_the_bios_drops_at_reboot_fail_the_task(bios, bmc_for, vendor, message):
    bmc = bmc_for(vendor)
    name = {"dell_idrac8": "SriovGlobalEnable", "supermicro": "SR_IOVSupport_002C"}[vendor]
    attributes = {name: "Enabled"} if vendor == "dell_idrac8" else {name: "Enabled", "Above4GDecoding_00B1": "Enabled"}
    bmc.fault(kind="apply_fails", count=1)
    failed = bios(bmc, {"attributes": attributes, "reboot": "if_needed"}, expect_failure=True).result(0)
    assert message in failed["msg"]
    truth = bmc.wait_settled()
    assert truth["bios"]["current"][name] == "Disabled" and truth["bios"]["pending"] == {}
    assert truth["boots"] == 1


def test_expired_session_is_opened_again(bios, bmc_for):
    bmc = bmc_for("dell_idrac9")
    bmc.fault(kind="unauthorized", count=1)
    result = bios(bmc, {"attributes": {"SriovGlobalEnable": "Enabled"}}).result(0)
    assert result["changed"] is True
    assert bmc.stats()["by_path"]["POST /redfish/v1/SessionService/Sessions"] == 2
    assert bmc.state()["bios"]["pending"] == {"SriovGlobalEnable": "Enabled"}


def test_basic_auth_opens_no_session(bios, bmc_for):
    bmc = bmc_for("dell_idrac8")
    result = bios(bmc, {"attributes": {"ProcVirtualization": "Enabled"}, "auth": "basic"}).result(0)
    assert result["changed"] is False
    assert not any("Sessions" in key for key in bmc.stats()["by_path"])
