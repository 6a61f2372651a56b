# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's Kubernetes checks and the fleet report's node view, on MIG state read by nvidia_mig from the lab's
passthrough nvidia-smi (lab/guests/standins/mig) and on the files k8s_gpu_sharing and container_toolkit write."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import os
import shutil
import subprocess

import pytest
import yaml

from ansible_collections.gpuops.vgpu.plugins.module_utils.mig._mig import manage
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _doctor, _doctor_facts, _fleet_report, _k8s_sharing

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
STANDIN = os.path.join(ROOT, "lab", "guests", "standins", "mig", "nvidia-smi")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "nvidia-smi")
DUMP = """version = 2
root = "/var/lib/containerd"

[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    [plugins."io.containerd.grpc.v1.cri".containerd]
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes]
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
          runtime_type = "io.containerd.runc.v2"
          [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
            BinaryName = "/usr/bin/nvidia-container-runtime"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
          runtime_type = "io.containerd.runc.v2"
"""
REQUESTED = {"mode": "mig", "mig_strategy": "single", "mig_layout": "all-1g.10gb"}
# The requested config's name: readable, then a digest of the config (_k8s_sharing.config_name).
SINGLE_7X1G = _k8s_sharing.config_name("mig-single-7x1g.10gb", {"version": "v1", "flags": {"migStrategy": "single"}})


@pytest.fixture
def h100(tmp_path, monkeypatch):
    """The passthrough H100 with seven 1g.10gb instances, carved by nvidia_mig's own logic through the stand-in."""
    shutil.copy(os.path.join(FIXTURES, "q_h100_80gb_hbm3_passthrough_ecc_on_driver590.txt"),
                str(tmp_path / "q-h100-passthrough.txt"))
    (tmp_path / "mig.json").write_text(json.dumps(
        {"gpus": [{"recording": "q-h100-passthrough.txt", "mig": {"current": False, "pending": False}}]}))
    monkeypatch.setenv("GPUOPS_LAB_RECORDINGS", str(tmp_path))
    monkeypatch.setenv("GPUOPS_LAB_MIG_STATE", str(tmp_path / "mig.json"))

    def smi(args):
        run = subprocess.run([STANDIN] + args, capture_output=True, text=True, check=False)
        return run.returncode, run.stdout, run.stderr

    manage(smi, {"layout": "all-1g.10gb", "gpu_reset": True}, False)
    return manage(smi, {}, False)["gpus"]


def spec(names):
    return "---\ncdiVersion: 0.5.0\ndevices:\n" + "".join(
        '- containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n  name: "%s"\n' % n for n in names) + \
        "kind: nvidia.com/gpu\n"


def slurp(text):
    return {"item": "node-1", "content": base64.b64encode(text.encode()).decode()}


def raw(gpus, dump=DUMP, cdi=None, config=None, requested=None):
    plan = _k8s_sharing.plan("node-1", gpus, "mig", mig_strategy="single", mig_layout="all-1g.10gb")
    cdi = spec(["0"] + ["0:%d" % i for i in range(7)] + ["all"]) if cdi is None else cdi
    config = yaml.safe_dump(plan["config"]) if config is None else config
    return {"k8s": {"nodes": ["node-1"], "requested": {"node-1": requested or REQUESTED},
                    "runtime": {"results": [{"item": "node-1", "rc": 0, "stdout": dump}]},
                    "mig": {"results": [{"item": "node-1", "gpus": gpus, "changed": False}]},
                    "cdi": {"results": [slurp(cdi)]}, "config": {"results": [slurp(config)]}}}


def findings(data):
    return dict((f["check"], f) for f in _doctor.run_checks(_doctor_facts.collect(data)) if f["layer"] == "k8s")


def test_a_node_as_the_roles_leave_it_passes(h100):
    found = findings(raw(h100))
    assert [(c, f["status"]) for c, f in sorted(found.items())] == [
        ("cdi", "PASS"), ("mig_layout", "PASS"), ("runtime", "PASS"), ("sharing", "PASS")]
    assert "advertises 7 nvidia.com/gpu" in found["sharing"]["message"]


def test_containerd_without_the_nvidia_runtime_fails(h100):
    without = DUMP.split('        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]', maxsplit=1)[0]
    found = findings(raw(h100, dump=without))
    assert found["runtime"]["status"] == "FAIL" and "container_toolkit" in found["runtime"]["remediation"]


def test_cdi_spec_without_the_mig_devices_fails(h100):
    found = findings(raw(h100, cdi=spec(["0", "all"])))
    assert found["cdi"]["status"] == "FAIL" and "0:0, 0:1" in found["cdi"]["message"]


def test_layout_other_than_requested_fails(h100):
    found = findings(raw(h100, requested=dict(REQUESTED, mig_layout="all-3g.40gb")))
    assert found["mig_layout"]["status"] == "FAIL"
    assert "holds 1g.10gb" in found["mig_layout"]["message"] and "3g.40gb, 3g.40gb is requested" in \
        found["mig_layout"]["message"]


def test_config_on_the_node_other_than_requested_fails(h100):
    found = findings(raw(h100, config="version: v1\nflags:\n  migStrategy: mixed\n"))
    assert found["sharing"]["status"] == "FAIL" and SINGLE_7X1G in found["sharing"]["message"]


def test_requested_sharing_the_gpus_cannot_do_fails_with_the_reason(h100):
    found = findings(raw(h100, requested={"mode": "mps", "replicas": 4}))
    assert found["sharing"]["status"] == "FAIL" and "has MIG enabled" in found["sharing"]["message"]


def test_unreachable_node_is_reported(h100):
    data = raw(h100)
    data["k8s"]["mig"] = {"results": [{"item": "node-1", "unreachable": True, "msg": "ssh timeout"}]}
    found = findings(data)
    assert found["gpus"]["status"] == "FAIL" and "unreachable: ssh timeout" in found["gpus"]["message"]


def test_fleet_report_shows_mode_and_advertised_count(h100):
    report = _fleet_report.build({"hosts": []}, {"facts": _doctor_facts.collect(raw(h100))})
    assert report["k8s_nodes"] == [{"name": "node-1", "mode": "mig", "config_name": SINGLE_7X1G,
                                    "gpu_count": 7, "advertised": {"nvidia.com/gpu": 7}, "error": None}]
    html = _fleet_report.render_html(report)
    assert '<tr data-node="node-1"><td>node-1</td><td>mig</td><td>%s</td><td>7</td>' % SINGLE_7X1G in html
