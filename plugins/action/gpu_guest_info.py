# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of gpuops.vgpu.gpu_guest_info: with ``reuse``, one read of a guest serves every later read in
the same play until something says the guest changed.

The state read is kept in the host fact ``gpu_guest_info_cache`` with what it was read under: the play, the count
``gpu_guest_info_changes`` (roles that change a guest add one to it) and the nvidia-smi options. A later read with
``reuse`` that asks for nothing more than was read is answered from it without reaching the guest; otherwise the
guest is read again, every probe and the files read before as well, so that the following reads find them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.gpuops.vgpu.plugins.module_utils.guest.gpu_state import PROBES

MODULE = "gpuops.vgpu.gpu_guest_info"
CACHE_FACT = "gpu_guest_info_cache"
CHANGES_VAR = "gpu_guest_info_changes"


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
        wanted = set(PROBES if args.get("gather") is None else args["gather"])
        files = list(args.get("files") or [])
        services = list(args.get("services") or [])
        if cached_state is not None and _covers(cached_state, wanted, files, services):
            result.update(changed=False, gpu_guest=cached_state, reused=True)
            return result

        earlier = cached_state or {}
        module_args = dict(args, files=sorted(set(files) | set(earlier.get("files", {}))),
                           services=sorted(set(services) | set(earlier.get("services", {}))))
        module_args.pop("gather", None)
        answer = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
        result.update(answer)
        if not answer.get("failed"):
            facts = dict(answer.get("ansible_facts") or {})
            facts[CACHE_FACT] = {"key": key, "state": answer["gpu_guest"]}
            result["ansible_facts"] = facts
            result["reused"] = False
        return result

    def _cache_key(self, args, task_vars):
        return {
            "play": _play_id(self._task),
            "changes": int(task_vars.get(CHANGES_VAR) or 0),
            "query_format": args.get("query_format") or "xml",
            "nvidia_smi_path": args.get("nvidia_smi_path"),
        }


def _covers(state, wanted, files, services):
    return (wanted <= set(state.get("gathered", [])) and set(files) <= set(state.get("files", {}))
            and set(services) <= set(state.get("services", {})))


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
