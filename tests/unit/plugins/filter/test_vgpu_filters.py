# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vGPU filters: thin wrappers over the catalog whose errors become filter errors."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.vgpu.plugins.filter import vgpu
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _compatibility
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError


def test_filter_module_maps_the_four_names():
    filters = vgpu.FilterModule().filters()
    assert filters == {
        "vgpu_profile": vgpu.vgpu_profile,
        "driver_branch": vgpu.driver_branch,
        "cuda_driver_ok": vgpu.cuda_driver_ok,
        "vgpu_guest_compat": vgpu.vgpu_guest_compat,
    }


def test_vgpu_profile():
    profile = vgpu.vgpu_profile("GRID P40-8Q")
    assert profile == _catalog.parse_profile("grid_p40-8q")
    assert (profile["name"], profile["max_per_gpu"], profile["cuda"]) == ("grid_p40-8q", 3, True)
    assert vgpu.vgpu_profile("grid_p40-2b")["cuda"] is False


def test_driver_branch():
    branch = vgpu.driver_branch("525.105.17")
    assert (branch["branch"], branch["vgpu_release"]) == ("R525", "15")
    assert (branch["lts"], branch["max_cuda"], branch["known"]) == (False, "12.0", True)


def test_cuda_driver_ok():
    result = vgpu.cuda_driver_ok("12.1.1", "525.105.17")
    assert (result["status"], result["minimum"], result["minor_compat_minimum"]) == (
        "minor-compat-only", "530.30.02", "525")
    assert vgpu.cuda_driver_ok("12.1.1", "535.54.03")["status"] == "ok"


def test_vgpu_guest_compat():
    assert vgpu.vgpu_guest_compat("525.105.14", "525.105.17")["status"] == "ok"
    assert vgpu.vgpu_guest_compat("580.65.05", "535.54.03")["status"] == "ok-previous-branch"
    assert vgpu.vgpu_guest_compat("570.124.03", "535.54.03")["status"] == "incompatible"


@pytest.mark.parametrize("name,call,args", [
    ("vgpu_profile", _catalog.parse_profile, ("grid_p40-8x",)),
    ("driver_branch", _compatibility.driver_branch, ("not-a-version",)),
    ("cuda_driver_ok", _compatibility.cuda_driver_ok, ("12.1.1", "12.1.1")),
    ("vgpu_guest_compat", _compatibility.vgpu_guest_compat, ("580.65.05", None)),
])
def test_errors_become_filter_errors_with_the_catalog_message(name, call, args):
    with pytest.raises(InputError) as catalog_error:
        call(*args)
    with pytest.raises(AnsibleFilterError) as filter_error:
        getattr(vgpu, name)(*args)
    assert str(catalog_error.value) in str(filter_error.value)
    assert str(filter_error.value).startswith(name + ": ")
