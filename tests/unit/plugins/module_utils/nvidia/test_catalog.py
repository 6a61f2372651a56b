# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vGPU catalog against NVIDIA's published tables (typed in here by hand) and against its own rules."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))

# NVIDIA vGPU user guide, virtual GPU types: time-sliced profiles and their maximum per GPU.
PUBLISHED_PROFILES = {
    "P40": {
        "24q": 1, "24a": 1, "24c": 1, "12q": 2, "12a": 2, "12c": 2, "8q": 3, "8a": 3, "8c": 3,
        "6q": 4, "6a": 4, "6c": 4, "4q": 6, "4a": 6, "4c": 6, "3q": 8, "3a": 8,
        "2q": 12, "2a": 12, "2b": 12, "2b4": 12, "1q": 24, "1a": 24, "1b": 24, "1b4": 24,
    },
    "P4": {
        "8q": 1, "8a": 1, "8c": 1, "4q": 2, "4a": 2, "4c": 2,
        "2q": 4, "2a": 4, "2b": 4, "2b4": 4, "1q": 8, "1a": 8, "1b": 8, "1b4": 8,
    },
    "T4": {
        "16q": 1, "16a": 1, "16c": 1, "8q": 2, "8a": 2, "8c": 2, "4q": 4, "4a": 4, "4c": 4,
        "2q": 8, "2a": 8, "2b": 8, "2b4": 8, "1q": 16, "1a": 16, "1b": 16, "1b4": 16,
    },
}

# Model facts: nvidia-smi name, PCI device id, framebuffer per GPU, architecture, MIG, last vGPU release.
MODEL_FACTS = {
    "P4": ("Tesla P4", "0x1bb3", 8192, "pascal", False, "16"),
    "P40": ("Tesla P40", "0x1b38", 24576, "pascal", False, "16"),
    "T4": ("Tesla T4", "0x1eb8", 16384, "turing", False, None),
    "V100-16": ("Tesla V100-PCIE-16GB", "0x1db4", 16384, "volta", False, "19"),
    "V100-32": ("Tesla V100-PCIE-32GB", "0x1db6", 32768, "volta", False, "19"),
    "A10": ("NVIDIA A10", "0x2236", 24576, "ampere", False, None),
    "A16": ("NVIDIA A16", "0x25b6", 16384, "ampere", False, None),
    "A40": ("NVIDIA A40", "0x2235", 49152, "ampere", False, None),
    "A100-40": ("NVIDIA A100-PCIE-40GB", "0x20f1", 40960, "ampere", True, None),
    "A100-80": ("NVIDIA A100 80GB PCIe", "0x20b5", 81920, "ampere", True, None),
    "L4": ("NVIDIA L4", "0x27b8", 24576, "ada", False, None),
    "L40S": ("NVIDIA L40S", "0x26b9", 49152, "ada", False, None),
    "H100-80": ("NVIDIA H100 PCIe", "0x2331", 81920, "hopper", True, None),
    "H100-SXM5-80": ("NVIDIA H100 80GB HBM3", "0x2330", 81920, "hopper", True, None),
}


def _all_profiles():
    return [profile for model in _catalog.gpu_models().values() for profile in model["profiles"]]


# ---- GPU models and their profiles -------------------------------------------------------------------------------

def test_catalog_has_the_models_the_collection_names():
    assert sorted(_catalog.gpu_models()) == sorted(MODEL_FACTS)


@pytest.mark.parametrize("model_id", sorted(MODEL_FACTS))
def test_model_facts(model_id):
    device_name, pci_id, framebuffer, architecture, mig, last_release = MODEL_FACTS[model_id]
    model = _catalog.gpu_model(model_id)
    assert model["model"] == model_id
    assert model["device_name"] == device_name
    assert model["pci_device_id"] == pci_id
    assert model["framebuffer_mib"] == framebuffer
    assert model["architecture"] == architecture
    assert model["mig_capable"] is mig
    assert model["last_vgpu_release"] == last_release
    assert any(profile["mig"] for profile in model["profiles"]) is mig


def test_a16_is_modelled_per_gpu_of_a_four_gpu_board():
    a16 = _catalog.gpu_model("A16")
    assert (a16["gpus_per_board"], a16["framebuffer_mib"]) == (4, 16384)
    assert max(profile["framebuffer_mib"] for profile in a16["profiles"]) == 16384


# GPUs with a table in NVIDIA's "vGPU Placements for GPUs in Mixed-Size Mode" (vGPU User Guide 19.0).
PLACEMENT_TABLES = ("A100-40", "A100-80", "H100-80", "L4", "L40S")


def test_mixed_size_where_nvidia_publishes_placements_and_unconfirmed_elsewhere():
    for model_id, model in _catalog.gpu_models().items():
        assert model["mixed_size_capable"] is (model_id in PLACEMENT_TABLES)
        if model["architecture"] == "pascal" or model_id in PLACEMENT_TABLES:
            assert model["mixed_size_confirmed"] is True  # equal-size is the only mode on Pascal
        else:
            assert model["mixed_size_confirmed"] is False


@pytest.mark.parametrize("model_id", PLACEMENT_TABLES)
def test_mixed_size_placements_fit_the_framebuffer_without_overlap(model_id):
    model = _catalog.gpu_model(model_id)
    for profile in model["profiles"]:
        ids = profile["mixed_size_placements"]
        if profile["mig"] or ids is None:
            assert profile["mixed_size_max"] is None and profile["mixed_size_confirmed"] is False
            continue
        assert profile["mixed_size_max"] == len(ids) <= profile["max_per_gpu"]
        spans = [(at * 1024, at * 1024 + profile["framebuffer_mib"]) for at in ids]
        assert spans[-1][1] <= model["framebuffer_mib"]
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), profile["name"]
        assert profile["mixed_size_confirmed"] is (profile["series"] == "C")


def test_mixed_size_maxima_lower_than_equal_size_for_some_types():
    eight = _catalog.parse_profile("grid_l40s-8c")
    assert (eight["max_per_gpu"], eight["mixed_size_max"], eight["mixed_size_placements"]) == (6, 4, [0, 16, 24, 40])
    assert _catalog.parse_profile("grid_l40s-24q")["mixed_size_max"] == 2
    assert _catalog.parse_profile("grid_l40s-2q")["mixed_size_placements"] is None  # no published placement
    assert _catalog.parse_profile("grid_h100-16c")["mixed_size_placements"] == [0, 24, 40, 64]
    assert _catalog.parse_profile("grid_p40-8q")["mixed_size_max"] is None


@pytest.mark.parametrize("model_id", sorted(PUBLISHED_PROFILES))
def test_published_profile_lists(model_id):
    prefix = _catalog.gpu_model(model_id)["profile_prefix"]
    expected = dict(("grid_%s-%s" % (prefix, suffix), count) for suffix, count in PUBLISHED_PROFILES[model_id].items())
    profiles = _catalog.gpu_model(model_id)["profiles"]
    assert dict((p["name"], p["max_per_gpu"]) for p in profiles) == expected
    assert all(profile["confirmed"] for profile in profiles)
    assert _catalog.gpu_model(model_id)["profiles_confirmed"] is True


@pytest.mark.parametrize("suffix,count", sorted(PUBLISHED_PROFILES["P40"].items()))
def test_p40_max_per_gpu(suffix, count):
    profile = _catalog.parse_profile("grid_p40-" + suffix)
    assert (profile["known"], profile["model"], profile["max_per_gpu"]) == (True, "P40", count)
    assert profile["framebuffer_mib"] * count <= 24576


def test_reference_procedure_p40_carving():
    assert _catalog.parse_profile("grid_p40-3q")["max_per_gpu"] == 8  # 1/8 of a P40, 3 GB each
    assert _catalog.parse_profile("grid_p40-8q")["max_per_gpu"] == 3  # 1/3 of a P40, 8 GB each


def test_every_profile_fits_its_gpu():
    for model in _catalog.gpu_models().values():
        for profile in model["profiles"]:
            assert profile["max_per_gpu"] >= 1, profile["name"]
            assert profile["max_per_gpu"] * profile["framebuffer_mib"] <= model["framebuffer_mib"], profile["name"]
            if profile["mig"]:
                assert profile["mig_slices"] * profile["max_per_gpu"] <= 7, profile["name"]
            else:
                assert profile["max_per_gpu"] <= model["framebuffer_mib"] // profile["framebuffer_mib"]


def test_no_gpu_takes_more_than_32_vgpus():
    assert max(profile["max_per_gpu"] for profile in _all_profiles()) == 32
    for model_id in ("A40", "L40S"):  # 48 GB GPUs: the cap, not the framebuffer, limits the 1 GB types
        maxima = dict((p["name"].split("-", 1)[1], p["max_per_gpu"]) for p in _catalog.gpu_model(model_id)["profiles"])
        assert (maxima["1q"], maxima["2q"], maxima["3q"], maxima["1a"], maxima["1b"]) == (32, 24, 16, 32, 32)


def test_series_rules_hold_for_every_profile():
    for profile in _all_profiles():
        assert profile["cuda"] is (profile["series"] in ("Q", "C")), profile["name"]
        assert profile["profile_class"] == ("compute" if profile["series"] == "C" else "quadro")
        assert profile["sharing"] == ("mig" if profile["mig"] else "timeSliced")
        assert not profile["mig"] or profile["series"] == "C"
        assert profile["framebuffer_mib"] == profile["framebuffer_gb"] * 1024


def test_profiles_are_named_after_their_gpu_and_parse_back_to_themselves():
    prefixes = [model["profile_prefix"] for model in _catalog.gpu_models().values()]
    assert len(prefixes) == len(set(prefixes))
    for model_id, model in _catalog.gpu_models().items():
        for profile in model["profiles"]:
            assert profile["name"].startswith("grid_%s-" % model["profile_prefix"])
            assert (profile["gpu"], profile["model"], profile["known"]) == (model["profile_prefix"], model_id, True)
            assert _catalog.parse_profile(profile["name"]) == profile


def test_confirmation_is_marked_per_model_and_profile():
    for model in _catalog.gpu_models().values():
        assert model["profiles_confirmed"] is all(profile["confirmed"] for profile in model["profiles"])
        # Q and C maxima are confirmed for every model that has them; A and B ones are inferred outside P4/P40/T4.
        for profile in model["profiles"]:
            if profile["series"] in ("Q", "C"):
                assert profile["confirmed"], profile["name"]


def test_mig_backed_types():
    profile = _catalog.parse_profile("grid_a100-3-20c")
    assert (profile["model"], profile["mig"], profile["mig_slices"]) == ("A100-40", True, 3)
    assert profile["framebuffer_gb"] == 20
    assert (profile["sharing"], profile["max_per_gpu"], profile["cuda"]) == ("mig", 2, True)
    assert _catalog.parse_profile("grid_a100-1-5c")["max_per_gpu"] == 7
    assert _catalog.parse_profile("grid_a100d-7-80c")["model"] == "A100-80"
    assert _catalog.parse_profile("GRID A100D-1-10CME")["name"] == "grid_a100d-1-10cme"
    assert not any(p["mig"] for m in ("A10", "A16", "L4", "L40S", "T4", "P40") for p in _catalog.gpu_model(m)["profiles"])


def test_h100_offers_only_compute_types():
    assert set(profile["series"] for profile in _catalog.gpu_model("H100-80")["profiles"]) == {"C"}


def test_profiles_of_a_model_order_by_series_then_size():
    names = [profile["name"] for profile in _catalog.gpu_model("p4")["profiles"]]
    assert names[:5] == ["grid_p4-8q", "grid_p4-4q", "grid_p4-2q", "grid_p4-1q", "grid_p4-2b"]
    assert names[-2:] == ["grid_p4-8c", "grid_p4-4c"]


@pytest.mark.parametrize("bad", ["P41", "", None, 40])
def test_unknown_model_is_refused_with_the_known_ones(bad):
    with pytest.raises(InputError) as err:
        _catalog.gpu_model(bad)
    assert "P40" in str(err.value) and "A100-40" in str(err.value)


def test_results_are_copies():
    _catalog.gpu_models()["P40"]["profiles"].clear()
    _catalog.gpu_model("P40")["framebuffer_mib"] = 1
    _catalog.gpu_model("P40")["profiles"][0]["max_per_gpu"] = 99
    _catalog.parse_profile("grid_p40-24q")["max_per_gpu"] = 99
    assert _catalog.gpu_model("P40")["framebuffer_mib"] == 24576
    assert _catalog.parse_profile("grid_p40-24q")["max_per_gpu"] == 1
    assert len(_catalog.gpu_model("P40")["profiles"]) == 25


# ---- profile names -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("spelling", [
    "grid_p40-8q", "GRID P40-8Q", "p40-8q", "P40-8Q", "  Grid_P40-8Q\n", "grid  p40-8q",
])
def test_parse_profile_spellings(spelling):
    profile = _catalog.parse_profile(spelling)
    assert profile == {
        "name": "grid_p40-8q", "gpu": "p40", "model": "P40", "series": "Q", "framebuffer_gb": 8,
        "framebuffer_mib": 8192, "mig": False, "mig_slices": None, "sharing": "timeSliced",
        "profile_class": "quadro", "cuda": True, "max_per_gpu": 3, "known": True, "confirmed": True,
        "mixed_size_placements": None, "mixed_size_max": None, "mixed_size_confirmed": False,
    }


@pytest.mark.parametrize("spelling,name,model,series,cuda", [
    ("NVIDIA A10-4Q", "grid_a10-4q", "A10", "Q", True),
    ("grid_t4-4c", "grid_t4-4c", "T4", "C", True),
    ("GRID T4-2B4", "grid_t4-2b4", "T4", "B", False),
    ("l40s-12a", "grid_l40s-12a", "L40S", "A", False),
    ("grid_v100d-32q", "grid_v100d-32q", "V100-32", "Q", True),
])
def test_parse_profile_other_gpus(spelling, name, model, series, cuda):
    profile = _catalog.parse_profile(spelling)
    assert (profile["name"], profile["model"], profile["series"], profile["cuda"]) == (name, model, series, cuda)


def test_well_formed_profiles_the_catalog_does_not_list():
    odd = _catalog.parse_profile("grid_p40-5q")
    assert (odd["model"], odd["known"], odd["max_per_gpu"], odd["confirmed"]) == ("P40", False, None, False)
    other = _catalog.parse_profile("GRID RTX6000-Ada-4Q")
    assert (other["gpu"], other["model"], other["known"], other["cuda"]) == ("rtx6000-ada", None, False, True)


def test_maxwell_rules():
    assert _catalog.parse_profile("grid_m60-8q")["cuda"] is True
    assert _catalog.parse_profile("grid_m60-4q")["cuda"] is False  # on M6/M10/M60 only 8Q runs CUDA
    half = _catalog.parse_profile("GRID M10-0B")
    assert (half["framebuffer_gb"], half["framebuffer_mib"], half["cuda"]) == (0.5, 512, False)


@pytest.mark.parametrize("bad", [
    "", "grid_p40", "grid_p40-", "p40-8x", "p40-8qq", "grid-p40-8q", "grid_p40_8q", "p40-8q; reboot",
    "grid_p40-8q4", "grid_a100-3-20q", "grid_p40-8cme", "grid_p40-0c", "grid_a100-9-20c", "grid_p40-1234q",
])
def test_parse_profile_refuses_nonsense(bad):
    with pytest.raises(InputError) as err:
        _catalog.parse_profile(bad)
    assert repr(bad) in str(err.value)
    assert "grid_p40-8q" in str(err.value)  # says what would be accepted


@pytest.mark.parametrize("bad", [None, 8, ["grid_p40-8q"]])
def test_parse_profile_refuses_non_strings(bad):
    with pytest.raises(InputError, match="must be a string"):
        _catalog.parse_profile(bad)


# ---- devices -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("model_id", sorted(MODEL_FACTS))
def test_model_for_device_by_catalog_name_and_id(model_id):
    device_name, pci_id = MODEL_FACTS[model_id][:2]
    assert _catalog.model_for_device(device_name=device_name) == model_id
    assert _catalog.model_for_device(device_name, int(pci_id, 16)) == model_id
    expected_by_id = None if model_id == "A16" else model_id  # the A2 shares the A16's id
    assert _catalog.model_for_device(pci_device_id=pci_id) == expected_by_id


@pytest.mark.parametrize("device_name,model_id", [
    ("NVIDIA Corporation GP102GL [Tesla P40] (rev a1)", "P40"),
    ("GP104GL [Tesla P4]", "P4"),
    ("NVIDIA Tesla T4", "T4"),
    ("GV100GL [Tesla V100 PCIe 32GB]", "V100-32"),
    ("GA100 [A100 PCIe 80GB]", "A100-80"),
    ("NVIDIA A100 40GB PCIe", "A100-40"),
    ("AD104GL [L4]", "L4"),
    ("GH100 [H100 PCIe]", "H100-80"),
    ("nvidia a40", "A40"),
    ("NVIDIA L40", None),
    ("NVIDIA A100", None),
    ("GA107GL [A2 / A16]", None),
    ("Matrox G200eR2", None),
])
def test_model_for_device_by_name(device_name, model_id):
    assert _catalog.model_for_device(device_name=device_name) == model_id


@pytest.mark.parametrize("pci_device_id,model_id", [
    (0x1B38, "P40"), ("0x1B38", "P40"), ("1b38", "P40"), ("10de:1eb8", "T4"), ("0x10DE:0x20F1", "A100-40"),
    (-1, None), (-0x8000, None),  # vSphere's deviceId is a signed 16-bit short: negative values are valid
    ("8086:1b38", None), (0x1234, None),
])
def test_model_for_device_by_pci_id(pci_device_id, model_id):
    assert _catalog.model_for_device(pci_device_id=pci_device_id) == model_id


def test_model_for_device_with_name_and_id():
    assert _catalog.model_for_device("Tesla P40", 0x1EB8) is None  # they disagree
    assert _catalog.model_for_device("NVIDIA A16", 0x25B6) == "A16"
    assert _catalog.model_for_device("NVIDIA A2", 0x25B6) is None
    assert _catalog.model_for_device("NVIDIA A100", 0x20B5) == "A100-80"  # the id settles an ambiguous name
    assert _catalog.model_for_device("Tesla P40", "8086:1b38") is None


@pytest.mark.parametrize("kwargs", [
    {}, {"pci_device_id": "zz"}, {"pci_device_id": 0x10000}, {"pci_device_id": -0x8001},
    {"pci_device_id": True}, {"pci_device_id": "1b38x"},
    {"device_name": 1},
])
def test_model_for_device_refuses_bad_input(kwargs):
    with pytest.raises(InputError):
        _catalog.model_for_device(**kwargs)


# ---- export for the lab ------------------------------------------------------------------------------------------

def test_export_for_the_lab_runs_without_the_collection_installed(tmp_path):
    out = tmp_path / "catalog.json"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}  # no PYTHONPATH: the collection is not importable
    subprocess.run([sys.executable, os.path.join(REPO, "lab", "tools", "export_catalog.py"), str(out)],
                   check=True, cwd=str(tmp_path), env=env)
    gpus = json.loads(out.read_text())["gpus"]
    assert sorted(gpus) == sorted(_catalog.gpu_models())
    p40 = gpus["P40"]
    contract = ("device_name", "pci_device_id", "framebuffer_mib", "architecture", "mig_capable", "mixed_size_capable")
    assert dict((key, p40[key]) for key in contract) == {
        "device_name": "Tesla P40", "pci_device_id": "0x1b38", "framebuffer_mib": 24576,
        "architecture": "pascal", "mig_capable": False, "mixed_size_capable": False}
    assert {"name": "grid_p40-8q", "framebuffer_mib": 8192, "series": "Q", "max_per_gpu": 3,
            "sharing": "timeSliced", "profile_class": "quadro", "mixed_size_placements": None} in p40["profiles"]
    assert {"name": "grid_l4-8c", "framebuffer_mib": 8192, "series": "C", "max_per_gpu": 3, "sharing": "timeSliced",
            "profile_class": "compute", "mixed_size_placements": [0, 16]} in gpus["L4"]["profiles"]
    for model_id, model in _catalog.gpu_models().items():
        exported = dict((p["name"], (p["max_per_gpu"], p["sharing"], p["series"])) for p in gpus[model_id]["profiles"])
        assert exported == dict((p["name"], (p["max_per_gpu"], p["sharing"], p["series"])) for p in model["profiles"])


def test_export_to_stdout_and_usage():
    script = os.path.join(REPO, "lab", "tools", "export_catalog.py")
    result = subprocess.run([sys.executable, script, "-"], check=True, stdout=subprocess.PIPE)
    assert json.loads(result.stdout.decode())["gpus"]["A100-40"]["mig_capable"] is True
    usage = subprocess.run([sys.executable, script], check=False, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert usage.returncode == 2 and b"export_catalog.py <out.json>" in usage.stderr
