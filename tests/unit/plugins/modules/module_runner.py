# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run a module's real ``main()`` in this process, and stand a fake in for the vCenter client it builds."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible.module_utils import basic
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_args import patch_module_args

CONNECTION = {"hostname": "vc.test", "username": "admin@vsphere.local", "password": "S3cret!", "port": 443,
              "validate_certs": False}


def run_main(main, args, capsys, check_mode=False, diff=False):
    """``(exit code, result)`` of ``main()`` run with ``args`` (plus the ``--check`` / ``--diff`` flags)."""
    args = dict(args, _ansible_check_mode=check_mode, _ansible_diff=diff)
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exited:
            main()
    return exited.value.code, json.loads(capsys.readouterr().out)


def record_warnings(monkeypatch):
    """What the module passes to ``warn()``, in order (where ansible-core puts warnings depends on what it loaded)."""
    warnings = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, warning: warnings.append(warning))
    return warnings


class Session:
    """Stands for a logged-in VCenterClient: answers from ``fake``, remembers its options and whether it closed."""

    def __init__(self, fake, params):
        self.fake, self.params, self.closed = fake, dict(params), False

    def __getattr__(self, name):
        return getattr(self.fake, name)

    def __enter__(self):
        return None

    def __exit__(self, *exc_info):
        self.closed = True


def fake_vcenter(monkeypatch, fake):
    """Make ``VCenterClient.from_params`` open a ``Session`` on ``fake``; returns the sessions it opened."""
    sessions = []

    def from_params(params):
        sessions.append(Session(fake, params))
        return sessions[-1]

    monkeypatch.setattr(VCenterClient, "from_params", staticmethod(from_params))
    return sessions
