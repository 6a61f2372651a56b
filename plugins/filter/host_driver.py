# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host_driver role's plan, decided once from one vlcm_info read, and its check of the hosts after a
remediation. The logic is in ``plugin_utils/_host_driver_plan.py``; the docs in the ``.yml`` file named after each
filter."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._lazy import lazy_module
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._filter_errors import filter_errors

# Imported where a filter of this file runs (plugin_utils/_lazy.py says why).
_plan = lazy_module("plugin_utils._host_driver_plan")

_host_driver_filter = filter_errors(GpuopsError, KeyError, TypeError)


@_host_driver_filter
def host_driver_plan(read, locations, esxi_hostnames=None, remediate=True, rescan=False, check_mode=False,
                     imported=None):
    """``read | gpuops.vgpu.host_driver_plan(locations, ...)``: the steps of the host_driver role a cluster needs."""
    return _plan.host_driver_plan(read, locations, esxi_hostnames, remediate, rescan, check_mode, imported)


@_host_driver_filter
def host_driver_checks(compliance, components, esxi_hostnames=None):
    """``compliance | gpuops.vgpu.host_driver_checks(components)``: whether each host complies and runs them."""
    return _plan.host_checks(compliance, components, esxi_hostnames)


class FilterModule(object):
    """The host_driver role's plan and host checks."""

    def filters(self):
        return {
            "host_driver_checks": host_driver_checks,
            "host_driver_plan": host_driver_plan,
        }
