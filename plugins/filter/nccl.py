# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL's filters: the check of its all-reduce test and the nccl role's plan; the logic is in
``plugin_utils/_nccl_tests.py`` and ``plugin_utils/_nccl_plan.py``, the docs in ``nccl_all_reduce_check.yml`` and
``nccl_plan.yml``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._lazy import lazy_module
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._filter_errors import filter_errors

# Imported where a filter of this file runs (plugin_utils/_lazy.py says why).
_nccl_tests = lazy_module("plugin_utils._nccl_tests")
_nccl_plan = lazy_module("plugin_utils._nccl_plan")


@filter_errors(GpuopsError)
def nccl_all_reduce_check(output, topology, nvlink="", pcie="", min_share=0.5, expect_nvlink=False):
    """``all_reduce_perf_stdout | gpuops.vgpu.nccl_all_reduce_check(topology=topo_stdout, ...)``: the verdict."""
    return _nccl_tests.check_from_outputs(output, topology, nvlink, pcie, min_share, expect_nvlink)


@filter_errors(GpuopsError)
def nccl_plan(gpu_guest, params, check_mode=False, hostname=""):
    """``guest.gpu_guest | gpuops.vgpu.nccl_plan(params, ...)``: what the nccl role does on a machine."""
    return _nccl_plan.nccl_plan(gpu_guest, params, check_mode, hostname)


class FilterModule(object):
    """NCCL's filters."""

    def filters(self):
        return {"nccl_all_reduce_check": nccl_all_reduce_check, "nccl_plan": nccl_plan}
