#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: bios_settings
short_description: Set server BIOS attributes or the GPU virtualisation profile over Redfish
version_added: 0.1.0
description:
  - Sets BIOS attributes through the server's BMC (Dell iDRAC, HPE iLO, Supermicro, any Redfish service), either
    by name with O(attributes) or as the O(profile=gpu_virtualization) intents, which are mapped to the attribute
    names of the vendor detected from the BMC's identity.
  - Names and values are checked against the server's BIOS attribute registry before anything is sent, including
    attributes that are read-only until another attribute changes.
  - Wanted values are compared with the pending values when there are any, else with the current ones, so a
    second run before the reboot reports no change and creates no second Dell job.
  - Values are stored as pending settings with the apply time the BMC advertises, or through a BIOS
    configuration job on Dell BMCs; they take effect at the next reboot, which the module performs only with
    O(reboot=if_needed).
author: gpuops maintainers (@gpuops)
options:
  attributes:
    description:
      - BIOS attributes to set, by the names the BIOS uses, for example C(SriovGlobalEnable) on Dell or
        C(SR_IOVSupport_002C) on Supermicro. Attributes not listed keep their values.
      - Quote values such as C("On") and C("Off"), which YAML would otherwise read as booleans.
      - Mutually exclusive with O(profile).
    type: dict
  profile:
    description:
      - V(gpu_virtualization) turns on CPU virtualisation (VT-x/AMD-V), the IOMMU (VT-d), SR-IOV, memory-mapped I/O
        above 4 GB (large-BAR GPUs) and PCIe AER, with the vendor's attribute names and values.
      - An intent the BIOS does not expose, or whose attribute is locked, is reported in RV(intents) and left
        out; see O(strict).
      - Mutually exclusive with O(attributes).
    type: str
    choices: [gpu_virtualization]
  strict:
    description:
      - With O(profile), fail before changing anything when an intent is not exposed by this BIOS or its
        attribute is read-only.
    type: bool
    default: false
  reboot:
    description:
      - V(never) leaves the pending values for the next reboot (RV(pending_reboot) tells whether one is needed).
      - V(if_needed) restarts the server when wanted values are pending, waits until it is back on with the
        values current, and fails if the BIOS did not apply them. Put an ESXi host in maintenance mode first.
    type: str
    choices: [never, if_needed]
    default: never
  reset_type:
    description:
      - V(graceful) asks the operating system to restart (or shuts it down and powers on again where the BMC has
        no graceful restart, such as iDRAC8). V(force) restarts without asking the operating system.
    type: str
    choices: [graceful, force]
    default: graceful
  reboot_timeout:
    description:
      - Seconds to wait for the server to shut down and for it to come back with the values applied. Servers
        with much memory or a BIOS job to run take several minutes.
    type: int
    default: 1800
extends_documentation_fragment:
  - gpuops.vgpu.redfish
  - gpuops.vgpu.attributes
  - gpuops.vgpu.attributes.ACTION_GROUP_REDFISH
attributes:
  check_mode:
    support: full
    details: Reads everything, validates the input and predicts the change, pending values and job without
      sending any change.
  diff_mode:
    support: full
    details: Current and pending values of the wanted attributes before and after.
notes:
  - Dell BMCs apply pending BIOS values only through a configuration job, and refuse new pending values while one
    is scheduled; when values must change then, the scheduled job is deleted and created again with the earlier
    pending values and the new ones.
  - iDRAC8 needs firmware 2.50.50.50 or later to change BIOS attributes over Redfish.
seealso:
  - module: gpuops.vgpu.bmc_info
"""

EXAMPLES = r"""
- name: Prepare the BIOS of every GPU host for vGPU, reboot later
  gpuops.vgpu.bios_settings:
    baseuri: "{{ bmc_address }}"
    username: "{{ bmc_username }}"
    password: "{{ bmc_password }}"
    validate_certs: "{{ bmc_validate_certs }}"
    profile: gpu_virtualization
  delegate_to: localhost
  register: bios

- name: Report what the platform does not expose
  ansible.builtin.debug:
    msg: "{{ bios.intents | dict2items | selectattr('value.status', 'eq', 'not_exposed') | map(attribute='key') }}"

- name: Set attributes by name and reboot when they are pending
  gpuops.vgpu.bios_settings:
    baseuri: https://127.0.0.1:8441
    username: root
    password: "{{ bmc_password }}"
    validate_certs: false
    attributes:
      SriovGlobalEnable: Enabled
      MmioAbove4Gb: Enabled
    reboot: if_needed

- name: Same, with the connection set once for the BMC modules
  module_defaults:
    group/gpuops.vgpu.redfish:
      username: root
      password: "{{ bmc_password }}"
      validate_certs: false
  block:
    - name: Fail when an intent cannot be met
      gpuops.vgpu.bios_settings:
        baseuri: https://127.0.0.1:8444
        profile: gpu_virtualization
        strict: true
"""

RETURN = r"""
vendor:
  description: What the BMC reports about itself, and the family used to map intents.
  returned: always
  type: dict
  sample: {family: dell, generation: idrac8, manufacturer: Dell Inc., model: PowerEdge R730,
           bmc_model: 13G Monolithic, bmc_firmware: 2.75.75.75}
diff:
  description:
    - Current and pending values of the wanted attributes before and after the run (predicted in check mode),
      and the wanted values.
  returned: always
  type: dict
  sample:
    before: {current: {SriovGlobalEnable: Disabled}, pending: {}}
    after: {current: {SriovGlobalEnable: Disabled}, pending: {SriovGlobalEnable: Enabled}}
    wanted: {SriovGlobalEnable: Enabled}
changes:
  description: Attributes this run sent as pending values (would send, in check mode).
  returned: always
  type: dict
  sample: {SriovGlobalEnable: Enabled}
pending_reboot:
  description: Whether wanted values wait for a reboot after this run.
  returned: always
  type: bool
rebooted:
  description: Whether this run restarted the server.
  returned: always
  type: bool
job:
  description: URI of the Dell BIOS configuration job that applies the pending values, if there is one.
  returned: always
  type: str
  sample: /redfish/v1/Managers/iDRAC.Embedded.1/Jobs/JID_743120548953
apply_time:
  description: The apply time requested with the pending values, when the BMC advertises one.
  returned: always
  type: str
  sample: OnReset
intents:
  description:
    - With O(profile), per intent its status after the run (V(ok), V(pending), V(read_only), V(not_exposed)), the
      attributes and values it maps to, whether this run changed it, C(via) for an intent provided by another
      intent's attribute, and a C(note).
  returned: when O(profile) is set
  type: dict
  sample:
    cpu_virtualization: {status: ok, attributes: {ProcVirtualization: Enabled}, changed: false}
    iommu: {status: ok, via: cpu_virtualization, attributes: {ProcVirtualization: Enabled}, changed: false,
            note: "no separate VT-d attribute: ProcVirtualization enables VT-d on Dell Intel platforms"}
    sriov: {status: pending, attributes: {SriovGlobalEnable: Enabled}, changed: true}
    pcie_aer: {status: not_exposed, attributes: {}, changed: false, note: not exposed by this BIOS}
"""

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
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, InputError, TaskFailed
from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils._argument_specs import redfish_spec
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._redfish import RedfishClient, odata_id
from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc._bios_access import BiosAccess, wait_for

FAILED_JOB_STATES = ("Failed", "CompletedWithErrors")


def wanted_values(params, vendor, registry, current, pending):
    if params["attributes"] is None:
        wanted, intents = resolve_profile(params["profile"], vendor["family"], registry, current, pending)
        unmet = unmet_intents(intents)
        if unmet and params["strict"]:
            raise InputError("Profile %s cannot be met on this %s: %s." % (
                params["profile"], vendor["model"] or vendor["family"],
                "; ".join("%s: %s" % item for item in sorted(unmet.items()))),
                hint="Set strict: false to apply what the platform exposes and report the rest.")
        return wanted, intents
    if not params["attributes"]:
        raise InputError("attributes is empty.", hint="Name at least one BIOS attribute, or use profile.")
    server = "the %s at %s" % (vendor["model"] or "server", params["baseuri"])
    return validate_attributes(params["attributes"], current, pending, registry, server), None


def send_changes(access, changes, bios, apply_time, jobs_uri, job_uri, job_required):
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


def restart(access, force, timeout, client):
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


def reboot_and_verify(access, client, params, wanted, job_uri):
    """Restart, wait until the server is on with every wanted value current; fail when the BIOS dropped one."""
    restart(access, params["reset_type"] == "force", params["reboot_timeout"], client)
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
        if not any(name in pending for name in wanted):
            misses.append(1)
            if len(misses) >= 2:
                dropped = sorted((n, current.get(n)) for n, v in wanted.items() if current.get(n) != v)
                raise TaskFailed("The server at %s restarted but its BIOS did not apply %s (values now: %s)." % (
                    client.baseuri, ", ".join(n for n, _v in dropped), ", ".join("%s=%s" % item for item in dropped)),
                    hint="Check the server's console or system event log for a BIOS setup error.")
        return None

    bios = wait_for(applied, params["reboot_timeout"], "The restart of the server at %s with the BIOS values "
                    "applied" % client.baseuri, sleep=client.sleep, clock=client.clock)
    return bios["current"]


def run(module):
    params = module.params
    with RedfishClient.from_params(params) as client:
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
        wanted, intents = wanted_values(params, vendor, registry, current, pending)

        job_required = vendor["family"] == "dell"
        jobs_uri = open_job = None
        waiting = [name for name, value in wanted.items() if pending.get(name, current.get(name)) != value
                   or current.get(name) != value]
        if job_required and waiting:
            jobs_uri = access.jobs_uri()
            if not jobs_uri:
                raise ApiError("The Dell BMC at %s links no job queue from its manager, so BIOS values cannot be "
                               "applied." % client.baseuri, hint="Update the iDRAC firmware.")
            open_job = open_bios_job(access.jobs(jobs_uri))
        apply_time = choose_apply_time(bios["apply_times"])
        changes = bios_changes(current, pending, wanted, job_required, open_job,
                            patch_creates_job=job_required and apply_time is not None)
        job_uri = odata_id(open_job) if open_job else None
        if not module.check_mode and changes.steps:
            job_uri = send_changes(access, changes, bios, apply_time, jobs_uri, job_uri, job_required)

        pending_after = dict((n, v) for n, v in changes.pending_after.items() if n in wanted)
        current_after = current
        rebooted = False
        if params["reboot"] == "if_needed" and pending_after:
            rebooted = True
            current_after = dict(current, **pending_after)
            if not module.check_mode:
                current_after = reboot_and_verify(access, client, params, wanted, job_uri)
            pending_after = {}

    diff = diff_view(sorted(wanted), current, pending, pending_after, current_after)
    diff["wanted"] = dict(sorted(wanted.items()))
    result = dict(
        changed=changes.changed or rebooted,
        vendor=vendor,
        diff=diff,
        changes=changes.attributes,
        pending_reboot=bool(pending_after),
        rebooted=rebooted and not module.check_mode,
        job=job_uri if pending_after or rebooted else None,
        apply_time=apply_time,
    )
    if intents is not None:
        result["intents"] = intent_report(intents, wanted, pending_after, changes.attributes)
    return result


def argument_spec():
    return redfish_spec(
        attributes=dict(type="dict"),
        profile=dict(type="str", choices=["gpu_virtualization"]),
        strict=dict(type="bool", default=False),
        reboot=dict(type="str", choices=["never", "if_needed"], default="never"),
        reset_type=dict(type="str", choices=["graceful", "force"], default="graceful"),
        reboot_timeout=dict(type="int", default=1800),
    )


def main():
    run_module(argument_spec(), run, supports_check_mode=True, mutually_exclusive=[("attributes", "profile")],
               required_one_of=[("attributes", "profile")])


if __name__ == "__main__":
    main()
