# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.vgpu.cluster_record runs in the task's worker process where it would run in the controller's own Python
(plugins/plugin_utils/_in_process.py), elsewhere as usual."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._in_process import InProcessModuleAction

ActionModule = InProcessModuleAction
