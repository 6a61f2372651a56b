"""iDRAC8's Server Configuration Profile (SCP) actions: the only Redfish way to read and set its system attributes.

iDRAC7/8 serve no DellAttributes resources: Dell's answer in dell/iDRAC-Redfish-Scripting issues 256 and 296 (set
them through SCP export and import), and the 404 with IDRAC.1.6.SYS403 an iDRAC8 returns for an Attributes URI in
issue 262. The actions, their bodies and the jobs follow Dell's scripts in that repository
(ExportSystemConfigurationLocalREDFISH.py, ImportSystemConfigurationLocalREDFISH.py and the PowerShell cmdlet
Set-ImportServerConfigurationProfileLocalREDFISH): POST to ``<manager>/Actions/Oem/EID_674_Manager.<action>``,
202 without a body and ``Location: /redfish/v1/TaskService/Tasks/<JID>`` (the answer recorded in issue 28), that
task polled until it ends; a finished local export answers with the profile's XML itself. SCP names an attribute
``Group.Index#Name``.

A finished export shows read-only attributes as XML comments unless ``IncludeInExport`` asks for them (the
commented attributes of the export recorded in issue 13). Not confirmed against a recording of an iDRAC8 2.75:
that it takes a local import (ImportBuffer) at all (Dell's 2018 module guide gives local SCP from iDRAC firmware
3.00, while Dell's answers of 2023-2024 send iDRAC7/8 users to the local SCP scripts), the JobType names, the
message ids SYS053/SYS055/SYS069 (their texts carry the phrases Dell's import script looks for), and that a
failed value fails the whole import rather than leaving the others applied.
"""

import time
from xml.etree import ElementTree
from xml.sax.saxutils import escape, quoteattr

from bmc_errors import RedfishError

COMPONENT = "System.Embedded.1"
TASKS = "/redfish/v1/TaskService/Tasks"
TARGETS = ("ALL", "System")
SHUTDOWN_TYPES = ("Graceful", "Forced", "NoReboot")
HOST_POWER_STATES = ("On", "Off")
IMPORTED = ("SYS053", "Successfully imported and applied Server Configuration Profile.")
UNCHANGED = ("SYS069", "No changes were applied since the current component configuration matched the requested "
                       "configuration.")
WITH_ERRORS = ("SYS055", "Import of Server Configuration Profile operation completed with errors.")


def scp_name(name):
    """``ThermalSettings.1.ThermalProfile`` -> ``ThermalSettings.1#ThermalProfile``."""
    group, _dot, rest = name.partition(".")
    index, _dot, attribute = rest.partition(".")
    return "%s.%s#%s" % (group, index, attribute) if attribute else name


def attribute_name(name):
    return name.replace("#", ".", 1)


class ScpActions:
    """The export and import actions of one iDRAC8, over the system attributes and their rules that ``parts``
    (bmc_manager's ManagerResources) keeps; ``bmc`` keeps the jobs."""

    def __init__(self, manager_path, profile, bmc, parts):
        self.manager_path = manager_path.rstrip("/")
        self.enabled = bool((profile or {}).get("scp"))
        self.bmc = bmc
        self.parts = parts
        self.results = {}  # job id -> what the task answers once the job has ended

    def attributes(self):
        return self.parts.attributes[COMPONENT]

    def action_path(self, name):
        return "%s/Actions/Oem/EID_674_Manager.%s" % (self.manager_path, name)

    def manager_actions(self):
        """What the manager's ``Actions.Oem`` advertises."""
        if not self.enabled:
            return {}
        return dict(("#OemManager.%s" % name, {"target": self.action_path(name)})
                    for name in ("ExportSystemConfiguration", "ImportSystemConfiguration"))

    def actions(self):
        """Action path -> handler(body) returning (status, headers, body)."""
        if not self.enabled:
            return {}
        return {self.action_path("ExportSystemConfiguration"): self.export,
                self.action_path("ImportSystemConfiguration"): self.import_}

    # -- the actions ---------------------------------------------------------------------------------------------

    def export(self, body):
        self.check_body(body, ("ExportFormat", "ShareParameters", "IncludeInExport", "ExportUse"))
        if body.get("ExportFormat", "XML") != "XML":
            raise RedfishError(400, "The value %s for the parameter ExportFormat is not supported; this iDRAC "
                               "exports XML." % body.get("ExportFormat"), "Base.1.8.ActionParameterNotSupported",
                               ["#/ExportFormat"])
        include_read_only = "IncludeReadOnly" in str(body.get("IncludeInExport", ""))

        def work():
            self.results[job_id] = {"xml": self.profile_xml(include_read_only)}
            return "Completed", "Successfully exported Server Configuration Profile.", "SYS043"
        job_id = self.bmc.start_job("Export Configuration", "ExportConfiguration", work)
        return self.accepted(job_id)

    def import_(self, body):
        self.check_body(body, ("ImportBuffer", "ShareParameters", "ShutdownType", "HostPowerState", "TimeToWait"))
        for key, allowed in (("ShutdownType", SHUTDOWN_TYPES), ("HostPowerState", HOST_POWER_STATES)):
            if key in body and body[key] not in allowed:
                raise RedfishError(400, "The value %s for the parameter %s is not one of %s." % (
                    body[key], key, ", ".join(allowed)), "Base.1.8.ActionParameterValueNotInList", ["#/" + key])
        try:
            root = ElementTree.fromstring(body.get("ImportBuffer") or "")
        except ElementTree.ParseError as err:
            raise RedfishError(400, "ImportBuffer is not a Server Configuration Profile in XML: %s." % err,
                               "Base.1.8.ActionParameterValueFormatError", ["#/ImportBuffer"])
        if root.tag != "SystemConfiguration":
            raise RedfishError(400, "ImportBuffer must hold one SystemConfiguration element.",
                               "Base.1.8.ActionParameterValueFormatError", ["#/ImportBuffer"])
        wanted = []
        for component in root.findall("Component"):
            for attribute in component.findall("Attribute"):
                wanted.append((component.get("FQDD"), attribute.get("Name"), attribute.text or ""))

        def work():
            return self.apply(job_id, wanted)
        job_id = self.bmc.start_job("Import Configuration", "ImportConfiguration", work)
        return self.accepted(job_id)

    def check_body(self, body, known):
        if not isinstance(body, dict):
            raise RedfishError(400, "The request body must be a JSON object.", "Base.1.8.MalformedJSON")
        unknown = sorted(set(body) - set(known))
        if unknown:
            raise RedfishError(400, "The parameter %s is not supported by the action." % unknown[0],
                               "Base.1.8.ActionParameterUnknown", ["#/" + unknown[0]])
        targets = [t.strip() for t in str((body.get("ShareParameters") or {}).get("Target", "")).split(",")]
        if not set(targets) & set(TARGETS):
            raise RedfishError(400, "ShareParameters/Target %s includes no target that holds the system attributes "
                               "(%s)." % (",".join(targets), ", ".join(TARGETS)),
                               "Base.1.8.ActionParameterValueNotInList", ["#/ShareParameters/Target"])

    def accepted(self, job_id):
        return 202, {"Location": "%s/%s" % (TASKS, job_id)}, None

    # -- the jobs' work ----------------------------------------------------------------------------------------

    def apply(self, job_id, wanted):
        current = self.attributes()
        changes, problems = {}, []
        for component, name, text in wanted:
            key = attribute_name(name or "")
            if component != COMPONENT or "#" not in (name or "") or key not in current:
                problems.append("Attribute %s of component %s is not found." % (name, component))
                continue
            value = text
            if isinstance(current[key], int):
                try:
                    value = int(text)
                except ValueError:
                    problems.append("The value %s for attribute %s is not an integer." % (text, name))
                    continue
            try:
                self.parts.check_rule(COMPONENT, key, value, current)
            except RedfishError as err:
                problems.append("%s: %s" % (name, err.message))
                continue
            if current[key] != value:
                changes[key] = value
        if not problems and self.bmc.take_fault(("apply_fails",)):
            problems.append("The iDRAC could not apply the profile (lab fault).")
        if problems:
            self.task_result(job_id, "Exception", WITH_ERRORS, problems)
            return "Failed", WITH_ERRORS[1], WITH_ERRORS[0]
        current.update(changes)
        done = IMPORTED if changes else UNCHANGED
        self.task_result(job_id, "Completed", done, [])
        return "Completed", done[1], done[0]

    def task_result(self, job_id, state, message, details):
        messages = [{"MessageId": "IDRAC.2.1." + message[0], "Message": message[1]}] + [
            {"MessageId": "IDRAC.2.1.SYS056", "Message": detail} for detail in details]
        self.results[job_id] = {"state": state, "messages": messages}

    def profile_xml(self, include_read_only):
        """The system component as an export shows it: read-only attributes as comments unless asked for."""
        current = self.attributes()
        lines = ['<SystemConfiguration Model=%s TimeStamp=%s>' % (
                     quoteattr(self.bmc.profile["system"]["resource"].get("Model", "")),
                     quoteattr(time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime()))),
                 '<Component FQDD="%s">' % COMPONENT]
        for key in sorted(current):
            line = '<Attribute Name=%s>%s</Attribute>' % (quoteattr(scp_name(key)), escape(str(current[key])))
            read_only = ((self.parts.rules.get(COMPONENT) or {}).get(key) or {}).get("read_only")
            lines.append(line if include_read_only or not read_only else "<!-- %s -->" % line)
        lines += ["</Component>", "</SystemConfiguration>"]
        return "\n".join(lines)

    # -- the task resource ---------------------------------------------------------------------------------------

    def task_answer(self, job_id):
        """(status, body or XML text) of GET on the task: 202 while the job runs, then its end; a finished export
        answers with the profile."""
        job = self.bmc.job(job_id)  # observing the job lets it end
        result = self.results.get(job_id)
        if result and "xml" in result:
            return 200, result["xml"]
        state, messages = ("Running", [{"Message": job["Message"]}]) if not result else (
            result["state"], result["messages"])
        return (202 if not result else 200), {
            "@odata.id": "%s/%s" % (TASKS, job_id), "@odata.type": "#Task.v1_4_0.Task", "Id": job_id,
            "Name": job["Name"], "TaskState": state, "TaskStatus": "Critical" if state == "Exception" else "OK",
            "Messages": messages, "Oem": {"Dell": job}}
