# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The grid_license role's plan and report: the first broken rule, the steps that differ, the result."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import datetime
import os

import pytest

from ansible_collections.gpuops.vgpu.plugins.filter import guest_plans
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _grid_license_plan as license_plan

TOKEN_DIR = "/etc/nvidia/ClientConfigToken"
TOKEN = TOKEN_DIR + "/site.tok"
CONF = "/etc/nvidia/gridd.conf"
ROOT_OWNED = {"exists": True, "owner": "root", "group": "root"}
GPU = {"pci_bus_id": "00000000:02:00.0", "name": "GRID A100-4C", "license_product": "NVIDIA Virtual Compute Server",
       "license_status": "Licensed (Expiry: 2026-12-26 0:0:0 GMT)", "licensed": True,
       "license_expiry": "2026-12-26T00:00:00Z", "uuid": "GPU-1"}
GUEST = {
    "files": {TOKEN: dict(ROOT_OWNED, type="file", mode="0744", checksum="abc"),
              TOKEN_DIR: dict(ROOT_OWNED, type="directory", mode="0755"),
              CONF: dict(ROOT_OWNED, type="file", mode="0644"), CONF + ".template": {"exists": True}},
    "license": {"gridd_conf": {"path": CONF, "settings": {"FeatureType": "1"}}, "token_dir": {"path": TOKEN_DIR},
                "tokens": [{"name": "site.tok", "path": TOKEN}], "service": {"active": True, "enabled": True},
                "licensed": True, "clock_synchronized": True},
    "nvidia_smi": {"present": True, "gpus": [GPU]},
    "errors": {},
}
PARAMS = {"grid_license_token_src": "", "grid_license_token": True, "grid_license_token_dir": TOKEN_DIR,
          "grid_license_feature_type": 1, "grid_license_gridd_conf": CONF,
          "grid_license_gridd_template": CONF + ".template", "grid_license_service": "nvidia-gridd",
          "grid_license_remove_old_tokens": True, "grid_license_wait": True, "grid_license_check_clock": True,
          "grid_license_expiry_warning_days": 14, "token_name": "site.tok", "token_dir": TOKEN_DIR,
          "token_file": TOKEN, "options": {}, "token_checksum": "abc"}
NOW = datetime.datetime(2026, 11, 26, 0, 0, 0)


def plan(guest=None, check_mode=False, **params):
    return license_plan.grid_license_plan(guest or GUEST, dict(PARAMS, **params), check_mode, "vm1", now=NOW)


def test_a_licensed_converged_guest_needs_no_step_and_reports_as_read():
    decided = plan()
    assert decided["error"] == "" and not decided["changes"] and not decided["wait"]
    assert decided["result"] == {
        "licensed": True, "gpus": [dict((k, v) for k, v in GPU.items() if k != "uuid")],
        "product": "NVIDIA Virtual Compute Server", "expiry": "2026-12-26T00:00:00Z", "days_left": 30.0,
        "feature_type": 1, "token_file": TOKEN, "restarted": False, "unapplied": [], "clock_synchronized": True,
        "warnings": [], "changed": False}


def test_a_lost_token_is_the_only_step():
    guest = copy.deepcopy(GUEST)
    guest["files"][TOKEN] = {"exists": False}
    guest["license"]["tokens"] = []
    decided = plan(guest)
    steps = [name for name in ("create_conf", "feature_type", "settings", "token_dir", "token", "find_tokens",
                               "old_tokens", "start") if decided[name]]
    assert steps == ["token"] and decided["changes"] and decided["wait"]
    assert not plan(guest, check_mode=True)["wait"]


def test_settings_old_tokens_service_and_another_token_dir():
    guest = copy.deepcopy(GUEST)
    guest["license"]["tokens"].append({"name": "old.tok", "path": TOKEN_DIR + "/old.tok"})
    guest["license"]["service"] = {"active": False, "enabled": True}
    decided = plan(guest, grid_license_feature_type=2, options={"ServerPort": 7070, "FeatureType": 1})
    assert decided["feature_type"] and decided["settings"] == {"ServerPort": 7070}
    assert decided["old_tokens"] == [TOKEN_DIR + "/old.tok"] and decided["start"]
    elsewhere = plan(token_dir="/opt/tokens", token_file="/opt/tokens/site.tok")
    assert elsewhere["find_tokens"] and elsewhere["old_tokens"] == [] and elsewhere["token_dir"]
    assert plan(grid_license_service="other-gridd")["start"]


@pytest.mark.parametrize("changed, unapplied", [
    ((), []),
    ((TOKEN,), [TOKEN]),  # the token placed, the run stopped before the restart
    ((TOKEN_DIR,), [TOKEN_DIR]),  # older tokens removed, the same
    ((CONF, TOKEN), [TOKEN, CONF]),
])
def test_files_changed_since_nvidia_gridd_started_restart_it(changed, unapplied):
    guest = copy.deepcopy(GUEST)
    guest["license"]["service"]["active_since"] = 1000.0
    for path in (TOKEN, TOKEN_DIR, CONF):
        guest["files"][path].update(path=path, mtime=1000.5 if path in changed else 999.0)
    decided = plan(guest)
    assert decided["unapplied"] == unapplied
    assert decided["changes"] == bool(unapplied) and decided["wait"] == bool(unapplied)
    if unapplied:
        params = dict(PARAMS, unapplied=unapplied)
        assert license_plan.license_report([GPU], guest["license"], params, "vm1", now=NOW)["warnings"][-1] == (
            "nvidia-gridd on vm1 had been running since before %s changed (a run stopped before restarting it): it "
            "is to be restarted." % ", ".join(unapplied))
        report = license_plan.license_report([GPU], guest["license"], params, "vm1", restarted=True, now=NOW)
        assert report["unapplied"] == unapplied and report["warnings"][-1].endswith(": restarted it.")
    # Not running, or no start time known: nothing to compare with (a stopped service is started anyway).
    for service in ({"active": False, "enabled": True, "active_since": 1000.0}, {"active": True, "enabled": True}):
        guest["license"]["service"] = service
        assert plan(guest)["unapplied"] == []


def test_a_hand_placed_token_with_the_same_content_is_kept_under_its_name_and_given_its_mode():
    by_hand = TOKEN_DIR + "/client_configuration_token_05-26-2022-00-08-28.tok"
    guest = copy.deepcopy(GUEST)
    del guest["files"][TOKEN]
    guest["license"]["tokens"] = [dict(ROOT_OWNED, name=os.path.basename(by_hand), path=by_hand, mode="0644",
                                       checksum="abc", size=3)]
    decided = plan(guest)
    assert (decided["token_name"], decided["token_file"]) == (os.path.basename(by_hand), by_hand)
    assert not decided["token"] and decided["token_mode"] and decided["old_tokens"] == []
    assert decided["changes"] and not decided["wait"]
    assert decided["result"]["token_file"] == by_hand
    guest["license"]["tokens"][0]["mode"] = "0744"
    assert not plan(guest)["changes"] and not plan(guest)["wait"]
    guest["license"]["tokens"][0]["owner"] = "admin"
    assert plan(guest)["token_mode"] and not plan(guest)["token"] and not plan(guest)["wait"]
    guest["license"]["tokens"][0]["owner"] = "root"
    # Another content, or a file name asked for, is the token asked for: placed, the hand-placed one removed.
    for other in (plan(guest, token_checksum="def"), plan(guest, token_name_given=True)):
        assert other["token_file"] == TOKEN and other["token"] and other["old_tokens"] == [by_hand]
        assert not other["token_mode"]


def test_a_gridd_conf_that_names_another_token_directory_is_pointed_at_the_token():
    guest = copy.deepcopy(GUEST)
    guest["license"]["gridd_conf"]["settings"]["ClientConfigTokenPath"] = "/opt/nvidia/tokens/"
    decided = plan(guest)
    assert decided["settings"] == {"ClientConfigTokenPath": TOKEN_DIR + "/"}
    guest["license"]["gridd_conf"]["settings"]["ClientConfigTokenPath"] = TOKEN_DIR + "/"
    assert plan(guest)["settings"] == {}


@pytest.mark.parametrize("params, errors, message", [
    ({"grid_license_token": False}, {}, "No client configuration token given: set grid_license_token_src"),
    ({"grid_license_token_src": "/x/site.tok"}, {}, "Both grid_license_token_src and grid_license_token are set"),
    ({"token_name": "site.txt"}, {}, "'site.txt' is not one: set grid_license_token_filename."),
    ({}, {"license": {"msg": "gridd.conf unreadable"}}, "Could not read the license state of vm1: gridd.conf"),
    ({"grid_license_gridd_conf": "/nope", "grid_license_gridd_template": "/nope.template"}, {},
     "Neither /nope nor /nope.template exists on vm1: install the GRID guest driver first"),
])
def test_the_first_broken_rule(params, errors, message):
    assert message in plan(dict(GUEST, errors=errors), **params)["error"]


def test_warnings_for_the_clock_and_the_expiry():
    state = dict(GUEST["license"], clock_synchronized=None)
    soon = dict(GPU, license_expiry="2026-11-30T00:00:00Z")
    report = license_plan.license_report([soon], state, PARAMS, "vm1", now=NOW)
    assert report["days_left"] == 4.0
    assert report["warnings"] == [
        "The clock of vm1 is not synchronised (timedatectl: no answer): licenses are time-signed, so a drifting clock "
        "loses the license. Enable NTP (chrony or systemd-timesyncd).",
        "The license of vm1 expires in 4.0 days: check that the guest renews its lease from the license server."]
    gone = license_plan.license_report([dict(GPU, license_expiry="2026-11-24T12:00:00Z")], GUEST["license"], PARAMS,
                                       "vm1", now=NOW)
    assert gone["warnings"] == ["The license of vm1 expired 1.5 days ago by the controller clock although the guest "
                                "reports it Licensed: check the guest clock."]
    assert license_plan.license_report([], state, dict(PARAMS, grid_license_check_clock=False), "vm1")["warnings"] == []


def test_the_report_of_unlicensed_gpus_and_the_filters():
    report = guest_plans.grid_license_report([dict(GPU, licensed=False, license_expiry=None)], GUEST["license"],
                                             PARAMS, "vm1", restarted=True, changed=True)
    assert (report["licensed"], report["expiry"], report["days_left"], report["restarted"], report["changed"]) == (
        False, None, None, True, True)
    assert guest_plans.grid_license_plan(GUEST, PARAMS, hostname="vm1")["error"] == ""


LATER = dict(GPU, pci_bus_id="00000000:03:00.0", license_expiry="2027-01-31T00:00:00Z")
UNLICENSED = dict(GPU, pci_bus_id="00000000:04:00.0", licensed=False, license_product=None, license_expiry=None,
                  license_status="Unlicensed (Restricted)")


@pytest.mark.parametrize("smi, licensed, product, expiry", [
    ({"present": True, "gpus": [LATER, GPU]}, True, "NVIDIA Virtual Compute Server", "2026-12-26T00:00:00Z"),
    ({"present": True, "gpus": [GPU, UNLICENSED]}, False, "NVIDIA Virtual Compute Server", "2026-12-26T00:00:00Z"),
    ({"present": True, "gpus": [dict(GPU, licensed=None)]}, False, "NVIDIA Virtual Compute Server",
     "2026-12-26T00:00:00Z"),
    ({"present": True, "gpus": []}, False, None, None),
    ({"present": False, "kind": "missing"}, None, None, None),
], ids=["two-licensed", "one-unlicensed", "status-unread", "no-gpu", "no-nvidia-smi"])
def test_one_license_rule_for_the_guest_read_the_wait_and_the_report(smi, licensed, product, expiry):
    """gpu_guest_info's license facts, the grid_license_state filter the role waits with, and the role's report
    agree on what licensed means (the report has no 'nvidia-smi did not answer': it is then given no GPU)."""
    state = guest_plans.grid_license_state(smi)
    assert (state["licensed"], state["product"], state["expiry"]) == (licensed, product, expiry)
    assert state["statuses"] == [gpu["license_status"] for gpu in smi.get("gpus") or []]
    report = guest_plans.grid_license_report(smi.get("gpus") or [], GUEST["license"], PARAMS, "vm1")
    assert (report["licensed"], report["product"], report["expiry"]) == (bool(licensed), product, expiry)


def test_the_role_restates_no_license_rule():
    """The role asks the filters whether a guest is licensed; it does not count licensed GPUs in Jinja."""
    roles = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "roles")
    for base, _dirs, files in os.walk(roles):
        for name in files:
            if name.endswith(".yml"):
                with open(os.path.join(base, name)) as handle:
                    text = handle.read()
                assert "rejectattr('licensed')" not in text and 'rejectattr("licensed")' not in text, name
                assert "selectattr('licensed')" not in text and 'selectattr("licensed")' not in text, name
