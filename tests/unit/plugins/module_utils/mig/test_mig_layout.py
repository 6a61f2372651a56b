# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MIG layout rules: slice counts and placements per GPU (NVIDIA MIG user guide, supported profiles and
``nvidia-smi mig -lgipp``), named layouts, and the smallest change from one layout to another."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.tests.unit.plugins.nvidia_smi_fixtures import read
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.mig import _layout, _mig
from ansible_collections.gpuops.vgpu.plugins.module_utils.mig._profiles import mig_model
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import parse_mig

H100 = mig_model("NVIDIA H100 80GB HBM3")
A100_40 = mig_model("NVIDIA A100-PCIE-40GB")


@pytest.mark.parametrize("name, model", [
    ("NVIDIA H100 80GB HBM3", "H100 80GB"), ("NVIDIA A100-SXM4-80GB", "A100 80GB"),
    ("NVIDIA A100-PCIE-40GB", "A100 40GB"), ("NVIDIA A30", "A30 24GB")])
def test_mig_models(name, model):
    assert mig_model(name)["model"] == model


@pytest.mark.parametrize("name", ["Tesla T4", "NVIDIA L40S", "Tesla P40", "NVIDIA A10", "GRID A100-4C"])
def test_gpus_without_mig_of_their_own(name):
    assert mig_model(name) is None


def test_a100_40gb_catalog_matches_the_recorded_lgip():
    recorded = parse_mig(read("mig_lgip_a100_pcie_40gb_esxi_driver510.txt"))["gpu_instance_profiles"]
    for row in recorded:
        profile = A100_40["profiles"][row["name"]]
        assert (profile["profile_id"], profile["max_instances"], profile["memory_gib"], profile["sm"]) == (
            row["profile_id"], row["instances_total"], row["memory_gib"], row["sm"])
        # The JPEG and OFA columns: only 1g.5gb+me and the whole GPU (7g.40gb) have them.
        assert (profile["jpeg"], profile["ofa"]) == (row["jpeg"], row["ofa"]), row["name"]
    full = [row for row in recorded if row["name"] == "7g.40gb"][0]
    assert A100_40["media_engines"] == {"jpeg": full["jpeg"], "ofa": full["ofa"]} == {"jpeg": 1, "ofa": 1}


A30 = mig_model("NVIDIA A30")


@pytest.mark.parametrize("model", ["NVIDIA A100-PCIE-40GB", "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3",
                                   "NVIDIA A30"])
def test_one_set_of_media_engines_per_gpu_taken_by_a_me_instance(model):
    """MIG user guide, "Supported MIG Profiles": the whole GPU has one OFA; a +me profile takes it (1 OFA), the
    other profiles smaller than the whole GPU have none."""
    gpu = mig_model(model)
    assert gpu["media_engines"]["ofa"] == 1
    for name, profile in gpu["profiles"].items():
        whole = profile["compute_slices"] == gpu["compute_slices"]
        assert profile["ofa"] == (1 if name.endswith("+me") or whole else 0), name


@pytest.mark.parametrize("names", [["1g.6gb+me", "2g.12gb+me"], ["2g.12gb+me", "1g.6gb+me", "1g.6gb"]])
def test_a30_holds_one_me_instance_only(names):
    """The A30 offers 1g.6gb+me and 2g.12gb+me (one instance each), but has one JPEG decoder and one OFA: both +me
    instances on one A30 cannot exist, though each profile's own count and the slices allow it."""
    with pytest.raises(InputError) as err:
        _layout.check(_layout.resolve(names, A30, "GPU 0 (NVIDIA A30)"), A30, "GPU 0 (NVIDIA A30)")
    assert ("MIG layout on GPU 0 (NVIDIA A30) asks for 2 instances with media extensions (2g.12gb+me, 1g.6gb+me); "
            "A30 24GB has one set of media engines (1 OFA), so at most one +me instance can exist on it."
            ) == err.value.message
    assert "1g.6gb, 2g.12gb" in err.value.hint


@pytest.mark.parametrize("names", [["2g.12gb+me", "1g.6gb", "1g.6gb"], ["1g.6gb+me", "1g.6gb", "2g.12gb"],
                                   ["4g.24gb"], ["2g.12gb", "2g.12gb"]])
def test_a30_layouts_with_at_most_one_me_instance_fit(names):
    assert len(_layout.check(names, A30, "GPU 0")) == len(names)


def test_nvidia_mig_refuses_two_me_instances_on_an_a30_before_any_change():
    a30 = {"index": 0, "name": "NVIDIA A30", "virtualization": "None", "mig_current": True, "mig_pending": True,
           "instances": []}
    with pytest.raises(InputError, match="at most one \\+me instance"):
        _mig.plan([a30], None, None, ["1g.6gb+me", "2g.12gb+me"])


@pytest.mark.parametrize("spec, expected", [
    ("all-1g.10gb", ["1g.10gb"] * 7),
    ("all-1g.20gb", ["1g.20gb"] * 4),
    ("all-2g.20gb", ["2g.20gb"] * 3),
    ("all-3g.40gb", ["3g.40gb"] * 2),
    ("all-7g.80gb", ["7g.80gb"]),
    ("all-balanced", ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]),
    (["1g.10gb", "4g.40gb", "9"], ["4g.40gb", "3g.40gb", "1g.10gb"]),
])
def test_named_and_listed_layouts(spec, expected):
    assert _layout.resolve(spec, H100, "GPU 0") == expected


def test_a30_balanced_uses_its_own_profiles():
    a30 = mig_model("NVIDIA A30")
    assert _layout.resolve("all-balanced", a30, "GPU 0") == ["2g.12gb", "1g.6gb", "1g.6gb"]
    assert _layout.resolve("all-1g.6gb", a30, "GPU 0") == ["1g.6gb"] * 4


@pytest.mark.parametrize("names", [
    ["4g.40gb", "3g.40gb"], ["3g.40gb", "3g.40gb"], ["4g.40gb", "2g.20gb", "1g.10gb"],
    ["2g.20gb"] * 3 + ["1g.10gb"], ["1g.20gb"] * 3 + ["1g.10gb"], ["7g.80gb"], ["1g.10gb+me"] + ["1g.10gb"] * 6])
def test_layouts_that_fit_get_a_placement_each(names):
    placed = _layout.check(names, H100, "GPU 0")
    slots = [s for name, start in placed for s in range(start, start + H100["profiles"][name]["placement_size"])]
    assert len(slots) == len(set(slots)) and max(slots) < 8
    for name, start in placed:
        assert start in H100["profiles"][name]["placements"]


@pytest.mark.parametrize("names, message", [
    (["1g.10gb"] * 8, "asks for 8 x 1g.10gb; H100 80GB holds at most 7"),
    (["4g.40gb", "4g.40gb"], "holds at most 1"),
    (["1g.10gb+me", "1g.10gb+me"], "holds at most 1"),
    (["4g.40gb", "2g.20gb", "2g.20gb"], "8 compute slices, H100 80GB has 7"),
    (["7g.80gb", "1g.10gb"], "8 compute slices"),
    # 3+3+1 compute slices fit, but the two 3g take all 8 memory slices (placements {0,4}:4).
    (["3g.40gb", "3g.40gb", "1g.10gb"], "no placement of these instances fits its 8 memory slices"),
    # 7 compute slices, but 4 + 2 + 2 + 1 memory slices: 4g sits at 0:4, the two 1g.20gb take 4:2 and 6:2.
    (["4g.40gb", "1g.20gb", "1g.20gb", "1g.10gb"], "no placement"),
    (["1g.20gb"] * 4 + ["1g.10gb"], "no placement"),
])
def test_layouts_that_overfill_are_refused(names, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _layout.check(names, H100, "GPU 0")


def test_profile_of_another_gpu_is_refused_with_what_is_offered():
    with pytest.raises(InputError) as err:
        _layout.resolve(["1g.5gb"], H100, "GPU 0 (NVIDIA H100 80GB HBM3)")
    assert "'1g.5gb' is not offered" in err.value.message and "1g.10gb" in err.value.hint


def test_unknown_named_layout_is_refused():
    with pytest.raises(InputError, match="'all-2g.10gb' is not a layout"):
        _layout.resolve("all-2g.10gb", H100, "GPU 0")


def gi(name, gid, start, size, cis=1):
    return {"name": name, "instance_id": gid, "placement_start": start, "placement_size": size,
            "compute": [{"name": name}] * cis}


def test_plan_keeps_what_matches_and_fits():
    current = [gi("4g.40gb", 1, 0, 4), gi("3g.40gb", 2, 4, 4)]
    plan = _layout.plan(current, ["3g.40gb", "2g.20gb", "1g.10gb"], H100)
    assert [g["instance_id"] for g in plan["destroy"]] == [1]
    assert plan["placements"] == [("2g.20gb", 0), ("1g.10gb", 2)]


def test_plan_recarves_everything_when_kept_instances_block_the_rest():
    # Keeping the 2g at 2:2 would block 4g.40gb, whose only placement is 0:4.
    current = [gi("2g.20gb", 5, 2, 2), gi("1g.10gb", 2, 4, 1)]
    plan = _layout.plan(current, ["4g.40gb", "2g.20gb"], H100)
    assert [g["instance_id"] for g in plan["destroy"]] == [2, 5]
    assert plan["create"] == ["4g.40gb", "2g.20gb"]


def test_plan_removes_what_is_not_asked_for_and_keeps_the_rest():
    current = [gi("1g.10gb", 5, 3, 1), gi("3g.40gb", 2, 4, 4)]
    plan = _layout.plan(current, ["3g.40gb", "3g.40gb"], H100)
    assert [g["instance_id"] for g in plan["destroy"]] == [5] and plan["create"] == ["3g.40gb"]


def test_plan_replaces_instances_without_one_full_compute_instance():
    plan = _layout.plan([gi("3g.40gb", 1, 0, 4, cis=0), gi("3g.40gb", 2, 4, 4)], ["3g.40gb", "3g.40gb"], H100)
    assert [g["instance_id"] for g in plan["destroy"]] == [1] and plan["create"] == ["3g.40gb"]


def test_plan_of_the_same_layout_is_empty():
    current = [gi("3g.40gb", 1, 0, 4), gi("3g.40gb", 2, 4, 4)]
    assert _layout.plan(current, ["3g.40gb", "3g.40gb"], H100) == {"destroy": [], "create": [], "placements": []}


def test_balanced_needs_the_3g_on_the_right_half():
    # First fit would put 3g at 0:4, 2g at 4:2, 1g at 6:1 and leave slot 7, where no 1g may start.
    plan = _layout.plan([], _layout.resolve("all-balanced", H100, "GPU 0"), H100)
    assert plan["placements"] == [("3g.40gb", 4), ("2g.20gb", 0), ("1g.10gb", 2), ("1g.10gb", 3)]
