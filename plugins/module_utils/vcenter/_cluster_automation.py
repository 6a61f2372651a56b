# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""DRS and DPM of a cluster: change only the given fields, and put back exactly what was there.

The change is one ReconfigureComputeResource_Task with ``modify=True`` whose spec holds only the fields that
differ, so every other cluster setting (rules, overrides, HA, vMotion rate) is left alone.

With ``record``, DRS/DPM as they were before the change are kept in the cluster's custom attribute ``FIELD`` (see
``_field_records``) before anything changes, unless the cluster carries a record already: that one holds the state
from before the work and stays. ``restore_recorded`` puts the recorded state back and then clears the record, so any
later run, from any controller, finishes what an interrupted one took away.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError, TaskFailed
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _field_records as field_records
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._cluster_lock import with_run_identity

try:
    from pyVmomi import vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = None

FIELDS = ("drs_enabled", "drs_behavior", "dpm_enabled", "dpm_behavior")
DRS_BEHAVIORS = ("fullyAutomated", "partiallyAutomated", "manual")
DPM_BEHAVIORS = ("manual", "automated")
TASK_TIMEOUT = 600

FIELD = "gpuops.vgpu.cluster_vgpu.automation"
VERSION = 1
REQUIRED = ("v", "run", "by", "vcenter", "cluster", "at", "previous")
ALLOWED = {"drs_enabled": (True, False, None), "dpm_enabled": (True, False, None),
           "drs_behavior": DRS_BEHAVIORS + (None,), "dpm_behavior": DPM_BEHAVIORS + (None,)}


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


def _previous_problem(record):
    previous = record["previous"]
    if not isinstance(previous, dict) or sorted(previous) != sorted(FIELDS) \
            or any(previous[field] not in ALLOWED[field] for field in FIELDS):
        return "its 'previous' is not DRS/DPM (%s)" % ", ".join(FIELDS)
    return None


def parse_record(raw):
    """The record a cluster carries, None for none, or a ``str`` saying why it is damaged."""
    return field_records.load(raw, REQUIRED, VERSION, check=_previous_problem)


def new_record(params, vcenter, cluster, at, previous, adopted):
    record = {"v": VERSION, "run": params["run_id"], "by": params["me"]["owner"], "vcenter": vcenter, "cluster": cluster,
              "at": field_records.utc_text(at), "previous": dict((field, previous.get(field)) for field in FIELDS)}
    if adopted:
        record["adopted"] = True  # taken over from the controller file of an older cluster_vgpu
    return record


def distrust(name, why):
    return "the DRS/DPM record of cluster %s (custom attribute %s) cannot be trusted: %s." % (name, FIELD, why)


def untrusted(name, why):
    return InputError(
        "Nothing was changed: %s" % distrust(name, why),
        hint="Check DRS and DPM of cluster %s in vCenter and set them as they should be (gpuops.vgpu."
             "cluster_automation or the vSphere Client), then clear its attribute %s (vSphere Client: the cluster's "
             "Custom Attributes; or set it to an empty value) and run again." % (name, FIELD))


def check_input(params):
    if params.get("adopt_previous") and not (params.get("record") or params.get("restore_recorded")):
        raise InputError("adopt_previous is given without record or restore_recorded.",
                         hint="Set record: true (to keep it as the state before the work) or restore_recorded: true "
                              "(to put it back when the cluster carries no record).")


def read_state(client, cluster):
    item = client.retrieve_objects([cluster], ["configurationEx"])[0]
    return describe(item.get("configurationEx"))


class Cluster(object):
    """One cluster as the module sees it: DRS/DPM and its record, read together."""

    def __init__(self, client, params):
        self.client, self.params, self.name = client, params, params["cluster"]
        self.obj = client.cluster(params["cluster"], datacenter=params.get("datacenter"))
        self.records = field_records.FieldRecords(client, FIELD, "ClusterComputeResource")
        self.records.find_key()
        item = client.retrieve_objects([self.obj], ["configurationEx", "customValue"])[0]
        self.state = describe(item.get("configurationEx"))
        self.record, self.problem = parse_record(self.records.value(item)), None
        if isinstance(self.record, str):
            self.record, self.problem = None, self.record
        elif self.record:
            self.problem = field_records.foreign(self.record, self.vcenter(), self.obj._moId,
                                                 "this is cluster %s (%s)" % (self.obj._moId, self.name))
            if self.problem:
                self.record = None

    def vcenter(self):
        return self.client.content.about.instanceUuid

    def new_record(self):
        adopted = self.params.get("adopt_previous")
        now = self.client.call(self.client.si.CurrentTime)
        return new_record(self.params, self.vcenter(), self.obj._moId, now, adopted or self.state, bool(adopted))

    def reconfigure(self, spec, previous):
        task = self.client.call(self.obj.ReconfigureComputeResource_Task, spec=spec, modify=True)
        outcome = self.client.wait_for_tasks([task], timeout=TASK_TIMEOUT)[0]
        current = read_state(self.client, self.obj)
        if outcome["state"] != "success":
            raise TaskFailed("Reconfiguring DRS/DPM of cluster '%s' failed: %s." % (self.name, outcome["error"]),
                             hint="The cluster now has the settings in 'current'; 'previous' restores it.%s"
                             % (" Its record %s stays for the next run." % FIELD if self.record else ""),
                             fault=outcome["fault"], previous=previous, current=current, record=self.record)
        return current


def cluster_automation(client, params, check_mode):
    """The ``cluster_automation`` module: ``reconcile`` under this run's identity (``with_run_identity``)."""
    return reconcile(client, with_run_identity(params), check_mode)


def reconcile(client, params, check_mode):
    """The module's work: returns the result dict (``changed``, ``previous``, ``current``, ``record``, ``diff``)."""
    check_input(params)
    cluster = Cluster(client, params)
    acting = params.get("record") or params.get("restore_recorded")
    if cluster.problem and acting:
        raise untrusted(cluster.name, cluster.problem)
    found = cluster.record
    if params.get("restore_recorded"):
        source = found["previous"] if found else params.get("adopt_previous")
        wanted = wanted_state(cluster.state, {"restore": source}) if source else cluster.state
    else:
        wanted = wanted_state(cluster.state, params)
    spec = change_spec(cluster.state, wanted)
    write = bool(params.get("record") and not found and (spec is not None or params.get("adopt_previous")))
    if write:
        cluster.record = cluster.new_record()
    clear = bool(params.get("restore_recorded") and found)
    previous, current = cluster.state, wanted if spec is not None else cluster.state
    if not check_mode:
        if write:
            cluster.records.write(cluster.obj, cluster.record)
        if spec is not None:
            current = cluster.reconfigure(spec, previous)
        if clear:
            cluster.records.clear(cluster.obj)
    result = {
        "changed": spec is not None or write or clear,
        "previous": previous,
        "current": current,
        "record": cluster.record if acting else found,
        "record_found": bool(found),
        "diff": {"before": previous, "after": current},
    }
    if acting:  # the record is part of what changes
        result["diff"] = {"before": dict(previous, record=found),
                          "after": dict(current, record=None if clear else cluster.record)}
    else:
        result["record_error"] = cluster.problem and "T" + distrust(cluster.name, cluster.problem)[1:]
    return result
