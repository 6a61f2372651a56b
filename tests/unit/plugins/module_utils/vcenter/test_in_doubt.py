# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A task start whose answer was lost: awaited when vCenter queued it, sent again when it never did."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
from types import SimpleNamespace

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _in_doubt

vim = pytest.importorskip("pyVmomi").vim

START = datetime.datetime(2026, 11, 28, 9, 0, tzinfo=datetime.timezone.utc)
IN_DOUBT = {"state": "error", "result": None, "error": "Lost the connection", "fault": "ChangeInDoubt"}
SUCCESS = {"state": "success", "result": None, "error": None, "fault": None}


class Client(object):
    """``run_tasks`` answers from a script per starter; ``recent`` is TaskManager.recentTask with each task's info."""

    def __init__(self, recent):
        self.recent = recent
        self.started, self.awaited = [], []
        self.content = SimpleNamespace(taskManager=SimpleNamespace(_moId="TaskManager"))
        self.si = SimpleNamespace(CurrentTime=lambda: START)

    def call(self, method, *args, **kwargs):
        return method(*args, **kwargs)

    def run_tasks(self, starters, parallel=8, timeout=3600):
        return [starter() for starter in starters]

    def retrieve_objects(self, objects, properties):
        if objects and objects[0] is self.content.taskManager:
            return [{"obj": objects[0], "recentTask": [task for task, _info in self.recent]}]
        infos = dict((task._moId, info) for task, info in self.recent)
        return [dict(infos[task._moId], obj=task, moid=task._moId) for task in objects]

    def wait_for_tasks(self, tasks, timeout=3600):
        self.awaited.extend(task._moId for task in tasks)
        return [SUCCESS for _task in tasks]


def starter(client, name, answers):
    def start():
        client.started.append(name)
        return answers.pop(0)
    return start


def task(moid, vm, seconds):
    return (vim.Task(moid), {"info.entity": vm, "info.queueTime": START + datetime.timedelta(seconds=seconds)})


def test_a_lost_answer_whose_task_vcenter_queued_is_awaited_and_not_sent_again():
    vm = vim.VirtualMachine("vm-7")
    client = Client([task("task-1", vm, -30), task("task-2", vm, 1), task("task-3", vim.VirtualMachine("vm-8"), 2)])
    outcomes = _in_doubt.run_tasks(client, [(vm, starter(client, "vm-7", [IN_DOUBT]))], 8, 60)
    assert outcomes == [SUCCESS] and client.started == ["vm-7"] and client.awaited == ["task-2"]


def test_a_lost_request_vcenter_never_queued_is_sent_again_once():
    vm, other = vim.VirtualMachine("vm-7"), vim.VirtualMachine("vm-8")
    client = Client([task("task-1", vm, -30)])
    outcomes = _in_doubt.run_tasks(client, [(vm, starter(client, "vm-7", [IN_DOUBT, SUCCESS])),
                                            (other, starter(client, "vm-8", [SUCCESS]))], 8, 60)
    assert outcomes == [SUCCESS, SUCCESS] and client.started == ["vm-7", "vm-8", "vm-7"]


def test_answers_lost_every_time_are_reported_not_guessed_after_a_few_rounds():
    vm = vim.VirtualMachine("vm-7")
    client = Client([])
    outcomes = _in_doubt.run_tasks(client, [(vm, starter(client, "vm-7", [IN_DOUBT] * 4))], 8, 60)
    assert outcomes[0]["fault"] == "ChangeInDoubt" and "sent again" in outcomes[0]["error"]
    assert client.started == ["vm-7"] * 4
