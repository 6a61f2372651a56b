# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vlcm_depot's real main() against a fake vCenter: import, removal, check mode, the bundle read on the controller."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest

from ansible_collections.gpuops.vgpu.plugins.modules import vlcm_depot
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.vlcm.vlcm_fake import (
    DAEMON,
    DAEMON_VERSION,
    DRIVER,
    DRIVER_VERSION,
    install,
    run_module,
)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "lab", "tools"))
import make_bundle  # noqa: E402  pylint: disable=wrong-import-position

URL = "https://depot.lab.local/nvidia/"
DRIVER_ZIP = URL + "NVD-VGPU-800.zip"
IMPORT = ("POST", "/api/esx/settings/depots/offline?vmw-task=true")


@pytest.fixture
def vcenter(monkeypatch):
    fake = install(monkeypatch)
    fake.bundles = {DRIVER_ZIP: [(DRIVER, DRIVER_VERSION)], URL + "copy.zip": [(DRIVER, DRIVER_VERSION)],
                    URL + "daemon.zip": [(DAEMON, DAEMON_VERSION)]}
    return fake


def run(args, capsys, **kwargs):
    return run_module(vlcm_depot, args, capsys, **kwargs)


def test_imports_once_and_returns_the_components(vcenter, capsys):
    failed, result = run({"location": DRIVER_ZIP, "description": "vGPU host driver"}, capsys)
    assert not failed and result["changed"] is True
    assert result["depot"] == {"id": "offline-depot-1", "location": DRIVER_ZIP, "description": "vGPU host driver",
                               "owner": "administrator@vsphere.local"}
    assert [(c["name"], c["version"], c["vendor"]) for c in result["components"]] == [
        (DRIVER, DRIVER_VERSION, "NVIDIA")]
    assert result["progress"] and "Importing the offline bundle %s" % DRIVER_ZIP in result["progress"][0]
    assert "diff" not in result
    assert vcenter.writes() == [IMPORT] and vcenter.closed
    assert vcenter.built_with["hostname"] == "vc.lab.local" and vcenter.built_with["validate_certs"] is False

    vcenter.calls = []
    failed, again = run({"location": DRIVER_ZIP}, capsys, diff=True)
    assert not failed and again["changed"] is False
    assert again["depot"]["id"] == "offline-depot-1" and again["components"] == result["components"]
    assert again["diff"] == {"before": {"location": DRIVER_ZIP, "present": True},
                             "after": {"location": DRIVER_ZIP, "present": True}}
    assert "progress" not in again
    assert len(vcenter.calls) == 3 and vcenter.writes() == []


def test_check_mode_reads_the_bundle_and_imports_nothing(vcenter, capsys, tmp_path):
    src = make_bundle.nvidia_host_driver(str(tmp_path), driver="525.105.14")
    failed, result = run({"location": DRIVER_ZIP, "src": src}, capsys, check_mode=True, diff=True)
    assert not failed and result["changed"] is True
    assert result["depot"] is None
    assert [(c["name"], c["version"]) for c in result["components"]] == [(DRIVER, DRIVER_VERSION)]
    assert result["bundle"]["file_name"] == os.path.basename(src)
    assert result["diff"]["before"]["present"] is False and result["diff"]["after"]["present"] is True
    assert vcenter.writes() == [] and vcenter.depots == {}


def test_a_bundle_that_differs_from_the_depot_is_warned_about(vcenter, capsys, tmp_path):
    src = make_bundle.nvidia_host_driver(str(tmp_path), driver="535.54.06")
    failed, result = run({"location": DRIVER_ZIP, "src": src}, capsys)
    assert not failed and result["changed"] is True
    [warning] = vcenter.warnings
    assert warning.startswith("The bundle at src (%s) and the depot vCenter imported from %s differ" % (src, DRIVER_ZIP))
    assert "535.54.06" in warning and DRIVER_VERSION in warning


def test_content_already_imported_elsewhere_is_no_change(vcenter, capsys):
    assert run({"location": DRIVER_ZIP}, capsys)[1]["changed"] is True
    failed, result = run({"location": URL + "copy.zip"}, capsys)
    assert not failed and result["changed"] is False
    assert result["depot"]["id"] == "offline-depot-1" and result["depot"]["location"] == DRIVER_ZIP
    assert vcenter.warnings == ["vLCM already holds the content of %s, imported as depot offline-depot-1 from %s; "
                                "nothing was imported." % (URL + "copy.zip", DRIVER_ZIP)]
    assert sorted(vcenter.depots) == ["offline-depot-1"]


def test_absent_removes_the_depot_once(vcenter, capsys):
    run({"location": DRIVER_ZIP}, capsys)
    run({"location": URL + "daemon.zip"}, capsys)
    vcenter.calls = []
    failed, result = run({"location": DRIVER_ZIP, "state": "absent"}, capsys, check_mode=True)
    assert not failed and result["changed"] is True and vcenter.writes() == []
    failed, result = run({"location": DRIVER_ZIP, "state": "absent"}, capsys)
    assert not failed and result["changed"] is True
    assert result["depot"] is None and result["components"] == []
    assert [d["location"] for d in vcenter.depots.values()] == [URL + "daemon.zip"]
    vcenter.calls = []
    failed, result = run({"location": DRIVER_ZIP, "state": "absent"}, capsys)
    assert not failed and result["changed"] is False and vcenter.writes() == []


def test_a_missing_src_fails_before_vcenter_is_asked(vcenter, capsys, tmp_path):
    failed, result = run({"location": DRIVER_ZIP, "src": str(tmp_path / "nope.zip")}, capsys)
    assert failed
    assert result["msg"].startswith("Offline bundle %s does not exist on the controller." % (tmp_path / "nope.zip"))
    assert vcenter.built_with is None and vcenter.calls == []


def test_a_state_outside_the_choices_fails_before_connecting(vcenter, capsys):
    failed, result = run({"location": DRIVER_ZIP, "state": "gone"}, capsys)
    assert failed and "state" in result["msg"] and "gone" in result["msg"]
    assert vcenter.built_with is None


def test_a_bundle_vcenter_cannot_download_fails_and_leaves_no_depot(vcenter, capsys):
    failed, result = run({"location": URL + "missing.zip"}, capsys)
    assert failed
    assert result["msg"] == ("Importing the offline bundle %smissing.zip failed: Cannot download %smissing.zip."
                             % (URL, URL))
    assert result["error_type"] == "ERROR" and vcenter.depots == {} and vcenter.closed
