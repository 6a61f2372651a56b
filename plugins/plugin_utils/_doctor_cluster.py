# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's checks of each cluster: DRS/DPM and vGPU vMotion, hosts alike (GPUs, drivers, ECC), the image and
capacity, and the last vGPU vMotion drill where one was recorded."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_facts import host_smi_facts, match
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_passthrough import passthrough_gpus
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_rules import FIX


def cluster_checks(out, facts, opts):
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
        if cluster.get("vlcm_gathered") and hosts and all(
                h["gpus"] and len(passthrough_gpus(h)) == len(h["gpus"]) for h in hosts):
            out.add("cluster", cluster["name"], "cluster_image", "PASS", "Every GPU of the cluster is in passthrough: "
                    "the image needs no NVIDIA vGPU host driver.")
        else:
            _image(out, cluster, opts)
        _ecc_alike(out, cluster["name"], hosts)
        _capacity(out, cluster["name"], hosts, facts)
    if facts.get("vmotion_drill"):
        vmotion_drill(out, vcenter, facts["vmotion_drill"])


def vmotion_drill(out, vcenter, record):
    """The last vGPU vMotion drill (the vgpu_vmotion_drill role's record): every VM moved and back, every checked
    guest on the same boot with gpu_validate passed."""
    problems, done = [], []
    for move in record.get("moves") or []:
        back = next((entry for entry in record.get("back") or [] if entry.get("name") == move.get("name")), {})
        returned = move.get("returned") or back.get("moved")
        if move.get("error") or back.get("error") or not move.get("moved") or not returned:
            problems.append("%s: %s" % (move.get("name"), move.get("error") or back.get("error") or (
                "did not move" if not move.get("moved") else "not moved back, on %s" % move.get("target"))))
            continue
        done.append("%s %s->%s in %s s, back in %s s" % (move["name"], move.get("source"), move.get("target"),
                                                         move.get("migration_s"), move.get("return_s")
                                                         if move.get("returned") else back.get("migration_s")))
    for guest, seen in sorted((record.get("guests") or {}).items()):
        verdict = (record.get("validated") or {}).get(guest) or {}
        if not (seen or {}).get("boot_unchanged"):
            problems.append("guest %s booted again during the move" % guest)
        elif not verdict.get("passed"):
            problems.append("guest %s failed %s after the move" % (guest, ", ".join(verdict.get("failed") or [])
                                                                   or "gpu_validate"))
    when = record.get("finished_at") or "an unknown time"
    if problems or not done:
        out.add("cluster", vcenter, "vmotion_drill", "FAIL", "The vGPU vMotion drill of %s failed: %s." % (
            when, "; ".join(problems) or "no VM moved"), "Fix what it names, then run playbooks/vmotion_drill.yml again.")
    else:
        out.add("cluster", vcenter, "vmotion_drill", "PASS", "The vGPU vMotion drill of %s passed: %s; %d guest(s) "
                "checked." % (when, "; ".join(done), len(record.get("guests") or {})))


def _automation(out, cluster, hosts, facts, opts):
    name = cluster["name"]
    if cluster.get("automation_error"):
        out.add("cluster", name, "drs_dpm", "SKIP", "DRS/DPM not read: %s" % cluster["automation_error"],
                "Check the cluster name (doctor_clusters) and the vCenter user's rights.")
        return
    if cluster.get("record_error"):
        out.add("cluster", name, "drs_dpm", "FAIL", cluster["record_error"],
                "Check DRS and DPM of the cluster in vCenter and set them as they should be, then clear its custom "
                "attribute gpuops.vgpu.cluster_vgpu.automation (vSphere Client: the cluster's Custom Attributes).")
        return
    if cluster.get("prepared_not_restored"):
        by = cluster.get("prepared_by")
        out.add("cluster", name, "drs_dpm", "WARN", "DRS/DPM are as gpuops.vgpu.cluster_vgpu prepare left them "
                "(DRS %s, DPM %s); its record%s was never restored." % (
                    _onoff(cluster["drs_enabled"]), _onoff(cluster["dpm_enabled"]),
                    " (run %s by %s at %s)" % (by["run"], by["by"], by["at"]) if by else ""),
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
