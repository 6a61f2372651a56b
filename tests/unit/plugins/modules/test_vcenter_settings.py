# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vcenter_settings's real main() on a fake OptionManager."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError
from ansible_collections.gpuops.vgpu.plugins.modules import vcenter_settings
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.vcenter.test_settings import BOOL, INT, FakeClient
from ansible_collections.gpuops.vgpu.tests.unit.plugins.modules.module_runner import CONNECTION, fake_vcenter, run_main

HOTMIGRATE = dict(CONNECTION, settings={"vgpu.hotmigrate.enabled": "yes"})


@pytest.fixture
def client(monkeypatch):
    """The OptionManager behind every session the module opens; ``sessions`` lists those."""
    manager = FakeClient({"vgpu.hotmigrate.enabled": BOOL, "config.vpxd.limit": INT},
                         {"vgpu.hotmigrate.enabled": False, "config.vpxd.limit": 10})
    manager.sessions = fake_vcenter(monkeypatch, manager)
    return manager


def test_check_mode_predicts_and_sends_nothing(capsys, client):
    code, result = run_main(vcenter_settings.main, HOTMIGRATE, capsys, check_mode=True, diff=True)
    assert code == 0 and result["changed"] is True and client.updates == []
    assert result["changed_keys"] == ["vgpu.hotmigrate.enabled"]
    assert result["settings"] == {"before": {"vgpu.hotmigrate.enabled": False},
                                  "after": {"vgpu.hotmigrate.enabled": True}}
    assert result["diff"] == result["settings"]
    assert client.sessions[0].closed


def test_a_change_is_sent_typed_then_an_idempotent_rerun(capsys, client):
    code, result = run_main(vcenter_settings.main, HOTMIGRATE, capsys)
    assert code == 0 and result["changed"] is True and "diff" not in result
    assert [(option.key, option.value) for option in client.updates[0]] == [("vgpu.hotmigrate.enabled", True)]
    assert client.updates[0][0].value is True

    code, result = run_main(vcenter_settings.main, HOTMIGRATE, capsys)
    assert code == 0 and result["changed"] is False and result["changed_keys"] == [] and len(client.updates) == 1


def test_bad_values_and_unknown_keys_fail_before_anything_is_sent(capsys, client):
    code, result = run_main(vcenter_settings.main, dict(CONNECTION), capsys)
    assert code == 1 and "missing required arguments: settings" in result["msg"] and client.sessions == []

    code, result = run_main(vcenter_settings.main, dict(CONNECTION, settings={"config.vpxd.limit": "lots"}), capsys)
    assert code == 1 and "Setting config.vpxd.limit takes a whole number; 'lots'" in result["msg"]
    code, result = run_main(vcenter_settings.main, dict(CONNECTION, settings={"vgpu.hotmigrate.enable": True}), capsys)
    assert code == 1 and "vCenter has no setting vgpu.hotmigrate.enable" in result["msg"]
    assert "vgpu.hotmigrate.enabled" in result["msg"]
    assert client.updates == []


def test_allow_new_creates_a_string_setting(capsys, client):
    code, result = run_main(vcenter_settings.main, dict(CONNECTION, settings={"config.gpuops.owner": 7},
                                                        allow_new=True), capsys)
    assert code == 0 and result["changed"] is True
    assert [(option.key, option.value) for option in client.updates[0]] == [("config.gpuops.owner", "7")]
    assert result["settings"]["before"] == {"config.gpuops.owner": None}


def test_a_refused_update_fails_with_the_fault(capsys, client):

    def refuse(changedValue):
        raise ApiError("vCenter vc.test:443 answered NoPermission: Permission to perform this operation was denied.",
                       fault="NoPermission")

    client.UpdateOptions = refuse
    code, result = run_main(vcenter_settings.main, HOTMIGRATE, capsys)
    assert code == 1 and "answered NoPermission" in result["msg"] and result["fault"] == "NoPermission"
    assert client.values["vgpu.hotmigrate.enabled"] is False
