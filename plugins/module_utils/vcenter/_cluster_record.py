# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A record a layer keeps on a cluster in vCenter, so that any later run, from any controller, reads it.

The record is JSON in a custom attribute of the cluster (``field``): the layer's ``data`` wrapped with the run, who
ran it, the vCenter (``about.instanceUuid``) and cluster (MoRef) it was taken on and vCenter's time. A read refuses a
record that is damaged, lacks one of ``required_keys`` in its data, or was taken on another vCenter or cluster,
naming the cluster, the attribute and the fix.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError, NotFound
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _field_records as field_records
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._cluster_lock import with_run_identity

VERSION = 1
REQUIRED = ("v", "run", "by", "vcenter", "cluster", "at", "data")
FIELD_PREFIX = "gpuops.vgpu."


def check_input(params):
    if not params["field"].startswith(FIELD_PREFIX) or params["field"] == FIELD_PREFIX:
        raise InputError("field '%s' is not one of this collection's custom attributes." % params["field"],
                         hint="Name it %s<layer>, such as %sdriver_upgrade." % (FIELD_PREFIX, FIELD_PREFIX))
    if params["state"] == "absent" and params.get("data") is not None:
        raise InputError("data is given with state=absent.", hint="Leave data out to clear the record.")


def _data_problem(required):
    def check(record):
        if not isinstance(record["data"], dict):
            return "its data is not an object"
        missing = [key for key in required if key not in record["data"]]
        return "its data lacks %s" % ", ".join(missing) if missing else None
    return check


def cluster_record(client, params, check_mode):
    """The ``cluster_record`` module: read, write (``data``) or clear (``state=absent``) the record of ``field`` on
    a cluster; returns ``changed``, ``exists``, ``data`` (the record's data after the task) and ``record``."""
    check_input(params)
    params = with_run_identity(params)
    cluster = client.cluster(params["cluster"], datacenter=params.get("datacenter"))
    records = field_records.FieldRecords(client, params["field"], "ClusterComputeResource")
    records.find_key()
    raw = records.value(client.retrieve_objects([cluster], ["customValue"])[0])
    vcenter = client.content.about.instanceUuid
    found = field_records.load(raw, REQUIRED, VERSION, check=_data_problem(params["required_keys"]))
    if isinstance(found, dict):
        why = field_records.foreign(found, vcenter, cluster._moId)
        found = why or found
    writing = params.get("data") is not None
    if isinstance(found, str) and not (writing or params["state"] == "absent"):
        raise InputError("The record of cluster %s (custom attribute %s) cannot be trusted: %s."
                         % (params["cluster"], params["field"], found),
                         hint=params.get("fix") or "Check the cluster as the record would have it, then clear the "
                         "attribute (vSphere Client: the cluster's Custom Attributes) and run again.")
    current = found if isinstance(found, dict) else None
    if params["state"] == "absent":
        changed = raw is not None and raw.strip() != ""
        if changed and not check_mode:
            records.clear(cluster)
        return {"changed": changed, "exists": False, "data": {}}
    if not writing:
        if current is None and params["missing"] == "fail":
            raise NotFound("Cluster %s carries no record in its custom attribute %s."
                           % (params["cluster"], params["field"]),
                           hint=params.get("fix") or "Run the layer that writes it first.")
        return {"changed": False, "exists": current is not None, "data": current["data"] if current else {},
                "record": _summary(current)}
    data = json.loads(json.dumps(params["data"]))  # as JSON keeps it
    if current is not None and current["data"] == data:
        return {"changed": False, "exists": True, "data": data, "record": _summary(current)}
    now = client.call(client.si.CurrentTime)
    record = {"v": VERSION, "run": params["run_id"], "by": params["me"]["owner"], "vcenter": vcenter,
              "cluster": cluster._moId, "at": field_records.utc_text(now), "data": data}
    if not check_mode:
        records.write(cluster, record)
    return {"changed": True, "exists": True, "data": data, "record": _summary(record),
            "diff": {"before": current["data"] if current else {}, "after": data}}


def _summary(record):
    if not record:
        return None
    return {"run": record["run"], "by": record["by"], "at": record["at"]}
