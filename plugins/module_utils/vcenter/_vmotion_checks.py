# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a running vGPU VM may move by vMotion, and where to: pure logic on ``gpu_info``-shaped data.

The rules, each a refusal that names what is missing (vSphere: "vMotion of vGPU VMs", vgpu.hotmigrate.enabled; the
reference procedure: hosts alike, ECC on everywhere or off everywhere, a GPU carved the same way; NVIDIA's release
notes: a vGPU Manager accepts guest drivers of its own branch, the previous one and, when LTS, the previous LTS):

- vCenter's ``vgpu.hotmigrate.enabled`` is true;
- the target is another host of the source's cluster, connected and not in maintenance mode;
- it has a GPU of the source GPU's model that offers the profile, in Shared Direct and the same vGPU mode
  (equal- or mixed-size), idle or carved for this profile (equal-size mode), with room for the VM's vGPUs;
- ECC is the same on both hosts, where both are known;
- the target's vGPU Manager accepts the guest's driver, where both are known.

What is not known (ECC, drivers) is not refused: it is listed in ``unchecked``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _compatibility as compat

SHARED_DIRECT = "sharedDirect"
EQUAL_SIZE = "sameSize"


def plan_moves(vms, hosts, hot_migrate, targets=None, host_facts=None, guest_drivers=None):
    """One entry per VM of ``vms`` (``gpu_info``'s VM shape): ``vm``, ``source``, ``profile``, ``count``,
    ``target`` (None when refused), ``refused`` (reasons, empty when the VM may move), ``unchecked`` and
    ``candidates`` (per other host of the cluster, why not, None for a host that fits).

    ``targets`` names a VM's target host; ``host_facts`` per host ``ecc`` (bool) and ``driver`` (vGPU Manager
    version); ``guest_drivers`` per VM its GRID driver version. VMs moved earlier in the list take their slots on the
    target before the next VM is judged."""
    targets = targets or {}
    host_facts = host_facts or {}
    guest_drivers = guest_drivers or {}
    by_name = dict((host["name"], _copy_host(host)) for host in hosts)
    plans = []
    for vm in vms:
        plan = _plan_one(vm, by_name, hot_migrate, targets.get(vm["name"]), host_facts,
                         guest_drivers.get(vm["name"]))
        if plan["target"] is not None:
            _take(by_name[plan["target"]], plan)
        plans.append(plan)
    return plans


def refusal_message(plans):
    """``"vm: reason; reason"`` for each refused plan, joined; None when every VM may move."""
    refused = ["%s: %s" % (plan["vm"], "; ".join(plan["refused"])) for plan in plans if plan["refused"]]
    return " | ".join(refused) or None


def _copy_host(host):
    copied = dict(host)
    copied["gpus"] = [dict(gpu, profiles=list(gpu.get("profiles") or []), vms=list(gpu.get("vms") or []))
                      for gpu in host.get("gpus") or []]
    return copied


def _plan_one(vm, hosts, hot_migrate, wanted, host_facts, guest_driver):
    profiles = sorted(set(device["profile"] for device in vm["vgpus"]))
    profile = profiles[0] if profiles else None
    source = hosts.get(vm.get("host"))
    plan = {"vm": vm["name"], "source": vm.get("host"), "profile": profile, "count": len(vm["vgpus"]),
            "target": None, "refused": [], "unchecked": [], "candidates": {}}
    if not hot_migrate:
        plan["refused"].append("vgpu.hotmigrate.enabled is false in vCenter: vGPU VMs cannot move while running")
    if source is None:
        where = vm.get("host") or "see the cluster and datacenter options"
        plan["refused"].append("it runs on no host in scope (%s)" % where)
        return plan
    if not source.get("cluster"):
        plan["refused"].append("its host %s is standalone: vMotion needs another host of its cluster" % source["name"])
        return plan
    gpu = _source_gpu(source, vm["name"])
    plan["model"] = gpu.get("model") if gpu else None
    plan["vgpu_mode"] = (gpu.get("vgpu_mode") if gpu else None) or EQUAL_SIZE
    names = sorted(name for name, host in hosts.items()
                   if host.get("cluster") == source["cluster"] and name != source["name"])
    if wanted is not None and wanted not in names:
        plan["refused"].append("target host %s is not another host of cluster %s (hosts: %s)" % (
            wanted, source["cluster"], ", ".join(names) or "none"))
        return plan
    unknown = {}
    for name in names if wanted is None else [wanted]:
        why, unknown[name] = _host_refusal(plan, hosts[name]), []
        if why is None:
            why = _alike(source["name"], name, host_facts, guest_driver, unknown[name])
        plan["candidates"][name] = why
    fitting = [name for name, why in sorted(plan["candidates"].items()) if why is None]
    if not fitting:
        reasons = "; ".join("%s %s" % item for item in sorted(plan["candidates"].items()))
        plan["refused"].append("no host of cluster %s can take it: %s" % (source["cluster"], reasons or
                                                                          "the cluster has no other host"))
        return plan
    if not plan["refused"]:
        plan["target"] = min(fitting, key=lambda name: (-_room(hosts[name], plan), name))
        plan["unchecked"] = unknown[plan["target"]]
    return plan


def _source_gpu(host, vm_name):
    return next((gpu for gpu in host.get("gpus") or [] if vm_name in (gpu.get("vms") or [])), None)


def _host_refusal(plan, host):
    """Why ``host`` cannot take the VM of ``plan`` now, or None."""
    if host.get("connection_state", "connected") != "connected":
        return "is %s" % host.get("connection_state")
    if host.get("maintenance_mode"):
        return "is in maintenance mode"
    model = plan.get("model")
    gpus = [gpu for gpu in host.get("gpus") or [] if model is None or gpu.get("model") == model]
    if not gpus:
        return "has no %s GPU" % model
    offered = dict((entry["name"], entry) for entry in host.get("supported_profiles") or [])
    if plan["profile"] not in offered:
        return "does not offer %s" % plan["profile"]
    reasons = []
    for gpu in gpus:
        why = _gpu_refusal(gpu, plan, offered[plan["profile"]])
        if why is None:
            return None
        reasons.append("GPU %s %s" % (gpu.get("pci_id"), why))
    return "; ".join(reasons)


def _gpu_refusal(gpu, plan, profile_facts):
    if gpu.get("graphics_type") != SHARED_DIRECT:
        return "is in graphics type %s, not %s" % (gpu.get("graphics_type"), SHARED_DIRECT)
    mode = gpu.get("vgpu_mode") or EQUAL_SIZE
    if mode != plan["vgpu_mode"]:
        return "is carved in vGPU mode %s, the source GPU in %s" % (mode, plan["vgpu_mode"])
    others = sorted(set(gpu.get("profiles") or []) - {plan["profile"]})
    if others and mode == EQUAL_SIZE:
        return "is carved for %s (equal-size mode: one profile per GPU)" % ", ".join(others)
    room = _gpu_room(gpu, profile_facts)
    if room is not None and room < plan["count"]:
        return "has no room: %d of %s %s vGPUs in use" % (gpu.get("used") or 0, _capacity(gpu, profile_facts),
                                                          plan["profile"])
    return None


def _capacity(gpu, profile_facts):
    if (gpu.get("vgpu_mode") or EQUAL_SIZE) != EQUAL_SIZE:
        return profile_facts.get("mixed_size_max")
    return profile_facts.get("max_per_gpu")


def _gpu_room(gpu, profile_facts):
    """Free vGPU slots for the profile on the GPU; None when not known (then vCenter decides)."""
    capacity = _capacity(gpu, profile_facts)
    if capacity is None:
        return None
    return capacity - (gpu.get("used") or 0)


def _room(host, plan):
    offered = dict((entry["name"], entry) for entry in host.get("supported_profiles") or [])
    facts = offered.get(plan["profile"]) or {}
    return sum(_gpu_room(gpu, facts) or 0 for gpu in host.get("gpus") or []
               if gpu.get("model") == plan.get("model") and _gpu_refusal(gpu, plan, facts) is None)


def _alike(source, target, host_facts, guest_driver, unknown):
    """Why ECC or the driver rule keep the VM off ``target``, or None; what is not known goes to ``unknown``."""
    here, there = host_facts.get(source) or {}, host_facts.get(target) or {}
    if here.get("ecc") is None or there.get("ecc") is None:
        unknown.append("ecc")
    elif bool(here["ecc"]) != bool(there["ecc"]):
        return "has ECC %s, %s has it %s (keep ECC alike on every host)" % (
            _on_off(there["ecc"]), source, _on_off(here["ecc"]))
    if not there.get("driver") or not guest_driver:
        unknown.append("driver")
        return None
    verdict = compat.vgpu_guest_compat(there["driver"], guest_driver)
    if verdict["status"] == "incompatible":
        return "runs vGPU Manager %s, which does not accept guest driver %s (%s)" % (
            there["driver"], guest_driver, verdict["message"])
    return None


def _on_off(value):
    return "on" if value else "off"


def _take(host, plan):
    """The VM's vGPUs on the target's first fitting GPU, so that the next VM sees them."""
    offered = dict((entry["name"], entry) for entry in host.get("supported_profiles") or [])
    for gpu in host["gpus"]:
        if gpu.get("model") == plan.get("model") and _gpu_refusal(gpu, plan, offered[plan["profile"]]) is None:
            gpu["used"] = (gpu.get("used") or 0) + plan["count"]
            gpu["profiles"] = sorted(set(gpu["profiles"]) | {plan["profile"]})
            gpu["vms"].append(plan["vm"])
            return
