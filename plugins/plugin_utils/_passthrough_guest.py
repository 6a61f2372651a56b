# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a guest with whole GPUs (DirectPath I/O) got what NVLink jobs need, judged from its own nvidia-smi.

The input is what ``gpuops.vgpu.nvidia_smi_info`` returns in the guest with ``gather: [topology, nvlink, p2p]``,
or ``gpuops.vgpu.gpu_guest_info``'s read with its ``nvidia_smi`` and ``topology`` probes (``from_guest_read``).
NVLink works in a VM only when every GPU of a linked set is passed through to that VM: then ``topo -m`` shows
``NV<n>`` between them, ``nvlink -s`` lists their links active at the model's speed and ``topo -p2p rw`` says
``OK``. A GPU whose peer went to another VM shows a PCIe path and inactive links (docs/passthrough.md).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# Per-link NVLink speed that nvidia-smi nvlink -s prints, by product name (tests/fixtures/nvidia-smi recordings:
# nvlink_status_8xA100_sxm4_80gb_12links.txt 25 GB/s, nvlink_s_h100_18links_driver590.txt and the 2x H100 PCIe one
# 26.562 GB/s). Other models need gpu_validate_passthrough_nvlink_gbps.
NVLINK_GBPS = (("A100", 25.0), ("H100", 26.562), ("H800", 26.562), ("A800", 25.0))

CHECKS = ("passthrough_gpus", "nvlink_topology", "nvlink_status", "p2p")


def _check(status, message, **details):
    return dict(details, status=status, message=message)


def _nvlink_groups(facts):
    """GPU names (GPU0...) joined by NV links in ``topo -m``, as sorted lists; a GPU without NV link stands alone."""
    topology = facts.get("topology") or {}
    gpus = [name for name in topology.get("devices") or [] if name.startswith("GPU")]
    group_of = dict((gpu, {gpu}) for gpu in gpus)
    for pair in topology.get("nvlink_pairs") or []:
        merged = group_of[pair["a"]] | group_of[pair["b"]]
        for gpu in merged:
            group_of[gpu] = merged
    groups = []
    for gpu in gpus:
        if sorted(group_of[gpu]) not in groups:
            groups.append(sorted(group_of[gpu]))
    return groups


def _speed_wanted(gpus, wanted):
    if wanted:
        return float(wanted)
    names = set(gpu.get("name") or "" for gpu in gpus)
    speeds = set(speed for name in names for model, speed in NVLINK_GBPS if model in name)
    return speeds.pop() if len(speeds) == 1 else None


# Whole GPUs the machine owns: "Pass-Through" in a VM given them, "None" on bare metal (the 8x H100 bare-metal
# recording in tests/fixtures/nvidia-smi); a vGPU reports "VGPU", a vGPU host's GPU "Host VGPU".
WHOLE_GPU_MODES = ("Pass-Through", "None")


def check_gpus(facts, expected_count):
    gpus = [gpu for gpu in facts.get("gpus") or [] if gpu.get("virtualization_mode") in WHOLE_GPU_MODES]
    seen = ", ".join("%s (%s)" % (gpu.get("name"), gpu.get("pci_bus_id")) for gpu in gpus) or "none"
    if expected_count and len(gpus) != expected_count:
        return _check("failed", "the guest sees %d passthrough GPU(s), %d expected: %s" % (
            len(gpus), expected_count, seen), seen=len(gpus), expected=expected_count)
    return _check("ok" if gpus else "failed", "%d passthrough GPU(s): %s" % (len(gpus), seen),
                  seen=len(gpus), expected=expected_count or None)


def check_topology(facts, set_size):
    if facts.get("topology") is None:
        return _check("failed", "nvidia-smi topo -m failed: %s" % (facts.get("errors") or {}).get("topology"))
    groups = _nvlink_groups(facts)
    alone = [group[0] for group in groups if len(group) == 1]
    wrong = [group for group in groups if len(group) > 1 and set_size and len(group) != set_size]
    matrix = facts["topology"]["matrix"]
    if alone:
        paths = ["%s-%s %s" % (gpu, other, matrix.get(gpu, {}).get(other)) for gpu in alone for other in
                 sorted(matrix) if other != gpu and other.startswith("GPU")]
        return _check("failed", "%s %s no NVLink peer in this VM (topo -m: %s): its NVLink set was split; give the "
                      "VM whole NVLink sets (vm_passthrough nvlink: true)" % (
                          ", ".join(alone), "has" if len(alone) == 1 else "have", ", ".join(paths) or "no other GPU"),
                      sets=groups)
    if wrong:
        return _check("failed", "NVLink sets of %s GPUs in this VM, %d expected per set" % (
            ", ".join(str(len(group)) for group in wrong), set_size), sets=groups)
    return _check("ok", "NVLink sets %s" % "; ".join("-".join(group) for group in groups), sets=groups)


def check_links(facts, wanted_gbps):
    status = facts.get("nvlink")
    if status is None:
        return _check("failed", "nvidia-smi nvlink -s failed: %s" % (facts.get("errors") or {}).get("nvlink"))
    speed = _speed_wanted(facts.get("gpus") or [], wanted_gbps)
    problems, summary = [], []
    for gpu in status.get("gpus") or []:
        active = [link for link in gpu["links"] if link["active"]]
        slow = [link for link in active if speed and link["speed_gbps"] + 1e-6 < speed]
        if not active:
            problems.append("GPU%d: no active link (%s)" % (gpu["index"], gpu.get("error") or "all inactive"))
        elif slow:
            problems.append("GPU%d: link %s at %s GB/s, %s expected" % (
                gpu["index"], ", ".join(str(link["link"]) for link in slow), slow[0]["speed_gbps"], speed))
        summary.append("GPU%d %d active" % (gpu["index"], len(active)))
    if not status.get("gpus"):
        problems.append("nvidia-smi nvlink -s lists no GPU with NVLink")
    if problems:
        return _check("failed", "; ".join(problems), expected_gbps=speed)
    return _check("ok", "%s%s" % (
        ", ".join(summary), " at %s GB/s" % speed if speed else " (speed not checked: unknown model)"),
        expected_gbps=speed)


def check_p2p(facts, groups):
    p2p = facts.get("p2p")
    if p2p is None:
        return _check("failed", "nvidia-smi topo -p2p rw failed: %s" % (facts.get("errors") or {}).get("p2p"))
    within = set()
    for group in groups:
        within.update((a, b) for a in group for b in group if a < b)
    bad = ["%s-%s %s" % (pair["a"], pair["b"], pair["status"]) for pair in p2p["pairs"]
           if tuple(sorted((pair["a"], pair["b"]))) in within and not pair["ok"]]
    if bad:
        return _check("failed", "peer-to-peer read/write not OK within an NVLink set: %s" % ", ".join(bad))
    return _check("ok", "peer-to-peer read/write OK within %d NVLink set(s)" % len([g for g in groups if len(g) > 1]))


def from_guest_read(read):
    """``gpu_guest_info``'s read as ``nvidia_smi_info``'s facts: nvidia-smi's report with the topology probe's
    ``topology``, ``nvlink`` and ``p2p``, and their errors by command."""
    facts = dict(read.get("nvidia_smi") or {"present": False, "msg": "nvidia-smi was not read"})
    facts.update((read.get("topology") or {}))
    errors = read.get("errors") or {}
    facts["errors"] = dict((name, errors["topology." + name].get("msg") or errors["topology." + name])
                           for name in ("topology", "nvlink", "p2p") if "topology." + name in errors)
    return facts


def evaluate(facts, expected_count=0, set_size=2, nvlink=True, nvlink_gbps=None):
    """The guest checks by name, each ``{status: ok|warning|failed|skipped, message, ...}``."""
    if not facts or not facts.get("present", True):
        message = "nvidia-smi fails: %s" % (facts or {}).get("msg", "not present")
        return dict((name, _check("failed" if name == "passthrough_gpus" else "skipped", message)) for name in CHECKS)
    checks = {"passthrough_gpus": check_gpus(facts, expected_count)}
    if not nvlink:
        checks.update((name, _check("skipped", "no NVLink expected")) for name in CHECKS[1:])
        return checks
    checks["nvlink_topology"] = check_topology(facts, set_size)
    groups = checks["nvlink_topology"].get("sets") or []
    checks["nvlink_status"] = check_links(facts, nvlink_gbps)
    checks["p2p"] = check_p2p(facts, groups)
    return checks
