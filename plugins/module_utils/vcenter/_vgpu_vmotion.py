# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vGPU vMotion drill: running vGPU VMs moved live to a host whose GPU is carved alike, timed, and moved back.

Reads before anything moves, whatever the number of VMs: the hosts with their GPUs (one PropertyCollector call), every
VM (one call), vCenter's profile facts (one QueryConfigTarget per cluster) and its advanced settings (one call). The
preconditions (``_vmotion_checks``) are judged for every VM first; one VM refused moves none. Each move is a
``RelocateVM_Task`` of the powered-on VM (``_vmotion``); a VM is never powered on or off here.

What vCenter reports of a vMotion: the task's ``info.startTime`` and ``info.completeTime`` (the migration's
seconds), the events ``VmBeingHotMigratedEvent`` and ``VmMigratedEvent`` (source and target, no durations), and
since API 8.0.2 the estimated stun time per profile and vMotion bandwidth
(``VirtualMachineVgpuProfileInfo.stunTimeEstimates``, C- and Q-series profiles). The stun time a migration really
took is written to the VM's vmware.log on the hosts, not reported through the vSphere API, so ``stun_time_s`` stays
null.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _in_doubt
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._inventory import (
    HOST_PROPERTIES,
    VM_PROPERTIES,
    describe_host,
    describe_vm,
    vcenter_profile_facts,
)
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._settings import read_settings, to_bool
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._vmotion import relocate_starter, task_seconds
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter._vmotion_checks import plan_moves, refusal_message
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError, NotFound, TaskFailed

try:
    from pyVmomi import vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = None

HOT_MIGRATE_SETTING = "vgpu.hotmigrate.enabled"
POWERED_ON = "poweredOn"
STUN_NOTE = "vCenter does not report the stun time a vMotion took (the VM's vmware.log on the hosts holds it)"


def vgpu_vmotion(client, params, check_mode):
    """The ``vgpu_vmotion`` module."""
    requests = check_input(params)
    hosts, objects, vms = _read(client, params, requests)
    _definitions, values = read_settings(client)
    hot = values.get(HOT_MIGRATE_SETTING)
    hot = to_bool(HOT_MIGRATE_SETTING, hot) if hot is not None else False
    plans = plan_moves(vms, hosts["described"], hot, targets=dict((r["name"], r["host"]) for r in requests if r["host"]),
                       host_facts=params["host_facts"], guest_drivers=params["guest_drivers"])
    entries = [_entry(vm, plan, hosts["facts"]) for vm, plan in zip(vms, plans)]
    refused = refusal_message(plans)
    if refused:
        raise InputError("Nothing was moved: %s." % refused, hint="Fix what each VM names (or name a target host), "
                         "then run again.", vms=entries, hot_migrate=hot)
    if check_mode:
        return {"changed": True, "hot_migrate": hot, "vms": entries, "move_back": []}
    drill = Drill(client, params, objects, hosts["objects"])
    drill.move(entries, "source", "target", "migration_s", "moved")
    if params["return"]:
        drill.move([entry for entry in entries if entry["moved"]], "target", "source", "return_s", "returned")
    drill.settle(entries)
    return {"changed": any(entry["moved"] for entry in entries), "hot_migrate": hot, "vms": entries,
            "move_back": [{"name": entry["name"], "host": entry["source"]} for entry in entries
                          if entry["moved"] and not entry["returned"]]}


def check_input(params):
    """The ``vms`` entries as ``[{name, host}]``, checked before connecting."""
    for option in ("sample", "parallel", "task_timeout"):
        if params[option] < 1:
            raise InputError("%s must be at least 1, got %s." % (option, params[option]))
    requests, seen = [], set()
    for index, entry in enumerate(params["vms"] or []):
        name = entry.get("name")
        if not name:
            raise InputError("vms[%d] has no name." % index, hint="Name each VM as vCenter does.")
        if name in seen:
            raise InputError("vms[%d] (%s) is listed twice." % (index, name), hint="Give each VM once.")
        seen.add(name)
        requests.append({"name": name, "host": entry.get("host")})
    return requests


def _read(client, params, requests):
    raw_hosts = client.hosts(HOST_PROPERTIES, cluster=params["cluster"], datacenter=params["datacenter"],
                             compute_properties=["environmentBrowser"])
    items = client.retrieve({vim.VirtualMachine: VM_PROPERTIES})[vim.VirtualMachine]
    by_moid = dict((item["moid"], item) for item in items)
    facts = vcenter_profile_facts(client, raw_hosts)
    host_names = dict((host["moid"], host["name"]) for host in raw_hosts)
    hosts = {"described": [describe_host(host, by_moid, facts) for host in raw_hosts], "facts": facts,
             "objects": dict((host["name"], host["obj"]) for host in raw_hosts)}
    chosen = _chosen(items, requests, host_names, params["sample"])
    vms = [describe_vm(item, host_names) for item in chosen]
    return hosts, dict((item["name"], item["obj"]) for item in chosen), vms


def _chosen(items, requests, host_names, sample):
    """The VMs named (each checked), else the first ``sample`` powered-on vGPU VMs on the hosts read, by name."""
    described = [(item, describe_vm(item, host_names)) for item in items]
    if not requests:
        running = sorted(((item, vm) for item, vm in described if vm["power_state"] == POWERED_ON and vm["vgpus"]
                          and vm["host"] is not None), key=lambda pair: pair[1]["name"])
        if not running:
            raise InputError("No powered-on vGPU VM runs on the hosts in scope.",
                             hint="Name the VMs in vms, or widen cluster / datacenter.")
        return [item for item, _vm in running[:sample]]
    by_name = {}
    for item, vm in described:
        by_name.setdefault(vm["name"], []).append((item, vm))
    missing = [request["name"] for request in requests if request["name"] not in by_name]
    if missing:
        raise NotFound("Nothing was moved: VM(s) not found: %s." % ", ".join(missing),
                       hint="Check the names in the vms option.")
    problems, chosen = [], []
    for request in requests:
        found = by_name[request["name"]]
        item, vm = found[0]
        if len(found) > 1:
            problems.append("%s names %d VMs" % (request["name"], len(found)))
        elif not vm["vgpus"]:
            problems.append("%s has no vGPU" % vm["name"])
        elif vm["power_state"] != POWERED_ON:
            problems.append("%s is %s, and only a powered-on VM moves by vMotion (this module never powers a VM "
                            "on or off)" % (vm["name"], vm["power_state"]))
        chosen.append(item)
    if problems:
        raise InputError("Nothing was moved: %s." % "; ".join(problems),
                         hint="Name running vGPU VMs, each once (gpuops.vgpu.gpu_info lists them).")
    return chosen


def _entry(vm, plan, facts):
    return {
        "name": vm["name"], "moid": vm["moid"], "profile": plan["profile"], "vgpus": plan["count"],
        "source": plan["source"], "target": plan["target"], "refused": plan["refused"],
        "candidates": plan["candidates"], "unchecked": plan["unchecked"],
        "moved": False, "returned": False, "migration_s": None, "return_s": None,
        "host": vm["host"], "power_state": vm["power_state"],
        "stun_time_s": None, "stun_time_estimates": (facts.get(plan["profile"]) or {}).get("stun_time_estimates") or [],
        "stun_time_note": STUN_NOTE, "error": None,
    }


class Drill(object):
    """The moves of one run: started together in batches of ``parallel``, each one's seconds read from its task."""

    def __init__(self, client, params, vm_objects, host_objects):
        self.client = client
        self.params = params
        self.vms = vm_objects
        self.hosts = host_objects

    def move(self, entries, origin, destination, seconds_key, done_key):
        if not entries:
            return
        started = {}
        jobs = []
        for entry in entries:
            vm = self.vms[entry["name"]]
            jobs.append((vm, relocate_starter(self.client, vm, self.hosts[entry[destination]], started=started)))
        outcomes = _in_doubt.run_tasks(self.client, jobs, self.params["parallel"], self.params["task_timeout"])
        seconds = task_seconds(self.client, started.values())
        for entry, outcome in zip(entries, outcomes):
            task = started.get(entry["moid"])
            entry[seconds_key] = seconds.get(task._moId) if task is not None else None
            if outcome["state"] == "success":
                entry[done_key] = True
            else:
                entry["error"] = "moving from %s to %s: %s" % (entry[origin], entry[destination], outcome["error"])

    def settle(self, entries):
        """Where every VM ended, read back in one call; a failed move (or move back) fails the module."""
        items = self.client.retrieve_objects([self.vms[entry["name"]] for entry in entries],
                                             ["runtime.host", "runtime.powerState"])
        names = dict((obj._moId, name) for name, obj in self.hosts.items())
        for entry, item in zip(entries, items):
            host = item.get("runtime.host")
            entry["host"] = names.get(host._moId, host._moId) if host is not None else None
            entry["power_state"] = item.get("runtime.powerState")
        failed = [entry for entry in entries if entry["error"]]
        if failed:
            raise TaskFailed("vMotion failed for %d of %d VM(s): %s." % (len(failed), len(entries), "; ".join(
                "%s (%s; now on %s)" % (entry["name"], entry["error"], entry["host"]) for entry in failed)),
                hint="Each entry of vms says where its VM is now; the VMs stayed powered on.",
                changed=any(entry["moved"] for entry in entries), vms=entries)
