# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One run at a time per cluster: a lock that vCenter itself holds, so it works across controllers.

The lock is a custom attribute definition named ``gpuops.vgpu.lock.<cluster moid>`` (ClusterComputeResource). Taking
it is AddCustomFieldDef, which vCenter refuses with DuplicateName when a field of that name exists (vSphere Web
Services API, CustomFieldsManager.AddCustomFieldDef): of two runs, exactly one creates it. The winner then writes who
holds it on the cluster with SetField (the cluster's Custom Attributes in the vSphere Client show it). Releasing is
RemoveCustomFieldDef. Times come from vCenter's clock (ServiceInstance.CurrentTime), so controllers whose clocks
differ agree on when a lock expires.

A lock is left behind only by a run that died or failed; the next run takes it over when it has expired, when it
was taken on this controller by an ansible-playbook process that no longer runs, when its owner was never written
(the run died between the two calls) for UNWRITTEN_GRACE seconds, or when the user breaks it on purpose.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import getpass
import json
import os
import socket
import time

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, Busy, InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _field_records as field_records

try:
    from pyVmomi import vim
except ImportError:  # pragma: no cover - the client reports a missing pyVmomi
    vim = None

FIELD_PREFIX = "gpuops.vgpu.lock."
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
POLL_SECONDS = 5
UNWRITTEN_GRACE = 30


def field_name(cluster_moid):
    return FIELD_PREFIX + cluster_moid


def utc_text(moment):
    return field_records.utc_text(moment, TIME_FORMAT)


def parse_time(text):
    return datetime.datetime.strptime(text, TIME_FORMAT)


def describe(holder):
    """``alice@ctl01 (run 20261125T2100Z-42) since 2026-11-25T21:00:00Z``, or what is known of it."""
    if not holder:
        return "a run that had not written its name yet"
    return "%s (run %s) since %s" % (holder.get("owner", "?"), holder.get("run_id", "?"), holder.get("since", "?"))


class LockState(object):
    """What vCenter holds now: the field's key (None: no lock), the holder (None: not written or unreadable)."""

    def __init__(self, key, holder, now):
        self.key, self.holder, self.now = key, holder, now


def read_lock(client, cluster):
    manager = client.content.customFieldsManager
    fields = client.retrieve_objects([manager], ["field"])[0].get("field") or []
    name = field_name(cluster._moId)
    key = next((field.key for field in fields if field.name == name), None)
    holder = None
    if key is not None:
        values = client.retrieve_objects([cluster], ["customValue"])[0].get("customValue") or []
        raw = next((value.value for value in values if value.key == key), None)
        holder = parse_holder(raw)
    now = client.call(client.si.CurrentTime)
    return LockState(key, holder, parse_time(utc_text(now)))


def parse_holder(raw):
    try:
        holder = json.loads(raw) if raw else None
    except ValueError:
        return None
    return holder if isinstance(holder, dict) and holder.get("run_id") else None


def stale_reason(holder, now, controller, unwritten_for):
    """Why a lock held by someone else may be taken over, or None while its holder may still be working."""
    if holder is None:
        if unwritten_for >= UNWRITTEN_GRACE:
            return "its owner was never written in %d seconds (a run killed while taking it)" % unwritten_for
        return None
    expires = holder.get("expires")
    if expires and parse_time(expires) <= now:
        return "it expired at %s" % expires
    if holder.get("controller") == controller and holder.get("pid") and not playbook_running(holder["pid"]):
        return "its ansible-playbook process %s on %s has ended" % (holder["pid"], controller)
    return None


def playbook_running(pid):
    """Whether process ``pid`` of this machine is still an ansible-playbook (a reused pid is not)."""
    try:
        with open("/proc/%d/cmdline" % int(pid), "rb") as handle:
            return b"ansible-playbook" in handle.read()
    except (IOError, OSError, ValueError):
        return False


def playbook_pid():
    """The ansible-playbook process this module runs under, found up the parent chain; None elsewhere.

    The topmost one: the nearest is the worker ansible-playbook forks for each task, which ends with the task."""
    pid, found = os.getppid(), None
    for _depth in range(16):
        if pid <= 1:
            break
        if playbook_running(pid):
            found = pid
        try:
            with open("/proc/%d/stat" % pid) as handle:
                pid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (IOError, OSError, ValueError, IndexError):
            break
    return found


class ClusterLock(object):
    """Take, refresh or release the lock of ``cluster`` for ``me`` (owner, run_id, controller, pid)."""

    def __init__(self, client, cluster, cluster_name, me, clock=time.monotonic, sleep=time.sleep):
        self.client, self.cluster, self.cluster_name, self.me = client, cluster, cluster_name, me
        self.clock, self.sleep = clock, sleep

    def take(self, ttl, wait, break_lock, check_mode):
        deadline = self.clock() + wait
        first_unwritten = broke = None
        while True:
            state = read_lock(self.client, self.cluster)
            held = dict(self.me, since=utc_text(state.now),
                        expires=utc_text(state.now + datetime.timedelta(seconds=ttl)))
            if state.key is None:
                if check_mode:
                    return self._result(True, held, broke)
                key = self._create()
                if key is None:
                    continue  # another run created it first: look at who holds it
                self._write(key, held)
                return self._result(True, held, broke)
            holder = state.holder
            if holder and holder.get("run_id") == self.me["run_id"]:
                held["since"] = holder.get("since", held["since"])
                if not check_mode:
                    self._write(state.key, held)  # a longer expiry for a run that goes on
                return self._result(False, held, broke)
            if holder is None and first_unwritten is None:
                first_unwritten = self.clock()
            unwritten_for = self.clock() - first_unwritten if holder is None else 0
            if break_lock:
                reason = "you set break"
            else:
                reason = stale_reason(holder, state.now, self.me["controller"], unwritten_for)
            if reason:
                if check_mode:
                    return self._result(True, held, dict(holder or {}, reason=reason))
                self._remove(state.key)
                broke = dict(holder or {}, reason=reason)
                continue
            if self.clock() >= deadline:
                raise self._busy(holder, wait)
            self.sleep(max(0.2, min(POLL_SECONDS, deadline - self.clock())))

    def release(self, break_lock, check_mode):
        state = read_lock(self.client, self.cluster)
        if state.key is None:
            return self._result(False, None, None)
        holder = state.holder
        if not (break_lock or (holder and holder.get("run_id") == self.me["run_id"])):
            raise Busy("Cluster %s is locked by %s, not by this run (%s); it is not released."
                       % (self.cluster_name, describe(holder), self.me["run_id"]),
                       hint="Set break: true (cluster_lock_break=true) to remove another run's lock on purpose.",
                       held_by=holder)
        if not check_mode:
            self._remove(state.key)
        return self._result(True, None, None if holder and holder.get("run_id") == self.me["run_id"] else holder)

    def _create(self):
        """The new field's key, or None when another run created it first (DuplicateName)."""
        manager = self.client.content.customFieldsManager
        try:
            return self.client.call(manager.AddCustomFieldDef, name=field_name(self.cluster._moId),
                                    moType=vim.ClusterComputeResource).key
        except ApiError as err:
            if err.details.get("fault") == "DuplicateName":
                return None
            raise

    def _write(self, key, holder):
        manager = self.client.content.customFieldsManager
        self.client.call(manager.SetField, entity=self.cluster, key=key,
                         value=json.dumps(holder, sort_keys=True, separators=(",", ":")))

    def _remove(self, key):
        try:
            self.client.call(self.client.content.customFieldsManager.RemoveCustomFieldDef, key=key)
        except ApiError as err:
            if err.details.get("fault") != "NotFound":
                raise  # NotFound: another run removed it first

    def _busy(self, holder, wait):
        expires = (holder or {}).get("expires")
        return Busy(
            "Cluster %s is locked by %s: another run is changing it%s. Waited %d seconds."
            % (self.cluster_name, describe(holder), ", until %s at the latest" % expires if expires else "", wait),
            hint="Run again when it has ended (or raise cluster_lock_wait). If that run is dead, set "
                 "cluster_lock_break=true (module option break) to take the lock on purpose.",
            held_by=holder)

    def _result(self, changed, lock, broke):
        return {"changed": changed, "lock": lock, "broke": broke, "cluster": self.cluster_name}


def check_input(params):
    if params["ttl"] < 60:
        raise InputError("ttl %d is too short for a run to hold a cluster." % params["ttl"],
                         hint="Give at least 60 seconds; the default is 3600 and each layer of a run renews it.")
    if params["wait"] < 0:
        raise InputError("wait %d is negative." % params["wait"], hint="Give 0 (refuse at once) or more seconds.")
    if not params["run_id"].strip():
        raise InputError("run_id is empty.", hint="Give a value that names this run, the same for all its tasks.")


def whoami(owner=None):
    """This run as the lock records it: owner (user@controller unless given), controller, ansible-playbook pid."""
    controller = socket.gethostname()
    return {"owner": owner or "%s@%s" % (getpass.getuser(), controller), "controller": controller,
            "pid": playbook_pid()}


def with_run_identity(params):
    """``params`` with the run's id (given, or made here) and who runs it, as the records in vCenter name them."""
    me = whoami()
    run_id = params.get("run_id") or "%s-%s" % (time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()), me["pid"] or os.getpid())
    return dict(params, run_id=run_id, me=me)


def run_lock(client, params, check_mode):
    """The cluster_lock module: input checked first, then take or release each cluster's lock.

    With ``clusters``, taking is all or none: when one cannot be taken, those this call took are given back before
    the error. Releasing goes through every cluster and then names those held by another run."""
    check_input(params)
    me = dict(whoami(params["owner"]), run_id=params["run_id"])
    if params["cluster"]:
        return with_takeovers(_lock_one(client, params, me, params["cluster"], check_mode), check_mode)
    results, refused = [], []
    for name in params["clusters"]:
        try:
            results.append(_lock_one(client, params, me, name, check_mode))
        except Busy as err:
            if params["state"] == "absent":
                refused.append(err)
                continue
            if not check_mode:
                for taken in results:
                    if taken["changed"]:
                        _lock_one(client, dict(params, state="absent", **{"break": False}), me, taken["cluster"], False)
            raise
    if refused:
        raise Busy(" ".join(err.message for err in refused), hint=refused[0].hint,
                   held_by=[err.details.get("held_by") for err in refused], locks=results)
    return with_takeovers({"changed": any(item["changed"] for item in results), "locks": results}, check_mode)


def with_takeovers(result, check_mode):
    """``result`` with a warning for each lock taken from another run, so the run says what it took over and why."""
    verb = "Would take" if check_mode else "Took"
    taken_over = [lock for lock in result.get("locks", [result]) if lock.get("broke") and lock.get("lock")]
    warnings = ["%s over the lock of cluster %s from %s: %s." % (
        verb, lock["cluster"], describe(lock["broke"]), lock["broke"]["reason"]) for lock in taken_over]
    return dict(result, warnings=warnings) if warnings else result


def _lock_one(client, params, me, name, check_mode):
    lock = ClusterLock(client, client.cluster(name, params["datacenter"]), name, me)
    if params["state"] == "absent":
        return lock.release(params["break"], check_mode)
    return lock.take(params["ttl"], params["wait"], params["break"], check_mode)
