# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Remediation of a cluster to its vLCM image: scan, EULA, pre-check, apply, and the outcome per host.

Nothing changes before the EULA is accepted and the pre-check passes; a host that fails the apply is named with
vLCM's reason, and the failure says which hosts were remediated before it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import (
    ApiError,
    InputError,
    TaskFailed,
    keeping_warnings,
)
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._operations import (
    ProgressLog,
    Vlcm,
    compliance_summary,
    host_names,
)


def apply_summary(result):
    """Per-host outcome of an apply (``ApplyResult``): name, id, status (OK, ERROR, SKIPPED...) and message."""
    if not result:
        return []
    names = host_names(result)
    hosts = []
    for host, status in (result.get("host_status") or {}).items():
        notes = status.get("notifications") or {}
        messages = [n.get("message", {}).get("default_message")
                    for kind in ("errors", "warnings", "info") for n in notes.get(kind) or []]
        message = "; ".join(m for m in messages if m)
        if not message:
            message = ((status.get("progress") or {}).get("message") or {}).get("default_message") or ""
        hosts.append({"name": names.get(host, host), "id": host, "status": status.get("status"), "message": message})
    return sorted(hosts, key=lambda h: h["name"])


def check_issues(result):
    """Issues of a check result (``CheckResult``) as "<host or cluster>: <issue>" lines, split into ``errors``
    (checks with status ERROR, or TIMEOUT) and ``warnings``."""
    names = host_names(result)
    found = {"errors": [], "warnings": []}
    for entity in (result or {}).get("entity_results") or []:
        where = names.get(entity.get("host"), entity.get("host")) if entity.get("type") == "HOST" else "cluster"
        for status in entity.get("check_statuses") or []:
            kind = "warnings" if status.get("status") in ("OK", "WARNING") else "errors"
            for issue in status.get("issues") or []:
                found[kind].append("%s: %s" % (where, issue.get("default_message")))
    if (result or {}).get("status") in ("ERROR", "TIMEOUT") and not found["errors"]:
        found["errors"].append("vLCM reports status %s without naming an issue" % result["status"])
    return found


def _statuses(summary):
    return dict((host["name"], host["status"]) for host in (summary or {}).get("hosts") or [])


# vLCM's pre_remediation_power_action per vm_power_action choice (vSphere Automation API 8.0.2,
# EsxSettingsClustersPoliciesApplyConfiguredPolicySpecPreRemediationPowerAction).
VM_POWER_ACTIONS = {"keep": "DO_NOT_CHANGE_VMS_POWER_STATE", "power_off": "POWER_OFF_VMS", "suspend": "SUSPEND_VMS"}


def components_off(host, components):
    """``"name version"`` of each of ``components`` (``{name: version}``) that a host of a compliance summary does
    not run at that version, in the order of ``components``."""
    running = host.get("components") or {}
    return ["%s %s" % (name, version) for name, version in (components or {}).items()
            if (running.get(name) or {}).get("current") != version]


def hosts_off_components(hosts, components):
    """The names of the hosts (of a compliance summary) that do not run each of ``components`` (``{name: version}``)
    at that version."""
    return [host["name"] for host in hosts if components_off(host, components)]


def remediate(client, params, check_mode):
    """The ``vlcm_remediate`` module: remediate the hosts of a cluster (those in ``esxi_hostnames``, else all) that
    do not comply with its image.

    ``vm_power_action`` (a ``VM_POWER_ACTIONS`` key) sets what vLCM does with the powered-on VMs of a host before
    maintenance mode for this remediation only; the cluster's configured settings are put back afterwards.
    In check mode only the scan runs; ``components`` (``{name: version}``, what an earlier task of the run puts into
    the image, which check mode did not) adds the hosts that do not run them to ``pending``, so that check mode
    names every host a real run would remediate. Without ``accept_eula`` a remediation fails before it starts; pre-check
    errors fail it with nothing changed, pre-check warnings go to ``warnings`` (with the failure too, if it fails).
    ``progress`` holds the progress of the vLCM tasks. A remediation of the cluster that vCenter still runs for an
    earlier run is waited for before the scan (``waited_for``).
    """
    esxi_hostnames, vm_power_action = params["esxi_hostnames"], params["vm_power_action"]
    progress = ProgressLog()
    api = Vlcm(client, timeout=params["timeout"], on_progress=progress)
    cluster = api.cluster(params["cluster"], params["datacenter"])
    api.require_image(cluster)
    host_ids = api.host_ids(cluster, esxi_hostnames) if esxi_hostnames else []
    # A remediation an earlier run left going in vCenter ends first (in check mode too): the scan then says what it
    # left, and no second remediation is refused for it.
    waited = [api.wait_remediation(task, cluster) for task in sorted(api.running_remediations(cluster))]
    before = compliance_summary(api.scan(cluster))
    scoped = [h for h in before["hosts"] if not host_ids or h["id"] in host_ids]
    pending = [h["name"] for h in scoped if h["status"] == "NON_COMPLIANT"]
    if check_mode:
        pending += [name for name in hosts_off_components(scoped, params["components"]) if name not in pending]
    result = {"changed": bool(pending), "cluster": cluster, "pending": pending, "compliance_before": before,
              "progress": progress.lines, "warnings": [], "waited_for": waited}
    if not pending or check_mode:
        if not check_mode:
            result["compliance_after"] = before
        result["diff"] = {"before": _statuses(before), "after": dict(_statuses(before), **dict(
            (name, "COMPLIANT") for name in pending))}
        return result
    if not params["accept_eula"]:
        raise InputError("Remediating hosts %s of cluster '%s' needs the VMware End User License Agreement "
                         "accepted." % (", ".join(pending), cluster["name"]),
                         hint="Set accept_eula: true to accept it (https://www.vmware.com/download/eula.html). "
                              "Nothing was changed.", pending=pending, compliance_before=before)
    configured = None
    if vm_power_action is not None:
        configured = api.apply_policy(cluster)
        api.set_apply_policy(cluster, dict(configured, pre_remediation_power_action=VM_POWER_ACTIONS[vm_power_action]))
    with keeping_warnings(result["warnings"]):
        try:
            if params["precheck"]:
                _precheck(api, cluster, host_ids, result)
            _apply(api, cluster, host_ids, result)
        finally:
            if configured is not None:
                api.set_apply_policy(cluster, configured)
    return result


def _precheck(api, cluster, host_ids, result):
    issues = check_issues(api.check(cluster, host_ids))
    result["warnings"].extend("Remediation pre-check: %s" % warning for warning in issues["warnings"])
    if issues["errors"]:
        raise ApiError("The remediation pre-check of cluster '%s' failed: %s"
                       % (cluster["name"], " ".join(issues["errors"])),
                       hint="Nothing was changed. Fix what it names and run again.", issues=issues["errors"],
                       pending=result["pending"], compliance_before=result["compliance_before"],
                       progress=result["progress"])


def _apply(api, cluster, host_ids, result):
    """Apply the image, then add the outcome per host and the compliance after to ``result``; a failed apply
    raises ``TaskFailed`` naming the hosts that failed and why."""
    failure = None
    try:
        applied = api.apply(cluster, host_ids, accept_eula=True)
    except TaskFailed as err:
        failure, applied = err, err.details.get("data") if isinstance(err.details.get("data"), dict) else None
    before = result["compliance_before"]
    after = compliance_summary(api.compliance(cluster) or api.scan(cluster))
    hosts = apply_summary(applied)
    result.update(hosts=hosts, compliance_after=after,
                  diff={"before": _statuses(before), "after": _statuses(after)})
    if failure is not None:
        failed = [h for h in hosts if h["status"] not in ("OK", "SKIPPED")]
        reasons = " ".join("%s: %s" % (h["name"], h["message"]) for h in failed) or failure.message
        changed = any(h["status"] == "OK" and h["name"] in result["pending"] for h in hosts)
        raise TaskFailed("Remediation of cluster '%s' failed on %s. %s" % (
            cluster["name"], ", ".join(h["name"] for h in failed) or "the cluster", reasons),
            hint="Hosts before it were remediated, the others left as they were.", changed=changed,
            hosts=hosts, pending=result["pending"], compliance_before=before, compliance_after=after,
            progress=result["progress"])
