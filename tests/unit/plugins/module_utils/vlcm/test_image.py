# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The changes to a cluster image's components: what to set and delete, and what no depot holds."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._image import image_changes

DRIVER, DAEMON = "NVD-VGPU-800", "nvd-gpu-mgmt-daemon"
V525, V535 = "525.105.14-1OEM.800.1.0.20613240", "535.54.06-1OEM.800.1.0.20613240"
AVAILABLE = {DRIVER: [V535, V525], DAEMON: ["525.105.14-0.0.0000"], "ESXi": ["8.0.2-0.0.22380479"]}


def test_adds_and_reports_the_image_after():
    changes = image_changes({}, {DRIVER: V525, DAEMON: None}, [], AVAILABLE)
    assert changes == {"set": {DRIVER: V525, DAEMON: "525.105.14-0.0.0000"}, "delete": [],
                       "after": {DRIVER: V525, DAEMON: "525.105.14-0.0.0000"}, "missing": []}


def test_nothing_changes_when_the_image_already_holds_the_request():
    current = {DRIVER: V525, DAEMON: "525.105.14-0.0.0000", "other": "1"}
    changes = image_changes(current, {DRIVER: V525, DAEMON: None}, ["absent-component"], AVAILABLE)
    assert changes["set"] == {} and changes["delete"] == [] and changes["after"] == current


def test_null_version_keeps_the_current_one_and_takes_the_newest_for_a_new_component():
    assert image_changes({DRIVER: V525}, {DRIVER: None}, [], AVAILABLE)["set"] == {}
    assert image_changes({}, {DRIVER: None}, [], AVAILABLE)["set"] == {DRIVER: V535}


def test_updates_and_removes_only_what_is_named():
    changes = image_changes({DRIVER: V525, DAEMON: "525.105.14-0.0.0000", "keep": "2"}, {DRIVER: V535}, [DAEMON],
                            AVAILABLE)
    assert changes["set"] == {DRIVER: V535} and changes["delete"] == [DAEMON]
    assert changes["after"] == {DRIVER: V535, "keep": "2"}


def test_lists_every_unknown_component_and_version():
    with pytest.raises(InputError) as err:
        image_changes({}, {DRIVER: "999.1", "NVD-AIE-800": None}, [], AVAILABLE)
    message = err.value.message
    assert "component NVD-AIE-800 is in no depot" in message
    assert "component NVD-VGPU-800 has no version 999.1 in the depots (they hold %s, %s)" % (V525, V535) in message
    assert "vlcm_depot" in err.value.hint and DAEMON in err.value.hint


def test_check_mode_sets_components_an_earlier_task_would_import():
    changes = image_changes({}, {"NVD-AIE-800": "1.0", DRIVER: "999.1", DAEMON: None}, [], AVAILABLE, missing_ok=True)
    assert changes["set"] == {"NVD-AIE-800": "1.0", DRIVER: "999.1", DAEMON: "525.105.14-0.0.0000"}
    assert changes["missing"] == ["component NVD-AIE-800 is in no depot",
                                  "component NVD-VGPU-800 has no version 999.1 in the depots (they hold %s, %s)"
                                  % (V525, V535)]
    assert image_changes({}, {"NVD-AIE-800": None}, [], {}, missing_ok=True)["set"] == {"NVD-AIE-800": None}


def test_versions_are_listed_oldest_first_and_the_newest_is_taken():
    available = {DRIVER: ["525.85.07-1OEM", "525.105.14-1OEM", "470.182.03-1OEM"]}
    assert image_changes({}, {DRIVER: None}, [], available)["set"] == {DRIVER: "525.105.14-1OEM"}
    with pytest.raises(InputError) as err:
        image_changes({}, {DRIVER: "1.0"}, [], available)
    assert "(they hold 470.182.03-1OEM, 525.85.07-1OEM, 525.105.14-1OEM)" in err.value.message


def test_a_component_already_in_the_image_needs_no_depot():
    changes = image_changes({"old-driver": "1.0"}, {"old-driver": "1.0"}, [], {})
    assert changes["set"] == {} and changes["missing"] == []


@pytest.mark.parametrize("wanted, remove, words", [
    ({DRIVER: V525}, [DRIVER], "both in components and in remove_components"),
    ({"ESXi": "8.0.2-0.0.22380479"}, [], "base image"),
    ({}, ["ESXi"], "base image"),
])
def test_refuses_contradictions(wanted, remove, words):
    with pytest.raises(InputError) as err:
        image_changes({}, wanted, remove, AVAILABLE)
    assert words in err.value.message
