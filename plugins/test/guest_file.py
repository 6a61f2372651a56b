# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guest roles' test ``guest_file_as``; the logic is in ``plugin_utils/_file_state.py``, the docs in
``guest_file_as.yml``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._file_state import file_as
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._filter_errors import filter_errors


@filter_errors(InputError)
def guest_file_as(state, wanted):
    """Whether a path as ``gpu_guest_info`` described it (``files``) is already what a copy, file or link task
    asking for ``wanted`` would leave."""
    return file_as(state, wanted)


class TestModule(object):
    """The guest roles' test."""

    def tests(self):
        return {"guest_file_as": guest_file_as}
