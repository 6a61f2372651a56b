# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Driver branches across the fleet for the fleet report: which branch each host and guest runs, and where a
rolling upgrade stands (hosts and guests on the newest branch any host runs)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _compatibility


def branch_of(version):
    """``R525`` for a driver version, None when there is none or it cannot be read."""
    if not version:
        return None
    try:
        return _compatibility.driver_branch(str(version).split("-", 1)[0])["branch"]
    except InputError:
        return None


def _count(branches):
    counts = {}
    for branch in branches:
        if branch:
            counts[branch] = counts.get(branch, 0) + 1
    return counts


def progress(host_branches, guest_branches):
    """Branch counts of hosts and guests, the newest host branch, how many hosts and guests run it, and whether the
    fleet is between two branches (an upgrade under way)."""
    hosts, guests = _count(host_branches), _count(guest_branches)
    newest = max(hosts, key=lambda b: int(b[1:])) if hosts else None
    return {
        "hosts": hosts,
        "guests": guests,
        "newest_branch": newest,
        "hosts_on_newest": hosts.get(newest, 0),
        "guests_on_newest": guests.get(newest, 0),
        "in_progress": len(set(hosts) | set(guests)) > 1,
    }


def summary_card(drivers, hosts_total, guests_total):
    """The header card: (value, label)."""
    if not drivers["newest_branch"]:
        return "not known", "driver branch"
    if drivers["in_progress"]:
        return ("%s: %d / %d hosts, %d / %d guests" % (
            drivers["newest_branch"], drivers["hosts_on_newest"], hosts_total, drivers["guests_on_newest"],
            guests_total), "driver upgrade under way")
    return drivers["newest_branch"], "driver branch everywhere"
