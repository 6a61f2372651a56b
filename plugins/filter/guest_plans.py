# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guest roles' plans: what grid_driver, grid_license and cuda_toolkit do on a guest, decided once from one
gpu_guest_info read, and gpu_validate's verdicts. The logic is in ``plugin_utils/_grid_driver_plan.py``,
``_grid_license_plan.py``, ``_cuda_toolkit_plan.py`` and ``_gpu_validate_report.py``; the docs in the ``.yml`` file
named after each filter; which of a role's files differ from what it writes, which changed since the service that
reads them started, and which services run a program replaced since (``plugin_utils/_file_state.py``,
``guest_files_to_write.yml``, ``guest_unapplied_files.yml``, ``guest_replaced_services.yml``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._lazy import lazy_module
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._filter_errors import filter_errors

# Imported where a filter of this file runs (plugin_utils/_lazy.py says why).
_cuda = lazy_module("plugin_utils._cuda_toolkit_plan")
_validate = lazy_module("plugin_utils._gpu_validate_report")
_driver = lazy_module("plugin_utils._grid_driver_plan")
_license = lazy_module("plugin_utils._grid_license_plan")
_file_state = lazy_module("plugin_utils._file_state")
_guest_license = lazy_module("module_utils.guest._license")


@filter_errors(GpuopsError)
def grid_driver_plan(gpu_guest, params, host_version="", check_mode=False, hostname="", vgpu_profile=None,
                     blacklist_file="", blacklist_content=""):
    """``guest.gpu_guest | gpuops.vgpu.grid_driver_plan(params, ...)``: what the grid_driver role does."""
    return _driver.grid_driver_plan(gpu_guest, params, host_version, check_mode, hostname, vgpu_profile,
                                    blacklist_file, blacklist_content)


@filter_errors(GpuopsError)
def grid_license_plan(gpu_guest, params, check_mode=False, hostname=""):
    """``guest.gpu_guest | gpuops.vgpu.grid_license_plan(params, ...)``: what the grid_license role does."""
    return _license.grid_license_plan(gpu_guest, params, check_mode, hostname)


@filter_errors(GpuopsError)
def grid_license_report(gpus, license_state, params, hostname="", restarted=False, changed=False):
    """``gpus | gpuops.vgpu.grid_license_report(state, params, ...)``: the grid_license role's result."""
    return _license.license_report(gpus, license_state, params, hostname, restarted, changed)


@filter_errors(GpuopsError)
def grid_license_state(nvidia_smi):
    """``smi.nvidia_smi | gpuops.vgpu.grid_license_state``: licensed, product, earliest expiry, statuses."""
    return _guest_license.license_state(nvidia_smi or {})


@filter_errors(GpuopsError)
def cuda_toolkit_plan(gpu_guest, params, check_mode=False, hostname="", version_json=None, vgpu_guest=True):
    """``guest.gpu_guest | gpuops.vgpu.cuda_toolkit_plan(params, ...)``: what the cuda_toolkit role does."""
    return _cuda.cuda_toolkit_plan(gpu_guest, params, check_mode, hostname, version_json, vgpu_guest)


@filter_errors(GpuopsError)
def gpu_validate_report(gpu_guest, outcomes, params, check_mode=False, passthrough=None, nccl=None, dcgm=None):
    """``guest.gpu_guest | gpuops.vgpu.gpu_validate_report(outcomes, params, ...)``: the gpu_validate role's verdicts."""
    return _validate.gpu_validate_report(gpu_guest, outcomes or {}, params, check_mode, passthrough, nccl, dcgm)


@filter_errors(GpuopsError)
def guest_files_to_write(files, states):
    """``files | gpuops.vgpu.guest_files_to_write(guest.gpu_guest.files)``: the files a role still has to write."""
    return _file_state.files_to_write(files, states)


@filter_errors(GpuopsError)
def guest_unapplied_files(gpu_guest, services, files):
    """``guest.gpu_guest | gpuops.vgpu.guest_unapplied_files({name: unit}, {name: paths})``: the files each service
    has not read since they changed."""
    return _file_state.unapplied_files(gpu_guest, services, files)


@filter_errors(GpuopsError)
def guest_replaced_services(gpu_guest, units):
    """``guest.gpu_guest | gpuops.vgpu.guest_replaced_services([unit, ...])``: the units that run a program a package
    replaced since they started."""
    return _file_state.replaced_services(gpu_guest, units)


class FilterModule(object):
    """The guest roles' plans."""

    def filters(self):
        return {
            "cuda_toolkit_plan": cuda_toolkit_plan,
            "gpu_validate_report": gpu_validate_report,
            "grid_driver_plan": grid_driver_plan,
            "grid_license_plan": grid_license_plan,
            "grid_license_report": grid_license_report,
            "grid_license_state": grid_license_state,
            "guest_files_to_write": guest_files_to_write,
            "guest_replaced_services": guest_replaced_services,
            "guest_unapplied_files": guest_unapplied_files,
        }
