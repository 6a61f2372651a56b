# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Redfish actions that answer with a task or job to follow: the POST, then GETs until it has ended."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, TimeoutExpired
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._redfish import odata_id

# TaskState (Redfish Task) and JobState (Redfish Job, Dell's DellJob) values of a task that will not change again.
ENDED_STATES = ("Completed", "Exception", "Killed", "Cancelled", "Failed", "CompletedWithErrors")
POLL_SECONDS = 2


def start_action(client, target, body):
    """POST ``body`` to the action ``target``; returns the ``Location`` of the task or job it started."""
    answer = client.request("POST", target, body)
    location = answer.header("Location") or odata_id(answer.body or {})
    if not location:
        raise ApiError("The BMC at %s accepted POST %s but named no task to follow (no Location header)."
                       % (client.baseuri, odata_id(target)))
    return location


def task_state(body):
    body = body if isinstance(body, dict) else {}
    return body.get("TaskState") or body.get("JobState")


def wait_task(client, uri, timeout, what):
    """GET ``uri`` until its task has ended, at most ``timeout`` seconds; returns the last Response. An answer
    that is not JSON (what some tasks return once they have ended) counts as ended."""
    deadline = client.clock() + timeout
    while True:
        answer = client.request("GET", uri)
        state = task_state(answer.body)
        if answer.text is not None or state in ENDED_STATES or (state is None and answer.status != 202):
            return answer
        if client.clock() >= deadline:
            raise TimeoutExpired("%s on the BMC at %s did not end within %s s (task %s is %s)." % (
                what, client.baseuri, timeout, odata_id(uri), state or "still running"),
                hint="Look at the task on the BMC; run again once it has ended.")
        client.sleep(POLL_SECONDS)
