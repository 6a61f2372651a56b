# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_automation: specs with only the changed fields, and an exact previous -> restore round trip."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _cluster_automation as ca
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import TaskFailed

vim = pytest.importorskip("pyVmomi").vim


def _configuration(drs_enabled, drs_behavior, dpm_enabled, dpm_behavior):
    return vim.cluster.ConfigInfoEx(
        drsConfig=vim.cluster.DrsConfigInfo(enabled=drs_enabled, defaultVmBehavior=drs_behavior, vmotionRate=3),
        dpmConfigInfo=vim.cluster.DpmConfigInfo(enabled=dpm_enabled, defaultDpmBehavior=dpm_behavior))


class FakeClient:
    """One cluster whose reconfigure task merges the spec like vCenter does with ``modify=True``."""

    def __init__(self, configuration, fail=None):
        self.configuration = configuration
        self.fail = fail
        self.specs = []
        self.cluster_obj = vim.ClusterComputeResource("domain-c7")

    def cluster(self, name, datacenter=None):
        assert name == "gpu-cluster"
        return self

    def retrieve_objects(self, objects, properties):
        assert properties == ["configurationEx"]
        return [{"obj": self.cluster_obj, "moid": "domain-c7", "configurationEx": self.configuration}]

    def call(self, method, *args, **kwargs):
        return method(*args, **kwargs)

    def ReconfigureComputeResource_Task(self, spec, modify):
        assert modify is True
        self.specs.append(spec)
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
                  dpm_behavior=None, restore=None)
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
