# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Playbook filters over the vGPU catalog: profile names, driver branches, CUDA and host/guest compatibility.

Each filter is documented in the YAML file of its name next to this one (``ansible-doc -t filter <name>``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._lazy import lazy_module
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._filter_errors import filter_errors

# Imported where a filter of this file runs (plugin_utils/_lazy.py says why).
_catalog = lazy_module("module_utils.nvidia._catalog")
_compatibility = lazy_module("module_utils.nvidia._compatibility")


# The catalog's input errors become filter errors that carry the catalog's message.
_catalog_filter = filter_errors(GpuopsError)


@_catalog_filter
def vgpu_profile(name):
    """``'grid_p40-8q' | gpuops.vgpu.vgpu_profile``: what a vGPU profile name means."""
    return _catalog.parse_profile(name)


@_catalog_filter
def driver_branch(version):
    """``'525.105.17' | gpuops.vgpu.driver_branch``: branch, vGPU release, LTS and highest CUDA of a driver."""
    return _compatibility.driver_branch(version)


@_catalog_filter
def cuda_driver_ok(cuda_version, driver_version):
    """``'12.1.1' | gpuops.vgpu.cuda_driver_ok('525.105.17')``: does the driver run this CUDA toolkit."""
    return _compatibility.cuda_driver_ok(cuda_version, driver_version)


@_catalog_filter
def vgpu_guest_compat(host_driver, guest_driver):
    """``host | gpuops.vgpu.vgpu_guest_compat(guest)``: does the guest driver work with the host vGPU Manager."""
    return _compatibility.vgpu_guest_compat(host_driver, guest_driver)


class FilterModule(object):
    """The collection's vGPU filters."""

    def filters(self):
        return {
            "vgpu_profile": vgpu_profile,
            "driver_branch": driver_branch,
            "cuda_driver_ok": cuda_driver_ok,
            "vgpu_guest_compat": vgpu_guest_compat,
        }
