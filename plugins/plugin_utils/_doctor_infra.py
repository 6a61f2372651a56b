# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's checks of each host: its BMC (health, inlet temperature, BIOS intents) and its ESXi side (host
driver, Shared Direct, carve, GPU temperatures; whole GPUs in ``_doctor_passthrough``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import HINTS as SMI_HINTS
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_passthrough import passthrough_checks, passthrough_gpus
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_rules import (
    BIOS_INTENTS,
    branch_label,
    FIX,
    OFF_WORDS,
)


def bmc_checks(out, host, facts, opts):
    name, bmc = host["name"], host.get("bmc")
    if bmc is None and not facts.get("bmc_gathered", True):
        out.add("bmc", name, "bios", "SKIP", "BMCs not read: BIOS and inlet temperature not checked.",
                "Set doctor_gather_bmc to true.")
        return
    if bmc is None:
        out.add("bmc", name, "bios", "SKIP", "No bmc_address for this host in the inventory: BIOS and inlet "
                "temperature not checked.", "Set bmc_address, bmc_username and bmc_password on the host.")
        return
    if bmc["error"]:
        out.add("bmc", name, "bmc", "WARN", "The BMC at %s does not answer: %s" % (bmc["address"], bmc["error"]),
                "Check bmc_address and the BMC credentials, and that the BMC's Redfish service is on.")
    else:
        out.add("bmc", name, "bmc", "PASS", "%s %s, BIOS %s" % (bmc["vendor"], bmc["model"], bmc["bios_version"]))
    intents = bmc.get("intents")
    if intents is None:
        out.add("bmc", name, "bios", "SKIP", "BIOS intents not read: %s" % (bmc["bios_error"] or bmc["error"]),
                "Make the BMC answer Redfish BIOS requests (iDRAC8 needs firmware 2.50.50.50 or later).")
    else:
        for intent, label in BIOS_INTENTS:
            _bios_intent(out, name, bmc, intents, intent, label)
    inlet = bmc.get("inlet_celsius")
    if inlet is None:
        if not bmc["error"]:
            out.add("bmc", name, "inlet_temperature", "SKIP", "The BMC reports no inlet (intake) sensor.",
                    "Nothing to do unless the platform has an inlet sensor the BMC does not expose.")
        return
    status = _threshold(inlet, opts["inlet_warn_celsius"], opts["inlet_fail_celsius"])
    out.add("bmc", name, "inlet_temperature", status, "Inlet %g °C (warn at %g, fail at %g)." % (
        inlet, opts["inlet_warn_celsius"], opts["inlet_fail_celsius"]),
        "Lower the inlet temperature: check the room and rack cooling and blocked airflow.")


def _bios_intent(out, name, bmc, intents, intent, label):
    info = intents.get(intent) or {"status": "not_exposed", "attributes": {}}
    check = "bios_" + intent
    provider = intents.get(info["via"]) if info.get("via") else info
    wanted = info.get("attributes") or {}
    shown = ", ".join("%s=%s" % (a, bmc["attributes"].get(a, "?")) for a in sorted(wanted))
    via = " (through %s)" % info["via"] if info.get("via") else ""
    status = info.get("status")
    if status == "not_exposed":
        if intent == "pcie_aer":
            out.add("bmc", name, check, "SKIP", "%s: not exposed by this BIOS." % label,
                    "Nothing to set over Redfish; the platform enables AER itself or in its setup screens.")
        else:
            note = info.get("note") or "not exposed by this BIOS"
            out.add("bmc", name, check, "WARN", "%s: %s." % (label, note),
                    "Check the setting in the server's BIOS setup screens.")
    elif status == "read_only":
        out.add("bmc", name, check, "FAIL", "%s is off and locked: %s." % (label, info.get("note")),
                "Unlock it in the BIOS (e.g. SysProfile=Custom on Dell), then run playbooks/bios.yml.")
    elif status == "ok" and not provider.get("changed"):
        out.add("bmc", name, check, "PASS", "%s on%s: %s." % (label, via, shown))
    elif status == "ok":
        out.add("bmc", name, check, "WARN", "%s is on%s, but a pending BIOS change turns it off at the next "
                "reboot (%s)." % (label, via, shown), FIX["bios"])
    elif not provider.get("changed"):
        out.add("bmc", name, check, "WARN", "%s set%s, pending until the next reboot (now %s)." % (
            label, via, shown), FIX["bios_pending"])
    else:
        differ = [(a, bmc["attributes"].get(a), v) for a, v in sorted(wanted.items()) if bmc["attributes"].get(a) != v]
        detail = ", ".join("%s=%s (wanted %s)" % (a, "?" if now is None else now, v) for a, now, v in differ)
        if not differ or any(now is None or str(now) in OFF_WORDS for _a, now, _v in differ):
            out.add("bmc", name, check, "FAIL", "%s off%s: %s." % (label, via, detail or shown), FIX["bios"])
        else:
            out.add("bmc", name, check, "WARN", "%s on%s, but not as the GPU virtualisation profile sets it: %s." % (
                label, via, detail), FIX["bios"])


def _threshold(value, warn, fail):
    return "FAIL" if value >= fail else "WARN" if value >= warn else "PASS"


def host_checks(out, host, facts, opts):
    name = host["name"]
    if host.get("connection_state") != "connected":
        out.add("host", name, "connection", "FAIL", "Host is %s in vCenter." % host.get("connection_state"),
                "Reconnect the host in vCenter; its GPUs and VMs are out of reach until then.")
    elif host.get("maintenance_mode"):
        out.add("host", name, "connection", "WARN", "Host is in maintenance mode: it runs no VMs.",
                "Exit maintenance mode when the work on the host is done (gpuops.vgpu.host_maintenance).")
    else:
        out.add("host", name, "connection", "PASS", "Connected, not in maintenance mode.")
    whole = passthrough_gpus(host)
    if host["gpus"] and len(whole) == len(host["gpus"]):
        out.add("host", name, "host_driver", "PASS", "Every GPU is in passthrough: the guests' own driver runs them, "
                "no vGPU Manager needed.")
    else:
        _host_driver(out, host)
    if not host["gpus"]:
        out.add("host", name, "gpus", "WARN", "vCenter sees no NVIDIA GPU on this host.",
                "Check the card is seated and powered, MMIO above 4 GB in the BIOS, and the host driver.")
    for gpu in host["gpus"]:
        if gpu in whole:
            continue
        _shared_direct(out, name, gpu)
        _carve(out, name, gpu)
    if whole:
        passthrough_checks(out, host)
    _gpu_temperatures(out, host, opts)
    _running_vgpus(out, host)


def _host_driver(out, host):
    name, driver = host["name"], host.get("driver")
    if driver is None:
        smi = host.get("nvidia_smi") or {}
        if smi.get("kind") in SMI_HINTS and not smi.get("driver_version"):
            out.add("host", name, "host_driver", "FAIL", "nvidia-smi on the host fails: %s" % smi["error"],
                    "%s %s" % (SMI_HINTS[smi["kind"]], FIX["driver"]))
            return
        out.add("host", name, "host_driver", "SKIP", "Installed host driver not known: no host-side nvidia-smi, "
                "no vLCM compliance scan and no doctor_host_drivers entry.",
                "Scan the cluster (gpuops.vgpu.vlcm_remediate in check mode), or give the esxi_hosts SSH connection "
                "variables so the doctor runs nvidia-smi on them.")
        return
    if driver["version"] is None:
        out.add("host", name, "host_driver", "FAIL", "No NVIDIA vGPU host driver installed (%s)." % driver["source"],
                FIX["driver"])
    elif driver["components"] is not None and driver["daemon"] is None:
        out.add("host", name, "host_driver", "FAIL", "vGPU host driver %s installed without the GPU management "
                "daemon (%s)." % (driver["version"], driver["source"]), FIX["driver"])
    else:
        out.add("host", name, "host_driver", "PASS", "vGPU Manager %s%s (%s)." % (
            driver["version"], branch_label(driver["version"]), driver["source"]))


def _shared_direct(out, host, gpu):
    obj = "%s %s" % (host, gpu["pci_id"])
    active, configured = gpu.get("graphics_type"), gpu.get("configured_graphics_type")
    if active == "sharedDirect" and not gpu.get("xorg_restart_pending"):
        out.add("host", obj, "shared_direct", "PASS", "%s in Shared Direct (vGPU)." % gpu["device_name"])
    elif active == "sharedDirect":
        out.add("host", obj, "shared_direct", "WARN", "%s runs Shared Direct, but is configured %s: the next Xorg "
                "restart takes it out of vGPU." % (gpu["device_name"], configured), FIX["graphics"])
    elif configured == "sharedDirect":
        out.add("host", obj, "shared_direct", "FAIL", "%s configured Shared Direct but still %s: Xorg was not "
                "restarted." % (gpu["device_name"], active),
                "Restart Xorg on the host with its vGPU VMs off (role gpuops.vgpu.host_graphics).")
    else:
        out.add("host", obj, "shared_direct", "FAIL", "%s is %s, not Shared Direct: it takes no vGPU." % (
            gpu["device_name"], active), FIX["graphics"])


def _carve(out, host, gpu):
    obj = "%s %s" % (host, gpu["pci_id"])
    profiles = gpu.get("profiles") or []
    if len(profiles) > 1 and gpu.get("vgpu_mode") != "mixedSize":
        out.add("host", obj, "one_profile_size", "FAIL", "Carved for several profiles at once: %s." % ", ".join(
            profiles), "In equal-size mode a GPU takes one size: move the VMs of the other sizes to GPUs carved for "
            "them (plan with gpuops.vgpu.vgpu_plan).")
    elif profiles:
        out.add("host", obj, "one_profile_size", "PASS", "%s: %s of %s used, %s free (%s)." % (
            ", ".join(profiles), gpu.get("used"), gpu.get("max") if gpu.get("max") is not None else "?",
            gpu.get("free") if gpu.get("free") is not None else "?", ", ".join(gpu.get("vms") or [])))
    else:
        out.add("host", obj, "one_profile_size", "PASS", "Idle: the first vGPU powered on sets its profile size.")


def _gpu_temperatures(out, host, opts):
    smi = host.get("nvidia_smi")
    if smi is None or smi.get("error"):
        out.add("host", host["name"], "gpu_temperature", "SKIP", "No host-side nvidia-smi: %s." % (
            smi["error"] if smi else "not gathered"), FIX["host_smi"])
        return
    for gpu in smi["gpus"]:
        obj = "%s %s" % (host["name"], gpu["pci_id"])
        value = gpu.get("temperature_gpu_c")
        if value is None:
            out.add("host", obj, "gpu_temperature", "SKIP", "nvidia-smi reports no temperature for %s." % gpu["name"],
                    "Read the GPU temperature from the BMC if the server has a sensor for it.")
            continue
        out.add("host", obj, "gpu_temperature", _threshold(value, opts["gpu_temperature_warn_celsius"],
                                                           opts["gpu_temperature_fail_celsius"]),
                "%s at %g °C (warn at %g, fail at %g)." % (gpu["name"], value, opts["gpu_temperature_warn_celsius"],
                                                           opts["gpu_temperature_fail_celsius"]), FIX["airflow"])


def _running_vgpus(out, host):
    """The VMs whose vGPUs the host's vGPU manager runs (``nvidia-smi vgpu -q``) against the VMs vCenter places on
    each GPU."""
    smi = host.get("nvidia_smi")
    if smi is None or smi.get("error"):
        out.add("host", host["name"], "running_vgpus", "SKIP", "No host-side nvidia-smi: running vGPUs not compared "
                "with vCenter's view.", FIX["host_smi"])
        return
    if not smi.get("vgpus_read"):
        out.add("host", host["name"], "running_vgpus", "SKIP", "nvidia-smi vgpu -q not read on the host%s." % (
            ": %s" % smi["vgpu_error"] if smi.get("vgpu_error") else ""),
            "Put the host's GPUs in Shared Direct (vGPU) mode; the vGPU manager answers vgpu -q only then.")
        return
    host_side = dict((gpu["pci_id"], gpu.get("vgpu_vms") or []) for gpu in smi["gpus"])
    for gpu in host["gpus"]:
        obj = "%s %s" % (host["name"], gpu["pci_id"])
        seen, placed = host_side.get(gpu["pci_id"]), sorted(gpu.get("vms") or [])
        if seen is None:
            out.add("host", obj, "running_vgpus", "FAIL", "vCenter shows %s, the host's nvidia-smi does not list "
                    "this GPU." % gpu["device_name"], "Check the GPU is seated and the vGPU manager sees it "
                    "(nvidia-smi -L on the host); reboot the host after moving its VMs if it fell off the bus.")
        elif seen == placed:
            out.add("host", obj, "running_vgpus", "PASS", "%s: %s, as vCenter shows." % (
                gpu["device_name"], "vGPUs of %s" % ", ".join(seen) if seen else "no vGPU running"))
        else:
            out.add("host", obj, "running_vgpus", "FAIL", "%s: the vGPU manager runs vGPUs of %s, vCenter places %s "
                    "there." % (gpu["device_name"], ", ".join(seen) or "no VM", ", ".join(placed) or "none"),
                    "Compare nvidia-smi vgpu -q on the host with the VMs' power state in vCenter: power off a VM "
                    "vCenter does not know, and look in the vmware.log of a VM whose vGPU did not start.")
