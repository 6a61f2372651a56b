# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Equal-size planning: which idle GPUs to carve for which profile, then which VM goes into which slot.

The method and its guarantees are in docs/planner.md. In short: demands are counted in slots per profile (pinned per
host, unpinned, headroom); a greedy carves one GPU at a time where it adds the most value, with an augmenting step
that moves carves between hosts when the GPUs a profile could use are taken; a local search exchanges carves on
hosts with pinned VMs; then VMs go into the slots by the assignment policy.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import heapq

from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._placement import Placer
from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._state import ZERO_GAIN
from ansible_collections.gpuops.vgpu.plugins.module_utils.planner._symmetric import SymmetricSteps

# Exchange attempts of the local search: a bound real inventories stay far below; it caps the worst case.
MAX_EXCHANGES = 2000


class Demand(object):
    """One equal-size profile: what it must fit, the slots it has and the value they give.

    ``a`` holds slots per host (free slots of running GPUs plus plan-carved GPUs), ``p0`` pinned slots per host,
    ``T`` unpinned slots and ``H`` headroom. With ``S`` slots in all and ``Pi`` = sum over hosts of
    ``min(p0, a)``, pinned-first placement keeps ``min(S, H)`` headroom and fills ``min(S, H + T + Pi)`` slots in
    total: the maximum flow from requests to slots.
    """

    __slots__ = ("profile", "m", "order", "a", "p0", "pinned", "T", "H", "S", "Pi", "hosts", "gen_heap",
                 "pin_heap", "gain", "blocked", "requests", "carved", "policy")

    def __init__(self, profile, order):
        self.profile = profile
        self.m = profile.max
        self.order = order
        self.a = {}
        self.p0 = {}
        self.pinned = self.T = self.H = self.S = self.Pi = 0
        self.hosts = []
        self.gen_heap = []
        self.pin_heap = []
        self.gain = None
        self.blocked = False
        self.requests = []
        self.carved = {}  # host -> GPUs the plan carved for this profile there
        self.policy = "performance"

    def value(self):
        return min(self.S, self.H), min(self.S, self.H + self.T + self.Pi)

    def gain_at(self, host, slots):
        """What ``slots`` more slots on ``host`` add: (headroom, slots filled)."""
        a = self.a.get(host, 0)
        p0 = self.p0.get(host, 0)
        pi = self.Pi + min(p0, a + slots) - min(p0, a)
        s = self.S + slots
        head, total = self.value()
        return min(s, self.H) - head, min(s, self.H + self.T + pi) - total

    def unmet(self):
        return self.value()[1] < self.H + self.T + self.pinned


class EqualCarver(object):
    def __init__(self, planner):
        self.planner = planner
        self.demands = []
        self.by_name = {}
        self.value = [0, 0]
        self.journal = None
        self.hosts_by_model = {}
        self.pinned_hosts = set()
        self.idle_total = {}  # model -> idle GPUs on hosts that serve a demand
        self.symmetric_steps = None

    # ---- every change of a GPU goes through carve/uncarve, which keep all bookkeeping true --------------------

    def carve(self, gpu, demand):
        host = gpu.host
        host.idle[(gpu.model, gpu.kind)].remove(gpu)
        self.idle_total[gpu.model] -= 1
        gpu.state, gpu.profile, gpu.cap, gpu.carved_by_plan = "equal", demand.profile, demand.m, True
        demand.carved[host] = demand.carved.get(host, 0) + 1
        self.add_slots(demand, host, demand.m)
        self._idle_changed(host, gpu.model)
        if self.journal is not None:
            self.journal.append((self.uncarve, gpu, demand))

    def uncarve(self, gpu, demand):
        host = gpu.host
        gpu.make_idle()
        host.give_idle(gpu)
        self.idle_total[gpu.model] += 1
        demand.carved[host] -= 1
        self.add_slots(demand, host, -demand.m)
        self._idle_changed(host, gpu.model)
        if self.journal is not None:
            self.journal.append((self.carve, gpu, demand))

    def add_slots(self, demand, host, slots):
        before = demand.value()
        a = demand.a.get(host, 0)
        p0 = demand.p0.get(host, 0)
        demand.Pi += min(p0, a + slots) - min(p0, a)
        demand.a[host] = a + slots
        demand.S += slots
        after = demand.value()
        self.value[0] += after[0] - before[0]
        self.value[1] += after[1] - before[1]
        self._push_pin(demand, host)

    def _idle_changed(self, host, model):
        for demand in host.demands.get(model, ()):
            self._push_gen(demand, host)
            self._push_pin(demand, host)
        for demand in self.demands:
            if demand.profile.model == model:
                demand.gain = None

    def _gen_key(self, demand, host):
        """Where an unpinned carve goes: first hosts that no other profile's pinned VMs still wait for, then the
        policy's order (most idle GPUs to spread, fewest to consolidate)."""
        count = host.idle_for(demand.profile)
        contested = host in self.pinned_hosts and any(
            other is not demand and other.p0.get(host, 0) > other.a.get(host, 0)
            for other in host.demands.get(demand.profile.model, ()))
        return (contested, -count if demand.policy == "performance" else count), count

    def _push_gen(self, demand, host):
        key, count = self._gen_key(demand, host)
        if count:
            heapq.heappush(demand.gen_heap, (key, host.order, host))

    @staticmethod
    def _push_pin(demand, host):
        deficit = demand.p0.get(host, 0) - demand.a.get(host, 0)
        count = host.idle_for(demand.profile)
        if deficit > 0 and count:
            heapq.heappush(demand.pin_heap, (-deficit, host.order, deficit, count, host))
        demand.gain = None

    def _peek_gen(self, demand):
        heap = demand.gen_heap
        while heap:
            key, _order, host = heap[0]
            if self._gen_key(demand, host) == (key, host.idle_for(demand.profile)) and host.idle_for(demand.profile):
                return host
            heapq.heappop(heap)  # stale: the host changed since this entry was pushed
        return None

    @staticmethod
    def _peek_pin(demand):
        heap = demand.pin_heap
        while heap:
            deficit, count, host = heap[0][2], heap[0][3], heap[0][4]
            if demand.p0.get(host, 0) - demand.a.get(host, 0) == deficit and host.idle_for(demand.profile) == count:
                return host
            heapq.heappop(heap)
        return None

    # ---- set-up ------------------------------------------------------------------------------------------------

    def setup(self):
        planner = self.planner
        requested = {}
        for request in planner.requests:
            if request.path == "equal":
                requested.setdefault(request.profile.name, []).append(request)
        running = set(g.profile.name for g in planner.gpus if g.state == "equal")
        names = set(requested) | set(n for n, slots in planner.headroom.items() if slots)
        if planner.headroom_all:
            names |= running
        for name in sorted(names):
            profile = planner.profiles[name]
            if profile.max is None or (name not in requested and planner.packs_mixed(profile)):
                continue  # unknown sizes cannot be planned; mixed-size headroom is kept by the packer
            demand = Demand(profile, len(self.demands))
            demand.requests = requested.get(name, [])
            demand.H = planner.headroom_for(name, name in requested or name in running)
            for request in demand.requests:
                if request.pin:
                    host = planner.host_by_name[request.pin]
                    demand.p0[host] = demand.p0.get(host, 0) + request.count
                    demand.pinned += request.count
                    self.pinned_hosts.add(host)
                else:
                    demand.T += request.count
            demand.hosts = planner.offering_hosts(profile)
            demand.policy = planner.policy or ("consolidation" if demand.hosts and all(
                h.policy == "consolidation" for h in demand.hosts) else "performance")
            self.demands.append(demand)
            self.by_name[name] = demand
        for gpu in planner.gpus:
            demand = self.by_name.get(gpu.profile.name) if gpu.state == "equal" else None
            if demand is not None and gpu.free() > 0:
                self.add_slots(demand, gpu.host, gpu.free())
        for demand in self.demands:
            planner.absorbable_slots[demand.profile.name] = demand.S
            for host in demand.hosts:
                host.demands.setdefault(demand.profile.model, []).append(demand)
                self.hosts_by_model.setdefault(demand.profile.model, set()).add(host)
        for model, hosts in self.hosts_by_model.items():
            self.idle_total[model] = sum(len(pool) for h in hosts for key, pool in h.idle.items() if key[0] == model)
        for demand in self.demands:
            for host in demand.hosts:
                self._push_gen(demand, host)
                self._push_pin(demand, host)

    def run(self):
        self.setup()
        if self.demands:
            if self.planner.symmetric:
                self.symmetric_steps = SymmetricSteps(self)
                self.symmetric_steps.run()
            else:
                self.greedy()
                if any(d.pinned for d in self.demands) and any(d.unmet() for d in self.demands):
                    self._exchange()
        Placer(self).run()

    # ---- the greedy --------------------------------------------------------------------------------------------

    def best_move(self, demand):
        """(gain, host) of carving one more GPU for ``demand``; the gain is (headroom, slots filled)."""
        if demand.gain is not None:
            return demand.gain
        best = None
        for host in (self._peek_pin(demand), self._peek_gen(demand)):
            if host is not None:
                gain = demand.gain_at(host, demand.m)
                if best is None or gain > best[0]:
                    best = (gain, host)
        if best is None and not demand.blocked and demand.gain_at(None, demand.m) > ZERO_GAIN:
            if self._augment(demand):
                return self.best_move(demand)
            # Once no chain frees a GPU for this profile, more carves elsewhere never make one (the carvable
            # amounts form a polymatroid), so the search is not repeated.
            demand.blocked = True
        demand.gain = best or (ZERO_GAIN, None)
        return demand.gain

    def greedy(self):
        """Carve one GPU at a time where it adds the most value: headroom first, then slots filled."""
        while True:
            chosen, chosen_gain, host = None, ZERO_GAIN, None
            for demand in self.demands:
                gain, where = self.best_move(demand)
                if gain > chosen_gain:
                    chosen, chosen_gain, host = demand, gain, where
            if chosen is None:
                return
            if self.best_move(chosen) != (chosen_gain, host):
                continue  # an augmenting move during the scan changed the hosts; look again
            self.carve(self._idle_gpu(host, chosen.profile), chosen)

    @staticmethod
    def _idle_gpu(host, profile):
        pool = host.idle.get((profile.model, profile.kind)) or host.idle.get((profile.model, "any"))
        return pool[-1]

    @staticmethod
    def _movable(demand, host):
        """A GPU the plan carved for ``demand`` on ``host`` can leave without costing a pinned slot."""
        return demand.carved.get(host, 0) > 0 and demand.a.get(host, 0) - demand.m >= demand.p0.get(host, 0)

    def _augment(self, demand):
        """Free an idle GPU on a host that offers ``demand`` by moving other carves along a chain of hosts.

        Hosts are grouped into classes by the demands they serve, so the breadth-first search runs over classes,
        not hosts. Moves never lose a filled slot. This is the augmenting step of the greedy over a transversal
        polymatroid: without it the greedy would stop early when hosts offer different profiles.
        """
        model = demand.profile.model
        hosts = sorted(self.hosts_by_model.get(model, ()), key=lambda h: h.order)
        if not any(any(h.idle.get((model, kind)) for kind in ("any", "ts", "mig")) for h in hosts):
            return False
        classes = {}
        for host in hosts:
            classes.setdefault(tuple(d.order for d in host.demands.get(model, ())), []).append(host)
        starts = [key for key in classes if demand.order in key]
        parent = dict((key, None) for key in starts)
        queue = list(starts)
        while queue:
            key = queue.pop(0)
            for mover in self.demands:
                if mover is demand or mover.order not in key:
                    continue
                if not any(self._movable(mover, h) for h in classes[key]):
                    continue
                for target, members in classes.items():
                    if target == key or mover.order not in target:
                        continue
                    receiver = next((h for h in members if h.idle_for(mover.profile)), None)
                    if receiver is not None:
                        self._apply_chain(parent, classes, key, mover, receiver)
                        return any(h.idle_for(demand.profile) for h in demand.hosts)
                    if target not in parent:
                        parent[target] = (key, mover)
                        queue.append(target)
        return False

    def _apply_chain(self, parent, classes, key, mover, receiver):
        while True:
            source = next(h for h in classes[key] if self._movable(mover, h))
            gpu = next(g for g in source.gpus if g.carved_by_plan and g.profile is mover.profile)
            self.uncarve(gpu, mover)
            self.carve(self._idle_gpu(receiver, mover.profile), mover)
            if parent[key] is None:
                return
            key, mover = parent[key]
            receiver = source
            if not receiver.idle_for(mover.profile):
                return  # the freed GPU is of the other vGPU kind (MIG or time-sliced); the moves lost nothing

    # ---- local search for pinned demands -----------------------------------------------------------------------

    def _exchange(self):
        """On a full host with pinned VMs, give one carved GPU to a profile that still lacks room and let the
        greedy re-place what it held; keep the exchange only when the plan then places more."""
        hosts = sorted(set(h for d in self.demands for h in d.p0), key=lambda h: h.order)
        attempts = [MAX_EXCHANGES]
        while self._improve_once(hosts, attempts):
            pass
        self._prune()

    def _improve_once(self, hosts, attempts):
        for host in hosts:
            hungry = [d for model in sorted(host.demands) for d in host.demands[model]
                      if d.unmet() and not host.idle_for(d.profile)]
            for incoming in hungry:
                for outgoing in self.demands:
                    if outgoing is incoming or not outgoing.carved.get(host):
                        continue
                    if attempts[0] <= 0:
                        return False
                    if self._try_exchange(host, outgoing, incoming, attempts):
                        return True
        return False

    def _promising(self, host, outgoing, incoming):
        """An exchange can only pay off when the incoming profile gains more than the outgoing one loses, or when
        the outgoing profile can be carved again on another host."""
        loss = outgoing.gain_at(host, -outgoing.m)
        gain = incoming.gain_at(host, incoming.m)
        if (gain[0] + loss[0], gain[1] + loss[1]) > ZERO_GAIN:
            return True
        if not self.idle_total.get(outgoing.profile.model):
            return False
        return any(h is not host and h.idle_for(outgoing.profile) for h in outgoing.hosts)

    def _try_exchange(self, host, outgoing, incoming, attempts):
        gpu = next((g for g in host.gpus if g.carved_by_plan and g.profile is outgoing.profile
                    and g.kind in ("any", incoming.profile.kind)), None)
        if gpu is None or not self._promising(host, outgoing, incoming):
            return False
        attempts[0] -= 1
        before = tuple(self.value)
        blocked = [d.blocked for d in self.demands]
        self.journal = []
        self.uncarve(gpu, outgoing)
        self.carve(gpu, incoming)
        self.greedy()
        journal, self.journal = self.journal, None
        if tuple(self.value) > before:
            return True
        for undo, changed, demand in reversed(journal):
            undo(changed, demand)
        for demand, flag in zip(self.demands, blocked):
            demand.blocked = flag
            demand.gain = None
        return False

    def _prune(self):
        """Give back plan-carved GPUs whose slots no longer add anything (an exchange can leave one behind)."""
        for gpu in sorted(self.planner.gpus, key=lambda g: g.sort_key, reverse=True):
            demand = self.by_name.get(gpu.profile.name) if gpu.carved_by_plan and gpu.state == "equal" else None
            if demand is not None and demand.carved.get(gpu.host) and demand.gain_at(gpu.host, -demand.m) == ZERO_GAIN:
                self.uncarve(gpu, demand)
