# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Several read-only commands in one round trip, each one's outcome kept apart, behind ``command_batch``.

Standard library only and Python 3.8 syntax: it runs on the guest.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

__all__ = ["command_batch", "run_commands"]


def command_batch(client, params, check_mode):
    """The ``command_batch`` module: ``run_commands`` with the host's ``run_command`` and ``get_bin_path``."""
    def command(argv, stdin):
        return client.run_command(argv, data=stdin)

    def find_executable(program):
        return client.get_bin_path(program) if "/" not in program else (program if _executable(program) else None)

    return {"changed": False, "outcomes": run_commands(params["commands"], command, find_executable)}


def _executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def run_commands(commands, run, find_executable):
    """``{name: outcome}`` for each of ``commands`` (``name``, ``argv``, optional ``stdin`` and ``after``), run in
    order.

    ``run(argv, stdin)`` returns ``(rc, stdout, stderr)``; ``find_executable(name)`` returns the path a program
    name (or path) runs from, or None. An outcome holds ``cmd``, ``rc``, ``stdout`` and ``stderr`` (trailing
    newlines removed) and ``msg``: empty, or why the command could not start (``rc`` 2, as with
    ``ansible.builtin.command``). A command whose ``after`` names an earlier command that did not exit 0 is not
    run: its outcome is ``{"skipped": True, "msg": ...}``.
    """
    _check(commands)
    outcomes = {}
    for command in commands:
        after = command.get("after")
        if after and outcomes[after].get("rc") != 0:
            outcomes[command["name"]] = {"skipped": True, "msg": "%s did not succeed" % after}
            continue
        argv = list(command["argv"])
        outcome = {"cmd": argv, "skipped": False, "msg": ""}
        if find_executable(argv[0]) is None:
            outcome.update(rc=2, stdout="", stderr="", msg="%s: No such file or directory" % argv[0])
        else:
            rc, stdout, stderr = run(argv, command.get("stdin"))
            outcome.update(rc=rc, stdout=stdout.rstrip("\r\n"), stderr=stderr.rstrip("\r\n"))
        outcomes[command["name"]] = outcome
    return outcomes


def _check(commands):
    seen = set()
    for command in commands:
        name = command["name"]
        if name in seen:
            raise InputError("commands: the name %r is used twice; give each command a name of its own." % name)
        if not command["argv"]:
            raise InputError("commands: %s has an empty argv; give the program and its arguments." % name)
        after = command.get("after")
        if after and after not in seen:
            raise InputError("commands: %s runs after %r, which is not an earlier command; name one listed before it."
                             % (name, after))
        seen.add(name)
