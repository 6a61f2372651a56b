# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's inventory model turned into module input, and module results back into placements.

Pure functions over plain data; they raise ``ValueError`` with a message that names the guest, VM or cluster. The
filters in ``plugins/filter/inventory.py`` are their fronts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def site_clusters(vgpu_clusters=None, vcenter_cluster=None, required=False):
    """The clusters the site manages: ``vgpu_clusters`` where the inventory sets it, else ``[vcenter_cluster]``,
    else none (``required`` refuses none). The playbooks (``playbooks/vars/vcenter.yml``) and the roles' defaults
    all take their clusters from here."""
    if vgpu_clusters is not None:
        if not isinstance(vgpu_clusters, (list, tuple)) or not all(
                isinstance(name, str) and name.strip() for name in vgpu_clusters):
            raise ValueError("vgpu_clusters must be a list of cluster names, got %r." % (vgpu_clusters,))
        clusters = list(vgpu_clusters)
    elif vcenter_cluster is not None and not isinstance(vcenter_cluster, str):
        raise ValueError("vcenter_cluster must be the name of a cluster, got %r." % (vcenter_cluster,))
    else:
        clusters = [vcenter_cluster] if vcenter_cluster and vcenter_cluster.strip() else []
    if required and not clusters:
        raise ValueError("No cluster to act on: set vgpu_clusters (a list of cluster names) or vcenter_cluster in the "
                         "inventory.")
    return clusters


def guests(names, hostvars):
    """One ``{name, vm, profile}`` per inventory host: the VM is ``vgpu_vm_name`` or the inventory name.

    ``profile`` is ``vgpu_profile``, or None for a host without one. Two hosts that name the same VM, or a profile
    that is not a name, raise ``ValueError``.
    """
    listed = []
    seen = {}
    for guest in names or []:
        host = hostvars[guest]
        profile = host.get("vgpu_profile") or None
        if profile is not None and not isinstance(profile, str):
            raise ValueError("vgpu_profile of %s must be a profile name such as grid_p40-8q, got %r." % (
                guest, profile))
        vm = host.get("vgpu_vm_name") or guest
        if vm in seen:
            raise ValueError("guests %s and %s both name the VM %s; set vgpu_vm_name so each guest names its own "
                             "VM." % (seen[vm], guest, vm))
        seen[vm] = guest
        listed.append({"name": guest, "vm": vm, "profile": profile})
    return listed


def requests(names, hostvars, extra=None):
    """One ``{name, profile}`` (``vm_vgpu``'s ``vms``) per guest with a profile, then the ``extra`` entries."""
    with_profile = [guest for guest in guests(names, hostvars) if guest["profile"]]
    seen = dict((guest["vm"], guest["name"]) for guest in with_profile)
    listed = [{"name": guest["vm"], "profile": guest["profile"]} for guest in with_profile]
    for entry in extra or []:
        if entry["name"] in seen:
            raise ValueError("the VM %s is both in the inventory (%s) and in the extra requests."
                             % (entry["name"], seen[entry["name"]]))
        seen[entry["name"]] = "extra requests"
        listed.append({"name": entry["name"], "profile": entry["profile"]})
    return listed


def plan_scopes(gpu_inventory, vms, clusters, replan=False):
    """One ``vgpu_plan`` input per cluster: its hosts and the requests of the VMs registered on them.

    A VM that already carries its profile (that one only) is kept where it is, running or not: it is left out of
    the requests, so the plan gives it no host and ``vm_vgpu`` neither moves nor reconfigures it. A running one
    still counts on its GPU, which the inventory shows in use. ``replan`` plans every VM anew instead."""
    hosts = gpu_inventory.get("hosts", [])
    known = sorted(set(host.get("cluster") for host in hosts if host.get("cluster")))
    missing = [cluster for cluster in clusters if cluster not in known]
    if missing:
        raise ValueError("cluster(s) %s not in the GPU inventory (known: %s)."
                         % (", ".join(missing), ", ".join(known) or "none"))
    host_cluster = dict((host["name"], host.get("cluster")) for host in hosts)
    read = dict((vm["name"], vm) for vm in gpu_inventory.get("vms", []))
    scopes = []
    for cluster in clusters:
        scoped = [{"vm": vm["name"], "profile": vm["profile"]} for vm in vms
                  if host_cluster.get((read.get(vm["name"]) or {}).get("host")) == cluster
                  and (replan or not has_its_profile(read[vm["name"]], vm["profile"]))]
        scopes.append({"cluster": cluster, "inventory": [host for host in hosts if host.get("cluster") == cluster],
                       "requests": scoped})
    return scopes


def has_its_profile(vm, profile):
    """Whether a ``gpu_info`` VM carries vGPUs of ``profile`` and of no other profile."""
    profiles = set(vgpu.get("profile") for vgpu in vm.get("vgpus") or [])
    return profiles == set([profile])


def apply_plan(vms, plans):
    """Each ``vm_vgpu`` entry with the host a ``vgpu_plan`` result (or a list of them) chose for it.

    VMs the plan puts on mixed-size GPUs come last, by placement ID: vSphere places their vGPUs at power-on in that
    order, which gives the plan's layout."""
    hosts, first_id = {}, {}
    for plan in plans if isinstance(plans, list) else [plans]:
        for placement in plan.get("placements", []):
            if not placement.get("current"):
                hosts[placement["vm"]] = placement["host"]
            if placement.get("placement_ids"):
                first_id[placement["vm"]] = min(placement["placement_ids"] + [first_id.get(placement["vm"], 1 << 30)])
    entries = [dict(vm, host=hosts[vm["name"]]) if vm["name"] in hosts else dict(vm) for vm in vms]
    order = sorted(range(len(entries)), key=lambda i: (entries[i]["name"] in first_id,
                                                       first_id.get(entries[i]["name"], 0), i))
    return [entries[i] for i in order]


def placement(gpu_inventory, vms, running=False):
    """Where each requested VM's vGPU is, from a ``gpu_info`` result read with the VMs, and whether that is right.

    ``ok``: the VM has vGPUs of its profile only and, when ``running``, is powered on with its vGPU on a GPU carved
    for that profile.
    """
    wanted = dict((vm["name"], vm["profile"]) for vm in vms)
    gpu_of = {}
    for host in gpu_inventory.get("hosts") or []:
        for gpu in host.get("gpus") or []:
            for vm in gpu.get("vms") or []:
                gpu_of[vm] = gpu
    placed = []
    for vm in gpu_inventory.get("vms") or []:
        if vm["name"] not in wanted:
            raise ValueError("the GPU inventory names the VM %s, which was not requested." % vm["name"])
        profile = wanted[vm["name"]]
        profiles = [vgpu.get("profile") for vgpu in vm.get("vgpus") or []]
        gpu = gpu_of.get(vm["name"], {})
        ok = bool(profiles) and set(profiles) == set([profile]) and (
            not running or (vm.get("power_state") == "poweredOn" and gpu.get("profile") == profile))
        placed.append({"name": vm["name"], "profile": profile, "profiles": profiles,
                       "power_state": vm.get("power_state"), "host": vm.get("host"), "gpu": gpu.get("pci_id"),
                       "ok": ok})
    return placed
