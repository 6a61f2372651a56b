# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's checks of the vGPU VMs and their guests: profile, guest driver against the host's, CUDA, license."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _compatibility
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import HINTS as SMI_HINTS
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_rules import FIX, parse_time


def vm_checks(out, facts):
    vms = dict((vm["name"], vm) for vm in facts.get("vms") or [])
    gpu_of = dict((vm, (h["name"], g)) for h in facts.get("hosts") or [] for g in h["gpus"]
                  for vm in g.get("vms") or [])
    if facts.get("vms_error"):
        out.add("vm", "(guests)", "vm", "FAIL", "The guests' VMs cannot be read: %s" % facts["vms_error"],
                "Set vgpu_vm_name on guests whose inventory name is not their VM's name.")
        return
    for guest in facts.get("guests") or []:
        vm = vms.get(guest["vm"])
        if vm is None:
            continue
        _vm_profile(out, guest, vm)
        if vm.get("memory_fully_reserved"):
            out.add("vm", vm["name"], "memory_reserved", "PASS", "All guest memory is reserved.")
        else:
            out.add("vm", vm["name"], "memory_reserved", "FAIL", "Guest memory is not fully reserved: a vGPU VM does "
                    "not power on.", "Reserve all guest memory (gpuops.vgpu.vm_vgpu does it with the profile).")
        place = gpu_of.get(vm["name"])
        if vm.get("power_state") != "poweredOn":
            out.add("vm", vm["name"], "placement", "WARN", "The VM is %s." % vm.get("power_state"),
                    "Power it on (role gpuops.vgpu.vgpu_assign with vgpu_assign_power_on).")
        elif place is None:
            out.add("vm", vm["name"], "placement", "FAIL", "Powered on, but on no GPU of the checked hosts.",
                    "Check the VM's vGPU device and its host's GPUs (Shared Direct, free slots of its profile).")
        else:
            out.add("vm", vm["name"], "placement", "PASS", "Runs on %s GPU %s (%s)." % (
                place[0], place[1]["pci_id"], place[1].get("profile") or ", ".join(place[1].get("profiles") or [])))


def _vm_profile(out, guest, vm):
    profiles = vm.get("profiles") or []
    wanted = guest.get("profile")
    if wanted and profiles == [wanted]:
        out.add("vm", vm["name"], "vgpu_profile", "PASS", "Has %s, as the inventory asks." % wanted)
    elif wanted:
        out.add("vm", vm["name"], "vgpu_profile", "FAIL", "Has %s; the inventory asks for %s." % (
            ", ".join(profiles) or "no vGPU", wanted), "Run playbooks/vms.yml (role gpuops.vgpu.vgpu_assign).")
    elif profiles:
        out.add("vm", vm["name"], "vgpu_profile", "PASS", "Has %s (no vgpu_profile in the inventory)." % ", ".join(
            profiles))
    else:
        out.add("vm", vm["name"], "vgpu_profile", "FAIL", "No vGPU, and no vgpu_profile in the inventory.",
                "Set vgpu_profile on the guest and run playbooks/vms.yml.")


def guest_checks(out, facts, opts):
    guests = facts.get("guests") or []
    if not guests:
        out.add("guest", facts.get("guests_group") or "gpu_guests", "guests", "SKIP", "No guest in the inventory "
                "group, so drivers, CUDA and licenses are not checked.", "Add the Linux guests to the group "
                "(doctor_guests_group) with their connection variables.")
        return
    vms = dict((vm["name"], vm) for vm in facts.get("vms") or [])
    drivers = dict((h["name"], (h.get("driver") or {}).get("version")) for h in facts.get("hosts") or [])
    for guest in guests:
        name = guest["name"]
        if not guest["gathered"]:
            out.add("guest", name, "guest_driver", "SKIP", "Guest not read.", "Enable doctor_gather_guests or pass "
                    "doctor_guest_facts for it.")
            continue
        if guest["error"]:
            out.add("guest", name, "guest_driver", "WARN", "Guest not read: %s" % guest["error"],
                    "Check the guest's connection variables and that it is running.")
            continue
        if not guest["present"]:
            out.add("guest", name, "guest_driver", "FAIL", "nvidia-smi fails (%s): %s" % (guest["kind"], guest["msg"]),
                    SMI_HINTS.get(guest["kind"], "Install the GRID guest driver (role gpuops.vgpu.grid_driver)."))
            continue
        out.add("guest", name, "guest_driver", "PASS", "Driver %s, %s." % (
            guest["driver_version"], ", ".join(g["name"] or "?" for g in guest["gpus"]) or "no GPU"))
        vm = vms.get(guest["vm"]) or {}
        _driver_compat(out, guest, vm.get("host"), drivers.get(vm.get("host")))
        _cuda(out, guest)
        _license(out, guest, opts)


def _driver_compat(out, guest, host, host_driver):
    name = guest["name"]
    if not host_driver:
        out.add("guest", name, "driver_compat", "SKIP", "vGPU Manager of %s not known." % (host or "the VM's host"),
                FIX["host_smi"] if host else "Set vgpu_vm_name so the doctor finds the guest's VM.")
        return
    try:
        compat = _compatibility.vgpu_guest_compat(host_driver, guest["driver_version"])
    except InputError as err:
        out.add("guest", name, "driver_compat", "SKIP", str(err), "Check the driver versions reported.")
        return
    status = {"ok": "PASS", "ok-previous-branch": "WARN"}.get(compat["status"], "FAIL")
    out.add("guest", name, "driver_compat", status, compat["message"], "Install a GRID guest driver from %s (role "
            "gpuops.vgpu.grid_driver)." % compat["accepted_guest_branches"][0])


def _cuda(out, guest):
    name, toolkit = guest["name"], guest.get("cuda_toolkit")
    if not toolkit:
        out.add("guest", name, "cuda", "SKIP", "No CUDA toolkit found (version.json).",
                "Install CUDA with role gpuops.vgpu.cuda_toolkit, or set doctor_guest_cuda_home.")
        return
    profile = None
    try:
        profile = _catalog.parse_profile(guest["profile"]) if guest.get("profile") else None
    except InputError:
        profile = None
    if profile is not None and not profile.get("cuda"):
        out.add("guest", name, "cuda", "FAIL", "CUDA %s is installed, but profile %s does not run CUDA." % (
            toolkit, guest["profile"]), "Give the VM a Q- or C-series profile (vgpu_profile), then run "
            "playbooks/vms.yml.")
        return
    try:
        verdict = _compatibility.cuda_driver_ok(toolkit, guest["driver_version"])
    except InputError as err:
        out.add("guest", name, "cuda", "SKIP", str(err), "Check the installed CUDA and driver versions.")
        return
    status = {"ok": "PASS", "minor-compat-only": "WARN"}.get(verdict["status"], "FAIL")
    fix = "Install CUDA %s or older (role gpuops.vgpu.cuda_toolkit), or a newer vGPU release." % (
        verdict["newest_full_cuda"] or "an older toolkit")
    out.add("guest", name, "cuda", status, verdict["message"], fix)


def _license(out, guest, opts):
    name = guest["name"]
    gpus = [g for g in guest["gpus"] if g.get("licensed") is not None]
    if not gpus:
        out.add("guest", name, "license", "SKIP", "nvidia-smi shows no vGPU license state (not a vGPU guest?).",
                "Check the VM has a vGPU device and the GRID guest driver.")
        return
    for gpu in gpus:
        if not gpu["licensed"]:
            out.add("guest", name, "license", "FAIL", "%s: %s." % (gpu["name"], gpu.get("license_status")),
                    FIX["license"])
            continue
        expiry = parse_time(gpu.get("license_expiry")) if gpu.get("license_expiry") else None
        label = "%s: licensed (%s)" % (gpu["name"], gpu.get("license_product") or "product not shown")
        if expiry is None:
            out.add("guest", name, "license", "PASS", label + ", no expiry shown.")
            continue
        hours = (expiry - opts["now"]).total_seconds() / 3600.0
        if hours < 0:
            out.add("guest", name, "license", "WARN", "%s, but its expiry %s has passed." % (
                label, gpu["license_expiry"]), "Check the guest clock is synchronised (licenses are time-signed) and "
                "that nvidia-gridd renews the lease.")
        elif hours < opts["license_expiry_warn_hours"]:
            out.add("guest", name, "license", "WARN", "%s, expires %s (in %.1f h)." % (
                label, gpu["license_expiry"], hours), "The lease is not being renewed: check nvidia-gridd and that "
                "the license server answers.")
        else:
            out.add("guest", name, "license", "PASS", "%s, expires %s." % (label, gpu["license_expiry"]))
