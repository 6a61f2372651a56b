# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Equal-size planning, last step: which VM goes into which carved slot, by the assignment policy (docs/planner.md)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import heapq

from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._state import (
    NO_CAPACITY,
    PINNED_HOST_FULL,
    ceil_div,
)


class Placer(object):
    """Puts VMs into the carved slots: pinned VMs on their host first, then the others, larger VMs first; hosts
    and GPUs chosen by the assignment policy. Headroom slots stay free."""

    def __init__(self, carver):
        self.carver = carver

    def run(self):
        for demand in self.carver.demands:
            _DemandPlacer(self.carver, demand).run()


class _DemandPlacer(object):
    def __init__(self, carver, demand):
        self.carver = carver
        self.demand = demand
        self.gpus = {}
        for gpu in carver.planner.gpus:
            if gpu.state == "equal" and gpu.profile is demand.profile and gpu.free() > 0:
                self.gpus.setdefault(gpu.host, []).append(gpu)
        self.free = dict((host, sum(g.free() for g in members)) for host, members in self.gpus.items())
        self.placed = 0

    def budget(self):
        """Slots VMs may still take: all free slots but the headroom."""
        return self.demand.S - min(self.demand.S, self.demand.H) - self.placed

    def run(self):
        demand = self.demand
        requests = sorted(demand.requests, key=lambda r: (-r.count, r.index))
        for request in [r for r in requests if r.pin]:
            host = self.carver.planner.host_by_name[request.pin]
            if request.count <= min(self.free.get(host, 0), self.budget()) or self._carve_more(request, host):
                self._put(request, host)
            else:
                request.unplace(PINNED_HOST_FULL, "Pinned host %s has %d free %s slot(s)%s and no idle GPU for "
                                "more; the VM needs %d." % (host.name, self.free.get(host, 0), demand.profile.name,
                                                            self._headroom_note(), request.count))
        performance = demand.policy == "performance"
        heap = [(-n, h.order, h) for h, n in self.free.items() if n > 0]
        heapq.heapify(heap)
        order = sorted(self.free, key=lambda h: (-sum(g.used for g in self.gpus[h] if g.running), h.order))
        for request in [r for r in requests if not r.pin]:
            host = self._by_spread(heap, request.count) if performance else next(
                (h for h in order if self.free[h] >= request.count), None)
            if host is None and request.count > 1:
                host = self._carve_anywhere(request)
                if host is not None and host not in order:
                    order.append(host)
            if host is None or request.count > self.budget():
                request.unplace(NO_CAPACITY, self._no_capacity(request))
                continue
            self._put(request, host)
            if performance:
                heapq.heappush(heap, (-self.free[host], host.order, host))

    def _by_spread(self, heap, count):
        while heap:
            negative, _order, host = heap[0]
            if -negative != self.free[host]:
                heapq.heappop(heap)
            elif self.free[host] >= count:
                heapq.heappop(heap)
                return host
            else:
                return None
        return None

    def _put(self, request, host):
        rows = {}
        consolidate = host.policy == "consolidation"
        for _vgpu in range(request.count):
            candidates = [g for g in self.gpus[host] if g.free() > 0]
            if consolidate:
                gpu = min(candidates, key=lambda g: (g.free(), g.sort_key))
            else:
                gpu = min(candidates, key=lambda g: (-g.free(), g.sort_key))
            gpu.used += 1
            rows[gpu] = rows.get(gpu, 0) + 1
        for gpu in sorted(rows, key=lambda g: g.sort_key):
            request.rows.append([gpu, rows[gpu]])
            gpu.placed.append(request.vm)
        self.free[host] -= request.count
        self.placed += request.count

    def _carve_more(self, request, host):
        """A VM's vGPUs all run on one host: carve more of that host's idle GPUs when its slots fall short."""
        demand = self.demand
        needed = ceil_div(request.count - self.free.get(host, 0), demand.m)
        if needed <= 0 or host.idle_for(demand.profile) < needed:
            return False  # the host has the slots (headroom holds them back) or not the idle GPUs
        if request.count > self.budget() + needed * demand.m:
            return False
        for _gpu in range(needed):
            gpu = self.carver._idle_gpu(host, demand.profile)
            self.carver.carve(gpu, demand)
            self.gpus.setdefault(host, []).append(gpu)
        self.free[host] = self.free.get(host, 0) + needed * demand.m
        return True

    def _carve_anywhere(self, request):
        demand = self.demand
        hosts = sorted(demand.hosts, key=lambda h: (-(self.free.get(h, 0) + h.idle_for(demand.profile) * demand.m),
                                                    h.order))
        return next((host for host in hosts if self._carve_more(request, host)), None)

    def _headroom_note(self):
        return " (%d kept as headroom)" % self.demand.H if self.demand.H else ""

    def _no_capacity(self, request):
        name = self.demand.profile.name
        free = sum(self.free.values())
        usable = self.budget()
        if free >= request.count and usable >= request.count:
            return ("The VM needs %d %s vGPUs on one host; %d slot(s) are free in all but no host has %d."
                    % (request.count, name, free, request.count))
        if free > usable:
            return ("%d %s slot(s) are free and %d of them are kept as headroom; the VM needs %d."
                    % (free, name, free - max(usable, 0), request.count))
        if free:
            return "Only %d %s slot(s) are free; the VM needs %d." % (free, name, request.count)
        return "No capacity left for %s: every GPU that could take it is in use or carved for another profile." % name
