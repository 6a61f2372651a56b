# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vcenter_settings against the lab vCenter: typed values, checked in the lab's ground truth.

``vgpu.hotmigrate.enabled`` is in the lab's ``/lab/state``; other keys are read back with plain pyVmomi.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from pyVmomi import vim

from vsphere_direct import Direct

HOTMIGRATE = "vgpu.hotmigrate.enabled"


def settings(run_tasks, check=False, diff=False, expect_failure=False, **options):
    run = run_tasks([{"name": "vcenter_settings", "gpuops.vgpu.vcenter_settings": options}], check=check, diff=diff,
                    expect_failure=expect_failure)
    return run.result(0)


def direct_values(lab, *keys):
    """Current values straight from the OptionManager, with their Python types."""
    direct = Direct(lab)
    try:
        return dict((key, direct.content.setting.QueryOptions(key)[0].value) for key in keys)
    finally:
        direct.close()


def test_check_mode_predicts_and_changes_nothing(lab, run_tasks):
    before = lab.state()
    assert before["settings"][HOTMIGRATE] is False
    result = settings(run_tasks, check=True, settings={HOTMIGRATE: True})
    assert result["changed"] is True
    assert result["changed_keys"] == [HOTMIGRATE]
    assert result["settings"] == {"before": {HOTMIGRATE: False}, "after": {HOTMIGRATE: True}}
    assert lab.state() == before


def test_hotmigrate_true_lands_as_a_boolean_and_a_rerun_changes_nothing(lab, run_tasks):
    result = settings(run_tasks, diff=True, settings={HOTMIGRATE: True})
    assert result["changed"] is True
    assert result["diff"] == {"before": {HOTMIGRATE: False}, "after": {HOTMIGRATE: True}}
    assert lab.state()["settings"][HOTMIGRATE] is True
    assert direct_values(lab, HOTMIGRATE)[HOTMIGRATE] is True

    again = settings(run_tasks, settings={HOTMIGRATE: True})
    assert again["changed"] is False and again["changed_keys"] == []
    assert lab.state()["settings"][HOTMIGRATE] is True


def set_directly(lab, key, value):
    """A setting changed with plain pyVmomi, as another client would."""
    direct = Direct(lab)
    try:
        direct.content.setting.UpdateOptions(changedValue=[vim.option.OptionValue(key=key, value=value)])
    finally:
        direct.close()


def test_words_for_booleans_are_typed(lab, run_tasks):
    set_directly(lab, HOTMIGRATE, True)
    assert settings(run_tasks, settings={HOTMIGRATE: "no"})["changed"] is True
    assert lab.state()["settings"][HOTMIGRATE] is False
    assert settings(run_tasks, settings={HOTMIGRATE: "yes"})["changed"] is True
    assert lab.state()["settings"][HOTMIGRATE] is True
    assert settings(run_tasks, settings={HOTMIGRATE: "true"})["changed"] is False


def test_an_int_setting_takes_a_numeric_string_and_only_changed_keys_are_sent(lab, run_tasks):
    set_directly(lab, HOTMIGRATE, True)
    start = direct_values(lab, "event.maxAge", "event.batchsize")
    assert isinstance(start["event.maxAge"], int)
    lab.reset_stats()
    result = settings(run_tasks, settings={"event.maxAge": "45", "event.batchsize": str(start["event.batchsize"]),
                                           HOTMIGRATE: True})
    assert result["changed_keys"] == ["event.maxAge"]
    assert lab.stats()["by_method"]["UpdateOptions"] == 1
    now = direct_values(lab, "event.maxAge", "event.batchsize")
    assert now["event.maxAge"] == 45 and isinstance(now["event.maxAge"], int)
    assert now["event.batchsize"] == start["event.batchsize"]
    assert result["settings"]["after"]["event.maxAge"] == 45

    settings(run_tasks, settings={"event.maxAge": start["event.maxAge"]})
    assert direct_values(lab, "event.maxAge")["event.maxAge"] == start["event.maxAge"]


def test_new_keys_need_allow_new_and_are_strings(lab, run_tasks):
    key = "config.gpuops.owner"
    run = run_tasks([{"name": "vcenter_settings", "gpuops.vgpu.vcenter_settings": {"settings": {key: 7}}}],
                    expect_failure=True)
    assert key in run.result(0)["msg"] and "allow_new" in run.result(0)["msg"]

    result = settings(run_tasks, settings={key: 7}, allow_new=True)
    assert result["settings"] == {"before": {key: None}, "after": {key: "7"}}
    assert direct_values(lab, key)[key] == "7"
    assert settings(run_tasks, settings={key: "7"}, allow_new=True)["changed"] is False


@pytest.mark.parametrize("value, options, words", [
    ({"vgpu.hotmigrate.enable": True}, {}, ["vgpu.hotmigrate.enable", "Close matches", HOTMIGRATE]),
    ({"event.maxAge": "thirty"}, {}, ["event.maxAge", "whole number", "thirty"]),
    ({HOTMIGRATE: "perhaps"}, {}, [HOTMIGRATE, "boolean", "perhaps"]),
    ({HOTMIGRATE: False, "event.maxAge": "thirty"}, {}, ["event.maxAge"]),
    ({HOTMIGRATE: False}, {"allow_new": "sometimes"}, ["allow_new"]),
])
def test_bad_input_fails_clearly_and_changes_nothing(lab, run_tasks, value, options, words):
    before = lab.state()
    values = direct_values(lab, "event.maxAge")
    run = run_tasks([{"name": "vcenter_settings", "gpuops.vgpu.vcenter_settings": dict(options, settings=value)}],
                    expect_failure=True)
    for word in words:
        assert word in run.result(0)["msg"]
    assert lab.state() == before
    assert direct_values(lab, "event.maxAge") == values


def test_cleanup_puts_hotmigrate_back(lab, run_tasks):
    settings(run_tasks, settings={HOTMIGRATE: False})
    assert lab.state()["settings"][HOTMIGRATE] is False
