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
    assert sorted(doctor.FilterModule().filters()) == ["doctor_checks", "doctor_facts", "doctor_summary",
                                                       "doctor_table"]
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
