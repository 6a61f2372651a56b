# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``patch_module_args`` for running a module's real ``main()`` in a unit test, on every supported ansible-core."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import json

from ansible.module_utils import basic

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core before 2.19
    from unittest import mock

    @contextlib.contextmanager
    def patch_module_args(args):
        payload = json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode()
        with mock.patch.object(basic, "_ANSIBLE_ARGS", payload):
            yield

__all__ = ["patch_module_args"]
