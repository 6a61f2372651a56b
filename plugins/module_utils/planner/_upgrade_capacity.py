# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the running vGPU VMs of hosts that leave for remediation can go: GPU capacity and an exact search.

Pure logic, standard library only. A vGPU VM moves by vMotion only to a GPU of the same model that runs its profile
with a free slot (equal-size carving) or is idle, or, in mixed-size mode, still has the framebuffer for it; the
target host must offer the profile and its vGPU Manager must accept the VM's guest driver.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

# Candidates tried per evacuation search before it gives up (small clusters are searched completely well below it).
SEARCH_LIMIT = 200000


def profile_facts(name):
    try:
        return _catalog.parse_profile(name)
    except InputError:
        return {"name": name, "model": None, "max_per_gpu": None, "framebuffer_mib": None, "mixed_size_max": None}


class UpgradeGpu(object):
    """One physical GPU: its model, carving mode and the VMs (name -> profile) whose vGPUs run on it."""

    def __init__(self, host, entry):
        self.host = host
        self.pci_id = entry.get("pci_id")
        self.model = entry.get("model")
        self.memory_mib = entry.get("memory_mib")
        self.shared = entry.get("graphics_type", "sharedDirect") == "sharedDirect"
        self.mixed = entry.get("vgpu_mode") == "mixedSize"
        self.vms = {}

    def takes(self, profile):
        """Whether one more vGPU of ``profile`` fits on this GPU as it runs now."""
        facts = profile_facts(profile)
        if not self.shared or (facts["model"] and self.model and facts["model"] != self.model):
            return False
        if not self.vms:
            return True
        if self.mixed:
            limit = facts.get("mixed_size_max")
            used = sum(profile_facts(p)["framebuffer_mib"] or 0 for p in self.vms.values())
            return (self.memory_mib is not None and facts["framebuffer_mib"] is not None
                    and used + facts["framebuffer_mib"] <= self.memory_mib
                    and (limit is None or sum(1 for p in self.vms.values() if p == profile) < limit))
        carved = set(self.vms.values())
        return carved == {profile} and facts["max_per_gpu"] is not None and len(self.vms) < facts["max_per_gpu"]

    def signature(self):
        """GPUs of one host with the same signature are interchangeable targets."""
        return (self.model, self.memory_mib, self.mixed, self.shared, tuple(sorted(self.vms.values())))


class UpgradeHost(object):
    """A host of the cluster being upgraded: driver, state, offered profiles, profiles that may suspend."""

    def __init__(self, entry, driver):
        self.name = entry["name"]
        self.cluster = entry.get("cluster")
        self.driver = driver
        self.connected = entry.get("connection_state", "connected") == "connected"
        self.in_maintenance = bool(entry.get("maintenance_mode"))
        offered = entry.get("supported_profiles")
        self.offered = None if offered is None else set(
            p["name"] if isinstance(p, dict) else p for p in offered)
        suspend = entry.get("suspend_profiles")
        self.suspend_profiles = None if suspend is None else set(suspend)
        self.gpus = [UpgradeGpu(self, gpu) for gpu in entry.get("gpus") or []]

    def offers(self, profile):
        return self.offered is None or profile in self.offered

    def running(self):
        """``[(vm, profile, gpu)]`` of the vGPU VMs running on this host, by VM name."""
        return sorted(((vm, profile, gpu) for gpu in self.gpus for vm, profile in gpu.vms.items()),
                      key=lambda item: item[0])


def evacuate(hosts, leaving, movers, accepts, upgraded):
    """Find GPUs for ``movers`` (``[(vm, profile)]``) on ``hosts`` that are not ``leaving``.

    ``accepts(host, vm)`` says whether the host's vGPU Manager accepts the VM's guest driver; ``upgraded`` names the
    hosts that already run the target driver (preferred: a VM moved there does not move again). Returns
    ``{vm: gpu}`` or None when no placement exists (or the search hit ``SEARCH_LIMIT``). Does not change the GPUs.
    """
    targets = [h for h in hosts if h.name not in leaving and h.connected and not h.in_maintenance]
    order = sorted(movers, key=lambda m: (-(profile_facts(m[1])["framebuffer_mib"] or 0), m[1], m[0]))
    chosen = {}
    budget = [SEARCH_LIMIT]

    def candidates(vm, profile):
        seen = set()
        found = []
        for host in targets:
            if not host.offers(profile) or not accepts(host, vm):
                continue
            for gpu in host.gpus:
                key = (host.name, gpu.signature())
                if key in seen or not gpu.takes(profile):
                    continue
                seen.add(key)
                found.append(gpu)
        # Upgraded hosts first (a VM moved there does not move again), then the same carve (idle GPUs stay free for
        # other sizes), then by name.
        found.sort(key=lambda g: (g.host.name not in upgraded, not g.vms, g.host.name, g.pci_id or ""))
        return found

    def place(index):
        if index == len(order):
            return True
        vm, profile = order[index]
        for gpu in candidates(vm, profile):
            budget[0] -= 1
            if budget[0] < 0:
                return False
            gpu.vms[vm] = profile
            chosen[vm] = gpu
            if place(index + 1):
                return True
            del gpu.vms[vm]
            del chosen[vm]
        return False

    found = place(0)
    for vm, gpu in chosen.items():
        del gpu.vms[vm]
    return dict(chosen) if found else None
