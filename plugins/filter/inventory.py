# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that turn the collection's inventory model into module input, and module results into placements.

The logic is in ``plugin_utils/_inventory.py``; each filter is documented in the YAML file of its name next to this
one (``ansible-doc -t filter <name>``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._lazy import lazy_module
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._filter_errors import filter_errors

# Imported where a filter of this file runs (plugin_utils/_lazy.py says why).
_inventory = lazy_module("plugin_utils._inventory")
_vgpu_differences = lazy_module("plugin_utils._vgpu_differences")


_inventory_filter = filter_errors(ValueError)


@_inventory_filter
def site_clusters(vgpu_clusters, vcenter_cluster=None, required=False):
    """``vgpu_clusters | default(none) | gpuops.vgpu.site_clusters(vcenter_cluster | default(none))``."""
    return _inventory.site_clusters(vgpu_clusters, vcenter_cluster, required)


@_inventory_filter
def vgpu_guests(guests, hostvars):
    """``groups['gpu_guests'] | gpuops.vgpu.vgpu_guests(hostvars)``: one ``{name, vm, profile}`` per guest."""
    return _inventory.guests(guests, hostvars)


@_inventory_filter
def vgpu_requests(guests, hostvars, extra=None):
    """``groups['gpu_guests'] | gpuops.vgpu.vgpu_requests(hostvars)``: one ``{name, profile}`` per guest."""
    return _inventory.requests(guests, hostvars, extra)


@_inventory_filter
def plan_scopes(gpu_inventory, vms, clusters, replan=False):
    """``gpu_info_result | gpuops.vgpu.plan_scopes(vms, clusters)``: one ``vgpu_plan`` input per cluster."""
    return _inventory.plan_scopes(gpu_inventory, vms, clusters, boolean(replan, strict=False))


@_inventory_filter
def apply_plan(vms, plans):
    """``vms | gpuops.vgpu.apply_plan(plans)``: each ``vm_vgpu`` entry gets the host ``vgpu_plan`` chose for it."""
    return _inventory.apply_plan(vms, plans)


@_inventory_filter
def vgpu_placement(gpu_inventory, vms, running=False):
    """``gpu_info_result | gpuops.vgpu.vgpu_placement(vms)``: where each VM's vGPU is, and whether it is right."""
    return _inventory.placement(gpu_inventory, vms, running)


@_inventory_filter
def vgpu_differences(gpu_inventory, vms, clusters=None, running=False, replan=False):
    """``gpu_info_result | gpuops.vgpu.vgpu_differences(vms, clusters)``: what the VM layer would change, by VM."""
    return _vgpu_differences.differences(gpu_inventory, vms, clusters or [], boolean(running, strict=False),
                                         boolean(replan, strict=False))


class FilterModule(object):
    """Inventory filters."""

    def filters(self):
        return {"site_clusters": site_clusters, "vgpu_guests": vgpu_guests, "vgpu_requests": vgpu_requests, "plan_scopes": plan_scopes,
                "apply_plan": apply_plan, "vgpu_placement": vgpu_placement, "vgpu_differences": vgpu_differences}
