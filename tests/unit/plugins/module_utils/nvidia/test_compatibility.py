# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Driver branches, guest driver and CUDA compatibility against NVIDIA's published tables (typed in here by hand)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _compatibility
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

# NVIDIA vGPU release notes: vGPU software release -> driver branch, LTS, highest CUDA, host and guest versions.
BRANCH_TABLE = [
    ("15", "R525", False, "12.0", ["525.60.12", "525.85.07", "525.105.14"], ["525.60.13", "525.85.05", "525.105.17"]),
    ("16", "R535", True, "12.2", ["535.54.06", "535.309.01"], ["535.54.03", "535.309.01"]),
    ("17", "R550", False, "12.4", ["550.54.10", "550.163.02"], ["550.54.14", "550.163.01"]),
    ("18", "R570", False, "12.8", ["570.124.03", "570.172.07"], ["570.124.06", "570.172.08"]),
    ("19", "R580", True, "13.0", ["580.65.05", "580.159.01"], ["580.65.06", "580.159.03"]),
    ("20", "R595", False, None, ["595.58.02", "595.71.03"], ["595.58.03", "595.71.05"]),  # CUDA 13.x, unverified
]

# CUDA release notes, minimum Linux x86_64 driver per toolkit; a line per update named ("12.6 U1/U2" is two).
CUDA_TABLE = [
    ("13.0", "580.65.06"), ("12.9 U1", "575.57.08"), ("12.9", "575.51.03"), ("12.8 U1", "570.124.06"),
    ("12.8", "570.26"), ("12.6 U3", "560.35.05"), ("12.6 U1", "560.35.03"), ("12.6 U2", "560.35.03"),
    ("12.6", "560.28.03"), ("12.5 U1", "555.42.06"), ("12.5", "555.42.02"), ("12.4 U1", "550.54.15"),
    ("12.4", "550.54.14"), ("12.3 U1", "545.23.08"), ("12.3", "545.23.06"), ("12.2 U2", "535.104.05"),
    ("12.2 U1", "535.86.09"), ("12.2", "535.54.03"), ("12.1", "530.30.02"), ("12.1 U1", "530.30.02"),
    ("12.0 U1", "525.85.12"), ("12.0", "525.60.13"), ("11.8", "520.61.05"), ("11.7 U1", "515.48.07"),
    ("11.7", "515.43.04"), ("11.6 U1", "510.47.03"), ("11.6 U2", "510.47.03"), ("11.6", "510.39.01"),
    ("11.5", "495.29.05"), ("11.4 U3", "470.82.01"), ("11.4 U4", "470.82.01"), ("11.4 U1", "470.57.02"),
    ("11.4 U2", "470.57.02"), ("11.4", "470.42.01"), ("11.3", "465.19.01"), ("11.2.2", "460.32.03"),
    ("11.2.1", "460.32.03"), ("11.2.0", "460.27.03"), ("11.1", "455.23"), ("11.0", "450.51.05"),
]


def _just_below(version):
    parts = [int(part) for part in version.split(".")]
    parts[-1] -= 1
    return ".".join(str(part) for part in parts)


# ---- driver branches ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("release,branch,lts,max_cuda,host,guest", BRANCH_TABLE)
def test_branch_table_rows(release, branch, lts, max_cuda, host, guest):
    for version in host + guest:
        info = _compatibility.driver_branch(version)
        assert (info["branch"], info["vgpu_release"], info["lts"], info["known"]) == (branch, release, lts, True)
        if max_cuda:
            assert (info["max_cuda"], info["max_cuda_confirmed"]) == (max_cuda, True)
        else:
            assert info["max_cuda"].startswith("13.") and info["max_cuda_confirmed"] is False


@pytest.mark.parametrize("release,branch,lts,max_cuda,host,guest", [row for row in BRANCH_TABLE if row[3]])
def test_branch_max_cuda_agrees_with_the_toolkit_table(release, branch, lts, max_cuda, host, guest):
    newest_guest = guest[-1]
    assert _compatibility.cuda_driver_ok(max_cuda, newest_guest)["status"] == "ok"
    major, minor = (int(part) for part in max_cuda.split("."))
    following = _compatibility.cuda_driver_ok("%d.%d" % (major, minor + 1), newest_guest)
    if following["minimum"] is None:
        assert max_cuda == "13.0"  # the newest toolkit the table lists: nothing after it to compare
    else:
        assert following["status"] != "ok"


@pytest.mark.parametrize("spelling", ["R535", "r535", 535, "535", " 535.54.03 "])
def test_driver_branch_spellings(spelling):
    assert _compatibility.driver_branch(spelling)["branch"] == "R535"


def test_branches_outside_the_table():
    runfile_driver = _compatibility.driver_branch("530.30.02")  # the driver a CUDA runfile bundles
    assert (runfile_driver["vgpu_release"], runfile_driver["known"], runfile_driver["max_cuda"]) == (None, False, None)
    assert _compatibility.driver_branch("510.47.03")["vgpu_release"] == "14"
    assert _compatibility.driver_branch("470.82.01")["lts"] is True


@pytest.mark.parametrize("bad", ["abc", "", None, "12.1", "1.2.3.4", "525.105.17.1", True, "R", "525..17"])
def test_driver_branch_refuses_bad_versions(bad):
    with pytest.raises(InputError):
        _compatibility.driver_branch(bad)


def test_unquoted_yaml_versions_are_refused_with_advice():
    with pytest.raises(InputError, match="Quote it"):
        _compatibility.driver_branch(525.6)


# ---- host / guest compatibility ----------------------------------------------------------------------------------

@pytest.mark.parametrize("host,guest,status", [
    ("525.105.14", "525.105.17", "ok"),               # the reference procedure's pair
    ("535.54.06", "535.309.01", "ok"),                # same branch, newer guest build
    ("580.65.05", "535.54.03", "ok-previous-branch"),  # LTS manager, previous LTS guest
    ("570.124.03", "550.54.14", "ok-previous-branch"),  # previous branch
    ("570.124.03", "535.54.03", "incompatible"),      # two branches back, 570 is no LTS
    ("580.65.05", "570.124.06", "ok-previous-branch"),
    ("580.65.05", "550.54.14", "incompatible"),       # neither the previous branch nor the previous LTS
    ("595.58.02", "580.65.06", "ok-previous-branch"),
    ("595.58.02", "535.54.03", "incompatible"),
    ("550.54.10", "535.54.03", "ok-previous-branch"),
    ("535.54.06", "525.105.17", "ok-previous-branch"),
    ("535.54.06", "470.82.01", "ok-previous-branch"),  # vGPU 16 LTS accepts vGPU 13 LTS guests
    ("525.105.14", "510.47.03", "ok-previous-branch"),  # vGPU 15 accepts vGPU 14 guests (rolling upgrade)
    ("535.54.06", "550.54.14", "incompatible"),       # guest newer than the host
    ("550.54.10", "530.30.02", "incompatible"),       # a CUDA runfile's driver is no GRID driver
    ("R580", "R535", "ok-previous-branch"),
])
def test_vgpu_guest_compat(host, guest, status):
    result = _compatibility.vgpu_guest_compat(host, guest)
    assert result["status"] == status
    assert result["host_branch"] == "R" + str(host).lstrip("R")[:3]
    assert result["guest_branch"] == "R" + str(guest).lstrip("R")[:3]


def test_compat_messages_say_what_to_do():
    lts = _compatibility.vgpu_guest_compat("580.65.05", "535.54.03")
    assert lts["accepted_guest_branches"] == ["R580", "R570", "R535"]
    assert "previous LTS branch" in lts["message"] and "580.65.05" in lts["message"]
    previous = _compatibility.vgpu_guest_compat("570.124.03", "550.54.14")
    assert "previous branch" in previous["message"] and "LTS" not in previous["message"]
    bad = _compatibility.vgpu_guest_compat("570.124.03", "535.54.03")
    assert "R570 or R550" in bad["message"] and "535.54.03" in bad["message"]
    runfile = _compatibility.vgpu_guest_compat("550.54.10", "530.30.02")
    assert "not a vGPU branch" in runfile["message"]


def test_compat_with_a_branch_outside_the_catalog():
    same = _compatibility.vgpu_guest_compat("460.32.04", "460.32.03")
    assert (same["status"], same["accepted_guest_branches"]) == ("ok", ["R460"])
    assert _compatibility.vgpu_guest_compat("460.32.04", "450.80.02")["status"] == "incompatible"


@pytest.mark.parametrize("host,guest", [("foo", "525.105.17"), ("525.105.14", None), ("12.1", "525.105.17")])
def test_compat_refuses_bad_versions(host, guest):
    with pytest.raises(InputError):
        _compatibility.vgpu_guest_compat(host, guest)


# ---- CUDA toolkit and driver -------------------------------------------------------------------------------------

@pytest.mark.parametrize("cuda,minimum", CUDA_TABLE)
def test_cuda_table_rows(cuda, minimum):
    at_minimum = _compatibility.cuda_driver_ok(cuda, minimum)
    assert (at_minimum["status"], at_minimum["minimum"]) == ("ok", minimum)
    below = _compatibility.cuda_driver_ok(cuda, _just_below(minimum))
    assert below["status"] == "minor-compat-only"  # every minimum lies above its major's compatibility floor


def test_reference_procedure_pair_runs_only_under_minor_version_compatibility():
    result = _compatibility.cuda_driver_ok("12.1.1", "525.105.17")
    assert result["status"] == "minor-compat-only"
    assert (result["minimum"], result["minor_compat_minimum"]) == ("530.30.02", "525")
    assert (result["cuda"], result["newest_full_cuda"]) == ("12.1 Update 1", "12.0 Update 1")
    assert "530.30.02" in result["message"] and "minor-version compatibility" in result["message"]
    assert "CUDA 12.0 Update 1 or older" in result["message"] and "R535, vGPU 16" in result["message"]


@pytest.mark.parametrize("spelling,minimum", [
    ("12.2 U2", "535.104.05"), ("12.2U2", "535.104.05"), ("12.2 Update 2", "535.104.05"),
    ("12.2.2", "535.104.05"), ("CUDA 12.2.2", "535.104.05"), ("12.2 GA", "535.54.03"), ("12.2", "535.54.03"),
    ("12.2.0", "535.54.03"), (12.1, "530.30.02"), (12, "525.60.13"),
    ("V12.1.105", "530.30.02"),   # nvcc's build number: update unknown, the strictest 12.1 minimum applies
    ("12.2.140", "535.104.05"),
    ("12.9.2", "575.57.08"),      # an update past the table takes the newest minimum of its minor
])
def test_cuda_version_spellings(spelling, minimum):
    assert _compatibility.cuda_driver_ok(spelling, "999.0")["minimum"] == minimum


@pytest.mark.parametrize("cuda,driver,status", [
    ("13.0", "575.57.08", "unsupported"),        # 13.x needs 580
    ("13.0", "580.65.06", "ok"),
    ("12.8", "525.60.13", "minor-compat-only"),  # 12.x runs from 525 on
    ("12.8", "520.61.05", "unsupported"),
    ("12.0", "580.65.06", "ok"),                 # newer drivers run older toolkits
    ("11.8", "450.80.02", "minor-compat-only"),  # 11.x runs from 450 on
    ("11.8", "440.33.01", "unsupported"),
])
def test_minor_version_compatibility(cuda, driver, status):
    assert _compatibility.cuda_driver_ok(cuda, driver)["status"] == status


@pytest.mark.parametrize("major,floor", [(11, "450"), (12, "525"), (13, "580")])
def test_minor_version_compatibility_floors(major, floor):
    at_floor = _compatibility.cuda_driver_ok("%d.0" % major, floor)
    assert (at_floor["status"], at_floor["minor_compat_minimum"]) == ("minor-compat-only", floor)
    assert _compatibility.cuda_driver_ok("%d.0" % major, "%d.99.99" % (int(floor) - 1))["status"] == "unsupported"


def test_cuda_minor_outside_the_table():
    newer = _compatibility.cuda_driver_ok("13.1", "580.65.06")
    assert (newer["status"], newer["minimum"], newer["minor_compat_minimum"]) == ("minor-compat-only", None, "580")
    assert "not known" in newer["message"]
    old_driver = _compatibility.cuda_driver_ok("13.1", "570.172.08")
    assert old_driver["status"] == "unsupported" and "CUDA 12.8 Update 1 or older" in old_driver["message"]


def test_unsupported_message_points_to_a_fix():
    result = _compatibility.cuda_driver_ok("12.1", "470.82.01")
    assert result["status"] == "unsupported"
    assert "CUDA 11.4 Update 3 or older" in result["message"] and "530.30.02" in result["message"]


@pytest.mark.parametrize("cuda,driver", [
    ("10.2", "440.33.01"), ("14.0", "600.1"), ("abc", "525.105.17"), (None, "525.105.17"), ("12", "525.105.17"),
    ("12.1.1 U1", "525.105.17"), ("525.105.17", "12.1.1"), ("12.1", "R"), (True, "525.105.17"),
])
def test_cuda_driver_ok_refuses_bad_input(cuda, driver):
    with pytest.raises(InputError):
        _compatibility.cuda_driver_ok(cuda, driver)


def _newest_full_cuda(driver):
    return _compatibility.cuda_driver_ok("12.0", driver)["newest_full_cuda"]


def test_newest_full_cuda_of_a_driver():
    assert _newest_full_cuda("525.105.17") == "12.0 Update 1"
    assert _newest_full_cuda("580.159.03") == "13.0"
    assert _newest_full_cuda("560.35.03") == "12.6 Update 1"
    assert _newest_full_cuda("440.33.01") is None


def test_driver_versions_compare_as_the_shared_version_order():
    # 525.85.05 is older than 525.105.17 only when fields compare as numbers; 535 is the branch R535.
    assert _compatibility.cuda_driver_ok("12.0 U1", "525.105.17")["status"] == "ok"
    assert _compatibility.cuda_driver_ok("12.0 U1", "525.85.05")["status"] == "minor-compat-only"
    assert _newest_full_cuda(" 570.26 ") == _newest_full_cuda("570.26.0") == "12.8"
    assert _newest_full_cuda(535) == _newest_full_cuda("R535") == "12.1"


@pytest.mark.parametrize("bad", ["abc", "525.x", "", None, 525.6, "-1"])
def test_driver_versions_that_cannot_be_read_are_refused(bad):
    with pytest.raises(InputError):
        _compatibility.cuda_driver_ok("12.1", bad)


@pytest.mark.parametrize("host, release, guest", [
    ("525.105.14", "15.2", "525.105.17"),
    ("535.54.06", "16.0", "535.54.03"),
    ("535.54.06-1OEM.800.1.0.20613240", "16.0", "535.54.03"),
])
def test_release_drivers_name_the_guest_driver_of_a_managers_release(host, release, guest):
    row = _compatibility.release_drivers(host)
    assert (row["release"], row["linux_guest"]) == (release, guest)
    assert row["esxi8_component"][0] == "NVD-VGPU-800" and row["esxi8_component"][1].startswith(row["host"] + "-")
    # Every release the table names is one the branch rule knows, and its own guest driver is accepted.
    assert _compatibility.vgpu_guest_compat(row["host"], row["linux_guest"])["status"] == "ok"


def test_release_drivers_unknown_version():
    assert _compatibility.release_drivers("535.309.01") is None
    with pytest.raises(InputError):
        _compatibility.release_drivers("latest")
