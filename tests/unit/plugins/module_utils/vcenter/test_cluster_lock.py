# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster lock's rules on a fake CustomFieldsManager: who gets it, when it is taken over, what a refusal says."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, Busy
from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _cluster_lock as lock

NOW = datetime.datetime(2026, 11, 25, 21, 0, 0)
ME = {"owner": "alice@ctl-01", "run_id": "run-a", "controller": "ctl-01", "pid": None}


class Obj(object):
    def __init__(self, **attrs):
        self.__dict__.update(attrs)


class FakeVCenter(object):
    """One cluster, vCenter's custom fields and its clock; ``log`` lists the changes sent."""

    def __init__(self):
        self.fields, self.values, self.log, self.next_key = [], {}, [], 100
        self.cluster = Obj(_moId="domain-c10")
        self.content = Obj(customFieldsManager=self)
        self.si = Obj(CurrentTime=lambda: NOW)

    def call(self, method, *args, **kwargs):
        return method(*args, **kwargs)

    def retrieve_objects(self, objects, properties):
        if objects[0] is self:
            return [{"field": list(self.fields)}]
        return [{"customValue": [Obj(key=key, value=value) for key, value in self.values.items()]}]

    def AddCustomFieldDef(self, name, moType):
        if any(field.name == name for field in self.fields):
            raise ApiError("DuplicateName", fault="DuplicateName")
        self.next_key += 1
        self.fields.append(Obj(name=name, key=self.next_key))
        self.log.append("add")
        return self.fields[-1]

    def SetField(self, entity, key, value):
        self.values[key] = value
        self.log.append("set")

    def RemoveCustomFieldDef(self, key):
        self.fields = [field for field in self.fields if field.key != key]
        self.values.pop(key, None)
        self.log.append("remove")

    def plant(self, **holder):
        field = self.AddCustomFieldDef(lock.field_name("domain-c10"), None)
        if holder:
            self.SetField(self.cluster, field.key, json.dumps(holder))
        self.log = []

    def holder(self):
        return json.loads(list(self.values.values())[0]) if self.values else None


class Clock(object):
    def __init__(self):
        self.now, self.sleeps = 0.0, []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def cluster_lock(vc, clock=None):
    clock = clock or Clock()
    return lock.ClusterLock(vc, vc.cluster, "gpu-cluster", dict(ME), clock=clock, sleep=clock.sleep)


OTHER = {"owner": "awx@ctl-02", "run_id": "job-17", "controller": "ctl-02", "pid": 42,
         "since": "2026-11-25T20:00:00Z", "expires": "2026-11-25T23:00:00Z"}


def test_a_free_cluster_is_locked_with_owner_since_and_expiry_from_vcenters_clock():
    vc = FakeVCenter()
    result = cluster_lock(vc).take(ttl=3600, wait=0, break_lock=False, check_mode=False)
    assert result["changed"] is True and vc.log == ["add", "set"]
    assert vc.holder() == dict(ME, since="2026-11-25T21:00:00Z", expires="2026-11-25T22:00:00Z")


def test_check_mode_sends_nothing():
    vc = FakeVCenter()
    assert cluster_lock(vc).take(3600, 0, False, True)["changed"] is True and vc.log == []


def test_the_same_run_renews_its_lock_without_a_change():
    vc = FakeVCenter()
    vc.plant(**dict(ME, since="2026-11-25T20:30:00Z", expires="2026-11-25T21:30:00Z"))
    result = cluster_lock(vc).take(7200, 0, False, False)
    assert result["changed"] is False and vc.log == ["set"]
    assert vc.holder()["since"] == "2026-11-25T20:30:00Z" and vc.holder()["expires"] == "2026-11-25T23:00:00Z"


def test_another_runs_lock_is_waited_for_then_refused_naming_it():
    vc, clock = FakeVCenter(), Clock()
    vc.plant(**OTHER)
    with pytest.raises(Busy) as err:
        cluster_lock(vc, clock=clock).take(3600, 12, False, False)
    assert str(err.value).startswith(
        "Cluster gpu-cluster is locked by awx@ctl-02 (run job-17) since 2026-11-25T20:00:00Z: another run is changing "
        "it, until 2026-11-25T23:00:00Z at the latest. Waited 12 seconds.")
    assert sum(clock.sleeps) == 12 and max(clock.sleeps) <= lock.POLL_SECONDS
    assert vc.log == [] and vc.holder() == OTHER


@pytest.mark.parametrize("holder, reason", [
    (dict(OTHER, expires="2026-11-25T20:59:59Z"), "it expired at 2026-11-25T20:59:59Z"),
    (dict(OTHER, controller="ctl-01", pid=999999999), "its ansible-playbook process 999999999 on ctl-01 has ended"),
])
def test_a_dead_runs_lock_is_taken_over(holder, reason):
    vc = FakeVCenter()
    vc.plant(**holder)
    result = cluster_lock(vc).take(3600, 0, False, False)
    assert result["broke"] == dict(holder, reason=reason)
    assert vc.log == ["remove", "add", "set"] and vc.holder()["run_id"] == "run-a"


def test_a_lock_without_its_owner_is_taken_over_after_the_grace():
    vc, clock = FakeVCenter(), Clock()
    vc.plant()
    result = cluster_lock(vc, clock=clock).take(3600, 60, False, False)
    assert clock.now >= lock.UNWRITTEN_GRACE and result["broke"]["reason"].startswith("its owner was never written")


def test_break_takes_a_live_lock():
    vc = FakeVCenter()
    vc.plant(**OTHER)
    result = cluster_lock(vc).take(3600, 0, True, False)
    assert result["broke"]["reason"] == "you set break" and vc.holder()["run_id"] == "run-a"


def test_release_removes_only_this_runs_lock_unless_broken():
    vc = FakeVCenter()
    vc.plant(**OTHER)
    with pytest.raises(Busy):
        cluster_lock(vc).release(False, False)
    assert vc.log == []
    assert cluster_lock(vc).release(True, False)["broke"] == OTHER and vc.fields == []
    assert cluster_lock(vc).release(False, False)["changed"] is False


def test_input_is_checked_first():
    params = {"ttl": 59, "wait": 0, "run_id": "r"}
    with pytest.raises(Exception) as err:
        lock.check_input(params)
    assert "ttl 59 is too short" in str(err.value)


class FakeSite(FakeVCenter):
    """Several clusters, each with its own lock field."""

    def __init__(self, *names):
        super(FakeSite, self).__init__()
        del self.cluster  # looked up by name here
        self.clusters = dict((name, Obj(_moId="domain-c%d" % (10 + index))) for index, name in enumerate(names))

    def cluster(self, name, datacenter):
        return self.clusters[name]

    def plant_on(self, name, **holder):
        field = self.AddCustomFieldDef(lock.field_name(self.clusters[name]._moId), None)
        self.SetField(self.clusters[name], field.key, json.dumps(holder))
        self.log = []

    def locked(self):
        return sorted(field.name[len(lock.FIELD_PREFIX):] for field in self.fields)


def site_params(state="present", **changes):
    params = dict(cluster=None, clusters=["gpu-cluster", "mixed-cluster", "ai-cluster"], datacenter=None,
                  state=state, run_id="run-a", owner="alice@ctl-01", ttl=3600, wait=0)
    params["break"] = False
    params.update(changes)
    return params


def test_several_clusters_are_locked_in_one_call_each_with_its_outcome():
    vc = FakeSite("gpu-cluster", "mixed-cluster", "ai-cluster")
    result = lock.run_lock(vc, site_params(), check_mode=False)
    assert result["changed"] is True and vc.locked() == ["domain-c10", "domain-c11", "domain-c12"]
    assert [item["cluster"] for item in result["locks"]] == ["gpu-cluster", "mixed-cluster", "ai-cluster"]
    again = lock.run_lock(vc, site_params(), check_mode=False)
    assert again["changed"] is False and [item["changed"] for item in again["locks"]] == [False] * 3


def test_several_clusters_are_all_or_none_when_one_is_held_by_another_run():
    vc = FakeSite("gpu-cluster", "mixed-cluster", "ai-cluster")
    vc.plant_on("mixed-cluster", **OTHER)
    with pytest.raises(Busy, match="mixed-cluster is locked by awx@ctl-02"):
        lock.run_lock(vc, site_params(), check_mode=False)
    # gpu-cluster, taken first, was given back; ai-cluster was never reached.
    assert vc.locked() == ["domain-c11"] and vc.log == ["add", "set", "remove"]


def test_releasing_several_clusters_releases_every_own_lock_then_names_the_others():
    vc = FakeSite("gpu-cluster", "mixed-cluster", "ai-cluster")
    lock.run_lock(vc, site_params(clusters=["gpu-cluster", "ai-cluster"]), check_mode=False)
    vc.plant_on("mixed-cluster", **OTHER)
    with pytest.raises(Busy, match="mixed-cluster is locked by awx@ctl-02") as raised:
        lock.run_lock(vc, site_params(state="absent"), check_mode=False)
    assert vc.locked() == ["domain-c11"]
    assert [item["cluster"] for item in raised.value.details["locks"]] == ["gpu-cluster", "ai-cluster"]


@pytest.mark.parametrize("check_mode, verb", [(False, "Took"), (True, "Would take")])
def test_a_lock_taken_over_from_a_dead_run_is_named_in_a_warning(check_mode, verb):
    vc = FakeSite("gpu-cluster", "mixed-cluster", "ai-cluster")
    expired = dict(OTHER)
    expired["expires"] = "2026-11-25T20:59:59Z"
    vc.plant_on("mixed-cluster", **expired)
    result = lock.run_lock(vc, site_params(), check_mode=check_mode)
    assert result["warnings"] == [
        "%s over the lock of cluster mixed-cluster from awx@ctl-02 (run job-17) since 2026-11-25T20:00:00Z: it expired "
        "at 2026-11-25T20:59:59Z." % verb]
    assert vc.locked() == (["domain-c11"] if check_mode else ["domain-c10", "domain-c11", "domain-c12"])


def test_a_run_that_takes_free_or_its_own_locks_warns_nothing():
    vc = FakeSite("gpu-cluster", "mixed-cluster", "ai-cluster")
    assert "warnings" not in lock.run_lock(vc, site_params(), check_mode=False)
    assert "warnings" not in lock.run_lock(vc, site_params(), check_mode=False)
