# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rebooting ESXi hosts through vCenter, one at a time.

Per host: into maintenance mode by ``_host_maintenance``'s rules (unless it is there already), ``RebootHost_Task``
without ``force`` (vCenter refuses it with InvalidState outside maintenance mode), then wait, through one
PropertyCollector filter, until the host is ``connected`` again with a ``runtime.bootTime`` newer than before, and
out of maintenance mode if this entered it. Hosts whose VMs keep them from entering maintenance mode are refused
before any host changes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError, InputError, TaskFailed, \
    TimeoutExpired
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _host_maintenance

HOST_PROPERTIES = ["runtime.inMaintenanceMode", "runtime.connectionState", "runtime.bootTime", "vm"]
REBOOT_TASK_TIMEOUT = 300  # RebootHost_Task ends once the host took the command


def host_maintenance(client, params, check_mode):
    """The ``host_maintenance`` module: ``converge`` here for ``state: rebooted``, else ``_host_maintenance``'s."""
    if params["state"] == "rebooted":
        if params.get("owner"):
            raise InputError("owner is given with state=rebooted, which records nothing.",
                             hint="Leave owner out, or use state=present and state=absent around the work.")
        return converge(client, params, check_mode)
    return _host_maintenance.converge(client, params, check_mode)


def check_rebootable(client, items, timeout, evacuate_powered_off_vms=False):
    """Refusals before any change: bad timeouts, hosts not connected, VMs that block maintenance mode."""
    if timeout < 1:
        raise InputError("reboot_timeout must be at least 1 second, not %s." % timeout,
                         hint="Give the seconds a host may take to boot and reconnect (ESXi: often 5 to 15 minutes).")
    offline = ["%s (%s)" % (item["name"], item.get("runtime.connectionState")) for item in items
               if item.get("runtime.connectionState") != "connected"]
    if offline:
        raise InputError("Host(s) not connected to vCenter cannot be rebooted through it: %s." % ", ".join(offline),
                         hint="Reconnect them first or leave them out.")
    entering = [item for item in items if not item.get("runtime.inMaintenanceMode")]
    blocked = _host_maintenance.blockers(client, entering, evacuate_powered_off_vms) if entering else {}
    if blocked:
        raise InputError("Host(s) must enter maintenance mode to reboot, and VMs keep them from it (powered-on VMs "
                         "need fully automated DRS, powered-off ones DRS on): %s."
                         % _host_maintenance.blocker_text(blocked),
                         hint="Power those VMs off or move them, then run again; no host was changed.")


def reboot_hosts(client, items, params, records=None):
    """Reboot ``items`` one at a time (see the module doc); returns one result dict per host, in order.

    ``params``: ``reboot_timeout`` (seconds to come back), ``timeout`` (maintenance mode, per host) and
    ``evacuate_powered_off_vms``. A failure names the hosts done and the state the failing host was left in.
    With ``records`` (``MaintenanceRecords``; the items read with ``customValue``), a host is recorded before it
    enters maintenance mode, and a host in maintenance mode that carries a record of the same owner (left by a
    run that stopped) counts as put there by this one: both come out after the reboot, their record cleared.
    """
    done, results = [], []
    for item in items:
        try:
            results.append(_reboot_one(client, item, params, records))
        except GpuopsError as err:
            raise type(err)("%s Hosts rebooted before: %s." % (err.message, ", ".join(done) or "none"),
                            hint=err.hint, **err.details)
        done.append(item["name"])
    return results


def _maintenance(client, item, enter, params):
    options = {"timeout": params["timeout"], "parallel": False,
               "evacuate_powered_off_vms": params.get("evacuate_powered_off_vms", False)}
    _done, failed = _host_maintenance.run(client, [item], enter, options)
    if failed:
        raise TaskFailed("Host %s did not %s maintenance mode: %s." % (item["name"], "enter" if enter else "exit",
                                                                       failed[item["name"]]),
                         hint="Fix the cause and run again.")


def _reboot_one(client, item, params, records=None):
    name, before = item["name"], item.get("runtime.bootTime")
    entered = not item.get("runtime.inMaintenanceMode") or bool(records and records.ours(item))
    if not item.get("runtime.inMaintenanceMode"):
        if records:
            records.mark(item)
        _maintenance(client, item, True, params)
    outcome = client.wait_for_tasks([client.call(item["obj"].RebootHost_Task, force=False)],
                                    timeout=REBOOT_TASK_TIMEOUT)[0]
    if outcome["state"] != "success":
        if entered:
            _maintenance(client, item, False, params)
            if records:
                records.unmark(item)
        raise TaskFailed("Host %s refused the reboot: %s." % (name, outcome["error"]),
                         hint="Nothing was rebooted; the host is as it was.")

    def back(values):
        boot = values.get("runtime.bootTime")
        return values.get("runtime.connectionState") == "connected" and boot is not None and boot != before

    reached, values = client.wait_until(item["obj"], ["runtime.connectionState", "runtime.bootTime"], back,
                                        params["reboot_timeout"])
    if not reached:
        raise TimeoutExpired(
            "Host %s did not come back from its reboot within %s seconds (connection state now: %s)%s."
            % (name, params["reboot_timeout"], values.get("runtime.connectionState"),
               "; it was left in maintenance mode" if entered else ""),
            hint="Check the host's console or BMC; once it is connected again, take it out of maintenance mode with "
                 "host_maintenance state=absent, or run again with a longer reboot_timeout.")
    if entered:
        _maintenance(client, item, False, params)
        if records:
            records.unmark(item)
    return {"name": name, "rebooted": True, "entered_maintenance": entered,
            "boot_time_before": _iso(before), "boot_time_after": _iso(values.get("runtime.bootTime"))}


def _iso(value):
    return value.isoformat() if hasattr(value, "isoformat") else value


def converge(client, params, check_mode):
    """host_maintenance with ``state: rebooted``: every selected host rebooted; returns the result dict."""
    items = client.hosts(HOST_PROPERTIES, cluster=params.get("cluster"), esxi_hostnames=params.get("esxi_hostnames"),
                         datacenter=params.get("datacenter"))
    check_rebootable(client, items, params["reboot_timeout"], params["evacuate_powered_off_vms"])
    if params["timeout"] < 1:
        raise InputError("timeout must be at least 1 second, not %s." % params["timeout"], hint="Give seconds.")
    if check_mode:
        rebooted = [{"name": item["name"], "rebooted": True, "entered_maintenance": not item.get(
            "runtime.inMaintenanceMode"), "boot_time_before": _iso(item.get("runtime.bootTime")),
            "boot_time_after": None} for item in items]
    else:
        rebooted = reboot_hosts(client, items, params)
    hosts = []
    for item, outcome in zip(items, rebooted):
        mode = bool(item.get("runtime.inMaintenanceMode"))
        hosts.append(dict(outcome, changed=True, before={"maintenance_mode": mode, "boot_time": outcome[
            "boot_time_before"]}, after={"maintenance_mode": mode, "boot_time": outcome["boot_time_after"]}))
    return {"changed": bool(hosts), "hosts": hosts,
            "diff": {"before": dict((h["name"], h["before"]) for h in hosts),
                     "after": dict((h["name"], h["after"]) for h in hosts)}}
