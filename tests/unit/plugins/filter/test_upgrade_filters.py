# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The upgrade plan filters: thin wrappers whose errors become filter errors named after the filter."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.vgpu.plugins.filter import upgrade
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.planner.test_upgrade import make, three_hosts


def test_filter_module_maps_the_names():
    assert upgrade.FilterModule().filters() == {"upgrade_plan_lines": upgrade.upgrade_plan_lines,
                                                "upgrade_step_power_action": upgrade.upgrade_step_power_action,
                                                "upgrade_host_drivers": upgrade.upgrade_host_drivers,
                                                "upgrade_guest_versions": upgrade.upgrade_guest_versions}


def test_filters_on_a_plan():
    plan = make(three_hosts(), policy="shutdown")
    assert upgrade.upgrade_plan_lines(plan)[1] == "Step 1: esxi-03 from 525.105.14 to 535.54.06."
    assert [upgrade.upgrade_step_power_action(step) for step in plan["steps"]] == ["keep", "power_off", "power_off"]


@pytest.mark.parametrize("filter_name, value, needle", [
    ("upgrade_step_power_action",
     {"step": 2, "hosts": ["h"], "vms": [{"vm": "a", "action": "suspend"}, {"vm": "b", "action": "shutdown"}]},
     "mixes VM actions"),
    ("upgrade_plan_lines", {"steps": []}, "upgrade_plan_lines: 'target'"),
])
def test_bad_input_becomes_a_filter_error(filter_name, value, needle):
    with pytest.raises(AnsibleFilterError) as err:
        getattr(upgrade, filter_name)(value)
    assert needle in str(err.value) and str(err.value).startswith(filter_name)


def test_host_drivers_from_a_compliance_scan():
    compliance = {"hosts": [
        {"name": "esxi-01", "components": {"NVD-VGPU-800": {"current": "535.54.06-1OEM.800.1.0.20613240"},
                                           "nvd-gpu-mgmt-daemon": {"current": "535.54.06-0.0.0000"}}},
        {"name": "esxi-02", "components": {"NVD-AIE-800": {"current": "525.105.14-1OEM.800.1.0.20613240"}}},
        {"name": "esxi-03", "components": {"NVD-VGPU-800": {"current": None, "target": "535.54.06"}}},
    ]}
    assert upgrade.upgrade_host_drivers(compliance) == {"esxi-01": "535.54.06", "esxi-02": "525.105.14"}
    assert upgrade.upgrade_host_drivers(None) == {}


def test_guest_versions_from_what_the_guests_report():
    toolkit = {"path": "/usr/local/cuda-11.6", "version": "11.6.2"}
    guests = {
        "vm-a": {"driver": {"version": "525.105.17"}, "cuda": {"toolkits": [toolkit], "link": {"version": "11.6.2"}}},
        # Without /usr/local/cuda the newest toolkit counts, by number (12.10 after 12.9).
        "vm-b": {"driver": {"version": "510.47.03"},
                 "cuda": {"toolkits": [{"version": "12.9.1"}, {"version": "12.10.0"}, {"version": None}],
                          "link": {"exists": False, "version": None}}},
        "vm-c": {"driver": {"installed": False, "version": None}, "cuda": {"toolkits": [], "link": {}}},
    }
    assert upgrade.upgrade_guest_versions(guests) == {
        "drivers": {"vm-a": "525.105.17", "vm-b": "510.47.03"}, "cuda": {"vm-a": "11.6.2", "vm-b": "12.10.0"},
        "vms": ["vm-a", "vm-b", "vm-c"]}
    assert upgrade.upgrade_guest_versions(None) == {"drivers": {}, "cuda": {}, "vms": []}
