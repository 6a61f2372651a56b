# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What keeps the vgpu_assign role's VMs from being as asked, judged from one ``gpu_info`` read.

The role runs its change steps (plan, ``vm_vgpu``, the read of where each vGPU landed) only where this finds
something; so every rule here says when those steps would act, with their own logic: ``vm_vgpu``'s change per VM
(``_vm_vgpu_changes``), its recovery of an interrupted run's power records, its check of the profiles each VM's host
offers, its power-on, and the plan's choice to keep a running VM where it is (``_planner.kept_in_place``). Where a
rule cannot tell (a VM or cluster the read lacks, input the plan refuses), it counts as a difference, so the change
steps run and say what is wrong as they always did.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._planner import kept_in_place
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._vm_vgpu_changes import vm_change
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._inventory import plan_scopes


def differences(gpu_inventory, vms, clusters=(), running=False, replan=False):
    """One line per thing that differs, naming the VM; empty when the change steps would change nothing.

    ``gpu_inventory`` is a ``gpu_info`` result read with ``vms`` and ``power_records``; ``vms`` the role's requests
    (``{name, profile}``); ``clusters`` those the role plans (none when it does not plan); ``running`` its
    ``vgpu_assign_power_on``; ``replan`` its ``vgpu_assign_replan``.
    """
    if "power_records" not in gpu_inventory:
        raise ValueError("the gpu_info result holds no power_records: read it with power_records: true, or VMs an "
                         "interrupted run left off would go unseen.")
    found = ["%s carries the power record of run %s (%s, %s): vm_vgpu finishes it" % (
        record["name"], record["run"], record["by"], record["recorded_at"]) if not record.get("problem") else
        "%s carries a power record that cannot be read (%s)" % (record["name"], record["problem"])
        for record in gpu_inventory["power_records"]]
    read = dict((vm["name"], vm) for vm in gpu_inventory.get("vms") or [])
    offered = dict((host["name"], set(profile["name"] for profile in host.get("supported_profiles") or []))
                   for host in gpu_inventory.get("hosts") or [])
    for request in vms:
        vm = read.get(request["name"])
        if vm is None:
            found.append("%s was not read" % request["name"])
            continue
        found.extend(_vm_differences(vm, request["profile"], offered.get(vm.get("host")), running))
    found.extend(_planned_anew(gpu_inventory, vms, clusters, replan))
    return found


def _vm_differences(vm, profile, offered, running):
    state = {"vgpus": vm.get("vgpus") or [], "locked": bool(vm.get("memory_reservation_locked_to_max")),
             "host": vm.get("host"), "power_state": vm.get("power_state")}
    found = []
    change = vm_change(state, {"state": "present", "profiles": [profile]})
    if change is not None:
        has = sorted(vgpu["profile"] for vgpu in state["vgpus"])
        if has == [profile]:
            found.append("%s has %s without all its memory reserved" % (vm["name"], profile))
        else:
            found.append("%s has %s, wants %s" % (vm["name"], ", ".join(has) or "no vGPU", profile))
    elif profile not in (offered or ()):
        found.append("%s: its host %s does not offer %s" % (vm["name"], vm.get("host") or "(none)", profile))
    if running and state["power_state"] != "poweredOn":
        found.append("%s is %s, wants to run" % (vm["name"], state["power_state"]))
    return found


def _planned_anew(gpu_inventory, vms, clusters, replan):
    """The VMs the plan of their cluster would not keep where they run: it would give them a host."""
    if not clusters:
        return []
    try:
        scopes = plan_scopes(gpu_inventory, vms, clusters, replan)
    except ValueError as err:
        return ["the plan cannot start: %s" % err]
    found = []
    for scope in scopes:
        if not scope["requests"]:
            continue
        try:
            kept = set(kept_in_place(scope["inventory"], scope["requests"]))
        except InputError as err:
            found.append("the plan of cluster %s refuses its input: %s" % (scope["cluster"], err.message))
            continue
        found.extend("%s does not run where the plan of cluster %s keeps it" % (request["vm"], scope["cluster"])
                     for request in scope["requests"] if request["vm"] not in kept)
    return found
