# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia_mig's real main() against the lab's passthrough nvidia-smi (lab/guests/standins/mig), whose MIG state
lives in a temporary folder: enable, layout, change, re-run, check mode, diff and the refusals."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil

import pytest

from ansible_collections.gpuops.vgpu.plugins.modules import nvidia_mig
from ansible_collections.gpuops.vgpu.tests.unit.plugins.modules.module_runner import run_main
from ansible_collections.gpuops.vgpu.tests.unit.plugins.nvidia_smi_fixtures import fixture_path

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
STANDIN = os.path.join(ROOT, "lab", "guests", "standins", "mig", "nvidia-smi")


@pytest.fixture
def node(tmp_path, monkeypatch):
    """A VM with a passthrough H100 and an L40S, MIG off; returns a reader of the stand-in's state."""
    shutil.copy(fixture_path("q_h100_80gb_hbm3_passthrough_ecc_on_driver590.txt"), str(tmp_path / "q-h100.txt"))
    shutil.copy(fixture_path("q_l40s_ada_passthrough_driver595.txt"), str(tmp_path / "q-l40s.txt"))
    state = tmp_path / "mig.json"
    state.write_text(json.dumps({"gpus": [{"recording": "q-h100.txt", "mig": {"current": False, "pending": False}},
                                          {"recording": "q-l40s.txt", "mig": None}]}))
    monkeypatch.setenv("GPUOPS_LAB_RECORDINGS", str(tmp_path))
    monkeypatch.setenv("GPUOPS_LAB_MIG_STATE", str(state))
    return lambda: json.loads(state.read_text())["gpus"]


def mig(capsys, check_mode=False, **args):
    return run_main(nvidia_mig.main, dict(args, path=STANDIN), capsys, check_mode=check_mode, diff=True)


def profiles(gpus):
    return sorted((gi["profile"], gi["start"]) for gi in gpus[0].get("instances", []))


def test_enable_and_carve_then_rerun_changes_nothing(node, capsys):
    code, result = mig(capsys, gpus=[0], layout="all-1g.10gb", gpu_reset=True)
    assert code == 0 and result["changed"] is True
    assert result["commands"] == ["nvidia-smi -i 0 -mig 1", "nvidia-smi --gpu-reset -i 0",
                                  "nvidia-smi mig -i 0 -cgi 19:0,19:1,19:2,19:3,19:4,19:5,19:6 -C"]
    assert node()[0]["mig"] == {"current": True, "pending": True}
    assert profiles(node()) == [("1g.10gb", s) for s in range(7)]
    assert result["diff"] == {"before": {"0": {"mig_mode_pending": False, "layout": []}},
                              "after": {"0": {"mig_mode_pending": True, "layout": ["1g.10gb"] * 7}}}
    code, again = mig(capsys, gpus=[0], layout="all-1g.10gb", gpu_reset=True)
    assert code == 0 and again["changed"] is False and again["commands"] == []


def test_check_mode_predicts_and_changes_nothing(node, capsys):
    mig(capsys, gpus=[0], layout=["3g.40gb", "3g.40gb"], gpu_reset=True)
    before = node()
    code, result = mig(capsys, check_mode=True, gpus=[0], layout=["4g.40gb", "2g.20gb", "1g.10gb"])
    assert code == 0 and result["changed"] is True and result["commands"] == []
    assert result["gpus"][0]["layout"] == ["1g.10gb", "2g.20gb", "4g.40gb"]
    assert node() == before


def test_pending_mode_is_reported_and_no_layout_is_carved(node, capsys):
    code, result = mig(capsys, gpus=[0], layout="all-3g.40gb")
    assert code == 0 and result["changed"] is True and result["reset_required"] is True
    assert node()[0]["mig"] == {"current": False, "pending": True} and profiles(node()) == []


@pytest.mark.parametrize("args, message", [
    (dict(gpus=[1], layout="all-1g.10gb"), "GPU 1 (NVIDIA L40S) has no MIG mode"),
    (dict(gpus=[0], layout=["7g.80gb", "1g.10gb"]), "8 compute slices, H100 80GB has 7"),
    (dict(gpus=[0], layout=["3g.40gb", "3g.40gb", "1g.10gb"]), "no placement of these instances fits"),
    (dict(gpus=[0], layout=["1g.5gb"]), "'1g.5gb' is not offered by GPU 0 (NVIDIA H100 80GB HBM3)"),
    (dict(gpus=[2], mig_mode="enabled"), "GPU index 2 is not on this node"),
])
def test_refusals_change_nothing(node, capsys, args, message):
    before = node()
    code, result = mig(capsys, **args)
    assert code == 1 and message in result["msg"]
    assert node() == before


def test_disable_removes_the_instances_first(node, capsys):
    mig(capsys, gpus=[0], layout="all-balanced", gpu_reset=True)
    code, result = mig(capsys, gpus=[0], mig_mode="disabled", gpu_reset=True)
    assert code == 0 and result["commands"][:2] == ["nvidia-smi mig -i 0 -gi 1,2,3,4 -dci",
                                                    "nvidia-smi mig -i 0 -gi 1,2,3,4 -dgi"]
    assert node()[0]["mig"] == {"current": False, "pending": False} and profiles(node()) == []
