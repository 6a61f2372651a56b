# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Maintenance mode of ESXi hosts, one at a time or all at once.

A host with powered-on VMs that vCenter cannot move by itself (standalone, or DRS not fully automated) is refused
before any host changes, naming those VMs; a host that fails to enter anyway is reported with the VMs still on it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError, TaskFailed
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._cluster_lock import with_run_identity
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._maintenance_records import MaintenanceRecords

try:
    from pyVmomi import vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = None

HOST_PROPERTIES = ["runtime.inMaintenanceMode", "runtime.connectionState", "vm"]
# vCenter ends the task itself after ``timeout``; this is how much longer the module waits for that answer.
WAIT_GRACE = 60


def cluster_drs(client, items):
    """Per cluster MoID of ``items``: ``(DRS on, DRS fully automated)``."""
    clusters = dict((item["parent"]._moId, item["parent"]) for item in items
                    if isinstance(item.get("parent"), vim.ClusterComputeResource))
    found = {}
    for item in client.retrieve_objects(list(clusters.values()), ["configurationEx"]):
        drs = getattr(item.get("configurationEx"), "drsConfig", None)
        enabled = bool(drs is not None and drs.enabled)
        found[item["moid"]] = (enabled, enabled and drs.defaultVmBehavior in (None, "fullyAutomated"))
    return found


def vm_states(client, items):
    """Per host name, ``[(VM name, power state)]`` of its VMs, sorted; one read for all hosts."""
    owners = {}
    for item in items:
        for vm in item.get("vm") or []:
            owners[vm._moId] = (item["name"], vm)
    found = dict((item["name"], []) for item in items)
    for vm_item in client.retrieve_objects([owner[1] for owner in owners.values()], ["name", "runtime.powerState"]):
        found[owners[vm_item["moid"]][0]].append((vm_item.get("name", vm_item["moid"]),
                                                  vm_item.get("runtime.powerState")))
    return dict((name, sorted(vms)) for name, vms in found.items())


def powered_on_vms(client, items):
    return dict((name, [vm for vm, power in vms if power == "poweredOn"])
                for name, vms in vm_states(client, items).items())


def blockers(client, targets, evacuate_powered_off):
    """Per host, the VMs vCenter cannot move off it by itself (hosts without any are left out).

    Powered-on VMs move only with fully automated DRS; powered-off ones (when asked to evacuate them) with DRS on.
    """
    drs = cluster_drs(client, targets)
    states = vm_states(client, targets)
    blocked = {}
    for item in targets:
        parent = item.get("parent")
        enabled, automated = drs.get(parent._moId, (False, False)) if parent is not None else (False, False)
        names = [name for name, power in states[item["name"]] if power == "poweredOn" and not automated]
        if evacuate_powered_off and not enabled:
            names += ["%s (powered off)" % name for name, power in states[item["name"]] if power != "poweredOn"]
        if names:
            blocked[item["name"]] = names
    return blocked


def blocker_text(blocked):
    return "; ".join("%s: %s" % (name, ", ".join(vms)) for name, vms in sorted(blocked.items()))


def _starter(client, item, enter, params):
    host = item["obj"]
    if enter:
        return lambda: client.call(host.EnterMaintenanceMode_Task, timeout=params["timeout"],
                                   evacuatePoweredOffVms=params["evacuate_powered_off_vms"])
    return lambda: client.call(host.ExitMaintenanceMode_Task, timeout=params["timeout"])


def run(client, targets, enter, params):
    """Start the tasks (all at once or one by one); returns ``(done names, {failed name: error})``."""
    starters = [_starter(client, item, enter, params) for item in targets]
    wait = params["timeout"] + WAIT_GRACE
    if params["parallel"]:
        outcomes = client.run_tasks(starters, parallel=len(starters), timeout=wait)
        done = [item["name"] for item, outcome in zip(targets, outcomes) if outcome["state"] == "success"]
        failed = dict((item["name"], outcome["error"]) for item, outcome in zip(targets, outcomes)
                      if outcome["state"] != "success")
        return done, failed
    done = []
    for item, starter in zip(targets, starters):
        outcome = client.run_tasks([starter], parallel=1, timeout=wait)[0]
        if outcome["state"] != "success":
            return done, {item["name"]: outcome["error"]}
        done.append(item["name"])
    return done, {}


def owner_records(client, params):
    """The maintenance records of ``params["owner"]`` under this run's identity, or None without an owner."""
    if not params.get("owner"):
        return None
    identity = with_run_identity(params)
    return MaintenanceRecords(client, params["owner"], identity["run_id"], identity["me"])


def converge(client, params, check_mode):
    """The module's work: returns the result dict (``changed``, ``hosts``, ``diff``; with ``owner`` also ``kept``
    and ``records_cleared``)."""
    if params["timeout"] < 1:
        raise InputError("timeout must be at least 1 second, not %s." % params["timeout"], hint="Give seconds.")
    records = owner_records(client, params)
    items = client.hosts(HOST_PROPERTIES + (["customValue"] if records else []), cluster=params.get("cluster"),
                         esxi_hostnames=params.get("esxi_hostnames"), datacenter=params.get("datacenter"))
    enter = params["state"] == "present"
    owners = dict((item["name"], records.owner_of(item)) for item in items) if records else {}
    targets = [item for item in items if bool(item.get("runtime.inMaintenanceMode")) != enter]
    kept, stale, people = [], [], []
    if records and not enter:
        # Only hosts this owner put in maintenance mode come out; a record on a host already out is cleared. A host
        # a person took out of maintenance mode since the record is the person's: it stays as it is, its record goes.
        people = [found for found in (records.taken_out_by_person(item) for item in items
                                      if owners[item["name"]] == records.owner) if found]
        theirs = set(found["name"] for found in people)
        kept = [item["name"] for item in targets if owners[item["name"]] != records.owner]
        targets = [item for item in targets if owners[item["name"]] == records.owner and item["name"] not in theirs]
        stale = [item for item in items if owners[item["name"]] == records.owner
                 and (not item.get("runtime.inMaintenanceMode") or item["name"] in theirs)]
        in_now = dict((item["name"], bool(item.get("runtime.inMaintenanceMode"))) for item in items)
        people = [dict(found, maintenance_mode=in_now[found["name"]]) for found in people]
    # Only the hosts to change must be connected: an owner's read of a cluster passes a host that is not.
    offline = ["%s (%s)" % (item["name"], item.get("runtime.connectionState")) for item in targets
               if item.get("runtime.connectionState") != "connected"]
    if offline:
        raise InputError("Host(s) not connected to vCenter: %s." % ", ".join(offline),
                         hint="Reconnect them or leave them out of esxi_hostnames.")
    if enter and targets:
        blocked = blockers(client, targets, params["evacuate_powered_off_vms"])
        if blocked:
            raise InputError("VMs keep host(s) from entering maintenance mode, and vCenter cannot move them by itself "
                             "(powered-on VMs need fully automated DRS, powered-off ones DRS on): %s."
                             % blocker_text(blocked),
                             hint="Power those VMs off or move them, then run again; no host was changed.")

    if check_mode:
        done, failed = [item["name"] for item in targets], {}
    else:
        done, failed = _run_recorded(client, records, targets, stale, enter, params)
    hosts = [_host_result(item, item["name"] in done, enter) for item in items]
    if records:
        for host in hosts:
            host["maintenance_owner"] = _owner_after(owners[host["name"]], records.owner, host["name"], enter,
                                                     done, [item["name"] for item in stale])
    if failed:
        raise _failure(client, items, targets, done, failed, enter, hosts)
    result = {
        "changed": bool(done or stale),
        "hosts": hosts,
        "diff": {"before": dict((host["name"], host["before"]) for host in hosts if host["changed"]),
                 "after": dict((host["name"], host["after"]) for host in hosts if host["changed"])},
    }
    if records:
        result.update(kept=kept, records_cleared=sorted(item["name"] for item in stale),
                      changed_by_person=sorted(people, key=lambda found: found["name"]))
    return result


def _run_recorded(client, records, targets, stale, enter, params):
    """``run`` with the owner's records: written before a host enters, cleared once it is out (or, for a host that
    failed to enter, once it is seen outside maintenance mode)."""
    if records is None:
        return run(client, targets, enter, params)
    if enter:
        for item in targets:
            records.mark(item)
    done, failed = run(client, targets, enter, params)
    if enter and failed:
        outside = client.retrieve_objects([item["obj"] for item in targets if item["name"] in failed],
                                          ["runtime.inMaintenanceMode"])
        for item in outside:
            if not item.get("runtime.inMaintenanceMode"):
                records.unmark(item)
    if not enter:
        for item in [item for item in targets if item["name"] in done] + stale:
            records.unmark(item)
    return done, failed


def _owner_after(before, owner, name, enter, done, stale):
    if enter and name in done:
        return owner
    if not enter and (name in done or name in stale):
        return None
    return before


def _host_result(item, changed, enter):
    before = bool(item.get("runtime.inMaintenanceMode"))
    return {
        "name": item["name"],
        "changed": changed,
        "before": {"maintenance_mode": before},
        "after": {"maintenance_mode": enter if changed else before},
    }


def _failure(client, items, targets, done, failed, enter, hosts):
    action = "enter" if enter else "exit"
    remaining = [item for item in targets if item["name"] in failed]
    vms = powered_on_vms(client, client.retrieve_objects([item["obj"] for item in remaining], ["name", "vm"])) \
        if enter else {}
    lines = []
    for item in remaining:
        line = "%s: %s" % (item["name"], failed[item["name"]])
        if vms.get(item["name"]):
            line += " (powered-on VMs on it: %s)" % ", ".join(vms[item["name"]])
        lines.append(line)
    untouched = [item["name"] for item in targets if item["name"] not in done and item["name"] not in failed]
    return TaskFailed("Host(s) did not %s maintenance mode: %s. Hosts done: %s; not started: %s."
                      % (action, "; ".join(lines), ", ".join(done) or "none", ", ".join(untouched) or "none"),
                      hint="Fix the cause and run again; hosts already done are left as they are.",
                      hosts=hosts, blocking_vms=dict((name, names) for name, names in vms.items() if names))
