#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: command_batch
short_description: Run several read-only commands in one task, each one's result apart
version_added: 0.1.0
description:
  - Runs the commands of O(commands) on the target, one after the other, in one task (one round trip), and returns
    each one's return code, output and error output under its name, as C(ansible.builtin.command) would return
    them. A command that fails does not fail the task; deciding what its result means is the caller's.
  - For checks that only read, such as the ones of the gpuops.vgpu.gpu_validate role. Never reports a change.
  - Commands run without a shell. Uses only the Python standard library on the target.
author:
  - gpuops maintainers (@gpuops)
attributes:
  check_mode:
    description: Runs nothing in check mode, like C(ansible.builtin.command); set C(check_mode=false) on the task
      for commands that only read.
    support: none
  diff_mode:
    description: No diff.
    support: none
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: posix
options:
  commands:
    description: The commands, in the order they run.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The key of its result under RV(outcomes); unique.
        type: str
        required: true
      argv:
        description: The program (a name looked up in E(PATH), or a path) and its arguments.
        type: list
        elements: str
        required: true
      stdin:
        description: Text given on standard input (a newline is added, as C(ansible.builtin.command) does).
        type: str
      after:
        description: The name of an earlier command that must have exited 0 for this one to run.
        type: str
seealso:
  - name: ansible.builtin.command
    description: Runs one command on the target.
    link: https://docs.ansible.com/ansible/latest/collections/ansible/builtin/command_module.html
"""

EXAMPLES = r"""
- name: Ask nvcc for its version, then compile a program with it
  gpuops.vgpu.command_batch:
    commands:
      - name: nvcc
        argv: [/usr/local/cuda/bin/nvcc, --version]
      - name: compile
        argv: [/usr/local/cuda/bin/nvcc, -o, /tmp/vector_add, /tmp/vector_add.cu]
        after: nvcc
  check_mode: false
  register: checks

- name: Show nvcc's answer
  ansible.builtin.debug:
    msg: "{{ checks.outcomes.nvcc.stdout.splitlines() | last | default('') }}"
"""

RETURN = r"""
outcomes:
  description:
    - Per command name - C(cmd) (the argv), C(rc), C(stdout), C(stderr) (trailing newlines removed), C(msg) (empty,
      or why the command could not start; C(rc) is then 2) and C(skipped) (true, with C(msg), when its O(commands[].after)
      command did not exit 0; it then has no C(rc)).
  returned: always
  type: dict
  sample: {nvcc: {cmd: [/usr/local/cuda/bin/nvcc, --version], rc: 0, skipped: false, msg: "", stderr: "",
           stdout: "nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 11.6, V11.6.124"}}
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import Host, run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest.commands import command_batch


def argument_spec():
    return dict(
        commands=dict(type="list", elements="dict", required=True, options=dict(
            name=dict(type="str", required=True),
            argv=dict(type="list", elements="str", required=True),
            stdin=dict(type="str"),
            after=dict(type="str"),
        )),
    )


def main():
    run_module(argument_spec(), command_batch, client=Host)


if __name__ == "__main__":
    main()
