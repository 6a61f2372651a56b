# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""passthrough_plan's real main() on the fake vCenter of the plan's tests."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.modules import passthrough_plan
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.vcenter.test_passthrough_plan import (
    HOST,
    PAIRS,
    converged,
)
from ansible_collections.gpuops.vgpu.tests.unit.plugins.modules.module_runner import CONNECTION, fake_vcenter, run_main

pytest.importorskip("pyVmomi")


@pytest.mark.parametrize("check_mode", [False, True])
def test_reads_and_never_changes(monkeypatch, capsys, check_mode):
    client = converged()
    sessions = fake_vcenter(monkeypatch, client)
    args = dict(CONNECTION, vms=[{"name": "pt-vm-01", "gpus": 2}], all_gpus_not_used_for_vgpu=True, nvlink=True,
                nvlink_sets={HOST: PAIRS})
    code, result = run_main(passthrough_plan.main, args, capsys, check_mode=check_mode, diff=True)
    assert code == 0 and result["changed"] is False and "diff" not in result
    assert (result["host_differences"], result["vm_differences"]) == ([], [])
    assert client.reads == ["vms", "hosts"] and sessions[0].closed


def test_without_a_device_selection_only_the_vms_are_judged(monkeypatch, capsys):
    client = converged()
    client.host_items[0]["config.pciPassthruInfo"][3].passthruEnabled = False
    fake_vcenter(monkeypatch, client)
    code, result = run_main(passthrough_plan.main, dict(CONNECTION, vms=[{"name": "pt-vm-01", "gpus": 2}]), capsys)
    assert code == 0 and result["host_differences"] == [] and result["vm_differences"] == []


def test_bad_options_fail_before_connecting(monkeypatch, capsys):
    sessions = fake_vcenter(monkeypatch, converged())
    code, result = run_main(passthrough_plan.main, dict(CONNECTION, vms=[{"name": "x", "gpus": 1, "devices": ["a"]}]),
                            capsys)
    assert code == 1 and "mutually exclusive" in result["msg"] and sessions == []
