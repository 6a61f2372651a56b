# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An upgrade plan for people (one line per step and VM) and for vLCM (the power action of a step's hosts), and the
vGPU Manager each host runs as a vLCM compliance scan reports it (the plan's input)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

# NVIDIA's vGPU host driver components in a vLCM image (vGPU and AI Enterprise bundles).
HOST_DRIVER_COMPONENT = re.compile(r"^NVD-(?:VGPU|AIE)-")

# vlcm_remediate's vm_power_action per planned action. vLCM has no guest shutdown before maintenance mode; its
# closest action powers the VMs off.
VLCM_POWER_ACTIONS = {"migrate": "keep", "suspend": "suspend", "shutdown": "power_off"}


def plan_lines(plan):
    """The plan as lines of text: target, each step with its VMs, the guest driver order, what is blocked."""
    target = plan["target"]
    lines = ["Target: vGPU Manager %s, guest driver %s%s." % (
        target["host_driver"], target["guest_driver"],
        " (vGPU %s)" % target["release"] if target.get("release") else "")]
    for step in plan["steps"]:
        drivers = ", ".join(sorted(set(step["host_driver"]["from"].values())))
        lines.append("Step %d: %s from %s to %s." % (
            step["step"], ", ".join(step["hosts"]), drivers, step["host_driver"]["to"]))
        for row in step["vms"]:
            where = " to %s (GPU %s)" % (row["to_host"], row["to_gpu"]) if row["to_host"] else ""
            downtime = ", down about %d s" % row["downtime_s"] if row["downtime_s"] else ""
            lines.append("  %s (%s on %s): %s%s%s." % (
                row["vm"], row["profile"], row["host"], row["action"], where, downtime))
    for upgrade in plan["guest_upgrades"]:
        lines.append("Guest %d: %s on %s, GRID driver %s to %s, %s." % (
            upgrade["order"], upgrade["vm"], upgrade["host"], upgrade["from"], upgrade["to"],
            "before the hosts" if upgrade["when"] == "before_hosts" else "after every host of its cluster"))
    for cluster in plan["clusters"]:
        if cluster["already_at_target"]:
            lines.append("Cluster %s: %s already run the target." % (
                cluster["name"], ", ".join(cluster["already_at_target"])))
    lines.extend("Blocked: %s %s" % (b["message"], b["hint"]) for b in plan["blocked"])
    lines.extend("Note: %s" % note for note in plan["notes"])
    if len(lines) == 1:
        lines.append("Nothing to do: every host and guest runs the target.")
    return lines


def step_power_action(step):
    """vlcm_remediate's ``vm_power_action`` for one step: vLCM applies one action to every VM of the hosts it
    remediates, so the step's VMs must share one planned action."""
    actions = sorted(set(row["action"] for row in step["vms"]))
    if len(actions) > 1:
        raise InputError("Step %d (hosts %s) mixes VM actions: %s. vLCM applies one power action to every VM of the "
                         "hosts it remediates." % (step["step"], ", ".join(step["hosts"]), "; ".join(
                             "%s: %s" % (action, ", ".join(r["vm"] for r in step["vms"] if r["action"] == action))
                             for action in actions)),
                         hint="Give the VMs of one host the same policy (driver_upgrade_vm_policies).")
    return VLCM_POWER_ACTIONS[actions[0]] if actions else "keep"


def host_drivers(compliance):
    """``{host: vGPU Manager version}`` from a compliance summary (``vlcm_remediate``'s ``compliance_before``,
    ``vlcm_info``'s ``compliance``): the version of the NVIDIA host driver component each host runs now; hosts
    without one are left out."""
    drivers = {}
    for host in (compliance or {}).get("hosts") or []:
        for name, component in (host.get("components") or {}).items():
            if HOST_DRIVER_COMPONENT.match(name) and (component or {}).get("current"):
                drivers[host["name"]] = component["current"].split("-", 1)[0]
    return drivers


def guest_versions(guests):
    """The plan's guest input from what the guests report: ``guests`` maps a VM name to ``gpu_guest_info``'s
    ``gpu_guest`` (driver and cuda gathered). Returns ``drivers`` and ``cuda`` (VM name to version, VMs whose guest
    has none left out) and ``vms`` (every VM named). A guest's CUDA is the toolkit /usr/local/cuda points to, else
    its newest toolkit."""
    drivers, cuda = {}, {}
    for vm, state in sorted((guests or {}).items()):
        version = ((state or {}).get("driver") or {}).get("version")
        if version:
            drivers[vm] = version
        toolkits = (state or {}).get("cuda") or {}
        linked = (toolkits.get("link") or {}).get("version")
        found = sorted((t["version"] for t in toolkits.get("toolkits") or [] if t.get("version")),
                       key=lambda v: [int(p) for p in re.findall(r"\d+", v)])
        if linked or found:
            cuda[vm] = linked or found[-1]
    return {"drivers": drivers, "cuda": cuda, "vms": sorted(guests or {})}
