# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline depots in vLCM: one imported from a location, present or absent, checked against the bundle file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import keeping_warnings
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._offline_bundle import read_bundle
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._operations import ProgressLog, Vlcm


def _pairs(components):
    return sorted((c["name"], c["version"]) for c in components)


def ensure_depot(client, params, check_mode):
    """The ``vlcm_depot`` module: make the depot imported from ``location`` present (importing it, vCenter pulling)
    or absent.

    ``src``, the same bundle on the controller, is read first, so a bad file fails before any call to vCenter,
    and its components are compared with the depot's. ``warnings`` hold what the user should know (content
    already imported from elsewhere, a bundle that differs from the depot); ``progress`` the progress of vLCM tasks.
    """
    location, state, src = params["location"], params["state"], params["src"]
    bundle = read_bundle(src) if src else None
    result = {"changed": False, "warnings": []}
    if bundle:
        result["bundle"] = bundle
    progress = ProgressLog()
    api = Vlcm(client, timeout=params["timeout"], on_progress=progress)
    with keeping_warnings(result["warnings"]):
        existed = _ensure(api, params, bundle, check_mode, result)
    result["diff"] = {"before": {"location": location, "present": existed},
                      "after": {"location": location, "present": state == "present"}}
    if progress.lines:
        result["progress"] = progress.lines
    return result


def _ensure(api, params, bundle, check_mode, result):
    """Bring the depot to ``state`` and fill ``result``; whether the depot existed before."""
    location, state = params["location"], params["state"]
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
                depot_id, created = api.import_depot(location, params["description"])
                if not created:
                    result["changed"] = False
                    other = api.depot(depot_id) or {}
                    result["warnings"].append("vLCM already holds the content of %s, imported as depot %s from %s; "
                                              "nothing was imported." % (location, depot_id, other.get("location")))
        if depot_id is not None:
            summary = api.depot(depot_id) or {}
            result["depot"] = dict(id=depot_id, location=summary.get("location"),
                                   description=summary.get("description"), owner=summary.get("owner"))
            result["components"] = api.depot_components(depot_id)
            if bundle and _pairs(bundle["components"]) != _pairs(result["components"]):
                result["warnings"].append("The bundle at src (%s) and the depot vCenter imported from %s differ: src "
                                          "holds %s, the depot %s." % (params["src"], location,
                                                                       _pairs(bundle["components"]),
                                                                       _pairs(result["components"])))
    return existed
