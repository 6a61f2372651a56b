# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_graphics's real main() on a fake vCenter whose hosts apply the configuration at the Xorg restart."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.modules import host_graphics
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.vcenter.test_host_graphics import (
    GPU_A,
    FakeClient,
    _config,
    _host,
    _info,
)
from ansible_collections.gpuops.vgpu.tests.unit.plugins.modules.module_runner import (
    CONNECTION,
    fake_vcenter,
    record_warnings,
    run_main,
)

SHARED_DIRECT = dict(CONNECTION, esxi_hostnames=["esxi-01"], gpu_graphics_type="sharedDirect")


def one_host(fail=None):
    client = FakeClient([])
    client.items = [_host(client.log, "esxi-01", [_info(GPU_A, "basic")], _config("shared"), fail=fail)]
    return client


def test_check_mode_predicts_and_sends_nothing(monkeypatch, capsys):
    client = one_host()
    sessions = fake_vcenter(monkeypatch, client)
    code, result = run_main(host_graphics.main, SHARED_DIRECT, capsys, check_mode=True)
    assert code == 0 and result["changed"] is True and "diff" not in result
    assert client.log == []
    assert result["hosts"][0]["xorg_restarted"] is True
    assert result["hosts"][0]["after"]["gpus"][0]["graphics_type"] == "sharedDirect"
    assert client.reads[0] == ("hosts", None, ("esxi-01",))
    assert sessions[0].params["validate_certs"] is False and sessions[0].closed


def test_a_change_then_an_idempotent_rerun(monkeypatch, capsys):
    client = one_host()
    fake_vcenter(monkeypatch, client)
    warnings = record_warnings(monkeypatch)
    code, result = run_main(host_graphics.main, SHARED_DIRECT, capsys, diff=True)
    assert code == 0 and result["changed"] is True
    assert [step[:2] for step in client.log] == [("UpdateGraphicsConfig", "esxi-01"), ("RestartService", "esxi-01")]
    assert result["hosts"][0]["after"]["gpus"][0]["graphics_type"] == "sharedDirect"
    assert result["diff"]["after"]["esxi-01"]["devices"] == [
        {"pci_id": GPU_A, "graphics_type": "sharedDirect", "vgpu_mode": None}]

    code, result = run_main(host_graphics.main, SHARED_DIRECT, capsys, diff=True)
    assert code == 0 and result["changed"] is False and result["diff"] == {"before": {}, "after": {}}
    assert len(client.log) == 2 and warnings == []


def test_bad_input_fails_before_anything_is_sent(monkeypatch, capsys):
    client = one_host()
    sessions = fake_vcenter(monkeypatch, client)
    code, result = run_main(host_graphics.main, dict(CONNECTION, gpu_graphics_type="sharedDirect"), capsys)
    assert code == 1 and "one of the following is required: cluster, esxi_hostnames" in result["msg"]
    assert sessions == []

    code, result = run_main(host_graphics.main, dict(CONNECTION, cluster="gpu-cluster", devices=[
        {"pci_id": "3b:00.0", "vgpu_mode": "mixedSize"}, {"pci_id": "0000:3B:00.0", "graphics_type": "shared"}]),
        capsys)
    assert code == 1 and result["msg"] == "PCI id 0000:3B:00.0 appears more than once in devices. Give one entry per GPU."
    assert client.log == []


def test_a_failed_update_names_the_host_and_what_was_done(monkeypatch, capsys):
    client = one_host(fail="restart")
    sessions = fake_vcenter(monkeypatch, client)
    code, result = run_main(host_graphics.main, SHARED_DIRECT, capsys)
    assert code == 1
    assert result["msg"].startswith("Host esxi-01: vCenter answered HostConfigFault: xorg did not start "
                                    "(configuration updated before that).")
    assert result["fault"] == "HostConfigFault" and result["hosts"][0]["name"] == "esxi-01"
    assert sessions[0].closed
