# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a GPU site's vCenter holds, read in one module call: the GPU inventory, DRS/DPM with the prepare record of
each cluster, each cluster's vLCM image and compliance, and named advanced settings.

Each part is read with the same functions as its own module (``gpu_info``, ``cluster_automation`` in check mode,
``vlcm_info``, ``vcenter_settings`` in check mode), so it answers the same; a part that cannot be read is reported
with its message (``<part>_error``) and the others are still read, as a checker needs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError, NotFound
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import LazyClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter_rest import VCenterRestClient
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._cluster_automation import reconcile
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._inventory import read_inventory
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._settings import plain, read_settings
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._info import read_vlcm

GATHER_CHOICES = ["inventory", "automation", "vlcm", "settings"]


def _inventory(client, params):
    """``(inventory, vms_error)``: the hosts and the named VMs; a VM that cannot be found leaves the hosts read."""
    scope = dict(cluster=params["clusters"][0] if len(params["clusters"]) == 1 else None,
                 esxi_hostnames=None, datacenter=params["datacenter"])
    try:
        return read_inventory(client, vm_names=params["vms"], **scope), None
    except NotFound as err:
        if not params["vms"]:
            raise
        return read_inventory(client, **scope), str(err)


def _automation(client, name, datacenter):
    answer = reconcile(client, {"cluster": name, "datacenter": datacenter}, check_mode=True)
    answer.pop("diff", None)
    answer.pop("changed", None)
    return answer


def _part(read, *args):
    """``(value, error)`` of one read: a failure of one part is reported, not raised."""
    try:
        return read(*args), None
    except GpuopsError as err:
        return None, str(err)


def read_site(client, params, check_mode):
    """The ``gpu_site_info`` module's result: ``hosts``, ``vms``, ``clusters`` (one entry per cluster) and
    ``settings``.

    The REST client of the vLCM reads connects at its first use (``LazyClient``), so that a run that reads no vLCM
    state opens no REST session and a refused REST login is each cluster's ``vlcm_error``.
    """
    with LazyClient(VCenterRestClient.from_params, params) as rest:
        return _read_site(client, rest, params)


def _read_site(client, rest, params):
    gather = set(params["gather"] or GATHER_CHOICES)
    result = {"gathered": [name for name in GATHER_CHOICES if name in gather]}
    selected = list(params["clusters"] or [])
    if "inventory" in gather:
        read, error = _part(_inventory, client, params)
        inventory, vms_error = read or ({}, None)
        hosts = [h for h in inventory.get("hosts") or [] if not selected or h.get("cluster") in selected]
        result.update(hosts=hosts, vms=inventory.get("vms") or [], vms_error=vms_error, inventory_error=error)
        if not selected:
            selected = sorted(set(h["cluster"] for h in hosts if h.get("cluster")))
    if "settings" in gather:
        read, error = _part(read_settings, client)
        values = read[1] if read else {}
        result["settings"] = None if error else dict((key, plain(values.get(key))) for key in params["settings"])
        result["settings_error"] = error
    clusters = []
    for name in selected:
        entry = {"name": name}
        if "automation" in gather:
            entry["automation"], entry["automation_error"] = _part(_automation, client, name, params["datacenter"])
        if "vlcm" in gather:
            entry["vlcm"], entry["vlcm_error"] = _part(read_vlcm, rest, name, params["datacenter"],
                                                       ["image", "compliance"])
        clusters.append(entry)
    result["clusters"] = clusters
    return result
