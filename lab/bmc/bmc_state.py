"""The state of one lab BMC: power, BIOS (current, pending, registry), Dell jobs, sessions, faults and counters.

Plain Python without HTTP, so the rules a vendor's BMC applies live in one place. Time-driven changes (a reboot
that powers the system off, then on and applies pending BIOS values) are computed when the state is read, like
hardware that is observed only through its API.
"""

import copy
import itertools
import secrets
import threading
import time

from bmc_boot import BootSettings
from bmc_errors import RedfishError

RESET_SECONDS = 1.5


class Registry:
    """The BIOS attribute registry of a vendor profile, and the checks the BMC applies to a PATCH."""

    def __init__(self, entries):
        self.entries = dict((entry["name"], entry) for entry in entries)

    def factory(self):
        return dict((name, entry.get("value")) for name, entry in self.entries.items())

    def type_of(self, name):
        entry = self.entries[name]
        return entry.get("type") or ("Enumeration" if "values" in entry else "String")

    def read_only_because(self, name, effective):
        """Why ``name`` cannot be written given the effective values, or None when it can."""
        entry = self.entries[name]
        if entry.get("read_only"):
            return "%s is read-only" % name
        for other, needed in sorted((entry.get("writable_when") or {}).items()):
            if effective.get(other) != needed:
                return "%s is read-only while %s is %s (it is writable when %s is %s)" % (
                    name, other, effective.get(other), other, needed)
        return None

    def check(self, effective, changes):
        for name, value in changes.items():
            related = ["#/Attributes/%s" % name]
            if name not in self.entries:
                raise RedfishError(400, "The property %s is not in the list of valid properties for the resource."
                                   % name, "Base.1.8.PropertyUnknown", related)
            kind = self.type_of(name)
            entry = self.entries[name]
            if kind == "Enumeration" and value not in entry["values"]:
                raise RedfishError(400, "The value %s for the property %s is not in the list of acceptable values."
                                   % (value, name), "Base.1.8.PropertyValueNotInList", related)
            if kind == "Integer" and (isinstance(value, bool) or not isinstance(value, int)
                                      or not entry.get("lower", value) <= value <= entry.get("upper", value)):
                raise RedfishError(400, "The value %s for the property %s is of a different type or out of range."
                                   % (value, name), "Base.1.8.PropertyValueFormatError", related)
            if kind == "Boolean" and not isinstance(value, bool):
                raise RedfishError(400, "The value %s for the property %s is of a different type than the property "
                                   "can accept." % (value, name), "Base.1.8.PropertyValueTypeError", related)
            if kind in ("String", "Password") and not isinstance(value, str):
                raise RedfishError(400, "The value %s for the property %s is of a different type than the property "
                                   "can accept." % (value, name), "Base.1.8.PropertyValueTypeError", related)
            if kind == "String" and len(value) > entry.get("max_length", 256):
                raise RedfishError(400, "The value for the property %s is too long." % name,
                                   "Base.1.8.PropertyValueFormatError", related)
            reason = self.read_only_because(name, effective)
            if reason:
                raise RedfishError(400, "The property %s is a read only property and cannot be assigned a value: %s."
                                   % (name, reason), "Base.1.8.PropertyNotWritable", related)


class Bmc:
    """One BMC of the lab. Every public method takes the lock; ``_advance`` moves time-driven changes along."""

    def __init__(self, host, port, vendor, profile, username, password, reset_seconds=RESET_SECONDS):
        self.host = host
        self.port = port
        self.vendor = vendor
        self.profile = profile
        self.username = username
        self.password = password
        self.default_reset_seconds = reset_seconds
        self.registry = Registry(profile["bios"]["attributes"])
        self.lock = threading.RLock()
        self.factory_reset()

    # -- lab control -------------------------------------------------------------------------------------------

    def factory_reset(self):
        with self.lock:
            self.reset_seconds = self.default_reset_seconds
            self._ids = itertools.count(1)
            self.power = "On"
            self.current = self.registry.factory()
            self.pending = {}
            self.settings_generation = 1
            self.jobs = []
            self.job_work = {}  # job id -> work a job started by an action does when next observed
            self.sessions = {}
            self.events = []
            self.resets = 0
            self.boots = 0
            self.boot = BootSettings(self.profile.get("boot"))
            self.faults = []
            self.down_until = 0.0
            self.stats = {}

    def configure(self, reset_seconds=None):
        with self.lock:
            if reset_seconds is not None:
                self.reset_seconds = float(reset_seconds)

    def ground_truth(self):
        with self.lock:
            self._advance()
            return {
                "host": self.host,
                "vendor": self.vendor,
                "description": self.profile["description"],
                "identity": dict((key, self.profile["system"]["resource"].get(key)) for key in (
                    "Manufacturer", "Model", "SerialNumber", "SKU", "UUID", "BiosVersion")),
                "thermal": copy.deepcopy(self.profile["thermal"]),
                "baseuri": "https://127.0.0.1:%s" % self.port,
                "power_state": self.power,
                "resets": self.resets,
                "boots": self.boots,
                "boot": self.boot.ground_truth(),
                "bios": {"current": copy.deepcopy(self.current), "pending": copy.deepcopy(self.pending)},
                "jobs": copy.deepcopy(self.jobs),
                "sessions_open": len(self.sessions),
                "faults": copy.deepcopy(self.faults),
                "reset_seconds": self.reset_seconds,
            }

    # -- counters and faults -----------------------------------------------------------------------------------

    def count(self, method, path):
        with self.lock:
            by_method = self.stats.setdefault("by_method", {})
            by_method[method] = by_method.get(method, 0) + 1
            by_path = self.stats.setdefault("by_path", {})
            key = "%s %s" % (method, path)
            by_path[key] = by_path.get(key, 0) + 1
            self.stats["total"] = self.stats.get("total", 0) + 1

    def statistics(self):
        with self.lock:
            return copy.deepcopy(self.stats) or {"total": 0, "by_method": {}, "by_path": {}}

    def reset_statistics(self):
        with self.lock:
            self.stats = {}

    def add_fault(self, fault):
        kind = fault.get("kind")
        if kind not in ("http_error", "slow", "down", "unauthorized", "apply_fails"):
            raise RedfishError(400, "Unknown fault kind %r: use http_error, slow, down, unauthorized or "
                               "apply_fails." % kind)
        with self.lock:
            if kind == "down":
                self.down_until = time.monotonic() + float(fault.get("seconds", 5))
                return
            entry = {"kind": kind, "count": int(fault.get("count", 1))}
            if kind == "http_error":
                entry["status"] = int(fault.get("status", 503))
                if fault.get("retry_after") is not None:
                    entry["retry_after"] = fault["retry_after"]
            if kind == "slow":
                entry["seconds"] = float(fault.get("seconds", 2))
            self.faults.append(entry)

    def clear_faults(self):
        with self.lock:
            self.faults = []
            self.down_until = 0.0

    def is_down(self):
        with self.lock:
            return time.monotonic() < self.down_until

    def take_fault(self, kinds):
        """Consume one use of the first active fault of the given kinds."""
        with self.lock:
            for fault in self.faults:
                if fault["kind"] in kinds and fault["count"] > 0:
                    fault["count"] -= 1
                    taken = dict(fault)
                    self.faults = [f for f in self.faults if f["count"] > 0]
                    return taken
        return None

    # -- sessions and credentials ------------------------------------------------------------------------------

    def credentials_ok(self, username, password):
        return secrets.compare_digest(str(username), self.username) and \
            secrets.compare_digest(str(password), self.password)

    def create_session(self, username, password):
        with self.lock:
            if not self.credentials_ok(username, password):
                raise RedfishError(401, "The authentication credentials included with this request are missing or "
                                   "invalid.", "Base.1.8.NoValidSession")
            if len(self.sessions) >= self.profile["sessions"]["max"]:
                raise RedfishError(400, "The maximum number of user sessions is reached.",
                                   "Base.1.8.SessionLimitExceeded")
            session_id = str(next(self._ids))
            token = secrets.token_hex(16)
            self.sessions[session_id] = {"token": token, "user": username}
            return session_id, token

    def session_for_token(self, token):
        with self.lock:
            for session_id, session in self.sessions.items():
                if secrets.compare_digest(session["token"], token):
                    return session_id
        return None

    def session_ids(self):
        with self.lock:
            return sorted(self.sessions, key=int)

    def delete_session(self, session_id):
        with self.lock:
            if self.sessions.pop(session_id, None) is None:
                raise RedfishError(404, "The session %s does not exist." % session_id, "Base.1.8.ResourceMissingAtURI")

    # -- power ---------------------------------------------------------------------------------------------------

    def power_state(self):
        with self.lock:
            self._advance()
            return self.power

    def reset(self, reset_type):
        with self.lock:
            self._advance()
            allowed = self.profile["system"]["reset_types"]
            if reset_type not in allowed:
                raise RedfishError(400, "The value %s for the parameter ResetType is not supported; allowed: %s."
                                   % (reset_type, ", ".join(allowed)), "Base.1.8.ActionParameterNotSupported",
                                   ["#/ResetType"])
            if self.events:
                raise RedfishError(409, "A power operation is already in progress.", "Base.1.8.ResourceInUse")
            now = time.monotonic()
            on = self.power == "On"
            if reset_type == "Nmi":
                return
            if reset_type == "PushPowerButton":
                reset_type = "GracefulShutdown" if on else "On"
            if reset_type in ("On", "ForceOn"):
                if on:
                    raise RedfishError(409, "The server is already powered on.", "Base.1.8.ResourceInStandby")
                self.events.append((now + self.reset_seconds / 2, "boot"))
            elif reset_type == "ForceOff":
                if not on:
                    raise RedfishError(409, "The server is already powered off.", "Base.1.8.ResourceInStandby")
                self.power = "Off"
            elif reset_type == "GracefulShutdown":
                if not on:
                    raise RedfishError(409, "The server is already powered off.", "Base.1.8.ResourceInStandby")
                self.events.append((now + self.reset_seconds / 2, "off"))
            else:
                # ForceRestart, GracefulRestart, PowerCycle: off now, through POST, on again.
                self.power = "Off"
                for job in self._open_jobs():
                    job.update(JobState="Running", Message="Job in progress.", PercentComplete=50)
                self.events.append((now + self.reset_seconds, "boot"))
            self.resets += 1

    def _advance(self):
        while self.job_work:
            job_id, work = self.job_work.popitem()
            state, message, message_id = work()
            for job in self.jobs:
                if job["Id"] == job_id:
                    job.update(JobState=state, Message=message, MessageId=message_id, PercentComplete=100,
                               EndTime=_now_text())
        now = time.monotonic()
        while self.events and self.events[0][0] <= now:
            _at, action = self.events.pop(0)
            if action == "off":
                self.power = "Off"
            else:
                self._boot()

    def _boot(self):
        """Power on; POST applies pending BIOS values (through the scheduled job where the vendor needs one)."""
        self.power = "On"
        self.boots += 1
        self.boot.booted()
        rejected = self.pending and self.take_fault(("apply_fails",))
        if self.profile["bios"]["applied_by"] == "job":
            jobs = self._open_jobs()
            if not jobs:
                return
            for job in jobs:
                if rejected:
                    job.update(JobState="Failed", Message="The BIOS rejected the pending configuration during POST.",
                               PercentComplete=100, EndTime=_now_text())
                else:
                    job.update(JobState="Completed", Message="Job completed successfully.", PercentComplete=100,
                               EndTime=_now_text())
        if rejected:
            self.pending = {}
            self.settings_generation += 1
        else:
            self._apply_pending()

    def _apply_pending(self):
        for name, value in self.pending.items():
            if self.registry.type_of(name) != "Password":
                self.current[name] = value
        self.pending = {}
        self.settings_generation += 1

    # -- BIOS ------------------------------------------------------------------------------------------------------

    def bios_current(self):
        with self.lock:
            self._advance()
            return dict(self.current)

    def bios_settings(self):
        """The attributes the settings object shows, and its ETag."""
        with self.lock:
            self._advance()
            if self.profile["bios"]["settings_shows"] == "all":
                shown = dict(self.current, **self.pending)
            else:
                shown = dict(self.pending)
            return shown, self.etag()

    def etag(self):
        return 'W/"%d"' % self.settings_generation

    def patch_settings(self, body, if_match=None):
        """Store pending values. Returns (status, headers, extended messages)."""
        bios = self.profile["bios"]
        with self.lock:
            self._advance()
            if bios.get("requires_etag") and not if_match:
                raise RedfishError(428, "This request requires the If-Match header with the ETag of the settings "
                                   "object.", "Base.1.8.PreconditionRequired")
            if if_match and if_match != "*" and if_match != self.etag():
                raise RedfishError(412, "The ETag %s does not match the current ETag %s of the settings object."
                                   % (if_match, self.etag()), "Base.1.8.PreconditionFailed")
            if not isinstance(body, dict) or not isinstance(body.get("Attributes"), dict):
                raise RedfishError(400, "The request body must contain an Attributes object.",
                                   "Base.1.8.PropertyMissing", ["#/Attributes"])
            apply_time = self._apply_time(body)
            if bios["applied_by"] == "job" and self._open_jobs():
                raise RedfishError(400, "Pending configuration values are already committed, unable to perform "
                                   "another set operation.", "IDRAC.2.8.SYS011")
            changes = body["Attributes"]
            effective = dict(self.current, **self.pending)
            effective.update(changes)
            self.registry.check(effective, changes)
            for name, value in changes.items():
                if self.registry.type_of(name) != "Password":
                    self.pending[name] = value
            self.settings_generation += 1
            headers = {}
            if apply_time and bios["applied_by"] == "job":
                job = self._new_job()
                headers["Location"] = job["@odata.id"]
                if apply_time == "Immediate":
                    self.reset("ForceRestart")
                return 202, headers, []
            if bios.get("reset_required_message"):
                return 200, headers, [{"MessageId": bios["reset_required_message"],
                                       "Message": "One or more properties were changed and will not take effect "
                                                  "until system is reset."}]
            return 200, headers, [{"MessageId": "Base.1.8.Success", "Message": "Successfully Completed Request"}]

    def _apply_time(self, body):
        bios = self.profile["bios"]
        supported = bios["apply_times"] or bios.get("accepted_apply_times", [])
        unknown = sorted(set(body) - {"Attributes", "@Redfish.SettingsApplyTime"})
        if unknown or ("@Redfish.SettingsApplyTime" in body and not supported):
            name = unknown[0] if unknown else "@Redfish.SettingsApplyTime"
            raise RedfishError(400, "The property %s is not in the list of valid properties for the resource." % name,
                               "Base.1.8.PropertyUnknown", ["#/%s" % name])
        if "@Redfish.SettingsApplyTime" not in body:
            return None
        apply_time = (body["@Redfish.SettingsApplyTime"] or {}).get("ApplyTime")
        if apply_time not in supported:
            raise RedfishError(400, "The value %s for the property ApplyTime is not in the list of acceptable values "
                               "(%s)." % (apply_time, ", ".join(supported)), "Base.1.8.PropertyValueNotInList",
                               ["#/@Redfish.SettingsApplyTime/ApplyTime"])
        return apply_time

    # -- Dell jobs -------------------------------------------------------------------------------------------------

    def _open_jobs(self):
        """The BIOS configuration jobs that wait for the next POST."""
        return [job for job in self.jobs if job["JobState"] in ("Scheduled", "Running")
                and job["JobType"] == "BIOSConfiguration"]

    def start_job(self, name, job_type, work):
        """A job the iDRAC runs on its own (an action's): Running when created; ``work()`` runs when the job is
        next observed and gives its end as (JobState, Message, MessageId). Returns the job id."""
        with self.lock:
            job = self._new_job(name, job_type, "Running")
            job["Message"] = "Job in progress."
            self.job_work[job["Id"]] = work
            return job["Id"]

    def _new_job(self, name="Configure: BIOS.Setup.1-1", job_type="BIOSConfiguration", state="Scheduled"):
        job_id = "JID_%012d" % (int(time.time() * 1000) % 10 ** 9 * 1000 + next(self._ids) % 1000)
        job = {
            "@odata.id": "%s/%s" % (self.profile["jobs"]["path"].rstrip("/"), job_id),
            "@odata.type": "#DellJob.v1_0_0.DellJob",
            "Id": job_id,
            "Name": name,
            "JobType": job_type,
            "JobState": state,
            "Message": "Task successfully scheduled.",
            "PercentComplete": 0,
            "StartTime": "TIME_NOW",
            "EndTime": None,
            "TargetSettingsURI": None,
        }
        self.jobs.append(job)
        return job

    def create_job(self, body):
        settings = self.profile["bios"]["settings_path"].rstrip("/")
        with self.lock:
            self._advance()
            target = (body or {}).get("TargetSettingsURI")
            if not isinstance(target, str) or target.rstrip("/") != settings:
                raise RedfishError(400, "TargetSettingsURI %r is not a settings object of this server; the BIOS "
                                   "settings object is %s." % (target, settings), "Base.1.8.PropertyValueNotInList",
                                   ["#/TargetSettingsURI"])
            if self._open_jobs():
                raise RedfishError(400, "A configuration job already exists for %s: %s." % (
                    settings, self._open_jobs()[0]["Id"]), "IDRAC.2.8.SYS013")
            if not self.pending:
                raise RedfishError(400, "No pending data present to create a Configuration job.", "IDRAC.2.8.SYS030")
            return dict(self._new_job())

    def job(self, job_id):
        with self.lock:
            self._advance()
            for job in self.jobs:
                if job["Id"] == job_id:
                    return dict(job)
        raise RedfishError(404, "The job %s does not exist." % job_id, "Base.1.8.ResourceMissingAtURI")

    def job_list(self):
        with self.lock:
            self._advance()
            return copy.deepcopy(self.jobs)

    def delete_job(self, job_id):
        """Deleting a scheduled BIOS job discards the pending values it would have applied."""
        with self.lock:
            job = self.job(job_id)
            if job["JobState"] == "Running":
                raise RedfishError(400, "The job %s is running and cannot be deleted." % job_id, "IDRAC.2.8.SUP017")
            if job["JobState"] == "Scheduled":
                self.pending = {}
                self.settings_generation += 1
            self.jobs = [j for j in self.jobs if j["Id"] != job_id]


def _now_text():
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
