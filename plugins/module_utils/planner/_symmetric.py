# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Equal-size planning with ``symmetric``: GPUs carved in steps over hosts alike, so they end up carved alike (docs/planner.md)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._state import ZERO_GAIN


class SymmetricSteps(object):
    """Symmetric carving. Hosts of one cluster with the same number of usable GPUs of a model and the same supported
    profiles form a symmetry group. A step gives one GPU of a profile to every host of a group that has fewer GPUs of
    that profile than the step's target and an idle GPU to give; the greedy picks steps by the value they add."""

    def __init__(self, carver):
        self.carver = carver
        self.groups = {}
        self.target = {}
        self.cache = {}
        for host in carver.planner.hosts:
            if host.problem:
                continue
            for model in sorted(host.demands):
                gpus = sum(1 for g in host.gpus if g.model == model)
                key = (host.cluster or "", model, gpus, tuple(sorted(host.supported)))
                self.groups.setdefault(key, []).append(host)

    @staticmethod
    def count(demand, host):
        return sum(1 for g in host.gpus if g.state == "equal" and g.profile is demand.profile)

    def _step(self, demand, key):
        cached = self.cache.get((demand.order, key))
        if cached is None:
            members = self.groups[key]
            target = self.target.get((demand.order, key))
            if target is None:
                target = min(self.count(demand, h) for h in members)
            hosts = [h for h in members if demand in h.demands.get(key[1], ())
                     and self.count(demand, h) <= target and h.idle_for(demand.profile)]
            pinned = sum(min(demand.m, demand.p0.get(h, 0) - demand.a.get(h, 0)) for h in hosts
                         if demand.p0.get(h, 0) > demand.a.get(h, 0))
            cached = self.cache[(demand.order, key)] = (target + 1, hosts, pinned)
        return cached

    @staticmethod
    def _gain(demand, hosts, pinned):
        s = demand.S + demand.m * len(hosts)
        head, total = demand.value()
        return min(s, demand.H) - head, min(s, demand.H + demand.T + demand.Pi + pinned) - total

    def run(self):
        carver = self.carver
        keys = sorted(self.groups, key=lambda k: (min(h.order for h in self.groups[k]), k[1]))
        while True:
            best = None
            for demand in carver.demands:
                for key in keys:
                    if key[1] != demand.profile.model:
                        continue
                    target, hosts, pinned = self._step(demand, key)
                    if not hosts:
                        continue
                    gain = self._gain(demand, hosts, pinned)
                    rank = (gain, -len(hosts))  # value first; on a tie the step that carves fewer GPUs
                    if gain > ZERO_GAIN and (best is None or rank > best[0]):
                        best = (rank, demand, key, target, hosts)
            if best is None:
                return
            _rank, demand, key, target, hosts = best
            for host in hosts:
                carver.carve(carver._idle_gpu(host, demand.profile), demand)
            self.target[(demand.order, key)] = target
            for entry in [entry for entry in self.cache if entry[1] == key]:
                del self.cache[entry]

    def asymmetric(self):
        """(hosts, profile, GPUs per host) for every group whose hosts ended with different carves."""
        found = []
        for key in sorted(self.groups, key=lambda k: (min(h.order for h in self.groups[k]), k[1])):
            hosts = self.groups[key]
            if len(hosts) < 2:
                continue
            names = set(g.profile.name for h in hosts for g in h.gpus if g.state == "equal" and g.model == key[1])
            for name in sorted(names):
                counts = [sum(1 for g in h.gpus if g.state == "equal" and g.profile.name == name) for h in hosts]
                if len(set(counts)) > 1:
                    found.append((hosts, name, counts))
        return found
