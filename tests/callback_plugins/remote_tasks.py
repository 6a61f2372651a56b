# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test-tree callback: how many tasks ran on each host (remote executions) and how long each role took.

Not shipped with the collection. Enable it with ANSIBLE_CALLBACK_PLUGINS=<this directory> and
ANSIBLE_CALLBACKS_ENABLED=remote_tasks; GPUOPS_REMOTE_TASKS_FILE=<path> writes the counts as JSON.

A remote execution is a task result for a host that ran there: not skipped, not delegated to localhost, and not
one of the actions that only run on the controller (set_fact, assert, debug, fail, includes, ...), nor a
gpu_guest_info read answered on the controller (``reused``). A loop counts each item that ran.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: remote_tasks
type: aggregate
short_description: Counts the tasks executed on each host and the time per role
description:
  - Counts per host the task executions that reached the host, and the wall time per role, and writes them to
    E(GPUOPS_REMOTE_TASKS_FILE) as JSON at the end of the run; prints a summary.
requirements:
  - enabled with E(ANSIBLE_CALLBACKS_ENABLED)
"""

import json
import os
import time

from ansible.plugins.callback import CallbackBase

# Actions that run in the controller's action plugin only and never reach the host.
CONTROLLER_ONLY = frozenset(
    name for short in ("set_fact", "assert", "debug", "fail", "meta", "include_tasks", "import_tasks",
                       "include_role", "import_role", "include_vars", "add_host", "group_by", "set_stats", "pause",
                       "validate_argument_spec", "async_status_local")
    for name in (short, "ansible.builtin." + short, "ansible.legacy." + short))
LOCAL = ("localhost", "127.0.0.1")
GUEST_INFO = ("gpuops.vgpu.gpu_guest_info", "gpu_guest_info")


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "remote_tasks"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self.counts = {}
        self.tasks = {}
        self.changed = {}
        self.skipped = {}
        self.roles = {}
        self._role = None
        self._role_started = None
        self.plays = []
        self._play = None
        # Per play name: task executions (every result that was not skipped, set_fact and the like included) and
        # module runs (delegated ones included; actions that only run on the controller excluded).
        self.executions = {}
        self.module_runs = {}
        self._started = time.time()

    def _close_play(self):
        if self._play is not None:
            self.plays.append([self._play[0], round(time.time() - self._play[1], 2)])
        self._play = None

    def v2_playbook_on_play_start(self, play):
        self._close_play()
        self._close_role()
        self._play = (play.get_name(), time.time())

    def _close_role(self):
        if self._role is not None:
            self.roles[self._role] = self.roles.get(self._role, 0.0) + time.time() - self._role_started
        self._role = None

    def v2_playbook_on_task_start(self, task, is_conditional):
        role = task._role.get_name() if task._role else None
        if role != self._role:
            self._close_role()
            self._role, self._role_started = role, time.time()

    def _count(self, result, items=1):
        task = result._task
        if task.action in CONTROLLER_ONLY:
            return
        if not (task.action in GUEST_INFO and result._result.get("reused")):
            play = self._play[0] if self._play else ""
            self.module_runs[play] = self.module_runs.get(play, 0) + items
        delegated = result._result.get("_ansible_delegated_vars", {}).get("ansible_host") or task.delegate_to
        if delegated in LOCAL:
            return
        # gpu_guest_info with reuse answered from the read kept on the controller (its action plugin);
        # tests/integration/test_guest_read_reuse.py shows that such an answer never reached the guest.
        if task.action in GUEST_INFO and result._result.get("reused"):
            return
        host = result._host.get_name()
        self.counts[host] = self.counts.get(host, 0) + items
        self.tasks.setdefault(host, []).append("%s (%s)" % (task.get_name(), task.action))
        if result._result.get("changed"):
            self.changed.setdefault(host, []).append(task.get_name())

    def _ran(self, result):
        loop = result._result.get("results")
        ran = len([item for item in loop if not item.get("skipped")]) if isinstance(loop, list) else 1
        play = self._play[0] if self._play else ""
        self.executions[play] = self.executions.get(play, 0) + ran
        if ran:
            self._count(result, ran)

    def v2_runner_on_ok(self, result):
        self._ran(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._ran(result)

    def v2_runner_on_unreachable(self, result):
        self._count(result)

    def v2_runner_on_skipped(self, result):
        # Every skipped task is still templated and evaluated by the controller, once per host.
        host = result._host.get_name()
        self.skipped[host] = self.skipped.get(host, 0) + 1

    def v2_playbook_on_stats(self, stats):
        self._close_role()
        self._close_play()
        report = {"remote_tasks": self.counts, "tasks": self.tasks, "changed": self.changed, "skipped": self.skipped,
                  "play_seconds": self.plays, "executions": self.executions, "module_runs": self.module_runs,
                  "role_seconds": dict((name, round(value, 2)) for name, value in self.roles.items()),
                  "seconds": round(time.time() - self._started, 2)}
        path = os.environ.get("GPUOPS_REMOTE_TASKS_FILE")
        if path:
            with open(path, "w") as handle:
                json.dump(report, handle, indent=1, sort_keys=True)
        self._display.display("Remote task executions per host: %s" % json.dumps(self.counts, sort_keys=True))
        self._display.display("Skipped tasks per host: %s" % json.dumps(self.skipped, sort_keys=True))
        self._display.display("Seconds per play: %s" % ", ".join("%s %.1f" % (name, value) for name, value in self.plays))
        self._display.display("Seconds per role: %s" % ", ".join(
            "%s %.1f" % (name, value) for name, value in sorted(self.roles.items(), key=lambda kv: -kv[1])))
