# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan as ``vgpu_plan`` returns it: placements, per-GPU carve, what does not fit, free capacity, suggestions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._state import (
    CAPACITY_REASONS,
    PINNED_HOST_FULL,
    PROFILE_NOT_OFFERED,
    ceil_div,
    free_placements,
)

_LISTED = 5  # names listed in one suggestion before "and N more"


def _names(items):
    items = list(items)
    text = ", ".join(str(item) for item in items[:_LISTED])
    return text + (" and %d more" % (len(items) - _LISTED) if len(items) > _LISTED else "")


def _placement_ids(request, gpu):
    """Where the vGPUs start on a GPU that stays in mixed-size mode (GiB offsets); None otherwise."""
    return sorted(request.offsets[gpu]) if gpu.state == "mixed" and gpu in request.offsets else None


class Report(object):
    def __init__(self, planner):
        self.planner = planner
        self.free = {}
        self.free_by_host = {}

    def build(self):
        planner = self.planner
        placements, unplaced = [], []
        for request in planner.requests:
            for gpu, count in request.rows:
                placements.append({"vm": request.vm, "profile": request.profile.name, "host": gpu.host.name,
                                   "gpu": gpu.pci_id, "count": count, "current": request.current,
                                   "placement_ids": _placement_ids(request, gpu)})
            if not request.rows:
                unplaced.append({"vm": request.vm, "profile": request.profile.name, "host": request.pin,
                                 "count": request.count, "reason": request.reason, "message": request.message})
        self._free_capacity()
        shortfall = self._headroom_shortfall()
        return {
            "feasible": not unplaced,
            "placements": placements,
            "gpus": [self._gpu(gpu) for gpu in sorted(planner.gpus, key=lambda g: g.sort_key)],
            "unplaced": unplaced,
            "free_capacity": self.free,
            "suggestions": _Suggestions(self, shortfall).build(),
            "notes": self._notes(),
            "excluded": list(planner.excluded),
            "stats": self._stats(len(placements), shortfall),
        }

    @staticmethod
    def _gpu(gpu):
        profile, profiles, mode, maximum, free, fb_free = None, sorted(gpu.counts), gpu.mode_before, None, None, gpu.fb
        if gpu.state == "equal":
            profile, profiles, mode = gpu.profile.name, [gpu.profile.name], "sameSize"
            maximum, free, fb_free = gpu.cap, max(0, gpu.cap - gpu.used), gpu.fb - gpu.used * gpu.profile.fb
        elif gpu.state == "mixed":
            profile, mode, fb_free = profiles[0] if len(profiles) == 1 else None, "mixedSize", gpu.fb - gpu.fb_used
        elif gpu.state == "locked":
            free, fb_free = 0, None
        else:
            mode = None
        return {"host": gpu.host.name, "pci_id": gpu.pci_id, "model": gpu.model, "vgpu_mode": mode,
                "profile": profile, "profiles": profiles, "used": gpu.used, "max": maximum, "free": free,
                "framebuffer_mib": gpu.fb, "framebuffer_free_mib": fb_free, "carved_by_plan": gpu.carved_by_plan,
                "vms": sorted(gpu.vms + gpu.placed)}

    def _free_capacity(self):
        """Per profile, the vGPUs that still fit after the plan without recarving a GPU that is in use."""
        profiles = self.planner.profiles
        for host in self.planner.hosts:
            if host.problem:
                continue
            equal, mixed = {}, []
            for gpu in host.gpus:
                if gpu.state == "equal":
                    equal[gpu.profile.name] = equal.get(gpu.profile.name, 0) + gpu.free()
                elif gpu.state == "mixed":
                    mixed.append(gpu)
            for name in host.supported:
                profile = profiles[name]
                if profile.max is None or not host.offers(profile):
                    continue
                slots = equal.get(name, 0) + host.idle_for(profile) * profile.max
                for gpu in mixed:
                    if gpu.model == profile.model and not profile.mig:
                        slots += len(free_placements(profile, gpu.spans))
                self.free_by_host[(host, name)] = slots
                self.free[name] = self.free.get(name, 0) + slots
        self.free = dict(sorted(self.free.items()))

    def _headroom_shortfall(self):
        planner = self.planner
        wanted = dict((name, slots) for name, slots in planner.headroom.items() if slots)
        if planner.headroom_all:
            named = set(r.profile.name for r in planner.requests if r.profile.max is not None)
            named |= set(n for g in planner.gpus if g.state in ("equal", "mixed") for n in g.counts or [g.profile.name])
            for name in named:
                wanted.setdefault(name, planner.headroom_all)
        shortfall = {}
        for name, slots in sorted(wanted.items()):
            demand = planner.equal.by_name.get(name)
            if demand is not None:
                placed = sum(r.count for r in demand.requests if r.rows)
                free = demand.S - placed
            else:
                free = self.free.get(name, 0)
            if free < slots:
                shortfall[name] = slots - free
        return shortfall

    def _stats(self, rows, shortfall):
        planner = self.planner
        requests = planner.requests
        return {
            "requests": len(requests),
            "placed": sum(1 for r in requests if r.rows),
            "kept": sum(1 for r in requests if r.current),
            "unplaced": sum(1 for r in requests if not r.rows),
            "vgpus_placed": sum(r.count for r in requests if r.rows and not r.current),
            "gpus": len(planner.gpus),
            "gpus_used": sum(1 for g in planner.gpus if g.used > 0),
            "gpus_used_lower_bound": self._lower_bound(),
            "gpus_carved_by_plan": sum(1 for g in planner.gpus if g.carved_by_plan),
            "gpus_reserved": sum(1 for g in planner.gpus if g.carved_by_plan and not g.used),
            "gpus_idle": sum(1 for g in planner.gpus if g.state == "idle"),
            "gpus_excluded": len(planner.excluded),
            "headroom_shortfall": shortfall,
        }

    def _lower_bound(self):
        """GPUs any plan needs for what this plan places: the GPUs with running vGPUs, plus per equal-size profile
        ceil((new vGPUs - free slots of running GPUs of it) / max per GPU), plus per mixed-size model
        ceil((new framebuffer - free framebuffer of its running GPUs) / framebuffer per GPU)."""
        planner = self.planner
        bound = sum(1 for g in planner.gpus if g.running)
        slots, framebuffer = {}, {}
        for request in planner.requests:
            if request.rows and not request.current:
                if request.path == "mixed":
                    model = request.profile.model
                    framebuffer[model] = framebuffer.get(model, 0) + request.count * request.profile.fb
                else:
                    slots[request.profile] = slots.get(request.profile, 0) + request.count
        for profile, count in slots.items():
            bound += ceil_div(max(0, count - planner.absorbable_slots.get(profile.name, 0)), profile.max)
        for model, needed in framebuffer.items():
            per_gpu = planner.model(model)["framebuffer_mib"]
            bound += ceil_div(max(0, needed - planner.absorbable_fb.get(model, 0)), per_gpu)
        return bound

    def _notes(self):
        planner = self.planner
        notes = []
        mixed = sorted(set(g.model for g in planner.gpus if g.state == "mixed" and g.placed))
        if mixed:
            unconfirmed = [m for m in mixed if not planner.model(m)["mixed_size_confirmed"]]
            notes.append("Mixed-size vGPUs on %s are planned at NVIDIA's placement IDs (placement_ids, GiB offsets): "
                         "vSphere places each vGPU at power-on, so power on a GPU's VMs in the order of their "
                         "placement IDs, lowest first; another order can leave gaps that no vGPU of the plan fits."
                         % ", ".join(mixed)
                         + (" The catalog's mixed-size support for %s is not confirmed." % ", ".join(unconfirmed)
                            if unconfirmed else ""))
        if planner.ignored_vgpus:
            notes.append("Planned as if no vGPU ran (respect_current=false): the %d running vGPU(s) must be powered "
                         "off before this plan can be applied." % planner.ignored_vgpus)
        return notes


class _Suggestions(object):
    def __init__(self, report, shortfall):
        self.report = report
        self.planner = report.planner
        self.shortfall = shortfall

    def build(self):
        out = []
        left_out = {}
        excluded_models = set(e["model"] for e in self.planner.excluded)
        for request in self.planner.requests:
            if request.reason in CAPACITY_REASONS or (
                    request.reason == PROFILE_NOT_OFFERED and request.profile.model in excluded_models):
                left_out.setdefault(request.profile.model, []).append(request)
        for model in sorted(left_out):
            out.extend(self._capacity(model, left_out[model]))
        out.extend(self._pinned_elsewhere())
        for name, missing in sorted(self.shortfall.items()):
            out.append("Headroom for %s falls %d slot(s) short: no GPU is left to keep them free." % (name, missing))
        out.extend(self._policy_risk())
        out.extend(self._asymmetry())
        out.extend(self._mode_changes())
        return out

    def _capacity(self, model, requests):
        planner = self.planner
        slots = {}
        for request in requests:
            slots[request.profile] = slots.get(request.profile, 0) + request.count
        profiles = sorted(slots, key=lambda p: p.name)
        summary = "%s: %d request(s) do not fit (%s)" % (model, len(requests), ", ".join(
            "%s %d" % (p.name, sum(1 for r in requests if r.profile is p)) for p in profiles))
        out = []
        excluded = [e for e in planner.excluded if e["model"] == model]
        if excluded:
            left = _names("%s %s %s" % (e["host"], e["pci_id"], e["reason"]) for e in excluded)
            out.append("%s; %d %s GPU(s) are left out of the plan: %s. Put them in Shared Direct with "
                       "gpuops.vgpu.host_graphics, or bring their hosts back, and plan again." % (
                           summary, len(excluded), model, left))
        if all(r.reason == PROFILE_NOT_OFFERED for r in requests):
            return out
        wrong_kind = [g for g in planner.gpus if g.model == model and g.state == "idle"
                      and not any(g.host.offers(p) and g.kind in ("any", p.kind) for p in profiles)
                      and any(p.name in g.host.supported for p in profiles)]
        if wrong_kind:
            out.append("%s; %d idle %s GPU(s) run in the other vGPU mode (MIG or time-sliced) and cannot take them: "
                       "%s. Change their vGPU mode with gpuops.vgpu.host_graphics to use them." % (
                           summary, len(wrong_kind), model,
                           _names("%s %s" % (g.host.name, g.pci_id) for g in wrong_kind)))
        lacking = sorted(set(g.host.name for g in planner.gpus if g.model == model and g.state == "idle"
                             and not any(p.name in g.host.supported for p in profiles)))
        if lacking:
            out.append("%s; hosts %s have idle %s GPUs but offer none of these profiles: check their vGPU Manager "
                       "version." % (summary, _names(lacking), model))
        for profile in profiles:
            out.extend(self._recarve(profile, slots[profile], 3 - len(out)))
        if not out:
            needed = 0
            for profile in profiles:
                per_gpu = profile.max
                if planner.packs_mixed(profile):
                    per_gpu = max(1, len(profile.placements))
                needed += ceil_div(slots[profile], per_gpu)
            out.append("%s; every %s GPU the plan may use is taken: about %d more %s GPU(s) would take them." % (
                summary, model, needed, model))
        return out

    def _recarve(self, profile, slots, limit):
        """Running GPUs of another profile with few VMs that fit in free slots elsewhere: emptied and recarved, each
        takes more requests than it has VMs to move."""
        planner = self.planner
        spare = {}
        for gpu in planner.gpus:
            if gpu.state == "equal":
                spare[gpu.profile] = spare.get(gpu.profile, 0) + gpu.free()
        candidates = sorted((g for g in planner.gpus if g.running and g.state == "equal" and g.model == profile.model
                             and g.profile is not profile and g.host.offers(profile)
                             and g.kind in ("any", profile.kind)), key=lambda g: (g.used, g.sort_key))
        out = []
        for gpu in candidates:
            fits = min(slots, profile.max)
            if len(out) >= limit or fits <= gpu.used:
                break
            elsewhere = spare[gpu.profile] - gpu.free()
            if elsewhere < gpu.used:
                continue
            spare[gpu.profile] -= gpu.used + gpu.free()
            slots -= fits
            out.append("%d request(s) for %s would fit if GPU %s on %s (%s, %d vGPU(s): %s) were emptied and recarved;"
                       " %d free %s slot(s) on other GPUs can take its VMs." % (
                           fits, profile.name, gpu.pci_id, gpu.host.name, gpu.profile.name, gpu.used,
                           _names(sorted(gpu.vms + gpu.placed)), elsewhere, gpu.profile.name))
        return out

    def _pinned_elsewhere(self):
        groups = {}
        for request in self.planner.requests:
            if request.reason == PINNED_HOST_FULL:
                groups.setdefault((request.profile.name, request.pin), []).append(request)
        out = []
        for (name, pin), requests in sorted(groups.items()):
            host = self.planner.host_by_name[pin]
            elsewhere = self.report.free.get(name, 0) - self.report.free_by_host.get((host, name), 0)
            if elsewhere >= min(r.count for r in requests):
                out.append("%s (pinned to %s, which is full for %s) would fit elsewhere: %d free slot(s) on other "
                           "hosts." % (_names(r.vm for r in requests), pin, name, elsewhere))
        return out

    def _policy_risk(self):
        """vSphere's performance policy puts each vGPU on the least-loaded GPU at power-on: on a host that gets GPUs
        carved for one profile and new VMs of another, it can carve a GPU the plan keeps for one with the other."""
        arriving = {}
        for request in self.planner.requests:
            if not request.current:
                for gpu, _count in request.rows:
                    arriving.setdefault(gpu.host, set()).add(request.profile.name)
        hosts = []
        for host in self.planner.hosts:
            if host.vsphere_policy != "performance" or host not in arriving:
                continue
            carved = set(g.profile.name for g in host.gpus if g.carved_by_plan and g.state == "equal")
            carved |= set(n for g in host.gpus if g.carved_by_plan and g.state == "mixed" for n in g.counts)
            if carved and len(carved | arriving[host]) > 1:
                hosts.append(host.name)
        if not hosts:
            return []
        return ["Hosts %s use the performance assignment policy and get new vGPUs of several profiles: at power-on "
                "vSphere puts each vGPU on the least-loaded GPU and can carve a GPU this plan keeps for one profile "
                "with another. Set their assignment policy to consolidation with gpuops.vgpu.host_graphics before "
                "powering the VMs on." % _names(hosts)]

    def _asymmetry(self):
        steps = self.planner.equal.symmetric_steps if self.planner.equal else None
        if steps is None:
            return []
        out = []
        for hosts, name, counts in steps.asymmetric()[:_LISTED]:
            out.append("Hosts %s are carved differently for %s (%s GPU(s)): a VM of that profile has no vMotion "
                       "target on the hosts with fewer; running vGPUs or hosts without idle GPUs keep them apart." % (
                           _names(h.name for h in hosts), name, ", ".join(str(c) for c in counts)))
        return out

    def _mode_changes(self):
        gpus = [g for g in self.planner.gpus if g.state == "mixed" and g.carved_by_plan and g.mode_before != "mixedSize"]
        if not gpus:
            return []
        return ["Set the vGPU mode of %d GPU(s) to mixed-size with gpuops.vgpu.host_graphics before powering their VMs "
                "on: %s." % (len(gpus), _names("%s %s" % (g.host.name, g.pci_id) for g in gpus))]
