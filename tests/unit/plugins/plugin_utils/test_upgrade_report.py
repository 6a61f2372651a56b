# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The upgrade plan as text and as vLCM power actions, on plans the planner makes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._upgrade_report import plan_lines, step_power_action
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.planner.test_upgrade import make, three_hosts


def test_lines_name_the_target_steps_vms_and_guest_order():
    lines = plan_lines(make(three_hosts(), remediation_s=600, policy="suspend", vm_policies={"vm-c": "migrate"}))
    assert lines[0] == "Target: vGPU Manager 535.54.06, guest driver 535.54.03 (vGPU 16.0)."
    assert lines[1:4] == [
        "Step 1: esxi-03 from 525.105.14 to 535.54.06.",
        "Step 2: esxi-02 from 525.105.14 to 535.54.06.",
        "  vm-c (grid_p40-8q on esxi-02): migrate to esxi-03 (GPU 0000:3b:00.0).",
    ]
    assert "  vm-a (grid_p40-8q on esxi-01): suspend, down about 600 s." in lines
    assert lines[-3:] == [
        "Guest %d: %s, GRID driver 525.105.17 to 535.54.03, after every host of its cluster." % (n, where)
        for n, where in ((1, "vm-c on esxi-03"), (2, "vm-a on esxi-01"), (3, "vm-b on esxi-01"))]


def test_lines_say_what_is_blocked_and_when_nothing_is_to_do():
    blocked = plan_lines(make(three_hosts(), hot_migrate=False))
    assert [line.split(" should")[0] for line in blocked if line.startswith("Blocked:")] == [
        "Blocked: VM vm-c", "Blocked: VM vm-a", "Blocked: VM vm-b"]
    done = plan_lines(make(three_hosts(), current_host_driver="535.54.06", current_guest_driver="535.54.03"))
    assert done[1:] == ["Cluster gpu-cluster: esxi-01, esxi-02, esxi-03 already run the target."]
    assert plan_lines(make([], current_host_driver="535.54.06"))[1:] == [
        "Nothing to do: every host and guest runs the target."]


@pytest.mark.parametrize("policy, action", [("migrate", "keep"), ("suspend", "suspend"), ("shutdown", "power_off")])
def test_each_policy_maps_to_vlcms_power_action(policy, action):
    plan = make(three_hosts(), policy=policy)
    assert [step_power_action(step) for step in plan["steps"]] == ["keep", action, action]


def test_a_step_that_mixes_actions_is_refused():
    plan = make(three_hosts(), policy="suspend", vm_policies={"vm-a": "shutdown"})
    with pytest.raises(InputError) as err:
        step_power_action(plan["steps"][-1])
    assert "mixes VM actions: shutdown: vm-a; suspend: vm-b" in str(err.value)
