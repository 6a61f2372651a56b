# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""command_batch's logic: each command's outcome apart, a missing program, a command that waits for another."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import subprocess

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest.commands import run_commands


def run(argv, stdin):
    proc = subprocess.run(argv, input=None if stdin is None else stdin + "\n", stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def find(program):
    return None if program.startswith("/missing") else program


def test_each_command_keeps_its_own_outcome():
    outcomes = run_commands([
        {"name": "ok", "argv": ["sh", "-c", "echo out; echo err >&2"]},
        {"name": "fails", "argv": ["sh", "-c", "echo half; exit 3"]},
        {"name": "reads", "argv": ["cat"], "stdin": "the source"},
    ], run, find)
    assert outcomes["ok"] == {"cmd": ["sh", "-c", "echo out; echo err >&2"], "rc": 0, "stdout": "out",
                              "stderr": "err", "msg": "", "skipped": False}
    assert outcomes["fails"]["rc"] == 3 and outcomes["fails"]["stdout"] == "half"
    assert outcomes["reads"]["stdout"] == "the source"


def test_a_missing_program_is_an_outcome_not_a_failure():
    outcomes = run_commands([{"name": "nvcc", "argv": ["/missing/nvcc", "--version"]},
                             {"name": "after", "argv": ["true"]}], run, find)
    assert outcomes["nvcc"]["rc"] == 2 and "No such file or directory" in outcomes["nvcc"]["msg"]
    assert outcomes["nvcc"]["msg"].startswith("/missing/nvcc")
    assert outcomes["after"]["rc"] == 0


def test_a_command_after_one_that_failed_does_not_run():
    ran = []

    def recording(argv, stdin):
        ran.append(argv[0])
        return run(argv, stdin)

    outcomes = run_commands([{"name": "nvcc", "argv": ["false"]},
                             {"name": "program", "argv": ["true"], "after": "nvcc"},
                             {"name": "nvenc", "argv": ["true"]}], recording, find)
    assert outcomes["program"] == {"skipped": True, "msg": "nvcc did not succeed"}
    assert ran == ["false", "true"] and outcomes["nvenc"]["rc"] == 0


@pytest.mark.parametrize("commands, message", [
    ([{"name": "a", "argv": ["true"]}, {"name": "a", "argv": ["true"]}], "the name 'a' is used twice"),
    ([{"name": "a", "argv": []}], "a has an empty argv"),
    ([{"name": "a", "argv": ["true"], "after": "b"}, {"name": "b", "argv": ["true"]}], "runs after 'b', which is not"),
])
def test_bad_input_is_refused_before_anything_runs(commands, message):
    def never(argv, stdin):
        raise AssertionError("ran %s" % argv)

    with pytest.raises(InputError, match=message):
        run_commands(commands, never, find)
