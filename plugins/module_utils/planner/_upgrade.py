# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rolling vGPU driver upgrade plan: host order, what happens to each running vGPU VM, guest driver order.

Pure logic on plain data, standard library only; ``upgrade_plan`` returns what the ``upgrade_plan`` module documents.
The host/guest rule is the catalog's (``_compatibility.vgpu_guest_compat``): a vGPU Manager accepts guest drivers of
its own branch, of the previous branch and, for an LTS manager, of the previous LTS branch. Hosts go first (their new
manager still accepts the guests' current driver), guests after every host of their cluster runs the target; a guest
the target manager would not accept is upgraded before the hosts when every current manager accepts the target guest
driver, and is refused otherwise. A guest whose installed CUDA toolkit the target guest driver would not run (the
catalog's CUDA/driver table, ``_compatibility.cuda_driver_ok``) is refused too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _compatibility as compat
from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._upgrade_capacity import (
    UpgradeHost,
    evacuate,
)

POLICIES = ("migrate", "suspend", "shutdown")
INTERRUPTIONS = {
    "migrate": "vGPU vMotion: the VM keeps running; it is stunned for the switch-over (longer for larger vGPUs)",
    "suspend": "suspended while its host is remediated, resumed on the same host",
    "shutdown": "guest shut down while its host is remediated, powered on again on the same host",
}


def _driver(value, what):
    try:
        return compat.driver_branch(value) and value.split("-")[0].strip()
    except (InputError, AttributeError):
        raise InputError("%s %r is not an NVIDIA driver version." % (what, value), value=value,
                         hint="Give it as NVIDIA writes it, e.g. 535.54.06 (host) or 535.54.03 (guest).")


def _major(version):
    return int(compat.driver_branch(version)["branch"][1:])


def _accepts(host_driver, guest_driver):
    return compat.vgpu_guest_compat(host_driver, guest_driver)["status"] != "incompatible"


def _positive_int(value, what):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError("%s must be an integer of at least 1, got %r." % (what, value), value=value)
    return value


class UpgradePlanner(object):
    """Plans one run; ``plan()`` returns the result."""

    def __init__(self, target_host_driver, target_guest_driver, policy, vm_policies, max_hosts_out, hot_migrate,
                 remediation_s):
        self.target = _driver(target_host_driver, "target_host_driver")
        release = compat.release_drivers(self.target)
        if target_guest_driver is None and release is None:
            raise InputError("target_guest_driver is not set and the catalog does not know vGPU Manager %s." % self.target,
                             hint="Set target_guest_driver to the Linux guest driver of the same vGPU release.")
        self.target_guest = _driver(target_guest_driver or release["linux_guest"], "target_guest_driver")
        if policy not in POLICIES:
            raise InputError("policy %r is not known." % (policy,), hint="Use migrate, suspend or shutdown.",
                             value=policy)
        for vm, value in (vm_policies or {}).items():
            if value not in POLICIES:
                raise InputError("vm_policies: %s has policy %r." % (vm, value), value=value,
                                 hint="Use migrate, suspend or shutdown.")
        self.policy, self.vm_policies = policy, dict(vm_policies or {})
        self.max_out = _positive_int(max_hosts_out, "max_hosts_out")
        self.hot_migrate = bool(hot_migrate)
        self.remediation_s = _positive_int(remediation_s, "remediation_s")
        self.blocked, self.notes = [], []
        self.guests = {}

    def block(self, kind, message, hint, **where):
        self.blocked.append(dict(where, kind=kind, message=message, hint=hint))

    # ---- input ---------------------------------------------------------------------------------------------------

    def read(self, inventory, host_drivers, current_host_driver, guest_drivers, current_guest_driver, depot):
        if not isinstance(inventory, list):
            raise InputError("inventory must be the hosts list that gpu_info returns.")
        clusters = {}
        for entry in inventory:
            name = entry.get("name")
            given = (host_drivers or {}).get(name, entry.get("driver") or current_host_driver)
            if given is None:
                raise InputError("The vGPU Manager version of host %s is not known." % name,
                                 hint="Set host_drivers for it or current_host_driver for all hosts.")
            host = UpgradeHost(entry, _driver(given, "host driver of %s" % name))
            for gpu_entry, gpu in zip(entry.get("gpus") or [], host.gpus):
                for vm in gpu_entry.get("vms") or []:
                    gpu.vms[vm] = gpu_entry.get("profile")
                    version = (guest_drivers or {}).get(vm, current_guest_driver)
                    if version is None:
                        raise InputError("The guest driver of VM %s is not known." % vm,
                                         hint="Set guest_drivers for it or current_guest_driver for all VMs.")
                    self.guests[vm] = _driver(version, "guest driver of %s" % vm)
            clusters.setdefault(host.cluster, []).append(host)
        self.clusters = [(name, sorted(hosts, key=lambda h: h.name)) for name, hosts in sorted(
            clusters.items(), key=lambda item: item[0] or "")]
        if depot is not None and self.target not in set(str(v).split("-", 1)[0] for v in depot):
            self.block("bundle-not-in-depot", "The vGPU Manager %s is in no imported depot (depots hold %s)."
                       % (self.target, ", ".join(sorted(set(str(v) for v in depot))) or "no NVIDIA host driver"),
                       "Import its offline bundle with vlcm_depot first, or pick a version the depots hold.")

    # ---- checks before any step ----------------------------------------------------------------------------------

    def check_versions(self, cluster, hosts):
        """The VMs whose guest must move before the hosts do; None when the versions leave no way through."""
        blocked = len(self.blocked)
        early = self._early_guests(cluster, hosts)
        return None if len(self.blocked) > blocked else early

    def _early_guests(self, cluster, hosts):
        if not _accepts(self.target, self.target_guest):
            self.block("target-guest-not-accepted", compat.vgpu_guest_compat(self.target, self.target_guest)["message"],
                       "Pick the guest driver of the same vGPU release as the host driver.", cluster=cluster)
            return set()
        early = set()
        for host in hosts:
            for vm, _profile, _gpu in host.running():
                guest = self.guests[vm]
                if _major(guest) > _major(self.target):
                    self.block("target-older-than-guest", "Target vGPU Manager %s is older than the guest driver %s "
                               "of VM %s: a manager never accepts a newer branch's guests." % (self.target, guest, vm),
                               "Target a vGPU release at least as new as the guests' (%s or later)."
                               % compat.driver_branch(guest)["branch"], cluster=cluster, vm=vm)
                elif not _accepts(self.target, guest):
                    if all(_accepts(h.driver, self.target_guest) for h in hosts):
                        early.add(vm)
                    else:
                        self.block("guest-not-accepted", compat.vgpu_guest_compat(self.target, guest)["message"],
                                   "Upgrade VM %s's guest driver to a branch both vGPU Managers accept first, or "
                                   "take the hosts there in smaller steps." % vm, cluster=cluster, vm=vm)
        return early

    def fate(self, host, vm, profile):
        """The policy for a VM that must leave ``host``, or None after recording why it cannot."""
        policy = self.vm_policies.get(vm, self.policy)
        if policy == "migrate" and not self.hot_migrate:
            self.block("hot-migrate-off", "VM %s should move by vMotion, but vgpu.hotmigrate.enabled is off in "
                       "vCenter, so vGPU VMs cannot be migrated while running." % vm,
                       "Turn it on with vcenter_settings, or use policy suspend or shutdown for this VM.",
                       host=host.name, vm=vm)
            return None
        if policy == "suspend" and (host.suspend_profiles is None or profile not in host.suspend_profiles):
            self.block("suspend-unsupported", "VM %s runs %s, which host %s does not list as suspend-capable "
                       "(sharedGpuCapabilities.suspendSupported)." % (vm, profile, host.name),
                       "Use policy migrate or shutdown for this VM.", host=host.name, vm=vm)
            return None
        return policy

    # ---- the rollout ---------------------------------------------------------------------------------------------

    def plan_cluster(self, cluster, hosts, steps, step_of_vm):
        early = self.check_versions(cluster, hosts)
        if early is None:
            self.notes.append("Cluster %s: no step is planned while the driver versions above are refused." % cluster)
            return set(), dict(self.guests)
        guest_now = dict(self.guests)
        for vm in sorted(early):
            guest_now[vm] = self.target_guest
        todo = [h for h in hosts if h.driver != self.target]
        for host in todo:
            if not host.connected:
                self.block("host-not-connected", "Host %s is not connected, so it cannot be remediated." % host.name,
                           "Reconnect it or leave it out of the run (hosts option).", cluster=cluster, host=host.name)
        todo = sorted([h for h in todo if h.connected], key=lambda h: (len(h.running()), h.name))
        upgraded = set(h.name for h in hosts if h.driver == self.target)

        def accepts(target_host, vm):
            return _accepts(target_host.driver, guest_now[vm])

        cache = {}

        def fates(host):
            for vm, profile, _gpu in host.running():
                if (host.name, vm) not in cache:
                    cache[host.name, vm] = self.fate(host, vm, profile)
            return dict((vm, cache[host.name, vm]) for vm, _p, _g in host.running())

        def movers(batch):
            return [(vm, p) for h in batch for vm, p, _g in h.running() if fates(h)[vm] == "migrate"]

        def names(batch):
            return set(h.name for h in batch)

        batch, moves = [], {}
        for host in todo:
            if None in fates(host).values():
                continue
            if batch and len(batch) < self.max_out:
                placed = evacuate(hosts, names(batch + [host]), movers(batch + [host]), accepts, upgraded)
                if placed is not None:
                    batch, moves = batch + [host], placed
                    continue
            if batch:
                self._commit(cluster, batch, moves, fates, steps, step_of_vm, upgraded)
            batch, moves = [], {}
            if None in fates(host).values():
                continue
            placed = evacuate(hosts, {host.name}, movers([host]), accepts, upgraded)
            if placed is None:
                self.block("no-room", "While host %s is out, no other host of cluster %s has a GPU of the same model, "
                           "carved for the same profile with a free slot or idle, for its VMs %s." % (
                               host.name, cluster, ", ".join(vm for vm, _p in sorted(movers([host])))),
                           "Free or add capacity, or use policy suspend or shutdown for some of these VMs.",
                           cluster=cluster, host=host.name)
                continue
            batch, moves = [host], placed
        if batch:
            self._commit(cluster, batch, moves, fates, steps, step_of_vm, upgraded)
        return early, guest_now

    def _commit(self, cluster, batch, moves, fates, steps, step_of_vm, upgraded):
        vms = []
        for host in batch:
            host_fates = fates(host)
            for vm, profile, gpu in host.running():
                policy = host_fates[vm]
                row = {"vm": vm, "host": host.name, "profile": profile, "gpu": gpu.pci_id, "action": policy,
                       "to_host": None, "to_gpu": None, "interruption": INTERRUPTIONS[policy],
                       "downtime_s": None if policy == "migrate" else self.remediation_s}
                if vm in moves:
                    target = moves[vm]
                    del gpu.vms[vm]
                    target.vms[vm] = profile
                    row.update(to_host=target.host.name, to_gpu=target.pci_id)
                vms.append(row)
                step_of_vm.setdefault(vm, []).append(len(steps) + 1)
        previous = dict((host.name, host.driver) for host in batch)
        for host in batch:
            host.driver = self.target
            upgraded.add(host.name)
        steps.append({"step": len(steps) + 1, "cluster": cluster, "hosts": [h.name for h in batch],
                      "host_driver": {"from": previous, "to": self.target}, "vms": vms,
                      "vms_running_elsewhere": sum(1 for v in vms if v["action"] == "migrate")})


def upgrade_plan(inventory, target_host_driver, target_guest_driver=None, policy="migrate", vm_policies=None,
                 max_hosts_out=1, hot_migrate=False, host_drivers=None, current_host_driver=None, guest_drivers=None,
                 current_guest_driver=None, depot_host_drivers=None, remediation_s=1200, guest_cuda=None,
                 current_guest_cuda=None):
    """Plan a rolling upgrade of every host in ``inventory`` (``gpu_info``'s hosts, each optionally with
    ``driver`` and ``suspend_profiles``) to ``target_host_driver`` and of their running vGPU VMs' guest drivers to
    ``target_guest_driver`` (default: the catalog's Linux driver of the same release). Raises ``InputError`` for
    input it cannot read; what cannot be done is in ``blocked``. ``guest_cuda`` (per VM) and ``current_guest_cuda``
    name the CUDA toolkit the guests run, checked against the target guest driver."""
    planner = UpgradePlanner(target_host_driver, target_guest_driver, policy, vm_policies, max_hosts_out,
                             hot_migrate, remediation_s)
    planner.read(inventory, host_drivers, current_host_driver, guest_drivers, current_guest_driver,
                 depot_host_drivers)
    steps, step_of_vm, guest_steps, clusters, vms = [], {}, [], [], []
    for cluster, hosts in planner.clusters:
        first = len(steps)
        early, guest_now = planner.plan_cluster(cluster, hosts, steps, step_of_vm)
        final_host = dict((vm, h.name) for h in hosts for vm, _p, _g in h.running())
        order = dict((name, i) for i, name in enumerate(n for s in steps[first:] for n in s["hosts"]))
        behind = sorted(h.name for h in hosts if h.driver != planner.target)
        if behind:
            planner.notes.append("Cluster %s: no guest driver upgrade is planned while hosts %s stay on their "
                                 "current vGPU Manager." % (cluster, ", ".join(behind)))
        for vm in sorted(final_host, key=lambda v: (v not in early, order.get(final_host[v], -1), v)):
            if planner.guests[vm] == planner.target_guest or (behind and vm not in early):
                continue
            guest_steps.append({"order": len(guest_steps) + 1, "cluster": cluster, "vm": vm, "host": final_host[vm],
                                "from": planner.guests[vm], "to": planner.target_guest,
                                "when": "before_hosts" if vm in early else "after_hosts"})
        clusters.append({"name": cluster, "hosts": [h.name for h in hosts],
                         "host_order": [n for s in steps[first:] for n in s["hosts"]],
                         "already_at_target": sorted(h.name for h in hosts if h.name not in order
                                                     and h.driver == planner.target)})
        vms.extend({"vm": vm, "cluster": cluster, "host": final_host[vm], "steps": step_of_vm.get(vm, []),
                    "actions": [row["action"] for s in steps for row in s["vms"] if row["vm"] == vm],
                    "downtime_s": sum(row["downtime_s"] or 0 for s in steps for row in s["vms"] if row["vm"] == vm)}
                   for vm in sorted(final_host))
    check_cuda(planner, guest_cuda, current_guest_cuda, [g["vm"] for g in guest_steps])
    return {
        "target": {"host_driver": planner.target, "guest_driver": planner.target_guest,
                   "release": (compat.release_drivers(planner.target) or {}).get("release")},
        "clusters": clusters,
        "host_order": [n for s in steps for n in s["hosts"]],
        "steps": steps,
        "guest_upgrades": guest_steps,
        "vms": vms,
        "blocked": planner.blocked,
        "ok": not planner.blocked,
        "notes": planner.notes,
    }


def check_cuda(planner, guest_cuda, current_guest_cuda, vms):
    """Refuse a guest whose CUDA toolkit the target guest driver cannot run; note one it runs only under CUDA
    minor-version compatibility. ``vms`` are the running vGPU VMs whose guest driver the plan moves."""
    for vm in sorted(vms):
        cuda = (guest_cuda or {}).get(vm, current_guest_cuda)
        if not cuda:
            continue
        try:
            verdict = compat.cuda_driver_ok(str(cuda), planner.target_guest)
        except InputError:
            raise InputError("The CUDA version %r of VM %s is not a CUDA toolkit version." % (cuda, vm), value=cuda,
                             hint="Give it as CUDA writes it, e.g. 12.2 or 12.2.1 (nvcc --version).")
        if verdict["status"] == "unsupported":
            planner.block("cuda-unsupported", "VM %s: %s" % (vm, verdict["message"]),
                          "Move the guest's CUDA toolkit first, or target a vGPU release whose guest driver runs it.",
                          vm=vm)
        elif verdict["status"] == "minor-compat-only":
            planner.notes.append("VM %s: %s" % (vm, verdict["message"]))


def refusal(result):
    """An ``InputError`` naming everything ``blocked`` holds, or None when the plan can run."""
    if not result["blocked"]:
        return None
    lines = ["%s %s" % (b["message"], b["hint"]) for b in result["blocked"]]
    return InputError("The upgrade cannot run as asked: " + " ".join(lines), blocked=result["blocked"])
