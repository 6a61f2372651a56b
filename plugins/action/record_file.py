# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of gpuops.vgpu.record_file: records live on the controller, so where the task runs there (a local
connection without become, as ``delegate_to: localhost`` gives) the record is read or written in this process, with
the module's own options and logic, instead of starting the module with the record in its arguments. Elsewhere the
module runs as any other.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError
from ansible_collections.gpuops.vgpu.plugins.module_utils._records import reconcile
from ansible_collections.gpuops.vgpu.plugins.modules.record_file import MUTUALLY_EXCLUSIVE, argument_spec

MODULE = "gpuops.vgpu.record_file"


class ActionModule(ActionBase):
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        if not self._on_controller():
            result.update(self._execute_module(module_name=MODULE, module_args=self._task.args, task_vars=task_vars))
            return result
        checked = ArgumentSpecValidator(argument_spec(), mutually_exclusive=MUTUALLY_EXCLUSIVE).validate(
            dict(self._task.args))
        if checked.error_messages:
            result.update(failed=True, msg="; ".join(checked.error_messages))
            return result
        try:
            answer = reconcile(None, checked.validated_parameters, self._task.check_mode)
        except GpuopsError as err:
            result.update(dict((key, value) for key, value in err.details.items() if value is not None),
                          failed=True, msg=str(err))
            return result
        diff = answer.pop("diff", None)
        if self._task.diff and diff is not None:
            result["diff"] = diff
        result.update(answer)
        return result

    def _on_controller(self):
        return self._connection.transport == "local" and not self._play_context.become
