# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that turn the collection's inventory model into module input, and plans into requests."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def vgpu_requests(guests, hostvars):
    """``groups['gpu_guests'] | gpuops.vgpu.vgpu_requests(hostvars)``: one ``{name, profile}`` per guest.

    The VM name is ``vgpu_vm_name`` when set, else the inventory name; guests without ``vgpu_profile`` are left out.
    """
    requests = []
    seen = {}
    for guest in guests or []:
        host = hostvars[guest]
        profile = host.get("vgpu_profile")
        if not profile:
            continue
        if not isinstance(profile, str):
            raise AnsibleFilterError("vgpu_requests: vgpu_profile of %s must be a profile name such as grid_p40-8q, "
                                     "got %r." % (guest, profile))
        name = host.get("vgpu_vm_name") or guest
        if name in seen:
            raise AnsibleFilterError("vgpu_requests: guests %s and %s both name the VM %s; set vgpu_vm_name so each "
                                     "guest names its own VM." % (seen[name], guest, name))
        seen[name] = guest
        requests.append({"name": name, "profile": profile})
    return requests


def plan_requests(vms):
    """``vms | gpuops.vgpu.plan_requests``: ``vm_vgpu`` entries (name, profile) as ``vgpu_plan`` requests."""
    return [{"vm": vm["name"], "profile": vm["profile"]} for vm in vms]


def apply_plan(vms, plan):
    """``vms | gpuops.vgpu.apply_plan(plan)``: each ``vm_vgpu`` entry gets the host ``vgpu_plan`` chose for it.

    VMs the plan keeps where they run, or could not place, are left as they are.
    """
    hosts = dict((placement["vm"], placement["host"]) for placement in plan.get("placements", [])
                 if not placement.get("current"))
    return [dict(vm, host=hosts[vm["name"]]) if vm["name"] in hosts else dict(vm) for vm in vms]


class FilterModule(object):
    """Inventory filters."""

    def filters(self):
        return {"vgpu_requests": vgpu_requests, "plan_requests": plan_requests, "apply_plan": apply_plan}
