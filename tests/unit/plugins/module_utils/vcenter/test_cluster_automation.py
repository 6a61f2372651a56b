# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_automation: specs with only the changed fields, an exact previous -> restore round trip, and the record
in the cluster's custom attribute that any later run restores from."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
from types import SimpleNamespace

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _cluster_automation as ca
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, InputError, TaskFailed

vim = pytest.importorskip("pyVmomi").vim

VCENTER = "5d7e8c3a-1f2b-4c6d-9e0a-7b8c9d0e1f2a"
NOW = datetime.datetime(2026, 11, 28, 10, 15, 3, 120000, tzinfo=datetime.timezone.utc)


def _configuration(drs_enabled, drs_behavior, dpm_enabled, dpm_behavior):
    return vim.cluster.ConfigInfoEx(
        drsConfig=vim.cluster.DrsConfigInfo(enabled=drs_enabled, defaultVmBehavior=drs_behavior, vmotionRate=3),
        dpmConfigInfo=vim.cluster.DpmConfigInfo(enabled=dpm_enabled, defaultDpmBehavior=dpm_behavior))


class FakeClient:
    """One cluster whose reconfigure task merges the spec like vCenter does with ``modify=True``, with vCenter's
    custom fields; ``log`` lists the changes sent, in order."""

    _moId = "domain-c7"

    def __init__(self, configuration, fail=None):
        self.configuration = configuration
        self.fail = fail
        self.specs = []
        self.fields, self.values, self.log = [], {}, []
        self.content = SimpleNamespace(customFieldsManager=SimpleNamespace(
            AddCustomFieldDef=self._add_field, SetField=self._set_field), about=SimpleNamespace(instanceUuid=VCENTER))
        self.si = SimpleNamespace(CurrentTime=lambda: NOW)

    def cluster(self, name, datacenter=None):
        assert name == "gpu-cluster"
        return self

    def retrieve_objects(self, objects, properties):
        if objects[0] is self.content.customFieldsManager:
            return [{"field": list(self.fields)}]
        assert properties in (["configurationEx"], ["configurationEx", "customValue"])
        return [{"obj": self, "moid": "domain-c7", "configurationEx": self.configuration,
                 "customValue": [SimpleNamespace(key=key, value=value) for key, value in self.values.items()]}]

    def call(self, method, *args, **kwargs):
        return method(*args, **kwargs)

    def _add_field(self, name, moType):
        assert moType is vim.ClusterComputeResource
        if any(field.name == name for field in self.fields):
            raise ApiError("DuplicateName", fault="DuplicateName")
        self.fields.append(SimpleNamespace(key=200 + len(self.fields), name=name))
        self.log.append("add field")
        return self.fields[-1]

    def _set_field(self, entity, key, value):
        assert entity is self
        self.values[key] = value
        self.log.append("set record" if value else "clear record")

    def record(self):
        """The cluster's record, parsed; None when it has none."""
        field = next((field for field in self.fields if field.name == ca.FIELD), None)
        raw = self.values.get(field.key) if field else None
        return json.loads(raw) if raw else None

    def plant(self, raw):
        """A record left in the cluster's attribute, as ``raw`` text."""
        if not self.fields:
            self._add_field(ca.FIELD, vim.ClusterComputeResource)
        self.values[self.fields[0].key] = raw
        self.log = []

    def ReconfigureComputeResource_Task(self, spec, modify):
        assert modify is True
        self.specs.append(spec)
        self.log.append("reconfigure")
        if not self.fail:
            drs, dpm = self.configuration.drsConfig, self.configuration.dpmConfigInfo
            for source, target in ((spec.drsConfig, drs), (spec.dpmConfig, dpm)):
                for prop in type(source)._GetPropertyList() if source is not None else []:
                    value = getattr(source, prop.name)
                    if value is not None and prop.name not in ("dynamicType", "dynamicProperty") and value != []:
                        setattr(target, prop.name, value)
        return "task-1"

    def wait_for_tasks(self, tasks, timeout):
        if self.fail:
            return [{"state": "error", "result": None, "error": self.fail, "fault": "SystemError"}]
        return [{"state": "success", "result": None, "error": None, "fault": None}]


def _params(**options):
    params = dict(cluster="gpu-cluster", datacenter=None, drs_enabled=None, drs_behavior=None, dpm_enabled=None,
                  dpm_behavior=None, restore=None, record=False, restore_recorded=False, adopt_previous=None,
                  run_id="run-a", me={"owner": "ops@ctl01", "controller": "ctl01", "pid": None})
    params.update(options)
    return params


def _set_fields(data_object):
    return sorted(prop.name for prop in type(data_object)._GetPropertyList()
                  if prop.name not in ("dynamicType", "dynamicProperty")
                  and getattr(data_object, prop.name) not in (None, []))


def test_describe_reads_the_four_fields():
    assert ca.describe(_configuration(True, "fullyAutomated", False, "manual")) == {
        "drs_enabled": True, "drs_behavior": "fullyAutomated", "dpm_enabled": False, "dpm_behavior": "manual"}
    assert ca.describe(vim.cluster.ConfigInfoEx()) == dict((field, None) for field in ca.FIELDS)


def test_the_spec_holds_only_the_fields_that_differ():
    current = ca.describe(_configuration(True, "fullyAutomated", True, "automated"))
    spec = ca.change_spec(current, ca.wanted_state(current, _params(drs_enabled=False, dpm_behavior="automated")))
    assert spec.dpmConfig is None
    assert _set_fields(spec.drsConfig) == ["enabled"]
    assert spec.drsConfig.enabled is False
    assert ca.change_spec(current, ca.wanted_state(current, _params(drs_enabled=True))) is None


def test_previous_restores_exactly_and_restore_is_idempotent():
    client = FakeClient(_configuration(True, "partiallyAutomated", True, "automated"))
    start = ca.describe(client.configuration)

    prepared = ca.reconcile(client, _params(drs_enabled=False, dpm_enabled=False, drs_behavior="manual"), False)
    assert prepared["changed"] is True
    assert prepared["previous"] == start
    assert prepared["current"] == {"drs_enabled": False, "drs_behavior": "manual", "dpm_enabled": False,
                                   "dpm_behavior": "automated"}
    assert prepared["diff"] == {"before": start, "after": prepared["current"]}
    assert _set_fields(client.specs[0].drsConfig) == ["defaultVmBehavior", "enabled"]
    assert _set_fields(client.specs[0].dpmConfig) == ["enabled"]
    assert client.configuration.drsConfig.vmotionRate == 3, "fields not in the spec stay"

    restored = ca.reconcile(client, _params(restore=prepared["previous"]), False)
    assert restored["changed"] is True
    assert ca.describe(client.configuration) == start == restored["current"]

    again = ca.reconcile(client, _params(restore=prepared["previous"]), False)
    assert again["changed"] is False
    assert len(client.specs) == 2


def test_check_mode_predicts_and_sends_nothing():
    client = FakeClient(_configuration(True, "fullyAutomated", False, "manual"))
    result = ca.reconcile(client, _params(drs_enabled=False), True)
    assert result["changed"] is True
    assert result["current"]["drs_enabled"] is False
    assert client.specs == []
    assert client.configuration.drsConfig.enabled is True


def test_restore_leaves_unknown_fields_alone():
    client = FakeClient(_configuration(False, "manual", False, "manual"))
    result = ca.reconcile(client, _params(restore={"drs_enabled": True, "drs_behavior": None, "dpm_enabled": None,
                                                   "dpm_behavior": None}), False)
    assert result["current"] == {"drs_enabled": True, "drs_behavior": "manual", "dpm_enabled": False,
                                 "dpm_behavior": "manual"}
    assert client.specs[0].dpmConfig is None


def test_a_failed_task_reports_the_state_it_left():
    client = FakeClient(_configuration(True, "fullyAutomated", True, "automated"), fail="DRS cannot be reconfigured")
    with pytest.raises(TaskFailed) as err:
        ca.reconcile(client, _params(drs_enabled=False), False)
    assert "gpu-cluster" in str(err.value) and "DRS cannot be reconfigured" in str(err.value)
    assert err.value.details["previous"]["drs_enabled"] is True
    assert err.value.details["current"]["drs_enabled"] is True


START = {"drs_enabled": True, "drs_behavior": "fullyAutomated", "dpm_enabled": True, "dpm_behavior": "automated"}
OFF = dict(START, drs_enabled=False, dpm_enabled=False)


def _started():
    return FakeClient(_configuration(True, "fullyAutomated", True, "automated"))


def _prepare(client, check_mode=False, **options):
    return ca.reconcile(client, _params(drs_enabled=False, dpm_enabled=False, record=True, **options), check_mode)


def _restore(client, check_mode=False, **options):
    return ca.reconcile(client, _params(restore_recorded=True, **options), check_mode)


def _sound_record(**changes):
    record = {"v": 1, "run": "run-killed", "by": "alice@ctl02", "vcenter": VCENTER, "cluster": "domain-c7",
              "at": "2026-11-28T09:00:00.000000Z", "previous": START}
    record.update(changes)
    return record


def test_record_is_written_before_drs_dpm_change_and_names_the_run_vcenter_and_cluster():
    client = _started()
    result = _prepare(client)
    assert client.log == ["add field", "set record", "reconfigure"]
    assert client.record() == {"v": 1, "run": "run-a", "by": "ops@ctl01", "vcenter": VCENTER, "cluster": "domain-c7",
                               "at": "2026-11-28T10:15:03.120000Z", "previous": START}
    assert result["record"] == client.record() and result["record_found"] is False
    assert result["changed"] is True and result["current"] == OFF
    assert result["diff"] == {"before": dict(START, record=None), "after": dict(OFF, record=client.record())}


def test_a_record_left_by_an_interrupted_run_is_kept_so_restore_returns_the_state_from_before_the_work():
    client = FakeClient(_configuration(False, "fullyAutomated", False, "automated"))
    client.plant(json.dumps(_sound_record()))
    result = _prepare(client)
    assert result["changed"] is False and client.log == [] and result["record_found"] is True
    assert result["record"]["previous"] == START and result["record"]["run"] == "run-killed"

    restored = _restore(client, run_id="run-c")
    assert client.log == ["reconfigure", "clear record"]
    assert ca.describe(client.configuration) == START and client.record() is None
    assert restored["changed"] is True and restored["record"]["run"] == "run-killed"


def test_a_second_prepare_keeps_the_first_record_and_changes_nothing():
    client = _started()
    _prepare(client)
    first = client.record()
    client.log = []
    again = _prepare(client, run_id="run-b")
    assert again["changed"] is False and client.log == [] and client.record() == first
    assert again["previous"] == OFF and again["record"]["previous"] == START


def test_restore_puts_back_the_record_then_clears_it_and_a_second_restore_changes_nothing():
    client = _started()
    _prepare(client)
    client.log = []
    restored = _restore(client)
    assert client.log == ["reconfigure", "clear record"] and ca.describe(client.configuration) == START
    assert restored["previous"] == OFF and restored["current"] == START
    assert restored["diff"]["before"]["record"]["previous"] == START and restored["diff"]["after"]["record"] is None
    again = _restore(client)
    assert again["changed"] is False and again["record"] is None and client.log == ["reconfigure", "clear record"]


def test_a_record_whose_state_is_back_already_is_only_cleared():
    client = _started()
    client.plant(json.dumps(_sound_record()))
    result = _restore(client)
    assert result["changed"] is True and client.log == ["clear record"] and client.record() is None


def test_nothing_to_change_writes_no_record_and_restore_without_a_record_changes_nothing():
    client = FakeClient(_configuration(False, "manual", False, "manual"))
    assert _prepare(client)["changed"] is False
    assert client.log == [] and client.fields == []
    result = _restore(client)
    assert result == dict(result, changed=False, record=None, record_found=False) and client.log == []


def test_check_mode_writes_nothing_and_predicts_the_record_and_the_restore():
    client = _started()
    predicted = _prepare(client, check_mode=True)
    assert predicted["changed"] is True and predicted["current"] == OFF
    assert predicted["record"]["previous"] == START and client.log == [] and client.fields == []

    client.plant(json.dumps(_sound_record()))
    client.configuration = _configuration(False, "fullyAutomated", False, "automated")
    predicted = _restore(client, check_mode=True)
    assert predicted["changed"] is True and predicted["current"] == START and client.log == []
    assert client.record()["run"] == "run-killed"


RECORD_TEXT = json.dumps(_sound_record())


@pytest.mark.parametrize("raw, words", [
    (RECORD_TEXT[:50], ["cut short"]),
    (json.dumps(dict((k, v) for k, v in _sound_record().items() if k != "previous")), ["lacks previous"]),
    (json.dumps(_sound_record(previous={"drs_enabled": "yes"})), ["'previous' is not DRS/DPM"]),
    (json.dumps(_sound_record(at="yesterday")), ["'yesterday' is not a time"]),
    (json.dumps(_sound_record(vcenter="another-vcenter")), ["another-vcenter", VCENTER]),
    (json.dumps(_sound_record(cluster="domain-c99")), ["domain-c99", "this is cluster domain-c7 (gpu-cluster)"]),
], ids=["cut-short", "missing-key", "bad-previous", "bad-time", "foreign-vcenter", "foreign-cluster"])
@pytest.mark.parametrize("entry", [_prepare, _restore], ids=["record", "restore_recorded"])
def test_a_record_that_cannot_be_trusted_is_refused_before_any_change(entry, raw, words):
    client = FakeClient(_configuration(False, "fullyAutomated", False, "automated"))
    client.plant(raw)
    with pytest.raises(InputError) as caught:
        entry(client)
    message = str(caught.value)
    for word in words + ["Nothing was changed", "cluster gpu-cluster", ca.FIELD, "clear its attribute"]:
        assert word in message
    assert client.log == [] and client.specs == [] and client.values[client.fields[0].key] == raw


def test_a_plain_read_reports_the_record_or_why_it_cannot_be_trusted_without_failing():
    client = _started()
    client.plant(json.dumps(_sound_record()))
    result = ca.reconcile(client, _params(), True)
    assert result["record"]["run"] == "run-killed" and result["record_error"] is None and result["changed"] is False
    client.plant(json.dumps(_sound_record(vcenter="another-vcenter")))
    result = ca.reconcile(client, _params(), True)
    assert result["record"] is None and result["record_error"].startswith(
        "The DRS/DPM record of cluster gpu-cluster (custom attribute %s) cannot be trusted: it was taken on vCenter "
        "another-vcenter" % ca.FIELD)


def test_a_state_recorded_elsewhere_is_adopted_into_the_cluster_record_and_restored():
    client = FakeClient(_configuration(False, "fullyAutomated", False, "automated"))
    result = _prepare(client, adopt_previous=START)
    assert result["changed"] is True and client.log == ["add field", "set record"]
    assert client.record()["previous"] == START and client.record()["adopted"] is True
    assert _prepare(client, adopt_previous=OFF)["changed"] is False, "the cluster's record wins"
    _restore(client, adopt_previous=OFF)
    assert ca.describe(client.configuration) == START and client.record() is None

    client.configuration = _configuration(False, "fullyAutomated", False, "automated")
    result = _restore(client, adopt_previous=START)
    assert result["changed"] is True and ca.describe(client.configuration) == START and result["record"] is None


def test_adopt_previous_needs_record_or_restore_recorded():
    client = _started()
    with pytest.raises(InputError) as caught:
        ca.reconcile(client, _params(adopt_previous=START), False)
    assert "adopt_previous" in str(caught.value) and client.log == []


def test_a_failed_change_keeps_the_record_for_the_next_run():
    client = FakeClient(_configuration(True, "fullyAutomated", True, "automated"), fail="DRS cannot be reconfigured")
    with pytest.raises(TaskFailed) as caught:
        _prepare(client)
    assert client.record()["previous"] == START and caught.value.details["record"]["previous"] == START
    assert ca.FIELD in caught.value.hint
