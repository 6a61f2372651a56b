# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Modules of the collection imported when first used.

To find one filter of a collection, Ansible loads every filter file of that collection in the worker process of each
task and host that uses it (``Jinja2Loader.get_with_context``), compiling each file and all it imports. The filter
files therefore import their logic through ``lazy_module``, when a filter of theirs runs, and a task that uses one
filter does not pay for the others' imports (pyVmomi among them).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib

_PREFIX = "ansible_collections.gpuops.vgpu.plugins."


class _LazyModule(object):
    """Stands for a module until an attribute of it is asked for, then imports it."""

    def __init__(self, name):
        self._name = name
        self._module = None

    def __getattr__(self, attribute):
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attribute)


def lazy_module(name):
    """The collection's module ``name`` (under ``plugins.``, for example ``plugin_utils._doctor``), imported on first
    use."""
    return _LazyModule(_PREFIX + name)
