# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""DRS and DPM of a cluster: change only the given fields, and put back exactly what was there.

The change is one ReconfigureComputeResource_Task with ``modify=True`` whose spec holds only the fields that
differ, so every other cluster setting (rules, overrides, HA, vMotion rate) is left alone.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import TaskFailed

try:
    from pyVmomi import vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = None

FIELDS = ("drs_enabled", "drs_behavior", "dpm_enabled", "dpm_behavior")
TASK_TIMEOUT = 600


def describe(configuration):
    """The four fields from a cluster's ``configurationEx``; a field vCenter leaves unset is null."""
    drs = getattr(configuration, "drsConfig", None)
    dpm = getattr(configuration, "dpmConfigInfo", None)
    return {
        "drs_enabled": getattr(drs, "enabled", None),
        "drs_behavior": getattr(drs, "defaultVmBehavior", None),
        "dpm_enabled": getattr(dpm, "enabled", None),
        "dpm_behavior": getattr(dpm, "defaultDpmBehavior", None),
    }


def wanted_state(current, params):
    """The fields asked for, from the options or from ``restore``; null ones are left as they are."""
    source = params.get("restore") or params
    wanted = dict(current)
    for field in FIELDS:
        if source.get(field) is not None:
            wanted[field] = source[field]
    return wanted


def change_spec(current, wanted):
    """A ClusterConfigSpecEx with only the fields that differ, or None when nothing does."""
    drs = vim.cluster.DrsConfigInfo()
    dpm = vim.cluster.DpmConfigInfo()
    touched_drs = touched_dpm = False
    if wanted["drs_enabled"] != current["drs_enabled"]:
        drs.enabled, touched_drs = wanted["drs_enabled"], True
    if wanted["drs_behavior"] != current["drs_behavior"]:
        drs.defaultVmBehavior, touched_drs = wanted["drs_behavior"], True
    if wanted["dpm_enabled"] != current["dpm_enabled"]:
        dpm.enabled, touched_dpm = wanted["dpm_enabled"], True
    if wanted["dpm_behavior"] != current["dpm_behavior"]:
        dpm.defaultDpmBehavior, touched_dpm = wanted["dpm_behavior"], True
    if not (touched_drs or touched_dpm):
        return None
    spec = vim.cluster.ConfigSpecEx()
    if touched_drs:
        spec.drsConfig = drs
    if touched_dpm:
        spec.dpmConfig = dpm
    return spec


def read_state(client, cluster):
    item = client.retrieve_objects([cluster], ["configurationEx"])[0]
    return describe(item.get("configurationEx"))


def reconcile(client, params, check_mode):
    """The module's work: returns the result dict (``changed``, ``previous``, ``current``, ``diff``)."""
    cluster = client.cluster(params["cluster"], datacenter=params.get("datacenter"))
    previous = read_state(client, cluster)
    wanted = wanted_state(previous, params)
    spec = change_spec(previous, wanted)
    current = previous
    if spec is not None:
        current = wanted
        if not check_mode:
            task = client.call(cluster.ReconfigureComputeResource_Task, spec=spec, modify=True)
            outcome = client.wait_for_tasks([task], timeout=TASK_TIMEOUT)[0]
            current = read_state(client, cluster)
            if outcome["state"] != "success":
                raise TaskFailed("Reconfiguring DRS/DPM of cluster '%s' failed: %s."
                                 % (params["cluster"], outcome["error"]),
                                 hint="The cluster now has the settings in 'current'; 'previous' restores it.",
                                 fault=outcome["fault"], previous=previous, current=current)
    return {
        "changed": spec is not None,
        "previous": previous,
        "current": current,
        "diff": {"before": previous, "after": current},
    }
