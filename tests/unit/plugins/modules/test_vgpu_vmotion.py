# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vgpu_vmotion's real main(): bad input fails before a session is opened."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.modules import vgpu_vmotion
from ansible_collections.gpuops.vgpu.tests.unit.plugins.modules.module_runner import CONNECTION, fake_vcenter, run_main


@pytest.mark.parametrize("options, named", [
    ({"sample": 0}, "sample must be at least 1, got 0"),
    ({"parallel": 0}, "parallel must be at least 1, got 0"),
    ({"vms": [{"name": "gpu-vm-01"}, {"name": "gpu-vm-01"}]}, "vms[1] (gpu-vm-01) is listed twice"),
    ({"vms": [{"host": "esxi-01"}]}, "missing required arguments: name found in vms"),
])
def test_bad_input_fails_before_connecting(capsys, monkeypatch, options, named):
    sessions = fake_vcenter(monkeypatch, object())
    code, result = run_main(vgpu_vmotion.main, dict(CONNECTION, **options), capsys)
    assert code == 1 and named in result["msg"] and sessions == []
