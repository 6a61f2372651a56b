# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Driver branches across the fleet and where an upgrade stands."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _fleet_drivers


@pytest.mark.parametrize("version, branch", [("525.105.14", "R525"), ("535.54.06-1OEM.800.1.0.20613240", "R535"),
                                             (None, None), ("", None), ("not a version", None)])
def test_branch_of(version, branch):
    assert _fleet_drivers.branch_of(version) == branch


def test_progress_counts_the_newest_host_branch():
    drivers = _fleet_drivers.progress(["R535", "R525", None, "R535"], ["R525", "R525", "R535"])
    assert drivers == {"hosts": {"R535": 2, "R525": 1}, "guests": {"R525": 2, "R535": 1}, "newest_branch": "R535",
                       "hosts_on_newest": 2, "guests_on_newest": 1, "in_progress": True}
    assert _fleet_drivers.summary_card(drivers, 4, 3) == (
        "R535: 2 / 4 hosts, 1 / 3 guests", "driver upgrade under way")


def test_one_branch_everywhere_or_none_known():
    assert _fleet_drivers.summary_card(_fleet_drivers.progress(["R535"], ["R535"]), 1, 1) == (
        "R535", "driver branch everywhere")
    assert _fleet_drivers.summary_card(_fleet_drivers.progress([None], []), 1, 0) == ("not known", "driver branch")
