# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline depots in vLCM: one imported from a location, present or absent, checked against the bundle file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._offline_bundle import read_bundle
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._operations import ProgressLog, Vlcm


def _pairs(components):
    return sorted((c["name"], c["version"]) for c in components)


def ensure_depot(client, location, state, warn, log, src=None, description=None, timeout=1800, check_mode=False):
    """Make the depot imported from ``location`` present (importing it, vCenter pulling) or absent; the result as
    ``vlcm_depot`` returns it.

    ``src``, the same bundle on the controller, is read first, so a bad file fails before any call to vCenter,
    and its components are compared with the depot's. ``warn`` receives what the user should know (content
    already imported from elsewhere, a bundle that differs from the depot); ``log`` the progress of vLCM tasks.
    """
    bundle = read_bundle(src) if src else None
    result = {"changed": False}
    if bundle:
        result["bundle"] = bundle
    progress = ProgressLog(log)
    api = Vlcm(client, timeout=timeout, on_progress=progress)
    depot_id = api.depot_at(location)
    existed = depot_id is not None
    if state == "absent":
        result["changed"] = existed
        if existed and not check_mode:
            api.delete_depot(depot_id)
        result.update(depot=None, components=[])
    else:
        if not existed:
            result["changed"] = True
            if check_mode:
                result.update(depot=None, components=bundle["components"] if bundle else [])
            else:
                depot_id, created = api.import_depot(location, description)
                if not created:
                    result["changed"] = False
                    other = api.depot(depot_id) or {}
                    warn("vLCM already holds the content of %s, imported as depot %s from %s; nothing was "
                         "imported." % (location, depot_id, other.get("location")))
        if depot_id is not None:
            summary = api.depot(depot_id) or {}
            result["depot"] = dict(id=depot_id, location=summary.get("location"),
                                   description=summary.get("description"), owner=summary.get("owner"))
            result["components"] = api.depot_components(depot_id)
            if bundle and _pairs(bundle["components"]) != _pairs(result["components"]):
                warn("The bundle at src (%s) and the depot vCenter imported from %s differ: src holds %s, the "
                     "depot %s." % (src, location, _pairs(bundle["components"]), _pairs(result["components"])))
    result["diff"] = {"before": {"location": location, "present": existed},
                      "after": {"location": location, "present": state == "present"}}
    if progress.lines:
        result["progress"] = progress.lines
    return result
