# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_automation against the lab vCenter: only the given fields change, and previous -> restore is exact."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

CLUSTER = "gpu-cluster"


def automation(run_tasks, check=False, diff=False, **options):
    options.setdefault("cluster", CLUSTER)
    run = run_tasks([{"name": "cluster_automation", "gpuops.vgpu.cluster_automation": options}], check=check,
                    diff=diff)
    return run.result(0)


def truth(lab, name=CLUSTER):
    cluster = next(cluster for cluster in lab.state()["clusters"] if cluster["name"] == name)
    return {"drs_enabled": cluster["drs"]["enabled"], "drs_behavior": cluster["drs"]["behavior"],
            "dpm_enabled": cluster["dpm"]["enabled"], "dpm_behavior": cluster["dpm"]["behavior"]}


@pytest.fixture
def start(lab):
    """DRS/DPM of both clusters as the lab started them (default topology)."""
    state = {CLUSTER: truth(lab), "mixed-cluster": truth(lab, "mixed-cluster")}
    assert state[CLUSTER] == {"drs_enabled": True, "drs_behavior": "fullyAutomated", "dpm_enabled": True,
                              "dpm_behavior": "automated"}
    return state


def test_check_mode_predicts_and_changes_nothing(lab, run_tasks, start):
    before = lab.state()
    result = automation(run_tasks, check=True, drs_enabled=False, dpm_enabled=False)
    assert result["changed"] is True
    assert result["previous"] == start[CLUSTER]
    assert result["current"] == dict(start[CLUSTER], drs_enabled=False, dpm_enabled=False)
    assert lab.state() == before


def test_off_changes_only_the_given_fields_and_a_rerun_changes_nothing(lab, run_tasks, start):
    result = automation(run_tasks, diff=True, drs_enabled=False, dpm_enabled=False)
    assert result["changed"] is True
    assert result["previous"] == start[CLUSTER]
    assert truth(lab) == result["current"] == {"drs_enabled": False, "drs_behavior": "fullyAutomated",
                                               "dpm_enabled": False, "dpm_behavior": "automated"}
    assert result["diff"] == {"before": start[CLUSTER], "after": truth(lab)}
    assert truth(lab, "mixed-cluster") == start["mixed-cluster"]

    again = automation(run_tasks, drs_enabled=False, dpm_enabled=False)
    assert again["changed"] is False
    assert again["previous"] == again["current"] == truth(lab)


def test_a_behavior_alone_leaves_the_on_off_switches(lab, run_tasks):
    before = truth(lab)
    result = automation(run_tasks, drs_behavior="partiallyAutomated")
    assert result["changed"] is True
    assert truth(lab) == dict(before, drs_behavior="partiallyAutomated")


def test_restore_returns_the_cluster_exactly_to_its_start(lab, run_tasks, start):
    automation(run_tasks, drs_enabled=False, dpm_enabled=False, drs_behavior="partiallyAutomated")
    result = automation(run_tasks, restore=start[CLUSTER])
    assert result["changed"] is True
    assert truth(lab) == result["current"] == start[CLUSTER]
    assert truth(lab, "mixed-cluster") == start["mixed-cluster"]
    assert automation(run_tasks, restore=start[CLUSTER])["changed"] is False
    assert truth(lab) == start[CLUSTER]


def test_previous_from_one_run_restores_in_the_next(lab, run_tasks, start):
    """The round trip a role does: register previous, change more, then hand previous back."""
    run = run_tasks([
        {"name": "off", "gpuops.vgpu.cluster_automation": {"cluster": "mixed-cluster", "drs_enabled": False,
                                                           "drs_behavior": "manual", "dpm_behavior": "automated"},
         "register": "off"},
        {"name": "back", "gpuops.vgpu.cluster_automation": {"cluster": "mixed-cluster",
                                                            "restore": "{{ off.previous }}"}},
    ])
    assert run.result(0)["previous"] == start["mixed-cluster"]
    assert run.result(1)["changed"] is True
    assert truth(lab, "mixed-cluster") == start["mixed-cluster"]


@pytest.mark.parametrize("options, words", [
    ({"cluster": "no-such-cluster", "drs_enabled": False}, ["no-such-cluster", "gpu-cluster", "mixed-cluster"]),
    ({"cluster": CLUSTER, "datacenter": "no-such-dc", "drs_enabled": False}, ["no-such-dc"]),
    ({"cluster": CLUSTER, "drs_behavior": "automatic"}, ["drs_behavior", "fullyAutomated, partiallyAutomated, manual"]),
    ({"cluster": CLUSTER, "drs_enabled": False, "restore": {"drs_enabled": True}}, ["mutually exclusive",
                                                                                    "restore", "drs_enabled"]),
    ({"cluster": CLUSTER, "restore": {"dpm_behavior": "sometimes"}}, ["dpm_behavior", "manual, automated"]),
])
def test_bad_input_fails_clearly_and_changes_nothing(lab, run_tasks, options, words):
    before = lab.state()
    run = run_tasks([{"name": "cluster_automation", "gpuops.vgpu.cluster_automation": options}],
                    expect_failure=True)
    for word in words:
        assert word in run.result(0)["msg"]
    assert lab.state() == before
