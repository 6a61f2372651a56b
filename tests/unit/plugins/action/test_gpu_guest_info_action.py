# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_guest_info's reuse on the controller: what a read asks the guest for, and how a partial read is kept."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.action.gpu_guest_info import merged, read_plan
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest.gpu_state import PROBES

LATER = [{"files": ["/etc/nvidia/gridd.conf", "/etc/profile.d/cuda.sh"]},
         {"files": ["/usr/bin/prometheus-node-exporter"], "services": ["prometheus-node-exporter"]}]
KEPT = {"gathered": list(PROBES), "errors": {}, "os": {"family": "Debian"},
        "files": {"/etc/nvidia/gridd.conf": {"exists": True}, "/etc/profile.d/cuda.sh": {"exists": False}},
        "services": {"prometheus-node-exporter": {"active": True}}}


def test_a_first_read_reads_every_probe_and_what_the_later_reads_of_the_play_ask_for():
    args, merge = read_plan({"gather": ["os", "driver"], "files": ["/etc/modprobe.d"]}, None, LATER)
    assert "gather" not in args and merge is False
    assert args["files"] == ["/etc/modprobe.d", "/etc/nvidia/gridd.conf", "/etc/profile.d/cuda.sh",
                             "/usr/bin/prometheus-node-exporter"]
    assert args["services"] == ["prometheus-node-exporter"]


def test_a_read_the_kept_state_covers_does_not_reach_the_guest():
    assert read_plan({"gather": ["os"], "files": ["/etc/nvidia/gridd.conf"],
                      "services": ["prometheus-node-exporter"]}, KEPT, LATER) == (None, False)
    assert read_plan({"gather": [], "files": []}, KEPT, []) == (None, False)


def test_a_read_that_asks_for_more_reads_only_what_is_missing():
    args, merge = read_plan({"gather": ["os"], "files": ["/etc/nvidia/gridd.conf", "/etc/ld.so.conf.d/cuda.conf"],
                             "services": ["gpuops-gpu-metrics.timer"], "query_format": "text"}, KEPT, LATER)
    assert merge is True
    assert args == {"gather": [], "files": ["/etc/ld.so.conf.d/cuda.conf"], "services": ["gpuops-gpu-metrics.timer"],
                    "query_format": "text"}


def test_missing_probes_are_read_in_their_order():
    kept = dict(KEPT, gathered=["os"])
    args, merge = read_plan({"gather": ["cudnn", "os", "cuda"]}, kept, [])
    assert merge is True and args["gather"] == ["cuda", "cudnn"]


def test_a_partial_read_is_added_to_the_kept_state():
    addition = {"gathered": ["cuda"], "errors": {"files": {"msg": "Permission denied"}},
                "cuda": {"toolkits": []}, "files": {"/etc/ld.so.conf.d/cuda.conf": {"exists": True}}}
    state = merged(dict(KEPT, gathered=["os", "cudnn"]), addition)
    assert state["gathered"] == ["os", "cuda", "cudnn"]
    assert state["cuda"] == {"toolkits": []} and state["os"] == {"family": "Debian"}
    assert sorted(state["files"]) == ["/etc/ld.so.conf.d/cuda.conf", "/etc/nvidia/gridd.conf", "/etc/profile.d/cuda.sh"]
    assert state["services"] == KEPT["services"]
    assert state["errors"] == {"files": {"msg": "Permission denied"}}
    # The kept state itself is left as it was.
    assert KEPT["errors"] == {} and "/etc/ld.so.conf.d/cuda.conf" not in KEPT["files"]
