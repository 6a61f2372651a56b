# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's vmotion_drill check over the record of the vgpu_vmotion_drill role."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor import run_checks


def drill_findings(record):
    return [f for f in run_checks({"vcenter": "vc", "vmotion_drill": record}) if f["check"] == "vmotion_drill"]


def record(moved=True, back_moved=True, boot_unchanged=True, passed=True):
    return {
        "finished_at": "2026-11-29T05:00:00Z",
        "moves": [{"name": "gpu-vm-01", "source": "esxi-01", "target": "esxi-03", "moved": moved, "returned": False,
                   "migration_s": 1.2, "error": None if moved else "InsufficientGraphicsResourcesFault"}],
        "back": [{"name": "gpu-vm-01", "moved": back_moved, "migration_s": 1.1, "error": None}] if moved else [],
        "guests": {"guest-01": {"vm": "gpu-vm-01", "boot_unchanged": boot_unchanged}},
        "validated": {"guest-01": {"passed": passed, "failed": [] if passed else ["license"]}},
    }


def test_no_record_no_finding():
    assert [f for f in run_checks({"vcenter": "vc"}) if f["check"] == "vmotion_drill"] == []


def test_a_drill_that_moved_back_with_its_guest_checked_passes_with_its_times():
    finding, = drill_findings(record())
    assert finding["status"] == "PASS"
    assert "gpu-vm-01 esxi-01->esxi-03 in 1.2 s, back in 1.1 s" in finding["message"]


def test_each_failure_is_named():
    assert "InsufficientGraphicsResourcesFault" in drill_findings(record(moved=False))[0]["message"]
    assert "not moved back, on esxi-03" in drill_findings(record(back_moved=False))[0]["message"]
    assert "booted again" in drill_findings(record(boot_unchanged=False))[0]["message"]
    finding, = drill_findings(record(passed=False))
    assert finding["status"] == "FAIL" and "failed license" in finding["message"]
