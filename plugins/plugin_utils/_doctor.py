# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's checks: gathered facts in, findings out, without I/O.

``run_checks(facts, options)`` runs on the output of ``_doctor_facts.collect`` and returns the findings, one per
check and object: ``layer`` (bmc, host, cluster, vm, guest), ``object``, ``check``, ``status`` (PASS, WARN, FAIL,
SKIP), ``message`` and, for anything but PASS, a one-line ``remediation`` (for SKIP: what would let the check run).
``table`` and ``summarize`` present them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _compatibility
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_facts import COMPONENTS, host_smi_facts, match
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import HINTS as SMI_HINTS

LAYERS = ("bmc", "host", "cluster", "vm", "guest")
STATUSES = ("PASS", "WARN", "FAIL", "SKIP")
RANK = {"PASS": 0, "SKIP": 1, "WARN": 2, "FAIL": 3}

DEFAULTS = {
    "now": None,
    "license_expiry_warn_hours": 12,
    "gpu_temperature_warn_celsius": 80,
    "gpu_temperature_fail_celsius": 90,
    "inlet_warn_celsius": 27,
    "inlet_fail_celsius": 35,
    "drs_enabled": None,
    "dpm_enabled": None,
    "hotmigrate": True,
}
DEFAULTS.update(COMPONENTS)

OFF_WORDS = ("Disabled", "Disable", "Off", "False", "false")
BIOS_INTENTS = (
    ("cpu_virtualization", "CPU virtualisation (VT-x/AMD-V)"),
    ("iommu", "IOMMU (VT-d/AMD-Vi)"),
    ("sriov", "SR-IOV"),
    ("mmio_above_4g", "MMIO above 4 GB"),
    ("pcie_aer", "PCIe AER"),
)

FIX = {
    "bios": "Run playbooks/bios.yml (gpuops.vgpu.bios_settings, profile: gpu_virtualization) and reboot the host "
            "in maintenance mode.",
    "bios_pending": "Reboot the host in maintenance mode to apply the pending BIOS values (playbooks/bios.yml "
                    "with reboot enabled).",
    "driver": "Add the vGPU host driver and GPU management daemon to the cluster image and remediate the hosts "
              "(playbooks/hosts.yml, role gpuops.vgpu.host_driver).",
    "graphics": "Set the GPU to Shared Direct and restart Xorg with the host's vGPU VMs off (role "
                "gpuops.vgpu.host_graphics).",
    "license": "Put a current client configuration token in place, set FeatureType=1 and restart nvidia-gridd "
               "(role gpuops.vgpu.grid_license); check the license server has free licenses.",
    "airflow": "Check fans and airflow (passive GPUs such as the P40 depend on server airflow) and the room's "
               "cooling.",
    "host_smi": "Give the esxi_hosts SSH connection variables so the doctor runs nvidia-smi on them, or pass "
                "doctor_host_nvidia_smi.",
}


class Findings(object):
    def __init__(self):
        self.items = []

    def add(self, layer, obj, check, status, message, remediation=None):
        self.items.append({"layer": layer, "object": obj, "check": check, "status": status, "message": message,
                           "remediation": None if status == "PASS" else remediation})


NUMBERS = ("license_expiry_warn_hours", "gpu_temperature_warn_celsius", "gpu_temperature_fail_celsius",
           "inlet_warn_celsius", "inlet_fail_celsius")
FLAGS = ("hotmigrate", "drs_enabled", "dpm_enabled")


def options_of(options):
    """The options with their defaults, numbers as numbers and flags as booleans (or None: no expectation).

    Raises ``ValueError`` naming the option for a value that is neither.
    """
    opts = dict(DEFAULTS, **(options or {}))
    for key in NUMBERS:
        try:
            opts[key] = float(opts[key])
        except (TypeError, ValueError):
            raise ValueError("%s must be a number, got %r" % (key, opts[key]))
    for key in FLAGS:
        if opts[key] is None or isinstance(opts[key], bool):
            continue
        word = str(opts[key]).strip().lower()
        if word not in ("true", "yes", "on", "1", "false", "no", "off", "0"):
            raise ValueError("%s must be true, false or null, got %r" % (key, opts[key]))
        opts[key] = word in ("true", "yes", "on", "1")
    opts["now"] = _parse_time(opts["now"]) if opts["now"] else datetime.datetime.utcnow()
    return opts


def run_checks(facts, options=None):
    """Every check over ``collect()``'s facts; findings in layer order (bmc, host, cluster, vm, guest)."""
    opts = options_of(options)
    out = Findings()
    if facts.get("vcenter_error"):
        out.add("host", facts.get("vcenter") or "vCenter", "vcenter", "FAIL",
                "Cannot read the GPU inventory: %s" % facts["vcenter_error"],
                "Check the vcenter_* connection variables and that vCenter answers.")
    for host in facts.get("hosts") or []:
        _bmc_checks(out, host, facts, opts)
    for host in facts.get("hosts") or []:
        _host_checks(out, host, facts, opts)
    _cluster_checks(out, facts, opts)
    _vm_checks(out, facts)
    _guest_checks(out, facts, opts)
    return out.items


def summarize(findings):
    counts = dict((status, 0) for status in STATUSES)
    for finding in findings:
        counts[finding["status"]] += 1
    worst = max([f["status"] for f in findings] or ["PASS"], key=lambda s: RANK[s])
    return dict(counts, total=len(findings), worst=worst)


def _bmc_checks(out, host, facts, opts):
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


def _host_checks(out, host, facts, opts):
    name = host["name"]
    if host.get("connection_state") != "connected":
        out.add("host", name, "connection", "FAIL", "Host is %s in vCenter." % host.get("connection_state"),
                "Reconnect the host in vCenter; its GPUs and VMs are out of reach until then.")
    elif host.get("maintenance_mode"):
        out.add("host", name, "connection", "WARN", "Host is in maintenance mode: it runs no VMs.",
                "Exit maintenance mode when the work on the host is done (gpuops.vgpu.host_maintenance).")
    else:
        out.add("host", name, "connection", "PASS", "Connected, not in maintenance mode.")
    _host_driver(out, host)
    if not host["gpus"]:
        out.add("host", name, "gpus", "WARN", "vCenter sees no NVIDIA GPU on this host.",
                "Check the card is seated and powered, MMIO above 4 GB in the BIOS, and the host driver.")
    for gpu in host["gpus"]:
        _shared_direct(out, name, gpu)
        _carve(out, name, gpu)
    _gpu_temperatures(out, host, opts)


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
            driver["version"], _branch_label(driver["version"]), driver["source"]))


def _branch_label(version):
    try:
        info = _compatibility.driver_branch(version)
    except InputError:
        return ""
    release = ", vGPU %s" % info["vgpu_release"] if info["vgpu_release"] else ""
    return ", %s%s" % (info["branch"], release)


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


def _cluster_checks(out, facts, opts):
    vcenter = facts.get("vcenter") or "vCenter"
    hot = facts.get("hotmigrate") or {}
    if hot.get("error"):
        out.add("cluster", vcenter, "vgpu_hotmigrate", "SKIP", "vgpu.hotmigrate.enabled not read: %s" % hot["error"],
                "Check the vCenter user may read advanced settings.")
    elif opts["hotmigrate"] is None or hot.get("value") is opts["hotmigrate"]:
        out.add("cluster", vcenter, "vgpu_hotmigrate", "PASS", "vgpu.hotmigrate.enabled is %s." % json.dumps(
            hot.get("value")))
    else:
        message = "vgpu.hotmigrate.enabled is %s, expected %s: vGPU VMs %s move with vMotion." % (
            json.dumps(hot.get("value")), json.dumps(opts["hotmigrate"]), "cannot" if opts["hotmigrate"] else "can")
        out.add("cluster", vcenter, "vgpu_hotmigrate", "FAIL", message,
                "Set it with role gpuops.vgpu.cluster_vgpu (cluster_vgpu_hotmigrate) or gpuops.vgpu.vcenter_settings.")
    for cluster in facts.get("clusters") or []:
        hosts = [h for h in facts.get("hosts") or [] if h.get("cluster") == cluster["name"]]
        _automation(out, cluster, hosts, facts, opts)
        _gpus_alike(out, cluster["name"], hosts)
        _drivers_alike(out, cluster["name"], hosts)
        _image(out, cluster, opts)
        _ecc_alike(out, cluster["name"], hosts)
        _capacity(out, cluster["name"], hosts, facts)


def _automation(out, cluster, hosts, facts, opts):
    name = cluster["name"]
    if cluster.get("automation_error"):
        out.add("cluster", name, "drs_dpm", "SKIP", "DRS/DPM not read: %s" % cluster["automation_error"],
                "Check the cluster name (doctor_clusters) and the vCenter user's rights.")
        return
    if cluster.get("prepared_not_restored"):
        out.add("cluster", name, "drs_dpm", "WARN", "DRS/DPM are as gpuops.vgpu.cluster_vgpu prepare left them "
                "(DRS %s, DPM %s); its record was never restored." % (_onoff(cluster["drs_enabled"]),
                                                                      _onoff(cluster["dpm_enabled"])),
                "Run the restore entry point of role gpuops.vgpu.cluster_vgpu (tasks_from: restore) once the vGPU "
                "work is done.")
        return
    for key, label in (("drs", "DRS"), ("dpm", "DPM")):
        value, behavior = cluster.get(key + "_enabled"), cluster.get(key + "_behavior")
        wanted = opts[key + "_enabled"]
        state = "%s %s (%s)" % (label, _onoff(value), behavior)
        if wanted is not None and bool(value) != wanted:
            out.add("cluster", name, key, "FAIL", "%s; doctor_%s_enabled expects it %s." % (
                state, key, _onoff(wanted)), "Set it with gpuops.vgpu.cluster_automation, or restore it with role "
                "gpuops.vgpu.cluster_vgpu (tasks_from: restore).")
            continue
        running = any(gpu.get("used") for host in hosts for gpu in host["gpus"])
        hot = (facts.get("hotmigrate") or {}).get("value")
        if key == "dpm" and value and behavior == "automated" and running and hot is not True:
            out.add("cluster", name, key, "WARN", "%s with vGPU VMs running and vGPU vMotion off: DPM cannot empty "
                    "their hosts and keeps trying." % state, "Turn vgpu.hotmigrate.enabled on, or DPM to manual.")
            continue
        out.add("cluster", name, key, "PASS", state + ("." if wanted is None else ", as expected."))


def _onoff(value):
    return "on" if value else "off"


def gpu_sets(hosts):
    """Host name to its GPUs' names, sorted and joined: equal strings mean the same GPU models and counts."""
    return dict((h["name"], " + ".join(sorted(g.get("device_name") or "?" for g in h.get("gpus") or [])) or "no GPU")
                for h in hosts)


def ecc_modes(hosts):
    """``(seen, unknown, pending)`` over hosts with ``nvidia_smi`` facts as ``_doctor_facts`` makes them.

    ``seen``: "<host> <GPU>" to ECC on (True) or off; ``unknown``: hosts without nvidia-smi; ``pending``: the GPUs
    whose ECC changes at the next reset.
    """
    seen, unknown, pending = {}, [], []
    for host in hosts:
        smi = host.get("nvidia_smi")
        if not smi or smi.get("error"):
            unknown.append(host["name"])
            continue
        for gpu in smi["gpus"]:
            where = "%s %s" % (host["name"], gpu["pci_id"])
            seen[where] = bool(gpu.get("ecc_mode_current"))
            if gpu.get("ecc_mode_pending") is not None and gpu["ecc_mode_pending"] != gpu.get("ecc_mode_current"):
                pending.append(where)
    return seen, unknown, pending


def hosts_alike(hosts, nvidia_smi=None):
    """The ``gpus_alike`` and ``ecc_alike`` rules over ``gpu_info`` hosts and host to ``nvidia_smi_info`` results.

    ECC is compared over the GPUs of the hosts that have an entry in ``nvidia_smi``.
    """
    nvidia_smi = nvidia_smi or {}
    sets = gpu_sets(hosts)
    seen, _unknown, pending = ecc_modes([{"name": h["name"], "nvidia_smi": host_smi_facts(nvidia_smi[h["name"]], h)}
                                         for h in hosts if h["name"] in nvidia_smi])
    return {"gpus_alike": len(set(sets.values())) <= 1, "gpus": sets,
            "ecc_alike": len(set(seen.values())) <= 1, "ecc": dict((w, _onoff(v)) for w, v in seen.items()),
            "ecc_pending": pending}


def _gpus_alike(out, cluster, hosts):
    signatures = gpu_sets(hosts)
    if len(set(signatures.values())) <= 1:
        out.add("cluster", cluster, "gpus_alike", "PASS", "Every host carries %s." % (
            list(signatures.values())[0] if signatures else "nothing (no host)"))
    else:
        out.add("cluster", cluster, "gpus_alike", "WARN", "Hosts carry different GPUs: %s." % "; ".join(
            "%s: %s" % item for item in sorted(signatures.items())),
            "Give every host the same GPUs, else vGPU VMs lose DRS, DPM and HA targets.")


def _drivers_alike(out, cluster, hosts):
    versions = dict((h["name"], (h.get("driver") or {}).get("version", "unknown") if h.get("driver") else "unknown")
                    for h in hosts)
    known = dict((h, v) for h, v in versions.items() if v != "unknown")
    label = "; ".join("%s: %s" % (h, v or "none") for h, v in sorted(versions.items()))
    if not known:
        out.add("cluster", cluster, "host_drivers_alike", "SKIP", "No host's driver is known.", FIX["host_smi"])
    elif len(set(known.values())) > 1:
        out.add("cluster", cluster, "host_drivers_alike", "FAIL", "Hosts run different vGPU Managers: %s." % label,
                "Remediate every host against the cluster image (gpuops.vgpu.vlcm_remediate).")
    elif len(known) < len(versions):
        out.add("cluster", cluster, "host_drivers_alike", "WARN", "Known hosts agree, others are unknown: %s." % label,
                FIX["host_smi"])
    else:
        out.add("cluster", cluster, "host_drivers_alike", "PASS", "Every host runs %s." % (
            list(known.values())[0] or "no vGPU Manager"))


def _image(out, cluster, opts):
    name = cluster["name"]
    if not cluster.get("vlcm_gathered"):
        return
    if cluster.get("vlcm_error"):
        out.add("cluster", name, "cluster_image", "SKIP", "vLCM not read: %s" % cluster["vlcm_error"],
                "Check that vCenter's REST API answers and the user may read vLCM.")
        return
    if not cluster.get("image_managed"):
        out.add("cluster", name, "cluster_image", "SKIP", "The cluster is not managed with a single vLCM image.",
                "Manage it with an image to have vLCM keep the host driver alike (role gpuops.vgpu.host_driver).")
        return
    image = cluster.get("image") or {}
    driver = [c for c in image if match(c, opts["driver_components"])]
    daemon = [c for c in image if match(c, opts["daemon_components"])]
    compliance = cluster.get("compliance") or {}
    if not driver or (opts["daemon_components"] and not daemon):
        missing = [what for what, found in (("host driver", driver), ("GPU management daemon", daemon)) if not found]
        out.add("cluster", name, "cluster_image", "FAIL", "The cluster image has no NVIDIA %s." % " and no ".join(
            missing), FIX["driver"])
    elif compliance.get("status") not in (None, "COMPLIANT"):
        out.add("cluster", name, "cluster_image", "WARN", "Image has %s, but the scan of %s found the cluster %s." % (
            ", ".join("%s %s" % (c, image[c]) for c in driver + daemon), compliance.get("scan_time"),
            compliance.get("status")), "Remediate the hosts (gpuops.vgpu.vlcm_remediate).")
    else:
        out.add("cluster", name, "cluster_image", "PASS", "Image has %s%s." % (
            ", ".join("%s %s" % (c, image[c]) for c in driver + daemon),
            "; compliant at %s" % compliance["scan_time"] if compliance else "; not scanned yet"))


def _ecc_alike(out, cluster, hosts):
    seen, unknown, pending = ecc_modes(hosts)
    if not seen:
        out.add("cluster", cluster, "ecc_alike", "SKIP", "ECC not known: no host-side nvidia-smi (vSphere does not "
                "expose GPU ECC).", FIX["host_smi"])
    elif len(set(seen.values())) > 1:
        out.add("cluster", cluster, "ecc_alike", "FAIL", "ECC differs: %s." % "; ".join(
            "%s %s" % (w, _onoff(v)) for w, v in sorted(seen.items())),
            "Make ECC alike with nvidia-smi -e 0|1 on the hosts that differ and reboot them; vGPU vMotion needs it.")
    elif pending or unknown:
        out.add("cluster", cluster, "ecc_alike", "WARN", "ECC is %s for the GPUs read%s%s." % (
            _onoff(list(seen.values())[0]), "; changes at the next reset on %s" % ", ".join(pending) if pending else "",
            "; not known for %s" % ", ".join(unknown) if unknown else ""),
            "Reboot the hosts with a pending ECC change." if pending else FIX["host_smi"])
    else:
        out.add("cluster", cluster, "ecc_alike", "PASS", "ECC is %s for all %d GPUs." % (
            _onoff(list(seen.values())[0]), len(seen)))


def _capacity(out, cluster, hosts, facts):
    names = set(h["name"] for h in hosts)
    wanted = set()
    vm_host = dict((vm["name"], vm["host"]) for vm in facts.get("vms") or [])
    for guest in facts.get("guests") or []:
        if guest.get("profile") and vm_host.get(guest["vm"]) in names:
            wanted.add(guest["profile"])
    carved = set(p for h in hosts for g in h["gpus"] for p in g.get("profiles") or [])
    for profile in sorted(carved | wanted):
        free = dict((h["name"], p.get("free")) for h in hosts for p in h["profiles"] if p["name"] == profile)
        total = sum(v for v in free.values() if v)
        if total:
            out.add("cluster", "%s %s" % (cluster, profile), "capacity", "PASS", "%d free slot(s): %s." % (
                total, ", ".join("%s %s" % (h, v) for h, v in sorted(free.items()) if v)))
        else:
            out.add("cluster", "%s %s" % (cluster, profile), "capacity", "WARN", "No free slot for %s on any host: a "
                    "new VM, a vMotion or an HA restart of this profile finds no GPU." % profile,
                    "Carve another GPU to this size or add GPUs (plan with gpuops.vgpu.vgpu_plan).")


def _vm_checks(out, facts):
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


def _guest_checks(out, facts, opts):
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
        expiry = _parse_time(gpu.get("license_expiry")) if gpu.get("license_expiry") else None
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


def _parse_time(value):
    if isinstance(value, datetime.datetime):
        return value.replace(tzinfo=None)
    text = str(value).strip().replace("Z", "").split("+", 1)[0].split(".", 1)[0]
    return datetime.datetime.strptime(text.replace(" ", "T"), "%Y-%m-%dT%H:%M:%S")


# -- table ---------------------------------------------------------------------------------------------------------

def table(findings):
    """Fixed-width lines, grouped by layer: status, object, check, message; the remediation on a line below."""
    lines = []
    obj_w = max([len(f["object"]) for f in findings] or [6])
    check_w = max([len(f["check"]) for f in findings] or [5])
    indent = " " * (6 + obj_w + 2 + check_w + 2)
    for layer in LAYERS:
        group = [f for f in findings if f["layer"] == layer]
        if not group:
            continue
        counts = summarize(group)
        lines.append("== %s: %s ==" % (layer, ", ".join("%d %s" % (counts[s], s) for s in STATUSES if counts[s])))
        for f in group:
            lines.append(("%-4s  %-*s  %-*s  %s" % (f["status"], obj_w, f["object"], check_w, f["check"],
                                                    f["message"])).rstrip())
            if f.get("remediation"):
                lines.append("%s-> %s" % (indent, f["remediation"]))
    counts = summarize(findings)
    lines.append("doctor: %d checks: %s" % (counts["total"], ", ".join("%d %s" % (counts[s], s) for s in STATUSES)))
    return lines
