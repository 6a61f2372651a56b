# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The temperature curve with hysteresis behind the bmc_cooling role's by_temperature entry point."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._cooling_curve import cooling_intent


def gpus(*temperatures, **kwargs):
    slowdown = kwargs.get("slowdown", 92)
    return [{"index": i, "pci_bus_id": "0000:%02x:00.0" % i, "temperature_gpu_c": t, "temperature_slowdown_c": slowdown}
            for i, t in enumerate(temperatures)]


@pytest.mark.parametrize("temperature, current, expected", [
    (40, "default", "default"),          # 52 C of headroom
    (72, "default", "passive_gpu"),      # 20: at the threshold, up at once
    (82, "default", "max_cooling"),      # 10: straight to the top
    (70, "passive_gpu", "passive_gpu"),  # 22: inside the 5 C band above 20, kept
    (67, "passive_gpu", "default"),      # 25: out of the band, down
    (78, "max_cooling", "max_cooling"),  # 14: inside the band above 10
    (77, "max_cooling", "passive_gpu"),  # 15: out of max_cooling's band, inside none of passive_gpu's
    (30, "max_cooling", "default"),      # 62: out of every band
    (70, None, "default"),               # unknown current: the temperatures alone
    (70, "custom", "default"),           # settings made by hand count as unknown
])
def test_curve_with_hysteresis(temperature, current, expected):
    assert cooling_intent(gpus(temperature), current)["intent"] == expected


def test_the_hottest_gpu_by_headroom_decides_and_unreadable_gpus_are_left_out():
    readings = gpus(50, 60) + [{"index": 2, "temperature_gpu_c": 80, "temperature_slowdown_c": 98},
                               {"index": 3, "temperature_gpu_c": None, "temperature_slowdown_c": 92}]
    result = cooling_intent(readings, "default")
    assert (result["gpu"]["index"], result["headroom_c"], result["intent"]) == (2, 18, "passive_gpu")
    assert "at or below the passive_gpu threshold" in result["reason"]


def test_without_readings_the_intent_is_kept_and_the_floor_holds():
    assert cooling_intent([], "passive_gpu")["intent"] == "passive_gpu"
    assert cooling_intent(gpus(None), None, floor="passive_gpu")["intent"] == "passive_gpu"
    result = cooling_intent(gpus(30), "passive_gpu", floor="passive_gpu")
    assert result["intent"] == "passive_gpu" and "floor" in result["reason"]


def test_custom_curve_and_bad_curves():
    assert cooling_intent(gpus(60), "default", {"passive_gpu": 35})["intent"] == "passive_gpu"
    assert cooling_intent(gpus(60), "passive_gpu", {"hysteresis": 0})["intent"] == "default"
    for curve, words in (({"max_cooling": 25}, "must be below passive_gpu"), ({"hysteresis": -1}, "0 or more"),
                         ({"band": 3}, "Unknown cooling curve keys band")):
        with pytest.raises(InputError, match=words):
            cooling_intent(gpus(60), "default", curve)
    with pytest.raises(InputError, match="floor 'cold'"):
        cooling_intent(gpus(60), "default", floor="cold")
