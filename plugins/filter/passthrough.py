# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for VMs with whole GPUs; the logic is in ``plugin_utils/_passthrough_guest.py`` and
``_passthrough_requests.py``, the docs in ``passthrough_guest_checks.yml`` and ``passthrough_requests.yml``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._lazy import lazy_module
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._filter_errors import filter_errors

# Imported where a filter of this file runs (plugin_utils/_lazy.py says why).
_passthrough_guest = lazy_module("plugin_utils._passthrough_guest")
_passthrough_requests = lazy_module("plugin_utils._passthrough_requests")


def passthrough_guest_checks(facts, expected_count=0, set_size=2, nvlink=True, nvlink_gbps=None):
    """``nvidia_smi | gpuops.vgpu.passthrough_guest_checks(2)``: the guest's passthrough checks by name, from
    ``nvidia_smi_info``'s facts or ``gpu_guest_info``'s read (``gpu_guest``, with its topology probe)."""
    if "gathered" in (facts or {}) and "nvidia_smi" in facts:
        facts = _passthrough_guest.from_guest_read(facts)
    return _passthrough_guest.evaluate(facts, int(expected_count or 0), int(set_size or 0),
                                       boolean(nvlink, strict=False), float(nvlink_gbps or 0) or None)


@filter_errors(ValueError)
def passthrough_requests(hosts, hostvars, extra=None):
    """``groups['passthrough_guests'] | gpuops.vgpu.passthrough_requests(hostvars)``: vm_passthrough's ``vms``."""
    return _passthrough_requests.requests(hosts, hostvars, extra)


class FilterModule(object):
    """Filters for guests with whole GPUs."""

    def filters(self):
        return {"passthrough_guest_checks": passthrough_guest_checks, "passthrough_requests": passthrough_requests}
