# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vGPU placement planning: which VM runs on which host and GPU, how each GPU is carved, and what does not fit.

Pure logic on plain data, standard library only. ``plan()`` takes the ``hosts`` list that ``gpu_info`` returns and
the requests, and returns what the ``vgpu_plan`` module documents. docs/planner.md states the method, what it
guarantees and where it stops. This file reads the input, routes each request and builds the result; the planning
itself is in ``_equal_size`` (equal-size carving) and ``_mixed_size`` (mixed-size packing).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._equal_size import EqualCarver
from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._mixed_size import MixedPacker
from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._report import Report
from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._state import (
    PINNED_HOST_LACKS_PROFILE,
    PINNED_HOST_UNAVAILABLE,
    PROFILE_NOT_OFFERED,
    REASONS,
    UNKNOWN_PROFILE,
    CAPACITY_REASONS,
    Gpu,
    Host,
    Profile,
    Request,
)

MODES = ("equal_size", "mixed_size")
POLICIES = ("performance", "consolidation")
__all__ = ["plan", "kept_in_place", "MODES", "POLICIES", "REASONS"]


def vgpu_plan(client, params, check_mode):
    """The ``vgpu_plan`` module: ``plan`` with its options, the notes also as warnings."""
    result = plan(params["inventory"], params["requests"], mode=params["mode"],
                  assignment_policy=params["assignment_policy"], symmetric=params["symmetric"],
                  headroom=params["headroom"], respect_current=params["respect_current"])
    return dict(result, warnings=list(result["notes"]))


def plan(inventory, requests, mode="equal_size", assignment_policy=None, symmetric=False, headroom=0,
         respect_current=True):
    """Plan where each requested VM's vGPUs go. Raises ``InputError`` for input it cannot read.

    ``inventory`` is ``gpu_info``'s ``hosts`` list; ``requests`` a list of ``{vm, profile, host, count}``;
    ``assignment_policy`` None plans each host with its own policy; ``headroom`` is an int (slots kept free for every
    profile that is requested or runs) or a dict of profile name to slots.
    """
    if mode not in MODES:
        raise InputError("mode %r is not known." % (mode,), hint="Use equal_size or mixed_size.", value=mode)
    if assignment_policy is not None and assignment_policy not in POLICIES:
        raise InputError("assignment_policy %r is not known." % (assignment_policy,),
                         hint="Use performance or consolidation, or leave it unset to use each host's own policy.",
                         value=assignment_policy)
    planner = Planner(mode, assignment_policy, bool(symmetric), bool(respect_current))
    planner.read_inventory(inventory)
    planner.read_requests(requests)
    planner.read_headroom(headroom)
    result = planner.run()
    if mode == "equal_size" and planner.left_out_on_mixed_capable():
        # Models never share a GPU, so planning only the mixed-size capable ones tells what that mode would add.
        models = set(planner.mixed_capable_models())
        hosts = [entry for entry, host in zip(inventory, planner.hosts) if models & set(host.kinds)]
        wanted = [r for r in planner.requests if r.profile.model in models]
        other = plan(hosts, [requests[r.index] for r in wanted], "mixed_size", assignment_policy, symmetric, headroom,
                     respect_current)
        more = other["stats"]["placed"] - sum(1 for r in wanted if r.rows)
        if more > 0:
            result["suggestions"].append(
                "mode=mixed_size would place %d more request(s) on mixed-size capable GPUs (%s); the hosts need vGPU "
                "17 or later on vSphere 8.0 Update 3 or later." % (more, ", ".join(sorted(models))))
    return result


def kept_in_place(inventory, requests):
    """The VMs of ``requests`` that ``plan()`` (respecting what runs) keeps where they run: it moves none of them
    and carves nothing for them. Raises ``InputError`` for input ``plan()`` would refuse."""
    planner = Planner(MODES[0], None, False, True)
    planner.read_inventory(inventory)
    planner.read_requests(requests)
    planner.keep_or_release()
    return [request.vm for request in planner.requests if request.current]


def _int_at_least(value, minimum, what):
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError("%s must be an integer of at least %d, got %r." % (what, minimum, value), value=value)
    return value


class Planner(object):
    def __init__(self, mode, policy, symmetric, respect_current):
        self.mode = mode
        self.policy = policy
        self.symmetric = symmetric
        self.respect_current = respect_current
        self.models = {}
        self.profiles = {}
        self.hosts = []
        self.host_by_name = {}
        self.gpus = []
        self.excluded = []
        self.running = {}
        self.ignored_vgpus = 0
        self.requests = []
        self.headroom_all = 0
        self.headroom = {}
        self.offering = {}
        self.absorbable_slots = {}
        self.absorbable_fb = {}
        self.equal = None

    # ---- input -------------------------------------------------------------------------------------------------

    def profile(self, name, where):
        cached = self.profiles.get(name) if isinstance(name, str) else None
        if cached is None:
            if not isinstance(name, str) or not name.strip():
                raise InputError("%s has no vGPU profile." % where, hint="Name it as vSphere does, e.g. grid_p40-8q.")
            try:
                facts = _catalog.parse_profile(name)
            except InputError as err:
                raise InputError("%s: %s" % (where, err.message), hint=err.hint, value=name)
            cached = self.profiles.get(facts["name"]) or Profile(facts)
            self.profiles[name] = self.profiles[facts["name"]] = cached
        return cached

    def model(self, model_id):
        if model_id not in self.models:
            try:
                self.models[model_id] = _catalog.gpu_model(model_id) if model_id else None
            except InputError:
                self.models[model_id] = None
        return self.models[model_id]

    def read_inventory(self, inventory):
        if not isinstance(inventory, list):
            raise InputError("inventory must be the hosts list that gpuops.vgpu.gpu_info returns, got %s."
                             % type(inventory).__name__, hint="Pass it as inventory: \"{{ gpu_info_result.hosts }}\".")
        for index, entry in enumerate(inventory):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
                raise InputError("inventory[%d] is not a host entry with a name." % index,
                                 hint="Pass the hosts list that gpuops.vgpu.gpu_info returns.")
            if entry["name"] in self.host_by_name:
                raise InputError("inventory lists host %s twice." % entry["name"], hint="Give each host once.")
            self._read_host(entry, index)
        for gpu in self.gpus:
            for vm in gpu.vms:
                self.running.setdefault(vm, []).append(gpu)

    def _read_host(self, entry, index):
        actual = (entry.get("graphics_config") or {}).get("assignment_policy")
        host = Host(entry["name"], entry.get("cluster"), index, self.policy or (
            actual if actual in POLICIES else "performance"))
        host.vsphere_policy = actual if actual in POLICIES else "performance"  # vSphere's default
        self.hosts.append(host)
        self.host_by_name[host.name] = host
        state = entry.get("connection_state") or "connected"
        if state != "connected":
            host.problem = "is %s" % state
        elif entry.get("maintenance_mode"):
            host.problem = "is in maintenance mode"
        for gpu_entry in entry.get("gpus") or []:
            self._read_gpu(host, gpu_entry)
        supported = entry.get("supported_profiles")
        if supported is None:
            for model_id in host.kinds:
                host.supported.update(item["name"] for item in self.model(model_id)["profiles"])
            return
        for item in supported:
            try:
                host.supported.add(self.profile(item.get("name") if isinstance(item, dict) else item, host.name).name)
            except InputError:
                continue  # a name the catalog cannot read is never planned; requests for it say why

    def _read_gpu(self, host, entry):
        if not isinstance(entry, dict):
            raise InputError("Host %s has a GPU entry that is not a dict: %r." % (host.name, entry))
        model = self.model(entry.get("model"))
        used = int(entry.get("used") or 0)
        if not self.respect_current:
            self.ignored_vgpus += used
            used = 0
        reason = None
        if host.problem:
            reason = "host %s" % host.problem
        elif model is None:
            reason = "GPU model %r is not in the catalog" % (entry.get("model"),)
        elif not used and "graphics_type" in entry and entry["graphics_type"] != "sharedDirect":
            if entry.get("configured_graphics_type") == "sharedDirect":
                reason = "waits for an Xorg restart to enter Shared Direct"
            else:
                reason = "is in %s mode, not Shared Direct" % (entry["graphics_type"] or "no graphics")
        if reason:
            self.excluded.append({"host": host.name, "pci_id": entry.get("pci_id"), "model": entry.get("model"),
                                  "reason": reason})
            return
        vgpu_mode = entry.get("vgpu_mode")
        kind = "mig" if vgpu_mode == "multiInstanceGpu" else ("ts" if vgpu_mode in ("sameSize", "mixedSize") else "any")
        # A host that reports no vGPU mode runs vSphere before 8.0 Update 3, which has no mixed-size mode.
        mixed_ok = bool(model["mixed_size_capable"]) and kind != "mig" and ("vgpu_mode" not in entry or bool(vgpu_mode))
        gpu = Gpu(host, entry.get("pci_id"), model["model"], model["framebuffer_mib"], kind, mixed_ok, vgpu_mode)
        host.gpus.append(gpu)
        host.kinds.setdefault(gpu.model, set()).add(kind)
        self.gpus.append(gpu)
        if used > 0:
            self._read_running(gpu, entry, used, vgpu_mode)

    def _read_running(self, gpu, entry, used, vgpu_mode):
        names = entry.get("profiles") or ([entry["profile"]] if entry.get("profile") else [])
        try:
            profiles = [self.profile(name, "GPU %s on %s" % (gpu.pci_id, gpu.host.name)) for name in names]
        except InputError:
            profiles = []
        gpu.running = True
        gpu.used = used
        gpu.vms = sorted(entry.get("vms") or [])
        gpu.counts = dict((p.name, 0) for p in profiles)
        if vgpu_mode == "mixedSize" and profiles:
            gpu.state = "mixed"
            if len(profiles) == 1:
                gpu.counts[profiles[0].name] = used
            # Which VM runs which size is not in the inventory: every vGPU counts at the largest running size.
            largest = max(profiles, key=lambda p: p.fb)
            gpu.fb_used = used * largest.fb
            gpu.reserve_running(largest)
        elif len(profiles) == 1 and profiles[0].max is not None:
            gpu.state, gpu.profile, gpu.cap = "equal", profiles[0], profiles[0].max
        else:
            gpu.state = "locked"

    def read_requests(self, requests):
        if not isinstance(requests, list):
            raise InputError("requests must be a list of {vm, profile, host, count}, got %s." % type(requests).__name__)
        seen = {}
        for index, entry in enumerate(requests):
            where = "requests[%d]" % index
            if not isinstance(entry, dict):
                raise InputError("%s is not a dict: %r." % (where, entry), hint="Give {vm, profile, host, count}.")
            vm = entry.get("vm")
            if not isinstance(vm, str) or not vm.strip():
                raise InputError("%s has no vm name." % where, hint="Every request names its VM in vm.")
            where = "%s (vm %s)" % (where, vm)
            if vm in seen:
                raise InputError("%s is listed twice (also requests[%d])." % (where, seen[vm]),
                                 hint="Give each VM once; use count for several vGPUs.")
            seen[vm] = index
            profile = self.profile(entry.get("profile"), where)
            pin = entry.get("host") or None
            if pin is not None and not isinstance(pin, str):
                raise InputError("%s: host must be a host name, got %r." % (where, pin))
            count = _int_at_least(1 if entry.get("count") is None else entry["count"], 1, "%s count" % where)
            self.requests.append(Request(index, vm, profile, pin, count))

    def read_headroom(self, headroom):
        if headroom is None:
            return
        if isinstance(headroom, dict):
            for name, slots in headroom.items():
                profile = self.profile(name, "headroom")
                self.headroom[profile.name] = _int_at_least(slots, 0, "headroom for %s" % name)
        else:
            self.headroom_all = _int_at_least(headroom, 0, "headroom")

    # ---- planning ----------------------------------------------------------------------------------------------

    def run(self):
        self.keep_or_release()
        for gpu in self.gpus:
            if gpu.state == "idle":
                gpu.host.give_idle(gpu)
        self._route()
        if self.mode == "mixed_size":
            for model_id in sorted(set(r.profile.model for r in self.requests if r.path == "mixed")):
                MixedPacker(self, model_id).run()
        self.equal = EqualCarver(self)
        self.equal.run()
        return Report(self).build()

    def keep_or_release(self):
        """Requested VMs that already run where their request allows stay; the others leave their GPUs."""
        shares = {}
        for gpu in self.gpus:
            if gpu.vms:
                # The inventory counts vGPUs per GPU, not per VM: spread them evenly over the GPU's VMs.
                base, extra = divmod(gpu.used, len(gpu.vms))
                shares[gpu] = dict((vm, base + (1 if i < extra else 0)) for i, vm in enumerate(gpu.vms))
        for request in self.requests:
            gpus = self.running.get(request.vm)
            if not gpus:
                continue
            rows = [[gpu, shares[gpu][request.vm]] for gpu in gpus]
            if self._valid_in_place(request, gpus, rows):
                request.current, request.rows, request.path = True, rows, "current"
                continue
            for gpu, share in rows:
                gpu.vms.remove(request.vm)
                if gpu.state == "mixed":
                    gpu.fb_used -= gpu.fb_used // gpu.used * share
                    if len(gpu.counts) == 1:
                        gpu.counts[next(iter(gpu.counts))] -= share
                gpu.used -= share
                if gpu.state == "mixed" and gpu.used > 0:
                    gpu.reserve_running(max((self.profiles[n] for n in gpu.counts), key=lambda p: p.fb))
                if gpu.used <= 0:
                    gpu.make_idle()

    @staticmethod
    def _valid_in_place(request, gpus, rows):
        host = gpus[0].host
        if any(gpu.host is not host for gpu in gpus) or (request.pin and request.pin != host.name):
            return False
        if sum(share for _gpu, share in rows) != request.count:
            return False
        return all((gpu.state == "equal" and gpu.profile is request.profile)
                   or (gpu.state == "mixed" and request.profile.name in gpu.counts) for gpu in gpus)

    def offering_hosts(self, profile):
        hosts = self.offering.get(profile.name)
        if hosts is None:
            hosts = self.offering[profile.name] = [h for h in self.hosts if not h.problem and h.offers(profile)]
        return hosts

    def packs_mixed(self, profile):
        """Types without a mixed-size placement (e.g. the 1-3 GB ones of an L40S) keep equal-size GPUs."""
        return self.mode == "mixed_size" and not profile.mig and bool(profile.placements) and bool(
            (self.model(profile.model) or {}).get("mixed_size_capable"))

    def _route(self):
        for request in self.requests:
            if request.current:
                continue
            profile = request.profile
            if profile.max is None:
                request.unplace(UNKNOWN_PROFILE, "%s is not in the collection's vGPU catalog, so its maximum per GPU "
                                "is not known." % profile.name)
            elif not self.offering_hosts(profile):
                request.unplace(PROFILE_NOT_OFFERED, "No usable host offers %s%s." % (
                    profile.name, self._excluded_note(profile.model)))
            elif request.pin and (request.pin not in self.host_by_name or self.host_by_name[request.pin].problem):
                host = self.host_by_name.get(request.pin)
                request.unplace(PINNED_HOST_UNAVAILABLE, "Pinned host %s %s." % (
                    request.pin, host.problem if host else "is not in the inventory"))
            elif request.pin and not self.host_by_name[request.pin].offers(profile):
                request.unplace(PINNED_HOST_LACKS_PROFILE, "Pinned host %s does not offer %s." % (
                    request.pin, profile.name))
            else:
                request.path = "mixed" if self.packs_mixed(profile) else "equal"

    def _excluded_note(self, model_id):
        hosts = sorted(set(item["host"] for item in self.excluded if item["model"] == model_id))
        if not hosts:
            return ""
        return "; %s GPUs on %s are left out of the plan (see excluded)" % (model_id, ", ".join(hosts[:5]))

    def headroom_for(self, profile_name, requested_or_running):
        if profile_name in self.headroom:
            return self.headroom[profile_name]
        return self.headroom_all if requested_or_running else 0

    def left_out_on_mixed_capable(self):
        return any(gpu.mixed_ok for gpu in self.gpus) and any(
            r.reason in CAPACITY_REASONS and not r.profile.mig
            and (self.model(r.profile.model) or {}).get("mixed_size_capable") for r in self.requests)

    def mixed_capable_models(self):
        return sorted(set(gpu.model for gpu in self.gpus if gpu.mixed_ok))
