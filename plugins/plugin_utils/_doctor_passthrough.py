# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's view of whole GPUs (DirectPath I/O): per host, its passthrough GPUs in their NVLink sets and the VM
that holds each, with a warning for a change that waits for a reboot and for an NVLink set split between VMs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._vm_passthrough import nvlink_sets_from_smi


def nvlink_sets(name, smi, given):
    """The host's NVLink sets by PCI id and where they came from: its own nvidia-smi (``topo -m``) when read with
    the topology, else the inventory's ``passthrough_nvlink_sets``."""
    if smi and (smi.get("topology") or {}).get("nvlink_pairs"):
        try:
            return nvlink_sets_from_smi(smi), "host nvidia-smi"
        except GpuopsError:
            pass
    sets = (given or {}).get(name)
    return ([sorted(group) for group in sets], "inventory") if sets else ([], None)


def passthrough_gpus(host):
    return [gpu for gpu in host.get("gpus") or [] if (gpu.get("passthrough") or {}).get("enabled")]


def groups_of(host):
    """The host's passthrough GPUs grouped by NVLink set (a GPU outside every set stands alone), in PCI order."""
    gpus = dict((gpu["pci_id"], gpu) for gpu in passthrough_gpus(host))
    groups, placed = [], set()
    for group in host.get("nvlink_sets") or []:
        members = [gpus[pci] for pci in group if pci in gpus]
        if members:
            groups.append(members)
            placed.update(gpu["pci_id"] for gpu in members)
    groups.extend([gpu] for pci, gpu in sorted(gpus.items()) if pci not in placed)
    return sorted(groups, key=lambda members: members[0]["pci_id"])


def _holder(gpu):
    holder = gpu.get("passthrough") or {}
    return "%s (%s)" % (holder["vm"], holder.get("vm_power_state")) if holder.get("vm") else "free"


def passthrough_checks(out, host):
    """One finding per host with GPUs in passthrough."""
    name = host["name"]
    pending = [gpu["pci_id"] for gpu in passthrough_gpus(host) if not gpu["passthrough"].get("active")]
    split = []
    parts = []
    for members in groups_of(host):
        holders = set((gpu.get("passthrough") or {}).get("vm") for gpu in members)
        label = "+".join(gpu["pci_id"] for gpu in members)
        if len(holders) > 1:
            split.append("%s: %s" % (label, ", ".join("%s %s" % (gpu["pci_id"], _holder(gpu)) for gpu in members)))
        parts.append("%s%s -> %s" % (label, " (NVLink)" if len(members) > 1 else "", _holder(members[0])))
    source = host.get("nvlink_sets_source")
    summary = "%d GPU(s) in passthrough, NVLink sets from %s: %s." % (
        len(passthrough_gpus(host)), source or "nowhere (none known)", "; ".join(parts))
    if pending:
        out.add("host", name, "passthrough", "WARN", "Passthrough waits for a reboot on %s. %s" % (
            ", ".join(pending), summary), "Reboot the host (maintenance mode in, reboot, out) to activate it.")
    elif split:
        out.add("host", name, "passthrough", "WARN", "NVLink set split between VMs: %s. %s" % (
            "; ".join(split), summary), "Give each VM whole NVLink sets (gpuops.vgpu.vm_passthrough with nvlink: "
            "true), so NVLink works inside the guest.")
    else:
        out.add("host", name, "passthrough", "PASS", summary)
