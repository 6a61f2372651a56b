# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The passthrough guest check's filter; the logic is in ``plugin_utils/_passthrough_guest.py``, the docs in
``passthrough_guest_checks.yml``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _passthrough_guest


def passthrough_guest_checks(facts, expected_count=0, set_size=2, nvlink=True, nvlink_gbps=None):
    """``nvidia_smi | gpuops.vgpu.passthrough_guest_checks(2)``: the guest's passthrough checks by name."""
    return _passthrough_guest.evaluate(facts, int(expected_count or 0), int(set_size or 0), bool(nvlink),
                                       nvlink_gbps or None)


class FilterModule(object):
    """Filters for guests with whole GPUs."""

    def filters(self):
        return {"passthrough_guest_checks": passthrough_guest_checks}
