# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The planner's working objects: profiles, hosts, GPUs and requests as the planning steps share them.

A *slot* is room for one vGPU of one profile: carving a GPU for a profile in equal-size mode gives it
``max_per_gpu`` slots. GPUs are in one of four states: ``idle`` (takes any profile its host offers), ``equal`` (one
profile), ``mixed`` (several sizes, mixed-size mode) or ``locked`` (runs vGPUs the plan cannot add to).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

UNKNOWN_PROFILE = "unknown_profile"
PROFILE_NOT_OFFERED = "profile_not_offered"
PINNED_HOST_UNAVAILABLE = "pinned_host_unavailable"
PINNED_HOST_LACKS_PROFILE = "pinned_host_lacks_profile"
PINNED_HOST_FULL = "pinned_host_full"
NO_CAPACITY = "no_capacity"
REASONS = (UNKNOWN_PROFILE, PROFILE_NOT_OFFERED, PINNED_HOST_UNAVAILABLE, PINNED_HOST_LACKS_PROFILE,
           PINNED_HOST_FULL, NO_CAPACITY)
CAPACITY_REASONS = (PINNED_HOST_FULL, NO_CAPACITY)


class Profile(object):
    __slots__ = ("name", "model", "fb", "max", "mig", "kind", "placements")

    def __init__(self, facts):
        self.name = facts["name"]
        self.model = facts["model"]
        self.fb = facts["framebuffer_mib"]
        self.max = facts["max_per_gpu"] if facts["known"] else None
        self.mig = facts["mig"]
        self.kind = "mig" if self.mig else "ts"
        # Mixed-size mode: the framebuffer ranges (MiB) a vGPU of this type may occupy, one per NVIDIA placement ID.
        self.placements = tuple((at * 1024, at * 1024 + self.fb) for at in facts.get("mixed_size_placements") or ())


def free_placements(profile, spans):
    """The placements of ``profile`` that overlap none of ``spans`` (occupied ranges), lowest first."""
    return [p for p in profile.placements if not any(p[0] < end and start < p[1] for start, end in spans)]


class Host(object):
    __slots__ = ("name", "cluster", "order", "policy", "vsphere_policy", "supported", "problem", "gpus", "kinds",
                 "idle", "demands")

    def __init__(self, name, cluster, order, policy):
        self.name = name
        self.cluster = cluster
        self.order = order
        self.policy = policy  # the policy the plan assumes
        self.vsphere_policy = policy  # the policy the host has
        self.supported = set()
        self.problem = None
        self.gpus = []
        self.kinds = {}  # model -> kinds ("any", "mig", "ts") of the host's usable GPUs of that model
        self.idle = {}  # (model, kind) -> idle GPUs; pop() gives the lowest PCI id
        self.demands = {}  # model -> equal-size demands this host can serve

    def offers(self, profile):
        kinds = self.kinds.get(profile.model)
        return bool(kinds) and profile.name in self.supported and ("any" in kinds or profile.kind in kinds)

    def idle_for(self, profile):
        return len(self.idle.get((profile.model, "any"), ())) + len(self.idle.get((profile.model, profile.kind), ()))

    def give_idle(self, gpu):
        pool = self.idle.setdefault((gpu.model, gpu.kind), [])
        pool.append(gpu)
        pool.sort(key=lambda g: g.sort_key, reverse=True)


class Gpu(object):
    __slots__ = ("host", "pci_id", "model", "fb", "kind", "mixed_ok", "state", "profile", "cap", "used", "counts",
                 "fb_used", "spans", "vms", "running", "carved_by_plan", "mode_before", "placed", "sort_key")

    def __init__(self, host, pci_id, model, fb, kind, mixed_ok, mode_before):
        self.host = host
        self.pci_id = pci_id
        self.sort_key = (host.order, str(pci_id))
        self.model = model
        self.fb = fb
        self.kind = kind  # "mig" or "ts" when the host reports the GPU's vGPU mode, else "any"
        self.mixed_ok = mixed_ok
        self.mode_before = mode_before
        self.vms = []
        self.placed = []
        self.make_idle()

    def make_idle(self):
        self.state, self.profile, self.cap, self.used, self.counts, self.fb_used = "idle", None, 0, 0, {}, 0
        self.spans = []  # mixed-size mode: framebuffer ranges (MiB) its vGPUs occupy
        self.running = False
        self.carved_by_plan = False

    def free(self):
        return self.cap - self.used if self.state == "equal" else 0

    def reserve_running(self, profile):
        """Occupied ranges for the running vGPUs of a mixed-size GPU. vCenter reports neither their placement IDs
        nor which VM runs which size, so each counts as ``profile`` (the largest running) at the lowest free ID."""
        self.spans = []
        for _vgpu in range(self.used):
            free = free_placements(profile, self.spans)
            if free:
                self.spans.append(free[0])


class Request(object):
    __slots__ = ("index", "vm", "profile", "pin", "count", "rows", "current", "reason", "message", "path", "offsets")

    def __init__(self, index, vm, profile, pin, count):
        self.index = index
        self.vm = vm  # None for the stand-ins that hold headroom while VMs are packed
        self.profile = profile
        self.pin = pin
        self.count = count
        self.rows = []  # [gpu, vGPUs on it]
        self.current = False
        self.reason = None
        self.message = None
        self.path = None  # "current", "equal" or "mixed" once routed
        self.offsets = {}  # mixed-size packing: GPU -> placement IDs (GiB) of its vGPUs there

    def unplace(self, reason, message):
        self.reason, self.message = reason, message


# A gain of nothing: the carving steps compare gains as (headroom, slots filled) pairs.
ZERO_GAIN = (0, 0)


def ceil_div(a, b):
    return -(-a // b)
