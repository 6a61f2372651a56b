# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bios role's filter; the logic is in ``plugin_utils/_bios_summary.py`` and the docs in ``bios_summary.yml``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._lazy import lazy_module

# Imported where a filter of this file runs (plugin_utils/_lazy.py says why).
_bios_summary = lazy_module("plugin_utils._bios_summary")


def bios_summary(batch, hostvars, failed=None):
    """``ansible_play_batch | gpuops.vgpu.bios_summary(hostvars)``: the hosts sorted by what their BIOS needs."""
    try:
        return _bios_summary.summarize(batch, hostvars, failed)
    except (KeyError, TypeError, AttributeError) as err:
        raise AnsibleFilterError("bios_summary: each host needs the bios_result of gpuops.vgpu.bios_settings (%s)."
                                 % err)


class FilterModule(object):
    """The bios role's filter."""

    def filters(self):
        return {"bios_summary": bios_summary}
