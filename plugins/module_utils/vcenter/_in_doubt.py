# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vCenter tasks whose start may have been lost: read back, never guessed, never sent twice.

When the connection drops after a task-starting request was sent (``ChangeInDoubt``), vCenter may have queued the
task or never seen the request. vCenter lists what it queued, runs or finished in the last ten minutes in
``TaskManager.recentTask`` (only tasks the session may see, the last 200 finished ones on vCenter: vSphere Web
Services API, TaskManager). A task on the same object queued since the request was sent is the request's own: it is
awaited like the others. When there is none, the request never executed and is sent again; a few rounds at most.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.clients import _retry
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ChangeInDoubt

IN_DOUBT = ChangeInDoubt.__name__


def run_tasks(client, jobs, parallel, timeout):
    """Run ``jobs`` (``(managed object, starter)`` pairs) through ``client.run_tasks``; a start whose answer was lost
    is settled from vCenter's recent tasks, a few rounds at most. Outcomes in the order of ``jobs``, as
    ``run_tasks`` gives them."""
    if not jobs:
        return []
    since = client.call(client.si.CurrentTime)
    outcomes = client.run_tasks([starter for _obj, starter in jobs], parallel=parallel, timeout=timeout)
    for _round in range(_retry.ATTEMPTS - 1):
        doubtful = [index for index, outcome in enumerate(outcomes) if outcome.get("fault") == IN_DOUBT]
        if not doubtful:
            break
        found = queued_since(client, [jobs[index][0] for index in doubtful], since)
        waiting = [index for index in doubtful if jobs[index][0]._moId in found]
        for index, outcome in zip(waiting, client.wait_for_tasks(
                [found[jobs[index][0]._moId] for index in waiting], timeout=timeout)):
            outcomes[index] = outcome
        never = [index for index in doubtful if index not in waiting]
        since = client.call(client.si.CurrentTime)
        for index, outcome in zip(never, client.run_tasks([jobs[index][1] for index in never], parallel=parallel,
                                                          timeout=timeout)):
            if outcome.get("fault") == IN_DOUBT:
                outcome = dict(outcome, error="%s (sent again: vCenter had not queued the earlier request)"
                               % outcome["error"])
            outcomes[index] = outcome
    return outcomes


def queued_since(client, objects, since):
    """The newest task vCenter queued on each of ``objects`` at or after ``since``, by the object's moid."""
    wanted = set(obj._moId for obj in objects)
    manager = client.content.taskManager
    recent = client.retrieve_objects([manager], ["recentTask"])[0].get("recentTask") or []
    found = {}
    for item in client.retrieve_objects(list(recent), ["info.entity", "info.queueTime"]):
        entity, queued = item.get("info.entity"), item.get("info.queueTime")
        if entity is None or entity._moId not in wanted or queued is None or queued < since:
            continue
        newest = found.get(entity._moId)
        if newest is None or queued >= newest[0]:
            found[entity._moId] = (queued, item["obj"])
    return dict((moid, task) for moid, (_queued, task) in found.items())
