# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's checks: gathered facts in, findings out, without I/O.

``run_checks(facts, options)`` runs on the output of ``_doctor_facts.collect`` and returns the findings, one per
check and object: ``layer`` (bmc, host, cluster, vm, guest, server, k8s), ``object``, ``check``, ``status`` (PASS,
WARN, FAIL, SKIP), ``message`` and, for anything but PASS, a one-line ``remediation`` (for SKIP: what would let the
check run).
``table`` and ``summarize`` present them. The checks of each layer are in ``_doctor_infra`` (BMC and host),
``_doctor_cluster``, ``_doctor_guests`` (VMs and guests), ``_doctor_servers`` (bare-metal GPU servers) and
``_doctor_k8s`` (Kubernetes GPU nodes).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_infra import bmc_checks, host_checks
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_cluster import cluster_checks
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_guests import guest_checks, vm_checks
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_k8s import k8s_checks
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_servers import server_checks
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_facts import COMPONENTS
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_rules import parse_time


LAYERS = ("bmc", "host", "cluster", "vm", "guest", "server", "k8s")
STATUSES = ("PASS", "WARN", "FAIL", "SKIP")
RANK = {"PASS": 0, "SKIP": 1, "WARN": 2, "FAIL": 3}

DEFAULTS = {
    "now": None,
    "license_expiry_warn_hours": 12,
    "gpu_temperature_warn_celsius": 80,
    "gpu_temperature_fail_celsius": 90,
    "inlet_warn_celsius": 27,
    "inlet_fail_celsius": 35,
    "drs_enabled": None,
    "dpm_enabled": None,
    "hotmigrate": True,
}
DEFAULTS.update(COMPONENTS)


class Findings(object):
    def __init__(self):
        self.items = []

    def add(self, layer, obj, check, status, message, remediation=None):
        self.items.append({"layer": layer, "object": obj, "check": check, "status": status, "message": message,
                           "remediation": None if status == "PASS" else remediation})


NUMBERS = ("license_expiry_warn_hours", "gpu_temperature_warn_celsius", "gpu_temperature_fail_celsius",
           "inlet_warn_celsius", "inlet_fail_celsius")
FLAGS = ("hotmigrate", "drs_enabled", "dpm_enabled")


def options_of(options):
    """The options with their defaults, numbers as numbers and flags as booleans (or None: no expectation).

    Raises ``ValueError`` naming the option for a value that is neither.
    """
    opts = dict(DEFAULTS, **(options or {}))
    for key in NUMBERS:
        try:
            opts[key] = float(opts[key])
        except (TypeError, ValueError):
            raise ValueError("%s must be a number, got %r" % (key, opts[key]))
    for key in FLAGS:
        if opts[key] is None or isinstance(opts[key], bool):
            continue
        word = str(opts[key]).strip().lower()
        if word not in ("true", "yes", "on", "1", "false", "no", "off", "0"):
            raise ValueError("%s must be true, false or null, got %r" % (key, opts[key]))
        opts[key] = word in ("true", "yes", "on", "1")
    opts["now"] = parse_time(opts["now"]) if opts["now"] else datetime.datetime.utcnow()
    return opts


def run_checks(facts, options=None):
    """Every check over ``collect()``'s facts; findings in layer order (bmc, host, cluster, vm, guest, server, k8s)."""
    opts = options_of(options)
    out = Findings()
    if facts.get("vcenter_error"):
        out.add("host", facts.get("vcenter") or "vCenter", "vcenter", "FAIL",
                "Cannot read the GPU inventory: %s" % facts["vcenter_error"],
                "Check the vcenter_* connection variables and that vCenter answers.")
    for host in facts.get("hosts") or []:
        bmc_checks(out, host, facts, opts)
    for host in facts.get("hosts") or []:
        host_checks(out, host, facts, opts)
    cluster_checks(out, facts, opts)
    vm_checks(out, facts)
    guest_checks(out, facts, opts)
    server_checks(out, facts.get("servers"))
    k8s_checks(out, facts)
    return out.items


def summarize(findings):
    counts = dict((status, 0) for status in STATUSES)
    for finding in findings:
        counts[finding["status"]] += 1
    worst = max([f["status"] for f in findings] or ["PASS"], key=lambda s: RANK[s])
    return dict(counts, total=len(findings), worst=worst)


# -- table ---------------------------------------------------------------------------------------------------------

def table(findings):
    """Fixed-width lines, grouped by layer: status, object, check, message; the remediation on a line below."""
    lines = []
    obj_w = max([len(f["object"]) for f in findings] or [6])
    check_w = max([len(f["check"]) for f in findings] or [5])
    indent = " " * (6 + obj_w + 2 + check_w + 2)
    for layer in LAYERS:
        group = [f for f in findings if f["layer"] == layer]
        if not group:
            continue
        counts = summarize(group)
        lines.append("== %s: %s ==" % (layer, ", ".join("%d %s" % (counts[s], s) for s in STATUSES if counts[s])))
        for f in group:
            lines.append(("%-4s  %-*s  %-*s  %s" % (f["status"], obj_w, f["object"], check_w, f["check"],
                                                    f["message"])).rstrip())
            if f.get("remediation"):
                lines.append("%s-> %s" % (indent, f["remediation"]))
    counts = summarize(findings)
    lines.append("doctor: %d checks: %s" % (counts["total"], ", ".join("%d %s" % (counts[s], s) for s in STATUSES)))
    return lines
