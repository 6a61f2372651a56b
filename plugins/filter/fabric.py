# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fabric Manager's filters; the rules are in ``plugin_utils/_fabric.py``, the docs in ``fabric_check.yml``,
``fabric_manager_plan.yml`` and ``nvswitches.yml``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._lazy import lazy_module
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._filter_errors import filter_errors

# Imported where a filter of this file runs (plugin_utils/_lazy.py says why).
_fabric = lazy_module("plugin_utils._fabric")


@filter_errors(GpuopsError)
def fabric_check(nvidia_smi):
    """``nvidia_smi_info``'s ``nvidia_smi`` | gpuops.vgpu.fabric_check: is the NVSwitch fabric ready."""
    return _fabric.check(nvidia_smi)


@filter_errors(GpuopsError)
def fabric_manager_plan(driver_version, nvswitches, version=None, src=None, package_manager="apt", machine=None,
                        service="nvidia-fabricmanager"):
    """The Fabric Manager package for the running driver, or a refusal of another version, and whether the
    machine already runs it."""
    return _fabric.plan(driver_version, nvswitches, version or None, src or None, package_manager, machine, service)


def nvswitches(lspci_text):
    """PCI addresses of the NVSwitches in ``lspci -n`` output."""
    return _fabric.nvswitches(lspci_text)


class FilterModule(object):
    """Fabric Manager's filters."""

    def filters(self):
        return {"fabric_check": fabric_check, "fabric_manager_plan": fabric_manager_plan, "nvswitches": nvswitches}
