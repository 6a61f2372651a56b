# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""BIOS logic: registries, validation, intent profiles per vendor, pending-aware diff and what to send."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc import _bios as bios
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, InputError

ON_OFF = ["Enabled", "Disabled"]


def entry(name, values=None, kind=None, read_only=False, **extra):
    item = {"AttributeName": name, "Type": kind or ("Enumeration" if values else "String"), "ReadOnly": read_only}
    if values:
        item["Value"] = [{"ValueName": value, "ValueDisplayName": value} for value in values]
    item.update(extra)
    return item


def locked_unless(target, attribute, value):
    return {"DependencyFor": target, "Type": "Map", "Dependency": {
        "MapFrom": [{"MapFromAttribute": attribute, "MapFromCondition": "NEQ", "MapFromProperty": "CurrentValue",
                     "MapFromValue": value}],
        "MapToAttribute": target, "MapToProperty": "ReadOnly", "MapToValue": True}}


def registry(attributes, dependencies=()):
    return bios.Registry.from_redfish({"RegistryEntries": {"Attributes": attributes,
                                                           "Dependencies": list(dependencies)}})


DELL_13G = registry([
    entry("ProcVirtualization", ON_OFF), entry("SriovGlobalEnable", ON_OFF), entry("MmioAbove4Gb", ON_OFF),
    entry("SysProfile", ["PerfPerWattOptimizedDapc", "PerfOptimized", "Custom"]),
    entry("ProcCStates", ON_OFF), entry("AcPwrRcvry", ["On", "Off", "Last"]),
    entry("AcPwrRcvryUserDelay", kind="Integer", LowerBound=60, UpperBound=240),
    entry("SystemServiceTag", kind="String", read_only=True, MaxLength=7),
    entry("SetupPassword", kind="Password"),
], [locked_unless("ProcCStates", "SysProfile", "Custom")])
DELL_13G_CURRENT = {"ProcVirtualization": "Enabled", "SriovGlobalEnable": "Disabled", "MmioAbove4Gb": "Disabled",
                    "SysProfile": "PerfPerWattOptimizedDapc", "ProcCStates": "Enabled", "AcPwrRcvry": "Last",
                    "AcPwrRcvryUserDelay": 60, "SystemServiceTag": "7XK2F42", "SetupPassword": None}

DELL_14G = registry([entry("ProcVirtualization", ON_OFF), entry("SriovGlobalEnable", ON_OFF),
                     entry("MmioAbove4Gb", ON_OFF), entry("MemoryMappedIOH", ["512GB", "12TB", "56TB"])])
HPE = registry([entry("ProcVirtualization", ON_OFF), entry("IntelProcVtd", ON_OFF), entry("Sriov", ON_OFF),
                entry("WorkloadProfile", ["GeneralPowerEfficientCompute", "Custom"]),
                entry("MinProcIdlePower", ["C6", "C1E", "NoCStates"])],
               [locked_unless("MinProcIdlePower", "WorkloadProfile", "Custom")])
SUPERMICRO = registry([
    entry("IntelVirtualizationTechnology_002B", ["Disable", "Enable"]),
    entry("IntelVTforDirectedI_O_VT_d_0025", ["Disable", "Enable"]),
    entry("Above4GDecoding_00B1", ["Disabled", "Enabled"]),
    entry("SR_IOVSupport_002C", ["Disabled", "Enabled"]),
    entry("PCIeAERSupport_00A4", ["Disable", "Enable"]),
    entry("QuietBoot", kind="Boolean"),
], [locked_unless("SR_IOVSupport_002C", "Above4GDecoding_00B1", "Enabled")])
SUPERMICRO_CURRENT = {"IntelVirtualizationTechnology_002B": "Disable", "IntelVTforDirectedI_O_VT_d_0025": "Disable",
                      "Above4GDecoding_00B1": "Disabled", "SR_IOVSupport_002C": "Disabled",
                      "PCIeAERSupport_00A4": "Disable", "QuietBoot": True}


# -- registry ------------------------------------------------------------------------------------------------------

def test_registry_reads_types_values_and_read_only():
    assert DELL_13G.attributes["SriovGlobalEnable"]["values"] == ON_OFF
    assert DELL_13G.attributes["AcPwrRcvryUserDelay"]["type"] == "Integer"
    assert DELL_13G.attributes["AcPwrRcvryUserDelay"]["upper"] == 240
    assert DELL_13G.read_only_reason("SystemServiceTag", DELL_13G_CURRENT) == "SystemServiceTag is read-only"
    assert DELL_13G.read_only_reason("SriovGlobalEnable", DELL_13G_CURRENT) is None


def test_dependency_locks_until_the_other_attribute_changes():
    reason = DELL_13G.read_only_reason("ProcCStates", DELL_13G_CURRENT)
    assert reason == ("ProcCStates is read-only while SysProfile is PerfPerWattOptimizedDapc "
                      "(writable when SysProfile is Custom)")
    assert DELL_13G.read_only_reason("ProcCStates", dict(DELL_13G_CURRENT, SysProfile="Custom")) is None


def test_dependency_terms_combine_with_and_or():
    reg = bios.Registry({"X": {"type": "String", "values": None, "read_only": False}}, [("X", [
        {"MapFromAttribute": "A", "MapFromCondition": "EQU", "MapFromValue": 1},
        {"MapFromAttribute": "B", "MapFromCondition": "GTR", "MapFromValue": 5, "MapTerms": "OR"},
        {"MapFromAttribute": "C", "MapFromCondition": "EQU", "MapFromValue": "y", "MapTerms": "AND"},
    ])])
    assert reg.read_only_reason("X", {"A": 1, "B": 0, "C": "y"})
    assert reg.read_only_reason("X", {"A": 0, "B": 9, "C": "y"})
    assert reg.read_only_reason("X", {"A": 1, "B": 9, "C": "n"}) is None
    assert reg.read_only_reason("X", {"A": 0, "B": 0, "C": "y"}) is None


def test_dependencies_other_than_read_only_maps_are_ignored():
    reg = bios.Registry.from_redfish({"RegistryEntries": {
        "Attributes": [entry("A", ON_OFF), entry("B", ON_OFF)],
        "Dependencies": [{"DependencyFor": "B", "Type": "Map", "Dependency": {
            "MapFrom": [{"MapFromAttribute": "A", "MapFromCondition": "EQU", "MapFromValue": "Enabled"}],
            "MapToAttribute": "B", "MapToProperty": "CurrentValue", "MapToValue": "Enabled"}}]}})
    assert reg.dependencies == []


# -- validation ------------------------------------------------------------------------------------------------------

def test_validate_coerces_to_registry_types():
    wanted = bios.validate_attributes({"AcPwrRcvryUserDelay": "120", "SriovGlobalEnable": "Enabled"},
                                      DELL_13G_CURRENT, {}, DELL_13G)
    assert wanted == {"AcPwrRcvryUserDelay": 120, "SriovGlobalEnable": "Enabled"}
    assert bios.validate_attributes({"QuietBoot": "false"}, SUPERMICRO_CURRENT, {}, SUPERMICRO) == {"QuietBoot": False}


def test_validate_reports_every_problem_before_anything_is_sent():
    with pytest.raises(InputError) as caught:
        bios.validate_attributes({
            "ProcVirtualisation": "Enabled",
            "SriovGlobalEnable": "Maybe",
            "AcPwrRcvry": True,
            "AcPwrRcvryUserDelay": 500,
            "SetupPassword": "secret",
            "ProcCStates": "Disabled",
            "SystemServiceTag": "ABCDEFG",
        }, DELL_13G_CURRENT, {}, DELL_13G)
    problems = caught.value.details["problems"]
    assert "ProcVirtualisation is not a BIOS attribute of this server (did you mean ProcVirtualization?)" in problems
    assert "SriovGlobalEnable: 'Maybe' is not one of Enabled, Disabled" in problems
    assert any(p.startswith("AcPwrRcvry: True is not one of On, Off, Last (YAML reads unquoted") for p in problems)
    assert "AcPwrRcvryUserDelay: 500 is outside 60..240" in problems
    assert any(p.startswith("SetupPassword is a write-only BIOS password") for p in problems)
    assert "ProcCStates is read-only while SysProfile is PerfPerWattOptimizedDapc (writable when SysProfile is " \
           "Custom)" in problems
    assert "SystemServiceTag is read-only" in problems
    assert "secret" not in str(caught.value)
    assert len(problems) == 7


def test_dependent_attribute_is_accepted_with_its_unlock_in_the_same_input():
    wanted = bios.validate_attributes({"SysProfile": "Custom", "ProcCStates": "Disabled"}, DELL_13G_CURRENT, {},
                                      DELL_13G)
    assert wanted == {"SysProfile": "Custom", "ProcCStates": "Disabled"}


def test_dependent_attribute_is_accepted_when_its_unlock_is_pending():
    pending = {"SysProfile": "Custom"}
    assert bios.validate_attributes({"ProcCStates": "Disabled"}, DELL_13G_CURRENT, pending, DELL_13G) == {
        "ProcCStates": "Disabled"}


def test_read_only_attribute_at_its_current_value_is_no_change_and_accepted():
    assert bios.validate_attributes({"SystemServiceTag": "7XK2F42"}, DELL_13G_CURRENT, {}, DELL_13G) == {
        "SystemServiceTag": "7XK2F42"}


def test_without_registry_names_come_from_current_attributes():
    reg = bios.Registry.from_current({"Foo": "Bar", "Count": 3})
    assert bios.validate_attributes({"Foo": "Baz", "Count": "4"}, {"Foo": "Bar", "Count": 3}, {}, reg) == {
        "Foo": "Baz", "Count": 4}
    with pytest.raises(InputError, match="Fooo is not a BIOS attribute of this server"):
        bios.validate_attributes({"Fooo": "x"}, {"Foo": "Bar"}, {}, reg)


def test_string_pattern_and_length_checks():
    reg = registry([entry("AssetTag", kind="String", MaxLength=4, ValueExpression="[A-Z]+")])
    assert bios.validate_attributes({"AssetTag": "ABC"}, {}, {}, reg) == {"AssetTag": "ABC"}
    with pytest.raises(InputError, match="longer than 4"):
        bios.validate_attributes({"AssetTag": "ABCDE"}, {}, {}, reg)
    with pytest.raises(InputError, match="does not match"):
        bios.validate_attributes({"AssetTag": "ab"}, {}, {}, reg)


# -- pending values ----------------------------------------------------------------------------------------------------

def test_pending_values_from_a_settings_object_with_only_changes_or_every_value():
    current = {"A": "Enabled", "B": "Disabled"}
    assert bios.pending_values(current, {"B": "Enabled"}) == {"B": "Enabled"}
    assert bios.pending_values(current, {"A": "Enabled", "B": "Enabled"}) == {"B": "Enabled"}
    assert bios.pending_values(current, {"SetupPassword": None}) == {}
    assert bios.pending_values(current, None) == {}


# -- intent profiles -------------------------------------------------------------------------------------------------

def test_dell_13g_profile_maps_intents_and_reports_what_is_missing():
    wanted, intents = bios.resolve_profile("gpu_virtualization", "dell", DELL_13G, DELL_13G_CURRENT, {})
    assert wanted == {"ProcVirtualization": "Enabled", "SriovGlobalEnable": "Enabled", "MmioAbove4Gb": "Enabled"}
    assert intents["iommu"]["status"] == "implied"
    assert intents["iommu"]["via"] == "cpu_virtualization"
    assert intents["pcie_aer"] == {"status": "not_exposed", "attributes": {}, "note": "not exposed by this BIOS"}


def test_dell_14g_profile_adds_the_optional_mmio_window():
    current = {"ProcVirtualization": "Disabled", "SriovGlobalEnable": "Disabled", "MmioAbove4Gb": "Enabled",
               "MemoryMappedIOH": "12TB"}
    wanted, intents = bios.resolve_profile("gpu_virtualization", "dell", DELL_14G, current, {})
    assert intents["mmio_above_4g"]["attributes"] == {"MmioAbove4Gb": "Enabled", "MemoryMappedIOH": "56TB"}
    assert wanted["MemoryMappedIOH"] == "56TB"


def test_hpe_profile_uses_hpe_names():
    wanted, intents = bios.resolve_profile("gpu_virtualization", "hpe", HPE, {}, {})
    assert wanted == {"ProcVirtualization": "Enabled", "IntelProcVtd": "Enabled", "Sriov": "Enabled"}
    assert intents["mmio_above_4g"]["status"] == "not_exposed"


def test_supermicro_profile_matches_suffixes_values_and_its_dependency():
    wanted, intents = bios.resolve_profile("gpu_virtualization", "supermicro", SUPERMICRO, SUPERMICRO_CURRENT, {})
    assert wanted == {"IntelVirtualizationTechnology_002B": "Enable", "IntelVTforDirectedI_O_VT_d_0025": "Enable",
                      "Above4GDecoding_00B1": "Enabled", "SR_IOVSupport_002C": "Enabled",
                      "PCIeAERSupport_00A4": "Enable"}
    assert all(info["status"] is None for info in intents.values())


def test_supermicro_suffix_match_needs_four_hex_digits():
    assert bios.Req("SR_IOVSupport_*").find(["SR_IOVSupport_002C"]) == "SR_IOVSupport_002C"
    assert bios.Req("SR_IOVSupport_*").find(["SR_IOVSupport_Extra", "SR_IOVSupportX_002C"]) is None


def test_locked_intent_attribute_is_left_out_and_reported_read_only():
    reg = registry([entry("ProcVirtualization", ON_OFF, read_only=True), entry("SriovGlobalEnable", ON_OFF),
                    entry("MmioAbove4Gb", ON_OFF)])
    current = {"ProcVirtualization": "Disabled", "SriovGlobalEnable": "Disabled", "MmioAbove4Gb": "Disabled"}
    wanted, intents = bios.resolve_profile("gpu_virtualization", "dell", reg, current, {})
    assert "ProcVirtualization" not in wanted
    assert intents["cpu_virtualization"]["status"] == "read_only"
    assert bios.unmet_intents(intents) == {"cpu_virtualization": "ProcVirtualization is read-only",
                                           "pcie_aer": "not exposed by this BIOS"}


def test_a_lock_that_depends_on_a_dropped_attribute_is_dropped_too():
    reg = registry([entry("Above4GDecoding_00B1", ["Disabled", "Enabled"], read_only=True),
                    entry("SR_IOVSupport_002C", ["Disabled", "Enabled"])],
                   [locked_unless("SR_IOVSupport_002C", "Above4GDecoding_00B1", "Enabled")])
    current = {"Above4GDecoding_00B1": "Disabled", "SR_IOVSupport_002C": "Disabled"}
    wanted, intents = bios.resolve_profile("gpu_virtualization", "supermicro", reg, current, {})
    assert wanted == {}
    assert intents["sriov"]["status"] == "read_only"
    assert "Above4GDecoding_00B1 is Disabled" in intents["sriov"]["note"]


def test_an_intent_without_an_enabling_value_is_not_exposed():
    reg = registry([entry("Sriov", ["Auto", "Off"])])
    _wanted, intents = bios.resolve_profile("gpu_virtualization", "hpe", reg, {}, {})
    assert intents["sriov"]["status"] == "not_exposed"
    assert intents["sriov"]["note"] == "Sriov has no value that enables it (allowed: Auto, Off)"


def test_profile_refuses_an_unknown_vendor():
    with pytest.raises(InputError, match="knows the BIOS attributes of Dell, HPE and Supermicro"):
        bios.resolve_profile("gpu_virtualization", "generic", DELL_13G, {}, {})


def test_intent_report_gives_implied_intents_their_providers_status():
    wanted, intents = bios.resolve_profile("gpu_virtualization", "dell", DELL_13G, DELL_13G_CURRENT, {})
    pending_after = {"SriovGlobalEnable": "Enabled", "MmioAbove4Gb": "Enabled"}
    report = bios.intent_report(intents, wanted, pending_after, {"SriovGlobalEnable": "Enabled"})
    assert report["cpu_virtualization"] == {"status": "ok", "attributes": {"ProcVirtualization": "Enabled"},
                                            "changed": False}
    assert report["iommu"]["status"] == "ok"
    assert report["iommu"]["via"] == "cpu_virtualization"
    assert report["sriov"]["status"] == "pending"
    assert report["sriov"]["changed"] is True
    assert report["mmio_above_4g"]["changed"] is False
    assert report["pcie_aer"]["status"] == "not_exposed"


# -- changes to send -------------------------------------------------------------------------------------------------

CURRENT = {"A": "Disabled", "B": "Disabled", "C": "Enabled"}
WANTED = {"A": "Enabled", "B": "Enabled", "C": "Enabled"}
SCHEDULED = {"@odata.id": "/Jobs/JID_1", "Id": "JID_1", "JobType": "BIOSConfiguration", "JobState": "Scheduled"}


def test_only_what_differs_from_pending_else_current_is_sent():
    changes = bios.bios_changes(CURRENT, {"A": "Enabled"}, WANTED, False, None, False)
    assert changes.attributes == {"B": "Enabled"}
    assert changes.steps == [("patch", {"B": "Enabled"})]
    assert changes.pending_after == {"A": "Enabled", "B": "Enabled"}


def test_second_run_before_the_reboot_changes_nothing():
    changes = bios.bios_changes(CURRENT, {"A": "Enabled", "B": "Enabled"}, WANTED, True, SCHEDULED, False)
    assert not changes.changed
    assert changes.pending_after == {"A": "Enabled", "B": "Enabled"}


def test_dell_without_apply_time_needs_a_job_after_the_patch():
    changes = bios.bios_changes(CURRENT, {}, WANTED, True, None, False)
    assert changes.steps == [("patch", {"A": "Enabled", "B": "Enabled"}), ("create_job",)]


def test_dell_with_apply_time_gets_the_job_from_the_patch():
    changes = bios.bios_changes(CURRENT, {}, WANTED, True, None, True)
    assert changes.steps == [("patch", {"A": "Enabled", "B": "Enabled"})]


def test_dell_pending_values_without_a_job_get_one():
    changes = bios.bios_changes(CURRENT, {"A": "Enabled", "B": "Enabled"}, WANTED, True, None, False)
    assert changes.steps == [("create_job",)]


def test_dell_scheduled_job_is_replaced_keeping_earlier_pending_values():
    pending = {"A": "Enabled", "Other": "x"}
    changes = bios.bios_changes(dict(CURRENT, Other="y"), pending, WANTED, True, SCHEDULED, False)
    assert changes.steps == [("delete_job", SCHEDULED), ("patch", {"A": "Enabled", "Other": "x", "B": "Enabled"}),
                             ("create_job",)]


def test_running_job_refuses_new_values():
    running = dict(SCHEDULED, JobState="Running")
    with pytest.raises(ApiError, match="is Running"):
        bios.bios_changes(CURRENT, {}, WANTED, True, running, False)


def test_values_already_current_need_nothing_even_on_dell():
    changes = bios.bios_changes(WANTED, {}, WANTED, True, None, False)
    assert not changes.changed
    assert changes.pending_after == {}


def test_open_bios_job_ignores_other_and_finished_jobs():
    jobs = [dict(SCHEDULED, JobType="RAIDConfiguration"), dict(SCHEDULED, JobState="Completed"), SCHEDULED]
    assert bios.open_bios_job(jobs) is SCHEDULED
    assert bios.open_bios_job(jobs[:2]) is None


def test_apply_time_only_when_advertised():
    assert bios.choose_apply_time(["Immediate", "OnReset"]) == "OnReset"
    assert bios.choose_apply_time(["Immediate"]) is None
    assert bios.choose_apply_time([]) is None


def test_diff_view_shows_current_and_pending_of_the_wanted_attributes():
    view = bios.diff_view(["A", "B"], CURRENT, {"A": "Enabled"}, {"A": "Enabled", "B": "Enabled"})
    assert view == {
        "before": {"current": {"A": "Disabled", "B": "Disabled"}, "pending": {"A": "Enabled"}},
        "after": {"current": {"A": "Disabled", "B": "Disabled"}, "pending": {"A": "Enabled", "B": "Enabled"}},
    }
