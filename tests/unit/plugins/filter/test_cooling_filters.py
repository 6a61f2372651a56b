# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.vgpu.plugins.filter.cooling import FilterModule, cooling_intent


def test_filter_front_of_the_curve():
    gpus = [{"temperature_gpu_c": 75, "temperature_slowdown_c": 92}]
    assert FilterModule().filters()["cooling_intent"] is cooling_intent
    assert cooling_intent(gpus, "default")["intent"] == "passive_gpu"


@pytest.mark.parametrize("gpus, curve, words", [
    ({"temperature_gpu_c": 75}, None, "the GPU list of gpuops.vgpu.nvidia_smi_info"),
    ([], {"hysteresis": "wide"}, "cooling_intent: Cooling curve hysteresis is 'wide'"),
])
def test_filter_errors_name_the_fix(gpus, curve, words):
    with pytest.raises(AnsibleFilterError, match=words):
        cooling_intent(gpus, "default", curve)
