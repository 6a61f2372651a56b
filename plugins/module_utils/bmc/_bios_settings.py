# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``bios_settings`` does to one server: the wanted values (by name or from an intent profile), the changes
sent as pending values with the apply time the BMC advertises or a Dell BIOS job, the reboot that applies them and
its verification, and the result with its diff.

The decisions are made in ``_bios`` on plain dicts; the requests go through ``_bios_access``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, InputError, TaskFailed
from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc._bios import (
    Registry,
    bios_changes,
    choose_apply_time,
    diff_view,
    intent_report,
    open_bios_job,
    pending_values,
    resolve_profile,
    unmet_intents,
    validate_attributes,
)
from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc._bios_access import BiosAccess, wait_for
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._redfish import odata_id

FAILED_JOB_STATES = ("Failed", "CompletedWithErrors")


def bios_settings(client, params, check_mode):
    """The ``bios_settings`` module: ``apply_bios_settings`` with its options."""
    return apply_bios_settings(client, params["baseuri"], attributes=params["attributes"], profile=params["profile"],
                               strict=params["strict"], reboot=params["reboot"], reset_type=params["reset_type"],
                               reboot_timeout=params["reboot_timeout"], check_mode=check_mode)


def apply_bios_settings(client, baseuri, attributes=None, profile=None, strict=False, reboot="never",
                        reset_type="graceful", reboot_timeout=1800, check_mode=False):
    """Set ``attributes`` (by name) or the ``profile``'s intents on the server behind ``client``; returns the
    result of ``bios_settings``. ``baseuri`` is the BMC as the user gave it, for messages.

    Wanted values are compared with the pending values, else the current ones. Check mode reads and validates
    everything and predicts the result without sending a change. With ``reboot="if_needed"`` the server restarts
    when wanted values are pending, and the values are verified current afterwards.
    """
    access = BiosAccess(client)
    vendor = client.vendor()
    bios = access.read()
    if not bios["settings_uri"]:
        raise ApiError("The BMC at %s does not advertise a BIOS settings object, so BIOS attributes cannot be "
                       "changed over Redfish." % client.baseuri,
                       hint="Update the BMC firmware (iDRAC8 needs 2.50.50.50 or later).")
    current = bios["current"]
    pending = pending_values(current, bios["shown"])
    registry_doc = access.registry(bios["registry"])
    registry = Registry.from_redfish(registry_doc) if registry_doc else Registry.from_current(current)
    wanted, intents = wanted_values(vendor, registry, current, pending, baseuri, attributes, profile, strict)

    job_required = vendor["family"] == "dell"
    jobs_uri, open_job = dell_job_queue(access, client, wanted, current, pending) if job_required else (None, None)
    apply_time = choose_apply_time(bios["apply_times"])
    changes = bios_changes(current, pending, wanted, job_required, open_job,
                           patch_creates_job=job_required and apply_time is not None)
    job_uri = odata_id(open_job) if open_job else None
    if not check_mode and changes.steps:
        job_uri = send_changes(access, changes, bios, apply_time, jobs_uri, job_uri, job_required)

    pending_after = dict((n, v) for n, v in changes.pending_after.items() if n in wanted)
    current_after = current
    rebooted = False
    if reboot == "if_needed" and pending_after:
        rebooted = True
        current_after = dict(current, **pending_after)
        if not check_mode:
            current_after = reboot_and_verify(access, client, reset_type == "force", reboot_timeout, wanted, job_uri)
        pending_after = {}

    diff = diff_view(sorted(wanted), current, pending, pending_after, current_after)
    diff["wanted"] = dict(sorted(wanted.items()))
    result = dict(
        changed=changes.changed or rebooted,
        vendor=vendor,
        diff=diff,
        wanted=diff["wanted"],
        pending=diff["after"]["pending"],
        changes=changes.attributes,
        pending_reboot=bool(pending_after),
        rebooted=rebooted and not check_mode,
        job=job_uri if pending_after or rebooted else None,
        apply_time=apply_time,
    )
    if intents is not None:
        result["intents"] = intent_report(intents, wanted, pending_after, changes.attributes)
    return result


def wanted_values(vendor, registry, current, pending, baseuri, attributes, profile, strict):
    """``(wanted, intents)``: the validated values of ``attributes``, or the values ``profile`` maps to on this
    BIOS with its intents (None for attributes). Fails before anything is sent."""
    if attributes is None:
        wanted, intents = resolve_profile(profile, vendor["family"], registry, current, pending)
        unmet = unmet_intents(intents)
        if unmet and strict:
            raise InputError("Profile %s cannot be met on this %s: %s." % (
                profile, vendor["model"] or vendor["family"],
                "; ".join("%s: %s" % item for item in sorted(unmet.items()))),
                hint="Set strict: false to apply what the platform exposes and report the rest.")
        return wanted, intents
    if not attributes:
        raise InputError("attributes is empty.", hint="Name at least one BIOS attribute, or use profile.")
    server = "the %s at %s" % (vendor["model"] or "server", baseuri)
    return validate_attributes(attributes, current, pending, registry, server), None


def dell_job_queue(access, client, wanted, current, pending):
    """``(jobs_uri, open_job)``: Dell's job queue and its open BIOS job, read only when a wanted value is not yet
    current (a job may then be needed); ``(None, None)`` otherwise."""
    waiting = [name for name, value in wanted.items() if pending.get(name, current.get(name)) != value
               or current.get(name) != value]
    if not waiting:
        return None, None
    jobs_uri = access.jobs_uri()
    if not jobs_uri:
        raise ApiError("The Dell BMC at %s links no job queue from its manager, so BIOS values cannot be "
                       "applied." % client.baseuri, hint="Update the iDRAC firmware.")
    return jobs_uri, open_bios_job(access.jobs(jobs_uri))


def send_changes(access, changes, bios, apply_time, jobs_uri, job_uri, job_required):
    """Send the steps of ``changes`` in order; returns the URI of the job that applies the pending values."""
    etag = bios["etag"]
    for step in changes.steps:
        if step[0] == "delete_job":
            access.delete_job(odata_id(step[1]))
            job_uri = None
            etag = access.read()["etag"]
        elif step[0] == "patch":
            created = access.patch(bios["settings_uri"], step[1], apply_time, etag)
            job_uri = created or job_uri
        elif step[0] == "create_job" and not job_uri:
            job_uri = access.create_job(jobs_uri, bios["settings_uri"])
    if job_required and changes.pending_after and not job_uri:
        job_uri = access.create_job(jobs_uri, bios["settings_uri"])
    return job_uri


def restart(access, client, force, timeout):
    """Restart the server, or power it on when it is off; shut down and power on where no restart is offered."""
    allowed = access.reset_types() or ["On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart"]
    if access.power_state() != "On":
        access.reset("On")
        return
    restart_type, shutdown_type = ("ForceRestart", "ForceOff") if force else ("GracefulRestart", "GracefulShutdown")
    if restart_type in allowed:
        access.reset(restart_type)
        return
    if shutdown_type not in allowed or "On" not in allowed:
        raise ApiError("The BMC at %s offers none of %s, or %s and On (it offers %s)." % (
            client.baseuri, restart_type, shutdown_type, ", ".join(allowed)))
    access.reset(shutdown_type)
    wait_for(lambda: access.power_state() == "Off", timeout, "Shutting down the server at %s" % client.baseuri,
             sleep=client.sleep, clock=client.clock)
    access.reset("On")


def reboot_and_verify(access, client, force, timeout, wanted, job_uri):
    """Restart, wait until the server is on with every wanted value current; fail when the BIOS dropped one.

    Returns the current values after the restart.
    """
    restart(access, client, force, timeout)
    misses = []

    def applied():
        if access.power_state() != "On":
            return None
        if job_uri:
            job = client.get(job_uri, optional=True) or {}
            if job.get("JobState") in FAILED_JOB_STATES:
                raise TaskFailed("BIOS job %s on %s ended %s: %s" % (job.get("Id"), client.baseuri,
                                                                     job.get("JobState"), job.get("Message")),
                                 hint="Check the job in the BMC's job queue and the server's lifecycle log.")
        bios = access.read()
        current = bios["current"]
        if all(current.get(name) == value for name, value in wanted.items()):
            return bios
        pending = pending_values(current, bios["shown"])
        # Once no wanted value is pending any more, two reads in a row without it current mean the BIOS dropped it.
        if not any(name in pending for name in wanted):
            misses.append(1)
            if len(misses) >= 2:
                dropped = sorted((n, current.get(n)) for n, v in wanted.items() if current.get(n) != v)
                raise TaskFailed("The server at %s restarted but its BIOS did not apply %s (values now: %s)." % (
                    client.baseuri, ", ".join(n for n, _v in dropped), ", ".join("%s=%s" % item for item in dropped)),
                    hint="Check the server's console or system event log for a BIOS setup error.")
        return None

    bios = wait_for(applied, timeout, "The restart of the server at %s with the BIOS values applied" % client.baseuri,
                    sleep=client.sleep, clock=client.clock)
    return bios["current"]
