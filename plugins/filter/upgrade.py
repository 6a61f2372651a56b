# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Playbook filters over an upgrade plan of gpuops.vgpu.upgrade_plan.

Each filter is documented in the YAML file of its name next to this one (``ansible-doc -t filter <name>``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._lazy import lazy_module
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._filter_errors import filter_errors

# Imported where a filter of this file runs (plugin_utils/_lazy.py says why).
_upgrade_report = lazy_module("plugin_utils._upgrade_report")


_plan_filter = filter_errors(GpuopsError, KeyError, TypeError)


@_plan_filter
def upgrade_plan_lines(plan):
    """``upgrade | gpuops.vgpu.upgrade_plan_lines``: the plan as lines of text."""
    return _upgrade_report.plan_lines(plan)


@_plan_filter
def upgrade_step_power_action(step):
    """``step | gpuops.vgpu.upgrade_step_power_action``: vlcm_remediate's vm_power_action for a plan step."""
    return _upgrade_report.step_power_action(step)


@_plan_filter
def upgrade_host_drivers(compliance):
    """``scan.compliance_before | gpuops.vgpu.upgrade_host_drivers``: the vGPU Manager each host runs."""
    return _upgrade_report.host_drivers(compliance)


@_plan_filter
def upgrade_guest_versions(guests):
    """``{vm: gpu_guest} | gpuops.vgpu.upgrade_guest_versions``: the GRID driver and CUDA toolkit each guest runs."""
    return _upgrade_report.guest_versions(guests)


class FilterModule(object):
    """The collection's upgrade plan filters."""

    def filters(self):
        return {
            "upgrade_plan_lines": upgrade_plan_lines,
            "upgrade_step_power_action": upgrade_step_power_action,
            "upgrade_host_drivers": upgrade_host_drivers,
            "upgrade_guest_versions": upgrade_guest_versions,
        }
