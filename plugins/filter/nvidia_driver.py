# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvidia_driver role's plan and the kernel module rule behind it. The logic is in
``plugin_utils/_nvidia_driver_plan.py`` and ``plugin_utils/_nvidia_kernel_module.py``; the docs in the ``.yml`` file
named after each filter."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._lazy import lazy_module
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._filter_errors import filter_errors

# Imported where a filter of this file runs (plugin_utils/_lazy.py says why).
_plan = lazy_module("plugin_utils._nvidia_driver_plan")
_module = lazy_module("plugin_utils._nvidia_kernel_module")


@filter_errors(GpuopsError)
def nvidia_driver_plan(gpu_guest, params, check_mode=False, hostname="", vgpu_guest=False, blacklist_file="",
                       blacklist_content=""):
    """``guest.gpu_guest | gpuops.vgpu.nvidia_driver_plan(params, ...)``: what the nvidia_driver role does."""
    return _plan.nvidia_driver_plan(gpu_guest, params, check_mode, hostname, vgpu_guest, blacklist_file,
                                    blacklist_content)


@filter_errors(GpuopsError)
def nvidia_kernel_module(gpus, branch, wanted="auto"):
    """``guest.gpu_guest.pci.gpus | gpuops.vgpu.nvidia_kernel_module(580)``: the kernel module flavour to install."""
    return _module.kernel_module(gpus or [], int(str(branch).upper().lstrip("R")), wanted)


class FilterModule(object):
    """The nvidia_driver role's plan."""

    def filters(self):
        return {
            "nvidia_driver_plan": nvidia_driver_plan,
            "nvidia_kernel_module": nvidia_kernel_module,
        }
