# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The DCGM check's filter; the logic is in ``plugin_utils/_dcgm_diag.py``, the docs in ``dcgm_diag_check.yml``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._lazy import lazy_module
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._filter_errors import filter_errors

# Imported where a filter of this file runs (plugin_utils/_lazy.py says why).
_dcgm_diag = lazy_module("plugin_utils._dcgm_diag")


@filter_errors(GpuopsError)
def dcgm_diag_check(outcome, level, dcgmi="dcgmi", gpus=None, whole_gpus=True):
    """``run.outcomes.dcgm_diag | gpuops.vgpu.dcgm_diag_check(level)``: the verdict on a ``dcgmi diag`` run."""
    return _dcgm_diag.dcgm_check(outcome, level, dcgmi, gpus, whole_gpus)


class FilterModule(object):
    """The DCGM check's filter."""

    def filters(self):
        return {"dcgm_diag_check": dcgm_diag_check}
