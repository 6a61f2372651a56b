# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of gpuops.vgpu.gpu_guest_info: with ``reuse``, one read of a guest serves every later read in
the same play until something says the guest changed.

The state read is kept in the host fact ``gpu_guest_info_cache`` with what it was read under: the play, the count
``gpu_guest_info_changes`` (roles that change a guest add one to it) and the nvidia-smi options. A later read with
``reuse`` that asks for nothing more than was read is answered from it without reaching the guest. A read under
the same key that asks for more reads only what is missing and adds it to the kept state. Otherwise (the first
read, or the guest changed) the guest is read with every probe, the files and services read before, and those
that the play names in ``gpu_guest_info_reads`` for its later reads, so that those find them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._probe_names import PROBES

MODULE = "gpuops.vgpu.gpu_guest_info"
CACHE_FACT = "gpu_guest_info_cache"
CHANGES_VAR = "gpu_guest_info_changes"
# What the play's later reads ask for: a list of {files: [...], services: [...]}, one per role (playbooks/guests.yml).
READS_VAR = "gpu_guest_info_reads"


class ActionModule(ActionBase):
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        args = dict(self._task.args)
        if not boolean(args.pop("reuse", False), strict=False):
            result.update(self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars))
            return result

        key = self._cache_key(args, task_vars)
        cached = task_vars.get(CACHE_FACT) or {}
        cached_state = cached.get("state") if cached.get("key") == key else None
        later = list(self._templar.template(task_vars.get(READS_VAR) or []))
        if cached_state is None and cached.get("state"):
            later.append(cached["state"])
        module_args, merge = read_plan(args, cached_state, later)
        if module_args is None:
            result.update(changed=False, gpu_guest=cached_state, reused=True)
            return result

        answer = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
        result.update(answer)
        if not answer.get("failed"):
            state = merged(cached_state, answer["gpu_guest"]) if merge else answer["gpu_guest"]
            facts = dict(answer.get("ansible_facts") or {})
            facts[CACHE_FACT] = {"key": key, "state": state}
            result.update(ansible_facts=facts, gpu_guest=state, reused=False)
        return result

    def _cache_key(self, args, task_vars):
        return {
            "play": _play_id(self._task),
            "changes": int(task_vars.get(CHANGES_VAR) or 0),
            "query_format": args.get("query_format") or "xml",
            "nvidia_smi_path": args.get("nvidia_smi_path"),
        }


def read_plan(args, cached_state, later_reads):
    """``(module_args, merge)`` for a read with ``reuse``: None when ``cached_state`` (the state kept under the
    same key, or None) answers it; the missing probes, files and services only, to be merged into it, when it
    answers part of it; else a whole read (every probe) of what is asked and of the files and services of
    ``later_reads`` (what the play's later reads ask for, and what an outdated read held)."""
    wanted = set(PROBES if args.get("gather") is None else args["gather"])
    files = set(args.get("files") or [])
    services = set(args.get("services") or [])
    if cached_state is not None:
        missing_probes = wanted - set(cached_state.get("gathered", []))
        missing_files = files - set(cached_state.get("files") or {})
        missing_services = services - set(cached_state.get("services") or {})
        if not (missing_probes or missing_files or missing_services):
            return None, False
        return dict(args, gather=[name for name in PROBES if name in missing_probes],
                    files=sorted(missing_files), services=sorted(missing_services)), True
    for read in later_reads:
        files.update(read.get("files") or [])
        services.update(read.get("services") or [])
    module_args = dict(args, files=sorted(files), services=sorted(services))
    module_args.pop("gather", None)
    return module_args, False


def merged(state, addition):
    """``state`` with the probes, files, services and errors of ``addition`` (a read of what it lacked)."""
    result = dict(state)
    for name in addition.get("gathered", []):
        result[name] = addition[name]
    result["gathered"] = [name for name in PROBES if name in set(state.get("gathered", []))
                          | set(addition.get("gathered", []))]
    for part in ("files", "services", "errors"):
        if addition.get(part) or part in state:
            result[part] = dict(state.get(part) or {}, **(addition.get(part) or {}))
    return result


def _play_id(task):
    """The play the task runs in: a read kept from another play (or an earlier run, through a fact cache) is never
    reused."""
    node = task
    while node is not None:
        play = getattr(node, "_play", None)
        if play is not None:
            return play._uuid
        node = getattr(node, "_parent", None)
    return None
