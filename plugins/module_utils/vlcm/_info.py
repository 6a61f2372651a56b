# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What vLCM holds: offline depots with their components, the depots' content, a cluster's hosts, image and
compliance; and what offline bundles on the controller carry, read in the same call."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._offline_bundle import read_bundle
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._operations import Vlcm, compliance_summary

GATHER_CHOICES = ["depots", "components", "hosts", "image", "compliance"]
CLUSTER_GATHERS = {"hosts", "image", "compliance"}


def vlcm_info(client, params, check_mode):
    """The ``vlcm_info`` module: ``read_vlcm`` with its options."""
    return read_vlcm(client, cluster_name=params["cluster"], datacenter=params["datacenter"],
                     gather=params["gather"], bundles=params["bundles"])


def read_vlcm(client, cluster_name=None, datacenter=None, gather=None, bundles=None):
    """Read what ``gather`` names (default: all that applies); the result as ``vlcm_info`` returns it.

    ``hosts``, ``image`` and ``compliance`` need ``cluster_name``; image and compliance are None for a cluster that
    is not image-managed. ``bundles`` (paths of offline bundles) are read first, so a bad file fails before any
    call to vCenter. Reads only: no scan is started.
    """
    gather = set(gather or (GATHER_CHOICES if cluster_name else ["depots", "components"]))
    if gather & CLUSTER_GATHERS and not cluster_name:
        raise InputError("gather %s needs the cluster option." % ", ".join(sorted(gather & CLUSTER_GATHERS)),
                         hint="Set cluster, or gather only depots and components.")
    result = {}
    if bundles:
        result["bundles"] = [dict(read_bundle(path), path=path) for path in bundles]
    api = Vlcm(client)
    if "depots" in gather:
        depots = []
        for depot_id, depot in api.depots().items():
            depots.append(dict(id=depot_id, location=depot.get("location"), description=depot.get("description"),
                               owner=depot.get("owner"), components=api.depot_components(depot_id)))
        result["depots"] = sorted(depots, key=lambda d: (d["location"] or "", d["id"]))
    if "components" in gather:
        result["components"] = api.depot_content()
    if cluster_name:
        cluster = api.cluster(cluster_name, datacenter)
        managed = api.image_managed(cluster)
        result["cluster"] = dict(cluster, image_managed=managed)
        if "hosts" in gather:
            result["hosts"] = api.hosts(cluster)
        if "image" in gather:
            result["image"] = api.image(cluster) if managed else None
        if "compliance" in gather:
            result["compliance"] = compliance_summary(api.compliance(cluster)) if managed else None
    return result
