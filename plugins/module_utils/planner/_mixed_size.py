# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mixed-size planning for one GPU model: vGPUs of different sizes share a GPU while their framebuffer fits.

VMs first take free slots of running equal-size GPUs of their own profile. The rest are packed first-fit
decreasing (largest framebuffer first) into running mixed-size GPUs and into idle GPUs opened one at a time; when
that leaves VMs out, smallest-first packing runs too and the run that places more VMs (then opens fewer GPUs) wins.
On a GPU that can run mixed-size mode a vGPU takes the lowest free placement ID of its type (NVIDIA's fixed offsets,
from the catalog), as the lab vCenter does: the plan holds when a GPU's VMs power on in the order of their placement
IDs. GPUs of hosts without mixed-size mode take one size, up to the type's equal-size maximum.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import heapq

from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._state import (
    NO_CAPACITY,
    PINNED_HOST_FULL,
    Request,
    free_placements,
)


class MixedPacker(object):
    def __init__(self, planner, model_id):
        self.planner = planner
        self.model_id = model_id
        self.requests = [r for r in planner.requests if r.path == "mixed" and r.profile.model == model_id]
        # Idle GPUs that cannot run mixed-size (the host is older than vSphere 8.0 Update 3) still take one size.
        self.gpus = [g for g in planner.gpus if g.model == model_id
                     and (g.state == "mixed" or (g.state == "idle" and g.kind != "mig"))]
        hosts = set(g.host for g in self.gpus)
        self.policy = planner.policy or ("consolidation" if hosts and all(
            h.policy == "consolidation" for h in hosts) else "performance")

    def run(self):
        entries = self._absorb(self._phantoms() + self.requests)
        runs = [self._pack(sorted(entries, key=lambda e: self._key(e, True)))]
        if any(entry.vm is not None for entry in entries) and runs[0][2]:
            runs.append(self._pack(sorted(entries, key=lambda e: self._key(e, False))))
        self._commit(min(runs, key=lambda run: run[:2])[3])

    def _phantoms(self):
        """Stand-ins for headroom, packed before any VM so that VMs leave their room free."""
        requested = set(r.profile.name for r in self.requests)
        running = set(name for g in self.gpus for name in g.counts) | set(
            g.profile.name for g in self.planner.gpus if g.state == "equal" and g.model == self.model_id)
        phantoms = []
        for name in sorted(requested | running | set(self.planner.headroom)):
            profile = self.planner.profiles[name]
            if profile.model != self.model_id or profile.mig or profile.max is None:
                continue
            for _slot in range(self.planner.headroom_for(name, name in requested or name in running)):
                phantoms.append(Request(-1, None, profile, None, 1))
        return phantoms

    @staticmethod
    def _key(entry, largest_first):
        size = entry.profile.fb * entry.count
        return (entry.vm is not None, -size if largest_first else size, entry.pin is None, entry.pin or "",
                entry.profile.name, entry.count, entry.index)

    def _absorb(self, entries):
        slots = {}
        for gpu in self.planner.gpus:
            if gpu.model == self.model_id and gpu.state == "equal" and gpu.free() > 0:
                slots.setdefault(gpu.profile.name, {}).setdefault(gpu.host, []).append(gpu)
        self.planner.absorbable_fb[self.model_id] = sum(
            g.free() * g.profile.fb for by_host in slots.values() for gpus in by_host.values() for g in gpus) + sum(
            g.fb - g.fb_used for g in self.gpus if g.state == "mixed")
        if not slots:
            return entries
        room = dict((g, g.free()) for by_host in slots.values() for gpus in by_host.values() for g in gpus)
        rest = []
        for entry in sorted(entries, key=lambda e: (e.vm is not None, e.pin is None, -e.count, e.index)):
            by_host = slots.get(entry.profile.name, {})
            hosts = [self.planner.host_by_name[entry.pin]] if entry.pin else sorted(by_host, key=lambda h: h.order)
            host = next((h for h in hosts if sum(room[g] for g in by_host.get(h, ())) >= entry.count), None)
            if host is None:
                rest.append(entry)
                continue
            left = entry.count
            for gpu in by_host[host]:
                take = min(left, room[gpu])
                if take:
                    room[gpu] -= take
                    left -= take
                    if entry.vm is not None:  # headroom only holds the slot back from later VMs
                        gpu.used += take
                        entry.rows.append([gpu, take])
                        gpu.placed.append(entry.vm)
            for gpu in [g for g in by_host[host] if not room[g]]:
                by_host[host].remove(gpu)
            if not by_host[host]:
                del by_host[host]
        return rest

    def _pack(self, entries):
        """One packing run on copies of the GPU state: (-VMs placed, GPUs opened, VMs left out, assignments)."""
        run = _Run(self, entries)
        run.pack()
        placed = sum(1 for entry in run.done if entry.vm is not None)
        left_out = sum(1 for entry in entries if entry.vm is not None) - placed
        return -placed, run.opened_new, left_out, run.assignments

    def _commit(self, assignments):
        for gpu, entry, vgpus, spans in assignments:
            if entry.vm is None:
                continue  # headroom: nothing runs there
            if gpu.state == "idle":
                gpu.state, gpu.carved_by_plan = "mixed", True
                gpu.host.idle[(gpu.model, gpu.kind)].remove(gpu)
            gpu.spans.extend(spans)
            entry.offsets.setdefault(gpu, []).extend(start // 1024 for start, _end in spans)
            gpu.counts[entry.profile.name] = gpu.counts.get(entry.profile.name, 0) + vgpus
            gpu.fb_used += entry.profile.fb * vgpus
            gpu.used += vgpus
            gpu.placed.append(entry.vm)
            entry.rows.append([gpu, vgpus])
        for gpu in self.gpus:
            if gpu.carved_by_plan and gpu.state == "mixed" and len(gpu.counts) == 1:
                # One size only: an ordinary equal-size carve that needs no change of vGPU mode.
                profile = self.planner.profiles[next(iter(gpu.counts))]
                gpu.state, gpu.profile, gpu.cap = "equal", profile, profile.max
        for request in self.requests:
            if request.rows or request.reason:
                continue
            if request.pin:
                request.unplace(PINNED_HOST_FULL, "Pinned host %s has no room for %d %s vGPU(s) in mixed-size mode."
                                % (request.pin, request.count, request.profile.name))
            else:
                request.unplace(NO_CAPACITY, "No %s GPU has room for %d %s vGPU(s) (%d MiB) in mixed-size mode." % (
                    self.model_id, request.count, request.profile.name, request.profile.fb * request.count))


class _Run(object):
    """The state of one packing run: GPU framebuffer and type counts, opened GPUs and the idle ones left."""

    def __init__(self, packer, entries):
        self.packer = packer
        self.entries = entries
        self.fb_free = dict((g, g.fb - g.fb_used) for g in packer.gpus)
        self.counts = dict((g, dict(g.counts)) for g in packer.gpus)
        self.spans = dict((g, list(g.spans)) for g in packer.gpus)
        self.opened = [g for g in packer.gpus if g.state == "mixed"]
        self.opened_by_host = {}
        for gpu in self.opened:
            self.opened_by_host.setdefault(gpu.host, []).append(gpu)
        self.idle = {}
        for gpu in sorted((g for g in packer.gpus if g.state == "idle"), key=lambda g: g.sort_key, reverse=True):
            self.idle.setdefault(gpu.host, []).append(gpu)
        self.heap = [(self._host_key(h), h.order, len(gpus), h) for h, gpus in self.idle.items()]
        heapq.heapify(self.heap)
        self.opened_new = 0
        self.assignments = []
        self.done = []

    def _host_key(self, host):
        count = len(self.idle[host])
        return -count if self.packer.policy == "performance" else count

    def fits(self, gpu, profile):
        """How many more vGPUs of the profile the GPU takes in this run."""
        if gpu.mixed_ok:
            return len(free_placements(profile, self.spans[gpu]))
        counts = self.counts[gpu]
        if gpu.state == "idle" and counts and profile.name not in counts:
            return 0
        return min(self.fb_free[gpu] // profile.fb, profile.max - counts.get(profile.name, 0))

    def assign(self, gpu, entry, vgpus):
        self.fb_free[gpu] -= entry.profile.fb * vgpus
        counts = self.counts[gpu]
        counts[entry.profile.name] = counts.get(entry.profile.name, 0) + vgpus
        spans = free_placements(entry.profile, self.spans[gpu])[:vgpus] if gpu.mixed_ok else []
        self.spans[gpu].extend(spans)
        self.assignments.append((gpu, entry, vgpus, spans))

    def open(self, host=None):
        """Open an idle GPU: on ``host``, or on the host the policy picks (most idle GPUs to spread, fewest to
        consolidate). Heap entries whose count no longer matches their host are stale and dropped."""
        while host is None and self.heap:
            _key, _order, count, candidate = self.heap[0]
            if count and len(self.idle[candidate]) == count:
                host = candidate
            else:
                heapq.heappop(self.heap)
        if host is None or not self.idle.get(host):
            return None
        gpu = self.idle[host].pop()
        if self.idle[host]:
            heapq.heappush(self.heap, (self._host_key(host), host.order, len(self.idle[host]), host))
        self.opened.append(gpu)
        self.opened_by_host.setdefault(host, []).append(gpu)
        self.opened_new += 1
        return gpu

    def pack(self):
        index = 0
        entries = self.entries
        while index < len(entries):
            first = entries[index]
            end = index + 1
            if first.count == 1:
                while end < len(entries) and self._same(entries[end], first):
                    end += 1
                self._pack_group(entries[index:end])
            else:
                self._pack_spread(first)
            index = end

    @staticmethod
    def _same(a, b):
        return (a.profile is b.profile and a.pin == b.pin and a.count == 1 and b.count == 1
                and (a.vm is None) == (b.vm is None))

    def _pack_group(self, group):
        """Entries of one profile, one vGPU each, same pin: first fit over opened GPUs, then open new ones."""
        profile = group[0].profile
        host = self.packer.planner.host_by_name[group[0].pin] if group[0].pin else None
        done = 0
        for gpu in list(self.opened_by_host.get(host, ()) if host else self.opened):
            if done == len(group):
                break
            take = min(len(group) - done, self.fits(gpu, profile))
            for entry in group[done:done + take]:
                self.assign(gpu, entry, 1)
            done += take
        while done < len(group):
            gpu = self.open(host)
            if gpu is None:
                break
            take = min(len(group) - done, self.fits(gpu, profile))
            for entry in group[done:done + take]:
                self.assign(gpu, entry, 1)
            done += take
        self.done.extend(group[:done])

    def _pack_spread(self, entry):
        """A VM with several vGPUs: all on one host, over as many of its GPUs as needed."""
        planner = self.packer.planner
        profile = entry.profile
        hosts = [planner.host_by_name[entry.pin]] if entry.pin else sorted(
            set(self.opened_by_host) | set(h for h in self.idle if self.idle[h]), key=lambda h: h.order)
        for host in hosts:
            room = sum(self.fits(g, profile) for g in self.opened_by_host.get(host, ()))
            room += sum(self.fits(g, profile) for g in self.idle.get(host, ()))
            if room < entry.count:
                continue
            left = entry.count
            for gpu in list(self.opened_by_host.get(host, ())):
                take = min(left, self.fits(gpu, profile))
                if take:
                    self.assign(gpu, entry, take)
                    left -= take
            while left:
                gpu = self.open(host)
                take = min(left, self.fits(gpu, profile))
                self.assign(gpu, entry, take)
                left -= take
            self.done.append(entry)
            return
