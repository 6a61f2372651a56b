# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plugin of the vCenter and BMC modules: where the module would run on the controller itself, with the
controller's own Python, it runs in the worker process Ansible has already started for the task.

A module of this collection that talks to vCenter or a BMC runs where the play's vCenter tasks run, which is the
controller (``localhost`` or a host with ``ansible_connection: local``). Ansible would start a new Python there for
every task: build the AnsiballZ payload, start the interpreter, unpack and import Ansible's module code again. Here
the module's own ``main()`` runs in the task's worker (a process forked for this task alone, which ends with it), fed
its arguments the way AnsiballZ feeds them (``ansible.module_utils.basic``'s serialized arguments, profile
``legacy``) and read back through the same result parsing, so the module, its checks, ``no_log`` masking, check
mode and ``--diff`` behave as they do in a process of their own.

It runs the usual way whenever the module would not run in the controller's Python: another connection, become,
async, an ``environment`` for the task, or an ``ansible_python_interpreter`` other than the controller's.
``GPUOPS_MODULES_IN_PROCESS=false`` (or the variable ``gpuops_modules_in_process: false``) turns it off.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import json
import os
import runpy
import sys
import traceback

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible.module_utils import basic
from ansible.module_utils.common import warnings as module_warnings
from ansible.vars.clean import remove_internal_keys

try:
    from ansible.module_utils import _internal as module_internal
    from ansible.module_utils.common.json import Direction, get_module_encoder
except ImportError:  # pragma: no cover - before ansible-core 2.19 (no serialization profiles) modules run as usual
    module_internal = Direction = get_module_encoder = None

PROFILE = "legacy"
SWITCH_ENV = "GPUOPS_MODULES_IN_PROCESS"
SWITCH_VAR = "gpuops_modules_in_process"
PACKAGE = "ansible_collections.gpuops.vgpu.plugins.modules."


class InProcessModuleAction(ActionBase):
    """Runs the task's module in this worker process where it would run in the controller's Python anyway."""

    _supports_check_mode = True
    _supports_async = True

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(InProcessModuleAction, self).run(tmp, task_vars)
        wrap_async = self._task.async_val and not self._connection.has_native_async
        if not self._in_process(task_vars):
            result.update(self._execute_module(task_vars=task_vars, wrap_async=wrap_async))
            return result
        result.update(self._run_here(task_vars))
        return result

    def _in_process(self, task_vars):
        if get_module_encoder is None or not boolean(os.environ.get(SWITCH_ENV, "true"), strict=False):
            return False
        if not boolean(self._templar.template(task_vars.get(SWITCH_VAR, True)), strict=False):
            return False
        # A task timeout interrupts the module with an exception its own error handling would take for a failure.
        if (self._connection.transport != "local" or self._play_context.become or self._task.async_val
                or self._task.timeout):
            return False
        environment = {}
        self._compute_environment_string(environment)
        if environment:
            return False
        host_vars = task_vars
        if self._task.delegate_to:
            host_vars = (task_vars.get("ansible_delegated_vars") or {}).get(self._task.delegate_to) or {}
        interpreter = self._templar.template(host_vars.get("ansible_python_interpreter"))
        return same_python(interpreter, sys.executable)

    def _run_here(self, task_vars):
        name = self._task.resolved_action or self._task.action
        module_args = dict(self._task.args)
        self._update_module_args(name, module_args, task_vars)
        encoder = get_module_encoder(PROFILE, Direction.CONTROLLER_TO_MODULE)
        arguments = json.dumps({"ANSIBLE_MODULE_ARGS": module_args}, cls=encoder).encode("utf-8")
        output, errors = run_module_main(PACKAGE + name.rsplit(".", 1)[-1], arguments)
        data = self._parse_returned_data({"stdout": output, "stderr": errors, "rc": 0}, PROFILE)
        data.pop("_ansible_suppress_tmpdir_delete", None)
        remove_internal_keys(data)
        return data


def same_python(interpreter, executable):
    """Whether ``interpreter`` (the host's ``ansible_python_interpreter``) is the Python running this process: the
    same file, reached from the same directory (a virtual environment's ``python`` links to the base interpreter,
    but sees other packages)."""
    if not interpreter or not executable:
        return False
    interpreter, executable = os.path.abspath(str(interpreter)), os.path.abspath(executable)
    return (os.path.dirname(interpreter) == os.path.dirname(executable)
            and os.path.realpath(interpreter) == os.path.realpath(executable))


def run_module_main(module_name, arguments):
    """``(stdout, stderr)`` of the module run as ``__main__`` with ``arguments`` (its serialized arguments): its
    result, or a failure naming the error it raised instead of exiting; and what it wrote to stderr (Python's
    warnings), which Ansible keeps only when the result cannot be read, as for a module process."""
    saved = basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE, sys.stdout, sys.stderr, sys.argv
    # Warnings and deprecations collect in module-level registries: each run starts with none, as a new process would.
    registries = (module_warnings._global_warnings, module_warnings._global_deprecations)
    kept = [dict(registry) for registry in registries]
    for registry in registries:
        registry.clear()
    captured, errors = io.StringIO(), io.StringIO()
    basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE = arguments, PROFILE
    sys.stdout, sys.stderr = captured, errors
    # Module code in the controller's process hands its warnings to the controller's display at once; as a module
    # it returns them with its result, where the task's result keeps them.
    on_controller, module_internal.is_controller = module_internal.is_controller, False
    try:
        runpy.run_module(module_name, run_name="__main__", alter_sys=True)
    except SystemExit:
        pass
    except Exception as err:  # noqa: BLE001 - what a module process would print for an error it did not handle
        captured.write(json.dumps({"failed": True, "msg": "Unexpected error: %s: %s" % (type(err).__name__, err),
                                   "exception": traceback.format_exc()}))
    finally:
        module_internal.is_controller = on_controller
        basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE, sys.stdout, sys.stderr, sys.argv = saved
        for registry, before in zip(registries, kept):
            registry.clear()
            registry.update(before)
    return captured.getvalue(), errors.getvalue()
