# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``vms`` of ``gpuops.vgpu.vm_passthrough`` from the inventory's ``passthrough_guests``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def _request(name, gpus, label):
    if isinstance(gpus, bool) or gpus in (None, "", 0):
        raise ValueError("%s: passthrough_gpus is %r; give a count (2) or PCI ids ([\"0000:3b:00.0\"])." % (
            label, gpus))
    if isinstance(gpus, (list, tuple)):
        return {"name": name, "devices": [str(device) for device in gpus]}
    try:
        return {"name": name, "gpus": int(gpus)}
    except (TypeError, ValueError):
        raise ValueError("%s: passthrough_gpus is %r; give a count (2) or PCI ids ([\"0000:3b:00.0\"])." % (
            label, gpus))


def requests(hosts, hostvars, extra=None):
    """One entry per guest (VM name: ``passthrough_vm_name`` or the host's name) and per ``extra`` entry."""
    result, seen = [], {}
    for host in hosts or []:
        variables = hostvars[host]
        name = variables.get("passthrough_vm_name") or host
        result.append(dict(_request(name, variables.get("passthrough_gpus"), host), guest=host))
    for entry in extra or []:
        gpus = entry.get("devices") if entry.get("devices") else entry.get("gpus")
        result.append(_request(entry["name"], gpus, entry["name"]))
    for entry in result:
        if entry["name"] in seen:
            raise ValueError("VM %s is asked for twice (%s and %s)." % (
                entry["name"], seen[entry["name"]], entry.get("guest", "gpu_passthrough_requests")))
        seen[entry["name"]] = entry.get("guest", "gpu_passthrough_requests")
    return [dict((k, v) for k, v in entry.items() if k != "guest") for entry in result]
