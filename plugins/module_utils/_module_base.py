# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one layer that turns client errors into ``fail_json``, plus shared check-mode and diff helpers."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import traceback

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError


def run_module(argument_spec, logic, **module_kwargs):
    """Build the AnsibleModule, call ``logic(module)`` and exit with its result dict.

    ``logic`` returns the result dict (``changed`` and the module's return values). Any ``GpuopsError`` becomes a
    failure whose message ends with what the user can do; its details are returned alongside.
    """
    module = AnsibleModule(argument_spec=argument_spec, **module_kwargs)
    try:
        result = logic(module)
    except GpuopsError as err:
        module.fail_json(msg=str(err), **_jsonable(err.details))
    except Exception as err:  # noqa: BLE001 - last resort: keep the traceback for -vvv, the message for the user
        module.fail_json(msg="Unexpected error: %s: %s" % (type(err).__name__, err), exception=traceback.format_exc())
    result.setdefault("changed", False)
    module.exit_json(**result)


def diff_if_asked(module, result):
    """``result`` with its ``diff`` kept only when Ansible runs with ``--diff``."""
    diff = result.pop("diff", None)
    if module._diff and diff is not None:
        result["diff"] = diff
    return result


def _jsonable(details):
    return dict((key, value) for key, value in details.items() if value is not None)


class DiffTracker:
    """Collects before/after per object so modules return a real ``--diff``."""

    def __init__(self):
        self.before = {}
        self.after = {}

    def add(self, name, before, after):
        self.before[name] = before
        self.after[name] = after

    @property
    def changed(self):
        return self.before != self.after

    def diff(self):
        return {"before": self.before, "after": self.after}
