# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_record against the lab vCenter: the record is the cluster's custom attribute in the lab's ground truth."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

FIELD = "gpuops.vgpu.driver_upgrade"


def record(run_tasks, check=False, diff=False, expect_failure=False, **options):
    options.setdefault("cluster", "gpu-cluster")
    options.setdefault("field", FIELD)
    run = run_tasks([{"name": "cluster_record", "gpuops.vgpu.cluster_record": options}], check=check, diff=diff,
                    expect_failure=expect_failure)
    return run.result(0)


def held(lab, cluster="gpu-cluster"):
    raw = next(c for c in lab.state()["clusters"] if c["name"] == cluster)["custom_values"].get(FIELD)
    return json.loads(raw) if raw else None


def test_write_check_mode_rerun_read_and_clear(lab, run_tasks):
    data = {"state": "upgrading", "previous_image": {"NVD-VGPU-800": "525.105.14"}}
    before = lab.state()
    predicted = record(run_tasks, check=True, diff=True, data=data)
    assert predicted["changed"] is True and predicted["diff"] == {"before": {}, "after": data}
    assert lab.state() == before

    written = record(run_tasks, data=data, run_id="run-7")
    truth = held(lab)
    assert written["changed"] is True and truth["data"] == data and truth["run"] == "run-7"
    assert truth["vcenter"] and truth["cluster"].startswith("domain-c") and truth["at"].endswith("Z")
    assert record(run_tasks, data=data)["changed"] is False, "the same data again changes nothing"

    read = record(run_tasks, required_keys=["state", "previous_image"], missing="fail")
    assert read["changed"] is False and read["exists"] is True and read["data"] == data
    assert read["record"]["run"] == "run-7"
    assert held(lab, "mixed-cluster") is None, "only the named cluster carries it"

    cleared = record(run_tasks, state="absent")
    assert cleared["changed"] is True and held(lab) is None
    assert record(run_tasks, state="absent")["changed"] is False
    assert record(run_tasks)["exists"] is False


def test_a_missing_record_fails_only_when_asked(lab, run_tasks):
    assert record(run_tasks) == dict(record(run_tasks), exists=False, data={})
    failed = record(run_tasks, missing="fail", fix="Run the upgrade first.", expect_failure=True)
    assert failed["msg"] == ("Cluster gpu-cluster carries no record in its custom attribute %s. Run the upgrade "
                             "first." % FIELD)


@pytest.mark.parametrize("options, words", [
    ({"field": "driver_upgrade"}, "field 'driver_upgrade' is not one of this collection's custom attributes"),
    ({"state": "absent", "data": {"a": 1}}, "data is given with state=absent"),
    ({"cluster": "no-such-cluster"}, "no-such-cluster"),
])
def test_bad_input_fails_and_changes_nothing(lab, run_tasks, options, words):
    before = lab.state()
    assert words in record(run_tasks, expect_failure=True, **options)["msg"]
    assert lab.state() == before


def test_a_record_that_cannot_be_trusted_is_refused(lab, run_tasks):
    record(run_tasks, data={"state": "upgrading"})
    untrusted = record(run_tasks, required_keys=["state", "previous_image"], expect_failure=True)
    assert untrusted["msg"].startswith("The record of cluster gpu-cluster (custom attribute %s) cannot be trusted: "
                                       "its data lacks previous_image." % FIELD)
    record(run_tasks, state="absent")
