# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that turn the collection's inventory model into module input, and plans into requests."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def vgpu_requests(guests, hostvars, extra=None):
    """``groups['gpu_guests'] | gpuops.vgpu.vgpu_requests(hostvars)``: one ``{name, profile}`` per guest.

    The VM name is ``vgpu_vm_name`` when set, else the inventory name; guests without ``vgpu_profile`` are left out.
    ``extra`` entries (``{name, profile}``, for VMs outside the inventory) follow the guests'.
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
    for entry in extra or []:
        if entry["name"] in seen:
            raise AnsibleFilterError("vgpu_requests: the VM %s is both in the inventory (%s) and in the extra requests."
                                     % (entry["name"], seen[entry["name"]]))
        seen[entry["name"]] = "extra requests"
        requests.append({"name": entry["name"], "profile": entry["profile"]})
    return requests


def plan_scopes(gpu_inventory, vms, clusters):
    """``gpu_info_result | gpuops.vgpu.plan_scopes(vms, clusters)``: one ``vgpu_plan`` input per cluster.

    ``gpu_inventory`` is a ``gpu_info`` result read with ``vms`` set to the VM names. Each cluster gets its own hosts
    and the requests of the VMs registered on them, so the plan never moves a VM out of its cluster. VMs outside
    the clusters are left out (they keep their host).
    """
    hosts = gpu_inventory.get("hosts", [])
    known = sorted(set(host.get("cluster") for host in hosts if host.get("cluster")))
    missing = [cluster for cluster in clusters if cluster not in known]
    if missing:
        raise AnsibleFilterError("plan_scopes: cluster(s) %s not in the GPU inventory (known: %s)."
                                 % (", ".join(missing), ", ".join(known) or "none"))
    host_cluster = dict((host["name"], host.get("cluster")) for host in hosts)
    vm_host = dict((vm["name"], vm.get("host")) for vm in gpu_inventory.get("vms", []))
    scopes = []
    for cluster in clusters:
        requests = [{"vm": vm["name"], "profile": vm["profile"]} for vm in vms
                    if host_cluster.get(vm_host.get(vm["name"])) == cluster]
        scopes.append({"cluster": cluster, "inventory": [host for host in hosts if host.get("cluster") == cluster],
                       "requests": requests})
    return scopes


def apply_plan(vms, plans):
    """``vms | gpuops.vgpu.apply_plan(plans)``: each ``vm_vgpu`` entry gets the host ``vgpu_plan`` chose for it.

    ``plans`` is one ``vgpu_plan`` result or a list of them. VMs a plan keeps where they run, or could not place,
    are left as they are.
    """
    hosts = {}
    for plan in plans if isinstance(plans, list) else [plans]:
        hosts.update((placement["vm"], placement["host"]) for placement in plan.get("placements", [])
                     if not placement.get("current"))
    return [dict(vm, host=hosts[vm["name"]]) if vm["name"] in hosts else dict(vm) for vm in vms]


class FilterModule(object):
    """Inventory filters."""

    def filters(self):
        return {"vgpu_requests": vgpu_requests, "plan_scopes": plan_scopes, "apply_plan": apply_plan}
