# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters behind the fleet_report role: report data from the GPU inventory and the doctor, and its HTML page.

Each filter is documented in the YAML file of its name next to this one (``ansible-doc -t filter <name>``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._lazy import lazy_module

# Imported where a filter of this file runs (plugin_utils/_lazy.py says why).
_fleet_report = lazy_module("plugin_utils._fleet_report")


DATA_KEYS = ("title", "summary", "clusters", "guests", "findings")


def fleet_report_data(inventory, doctor=None, title="GPU fleet", generated_at=None, clusters=None, metrics=None):
    """``gpu_info_result | gpuops.vgpu.fleet_report_data(doctor=doctor_report)``: the report's data."""
    if not isinstance(inventory, dict) or not isinstance(inventory.get("hosts"), list):
        raise AnsibleFilterError("fleet_report_data: expects a gpuops.vgpu.gpu_info result (a dict with hosts).")
    if doctor is not None and not isinstance(doctor, dict):
        raise AnsibleFilterError("fleet_report_data: doctor must be the doctor's report (its JSON file), got %s."
                                 % type(doctor).__name__)
    if metrics is not None and not isinstance(metrics, dict):
        raise AnsibleFilterError("fleet_report_data: metrics must map each guest to its metrics URL, got %s."
                                 % type(metrics).__name__)
    return _fleet_report.build(inventory, doctor or None, title=title, generated_at=generated_at,
                               clusters=clusters or None, metrics=metrics)


def fleet_report_html(data):
    """``data | gpuops.vgpu.fleet_report_html``: one self-contained HTML page."""
    if not isinstance(data, dict) or not all(key in data for key in DATA_KEYS):
        raise AnsibleFilterError("fleet_report_html: expects the output of gpuops.vgpu.fleet_report_data.")
    return _fleet_report.render_html(data)


class FilterModule(object):
    """The fleet report's filters."""

    def filters(self):
        return {"fleet_report_data": fleet_report_data, "fleet_report_html": fleet_report_html}
