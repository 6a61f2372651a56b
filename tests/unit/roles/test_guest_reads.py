# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every role that shares the guest read (gpu_guest_info with ``reuse``), a new one included: it has nothing to say
when it changes a guest (the read's fingerprint sees it), and the files and services its read asks for are
``<role>_guest_reads`` from its own defaults, documented in its argument spec, which playbooks/guests.yml,
servers.yml and passthrough.yml list in ``gpu_guest_info_reads`` without reaching into any role's vars/main.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

import pytest
import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
ROLES = os.path.join(ROOT, "roles")
GUESTS = os.path.join(ROOT, "playbooks", "guests.yml")
SERVERS = os.path.join(ROOT, "playbooks", "servers.yml")
PASSTHROUGH = os.path.join(ROOT, "playbooks", "passthrough.yml")
MODULE = "gpuops.vgpu.gpu_guest_info"


def _load(path):
    with open(path) as handle:
        return yaml.safe_load(handle) or {}


def _tasks(items):
    for task in items or []:
        if isinstance(task, dict):
            yield task
            for part in ("block", "rescue", "always"):
                yield from _tasks(task.get(part))


def shared_reads(role_dir):
    """The gpu_guest_info tasks of a role that pass ``reuse``."""
    found = []
    for path in sorted(glob.glob(os.path.join(role_dir, "tasks", "*.yml"))):
        found.extend(task[MODULE] for task in _tasks(_load(path)) if "reuse" in (task.get(MODULE) or {}))
    return found


SHARING = sorted(os.path.basename(path) for path in glob.glob(os.path.join(ROLES, "*")) if shared_reads(path))


def test_the_guest_roles_share_the_read():
    assert {"grid_driver", "grid_license", "cuda_toolkit", "cudnn", "gpu_monitoring", "gpu_validate",
            "nvidia_driver", "fabric_manager"} <= set(SHARING)


def test_no_role_or_playbook_moves_the_change_counter():
    for path in glob.glob(os.path.join(ROLES, "**", "*.yml"), recursive=True) + glob.glob(
            os.path.join(ROOT, "playbooks", "*.yml")):
        with open(path) as handle:
            assert "gpu_guest_info_changes" not in handle.read(), path


def _names(text, prefix):
    return set(re.findall(r"\b(%s_\w+)" % re.escape(prefix), text))


@pytest.mark.parametrize("role", SHARING)
def test_a_read_asks_for_what_the_role_declares_in_its_defaults(role):
    role_dir = os.path.join(ROLES, role)
    variable = role + "_guest_reads"
    asked = [dict((part, read[part]) for part in ("files", "services") if read.get(part))
             for read in shared_reads(role_dir)]
    if not any(asked):
        return
    for read in asked:
        for part, value in read.items():
            assert value == "{{ %s.%s }}" % (variable, part), (role, read)
    defaults = _load(os.path.join(role_dir, "defaults", "main.yml"))
    assert variable in defaults
    role_vars = os.path.join(role_dir, "vars", "main.yml")
    assert not os.path.exists(role_vars) or variable not in _load(role_vars)
    options = _load(os.path.join(role_dir, "meta", "argument_specs.yml"))["argument_specs"]["main"]["options"]
    assert variable in options
    # Everything it is made of comes from the defaults too, so that a play sees it without the role's vars.
    todo, seen = [variable], set()
    while todo:
        name = todo.pop()
        seen.add(name)
        assert name in defaults or name in options, (role, name)
        todo.extend(_names(yaml.safe_dump(defaults.get(name)), role) - seen)


def _sharing_play(path):
    """The play of ``path`` whose roles share the read."""
    plays = [play for play in _load(path) if (play.get("vars") or {}).get("gpu_guest_info_reuse")]
    assert len(plays) == 1, path
    return plays[0]


@pytest.mark.parametrize("path", [GUESTS, SERVERS, PASSTHROUGH], ids=["guests", "servers", "passthrough"])
def test_a_sharing_play_lists_every_role_reads_from_their_defaults(path):
    play = _sharing_play(path)
    roles = [task["ansible.builtin.import_role"]["name"].split(".")[-1] for task in play["tasks"]
             if "ansible.builtin.import_role" in task]
    validated = [task for task in play["tasks"] if "ansible.builtin.validate_argument_spec" in task]
    roles_var = [name for name in validated[0]["vars"] if name.endswith("__roles")]
    assert roles and validated[0]["vars"][roles_var[0]] == roles, "the inputs of every imported role are checked"
    assert all(task["ansible.builtin.import_role"].get("rolespec_validate") is False
               for task in play["tasks"] if "ansible.builtin.import_role" in task)
    declared = [role for role in roles
                if role + "_guest_reads" in _load(os.path.join(ROLES, role, "defaults", "main.yml"))]
    assert play["vars"]["gpu_guest_info_reads"] == ["{{ %s_guest_reads }}" % role for role in declared]
