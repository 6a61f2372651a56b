# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bmc_cooling role's filter; the rule is in ``plugin_utils/_cooling_curve.py``, the docs in
``cooling_intent.yml``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._lazy import lazy_module

# Imported where a filter of this file runs (plugin_utils/_lazy.py says why).
_cooling_curve = lazy_module("plugin_utils._cooling_curve")


def cooling_intent(gpus, current=None, curve=None, floor="default"):
    """``gpus | gpuops.vgpu.cooling_intent(current, curve, floor)``: the intent the GPUs' headroom calls for."""
    if not isinstance(gpus, list):
        raise AnsibleFilterError("cooling_intent: the input is the GPU list of gpuops.vgpu.nvidia_smi_info "
                                 "(nvidia_smi.gpus), not %s." % type(gpus).__name__)
    try:
        return _cooling_curve.cooling_intent(gpus, current=current, curve=curve, floor=floor)
    except InputError as err:
        raise AnsibleFilterError("cooling_intent: %s" % err)


class FilterModule(object):
    """The bmc_cooling role's filter."""

    def filters(self):
        return {"cooling_intent": cooling_intent}
