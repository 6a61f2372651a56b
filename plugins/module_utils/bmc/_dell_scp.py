# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Dell system attributes through a Server Configuration Profile (SCP): how iDRAC7/8, which serve no DellAttributes
over Redfish, read and set them. Export and import are manager actions (``EID_674_Manager.ExportSystemConfiguration``
and ``...ImportSystemConfiguration``) that start a job; its task ``/redfish/v1/TaskService/Tasks/<job id>`` answers
with the exported profile's XML, or with the import's end and messages. SCP names an attribute
``ThermalSettings.1#ThermalProfile`` where DellAttributes say ``ThermalSettings.1.ThermalProfile``.

Sources: docs/bmc_cooling.md.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from xml.etree import ElementTree

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._redfish_tasks import (
    start_action, task_state, wait_task)

COMPONENT = "System.Embedded.1"
TASKS = "/redfish/v1/TaskService/Tasks/"
SCP_TIMEOUT = 600
# Dell's import script takes these phrases in a task's messages for a failed import, whatever TaskState says.
FAILED_PHRASES = ("failed", "completed with errors", "not one")


def scp_actions(manager):
    """``{"export": uri, "import": uri}`` where the manager advertises both SCP actions, else None."""
    actions = {}
    for name, action in ((manager.get("Actions") or {}).get("Oem") or {}).items():
        for kind in ("export", "import"):
            if name.endswith("%sSystemConfiguration" % kind.capitalize()) and isinstance(action, dict):
                actions[kind] = action.get("target")
    return actions if actions.get("export") and actions.get("import") else None


def task_uri(location):
    """The task of the job ``Location`` names, where Dell's scripts follow it."""
    job = re.search(r"JID_[0-9A-Za-z_]+", location or "")
    return TASKS + job.group() if job else location


def scp_name(name):
    group, _dot, rest = name.partition(".")
    index, _dot, attribute = rest.partition(".")
    return "%s.%s#%s" % (group, index, attribute) if attribute else name


def export_system_attributes(client, actions, timeout=SCP_TIMEOUT):
    """The system attributes, read-only ones included, by their DellAttributes names; values as text."""
    body = {"ExportFormat": "XML", "ShareParameters": {"Target": "System"}, "IncludeInExport": "IncludeReadOnly"}
    answer = wait_task(client, task_uri(start_action(client, actions["export"], body)), timeout,
                       "The Server Configuration Profile export")
    if not answer.text or "<SystemConfiguration" not in answer.text:
        raise ApiError("The iDRAC at %s ended its Server Configuration Profile export without the profile: %s." % (
            client.baseuri, "; ".join(task_messages(answer.body)) or task_state(answer.body)),
            hint="Look at the job in the iDRAC's job queue, then run again.")
    try:
        root = ElementTree.fromstring(answer.text[answer.text.index("<SystemConfiguration"):])
    except ElementTree.ParseError as err:
        raise ApiError("The iDRAC at %s exported a profile that is not XML: %s." % (client.baseuri, err))
    values = {}
    for component in root.iter("Component"):
        if component.get("FQDD") == COMPONENT:
            for attribute in component.iter("Attribute"):
                values[attribute.get("Name", "").replace("#", ".", 1)] = (attribute.text or "").strip()
    return values


def import_system_attributes(client, actions, changes, timeout=SCP_TIMEOUT):
    """Import ``changes`` (DellAttributes names) and wait for the job; raises ApiError with its messages."""
    root = ElementTree.Element("SystemConfiguration")
    component = ElementTree.SubElement(root, "Component", FQDD=COMPONENT)
    for name, value in sorted(changes.items()):
        ElementTree.SubElement(component, "Attribute", Name=scp_name(name)).text = str(value)
    # NoReboot: the thermal settings are the iDRAC's own and need no host restart.
    body = {"ImportBuffer": ElementTree.tostring(root).decode("utf-8"), "ShareParameters": {"Target": "System"},
            "ShutdownType": "NoReboot"}
    location = start_action(client, actions["import"], body)
    answer = wait_task(client, task_uri(location), timeout, "The Server Configuration Profile import")
    messages = task_messages(answer.body)
    job_state = ((answer.body or {}).get("Oem") or {}).get("Dell", {}).get("JobState")
    if task_state(answer.body) != "Completed" or job_state == "Failed" or any(
            phrase in message.lower() for message in messages for phrase in FAILED_PHRASES):
        raise ApiError("The iDRAC at %s did not apply %s: job %s ended %s: %s" % (
            client.baseuri, ", ".join(sorted(changes)), task_uri(location).rsplit("/", 1)[-1],
            job_state or task_state(answer.body), " ".join(messages) or "no message"),
            hint="Fix what the job's messages name, or look at the job in the iDRAC's Lifecycle log.")


def task_messages(body):
    body = body if isinstance(body, dict) else {}
    return [m.get("Message") for m in body.get("Messages") or [] if isinstance(m, dict) and m.get("Message")]
