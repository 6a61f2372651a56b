# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one version order, for NVIDIA driver versions and vLCM component versions alike."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._versions import compare_versions, newest, version_key

V525, V535 = "525.105.14-1OEM.800.1.0.20613240", "535.54.06-1OEM.800.1.0.20613240"


@pytest.mark.parametrize("left, right, result", [
    # driver versions
    ("525.105.17", "525.85.12", 1), ("570.26", "570.26.0", 0), ("470.82.01", "470.82.1", 0),
    ("535.54.03", "535.104.05", -1), (535, "535.0", 0), ("580.65.06", "575.57.08", 1), ("580.65.06", "580", 1),
    # vLCM component versions
    ("525.85.07-1OEM", "525.105.14-1OEM", -1), (V535, V525, 1), ("1.0", "1.0", 0), ("1.0", "1.0.1", -1),
    ("525.105.14-0.0.0000", "525.105.14-0.0.0001", -1), ("525.105.14", "525.105.14-1OEM", -1),
    ("8.0.2-0.0.22380479", "8.0.2-0.20.22380479", -1), ("1.0-2", "1.0a", -1),
])
def test_order(left, right, result):
    assert compare_versions(left, right) == result
    assert compare_versions(right, left) == -result


@pytest.mark.parametrize("a, b", [("570.26", "570.26.0"), ("1.0", "1.0.0"), ("525.105.14-0", "525.105.14-0.0.0000"),
                                  ("1.0", "1.00"), ("0", "0.0")])
def test_trailing_zero_fields_do_not_count(a, b):
    """The case where the catalog's and vLCM's orders used to differ: vLCM had 1.0 older than 1.0.0."""
    assert compare_versions(a, b) == 0 and version_key(a) == version_key(b)
    assert compare_versions("1.0", "1-1") == compare_versions("1", "1-1") == -1  # vLCM had 1.0 newer than 1-1


def test_zeros_inside_a_version_still_count():
    assert compare_versions("1.0.1", "1.1") == -1
    assert compare_versions("525.105.14-0.1", "525.105.14-0") == 1
    assert compare_versions("1.0-0", "1.0") == 1


def test_text_sorts_against_numbers_as_its_first_character_against_digits():
    in_order = ["1.0", "1.0-1", "1.0.1", "1.0a", "1.0b"]
    assert sorted(["1.0b", "1.0", "1.0-1", "1.0.1", "1.0a"], key=version_key) == in_order


def test_the_order_is_a_total_order_on_mixed_versions():
    versions = ["1.0", "1.0.0", "1.0-1", "1.0.0-1", "1.0a", "1.0.1", "2", "10", "1.0.0.0-0"]
    for a in versions:
        for b in versions:
            for c in versions:
                if compare_versions(a, b) <= 0 and compare_versions(b, c) <= 0:
                    assert compare_versions(a, c) <= 0, (a, b, c)


def test_newest():
    assert newest(["525.85.07", "525.105.14", "470.182.03"]) == "525.105.14"
    assert newest(iter([V525, V535])) == V535
    assert newest(["1.0", "1.0.0"]) == "1.0"  # the first seen among equals
    assert newest([]) is None
