# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What vLCM's remediation results say: the outcome per host of an apply, the issues of a pre-check."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._remediation import apply_summary, check_issues


def test_apply_summary_carries_the_reason():
    result = {"host_info": {"host-1": {"name": "esxi-01"}, "host-2": {"name": "esxi-02"}}, "host_status": {
        "host-1": {"status": "ERROR", "notifications": {"errors": [{"message": {
            "default_message": "Host esxi-01 cannot enter maintenance mode: vm-1 (its vGPUs need vGPU vMotion)"}}]}},
        "host-2": {"status": "SKIPPED", "progress": {"message": {"default_message": "Skipped."}}},
    }}
    assert apply_summary(result) == [
        {"name": "esxi-01", "id": "host-1", "status": "ERROR",
         "message": "Host esxi-01 cannot enter maintenance mode: vm-1 (its vGPUs need vGPU vMotion)"},
        {"name": "esxi-02", "id": "host-2", "status": "SKIPPED", "message": "Skipped."}]


def test_check_issues_name_the_host_and_tell_errors_from_warnings():
    result = {"status": "ERROR", "host_info": {"host-1": {"name": "esxi-01"}}, "entity_results": [
        {"type": "CLUSTER", "check_statuses": [
            {"status": "WARNING", "issues": [{"default_message": "DPM is on"}]}]},
        {"type": "HOST", "host": "host-1", "check_statuses": [
            {"status": "OK", "issues": []},
            {"status": "ERROR", "issues": [{"default_message": "vm-1 cannot move"}]}]}]}
    assert check_issues(result) == {"errors": ["esxi-01: vm-1 cannot move"], "warnings": ["cluster: DPM is on"]}
    assert check_issues({"status": "OK", "entity_results": []}) == {"errors": [], "warnings": []}
    assert check_issues({"status": "TIMEOUT"})["errors"] == ["vLCM reports status TIMEOUT without naming an issue"]
