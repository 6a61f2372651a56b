# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's facts: what its role registered (module results, pre-gathered variables), made compact.

The result is the ``facts`` of the doctor's JSON report; ``_doctor.run_checks`` runs on it and the fleet report
draws it. A failed or unreachable read becomes an error next to the data it should have given.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import fnmatch
import json

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_k8s import node_facts
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_passthrough import nvlink_sets
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._doctor_servers import server_facts
from ansible_collections.gpuops.vgpu.plugins.module_utils._pci import pci_bus_address

# Where the CUDA runfile links the toolkit it installs as the default (the doctor's default doctor_guest_cuda_home).
CUDA_LINK = "/usr/local/cuda"
COMPONENTS = {
    "driver_components": ["NVD-VGPU-*", "NVD-AIE-*"],
    "daemon_components": ["nvd-gpu-mgmt-daemon"],
}


def _by_item(value):
    """Key to result from a registered loop (``results``, each with its ``item``), or a dict as it is."""
    if isinstance(value, dict) and isinstance(value.get("results"), list):
        return dict((result.get("item"), result) for result in value["results"])
    return value or {}


def _bmc_entry(raw, name):
    """``{address, info, bios}`` of a host: from ``bmc``, else from the ``bmc_info`` and ``bios`` reads."""
    if name in (raw.get("bmc") or {}):
        return raw["bmc"][name]
    address = (raw.get("bmc_addresses") or {}).get(name)
    if address is None:
        return None
    return {"address": address, "info": _by_item(raw.get("bmc_info")).get(name),
            "bios": _by_item(raw.get("bios")).get(name)}


def _guests(raw):
    """``{name, vm, profile, nvidia_smi, cuda}`` per guest; ``guest_facts`` wins over what was gathered."""
    smi, cuda = _by_item(raw.get("guest_nvidia_smi")), _by_item(raw.get("guest_cuda"))
    given = raw.get("guest_facts") or {}
    listed = []
    for guest in raw.get("guests") or []:
        facts = given.get(guest["name"]) or {}
        listed.append(dict(guest, nvidia_smi=facts.get("nvidia_smi", guest.get("nvidia_smi", smi.get(guest["name"]))),
                           cuda=facts.get("cuda_version", guest.get("cuda", cuda.get(guest["name"])))))
    return listed


def _outcome(result, key):
    """``(data, error)`` of a registered result that should carry ``key``.

    The role reads with ``failed_when: false``, which clears ``failed``: a result without its data key failed, and
    its ``msg`` says why. Skipped tasks give neither data nor error.
    """
    if not isinstance(result, dict):
        return None, None
    if result.get("unreachable"):
        return None, "unreachable: %s" % (result.get("msg") or "no answer")
    if result.get("skipped"):
        return None, None
    if result.get("failed") or key not in result:
        return None, result.get("msg") or "no %s in the result" % key
    return result, None


def _smi(value):
    """nvidia-smi facts from a registered ``nvidia_smi_info`` or ``gpu_guest_info`` result, from ``ansible_facts``
    or as they are."""
    if isinstance(value, dict) and "gpu_guest" in value:
        value = dict(value, nvidia_smi=(value["gpu_guest"] or {}).get("nvidia_smi"))
    if isinstance(value, dict) and "ansible_facts" in value and "nvidia_smi" not in value:
        value = value["ansible_facts"]
    if isinstance(value, dict) and "gpus" in value and "nvidia_smi" not in value:
        return value, None
    data, error = _outcome(value, "nvidia_smi")
    return (data["nvidia_smi"] if data else None), error


def bus_id(pci_id):
    """The key that matches a GPU's vSphere ``pci_id`` with its nvidia-smi ``pci_bus_id``: the canonical address.

    A value that is no PCI address (a read that failed) is its own key, so it matches nothing else.
    """
    return pci_bus_address(pci_id, default=pci_id)


def driver_of(version):
    """The driver version in a component version: ``525.105.14-1OEM.800.1.0.20613240`` -> ``525.105.14``."""
    return str(version).split("-", 1)[0] if version else None


def match(name, patterns):
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _failed(message):
    return {"failed": True, "msg": message}


def from_site(site, clusters):
    """The reads of one ``gpu_site_info`` result as the separate reads they stand for (``gpu_info``, ``vms_error``,
    ``settings``, ``automation`` and ``vlcm`` by cluster). A result without ``clusters`` failed as a whole (vCenter
    could not be reached): every part, for each of ``clusters``, carries its message."""
    if not isinstance(site, dict) or "clusters" not in site:
        whole = site if isinstance(site, dict) else _failed("no gpu_site_info result")
        return {"gpu_info": whole, "settings": whole, "automation": dict((name, whole) for name in clusters),
                "vlcm": {}}
    parts = {"vms_error": site.get("vms_error"), "automation": {}, "vlcm": {}}
    if "inventory" in site.get("gathered", []):
        parts["gpu_info"] = _failed(site["inventory_error"]) if site.get("inventory_error") else {
            "hosts": site.get("hosts") or [], "vms": site.get("vms") or []}
    if "settings" in site.get("gathered", []):
        parts["settings"] = _failed(site["settings_error"]) if site.get("settings_error") else {
            "settings": {"before": site.get("settings") or {}}}
    for entry in site["clusters"]:
        for part in ("automation", "vlcm"):
            if part in entry:
                error = entry.get(part + "_error")
                parts[part][entry["name"]] = _failed(error) if error else entry[part]
    return parts


def collect(raw, options=None):
    """Compact facts from the registered results in ``raw`` (see the ``doctor_facts`` filter for its keys)."""
    opts = dict(COMPONENTS, **(options or {}))
    if "site" in raw:
        raw = dict(raw, **from_site(raw["site"], raw.get("clusters") or []))
    inventory, vcenter_error = _outcome(raw.get("gpu_info"), "hosts")
    inventory = inventory or {}
    selected = list(raw.get("clusters") or [])
    hosts = [h for h in inventory.get("hosts") or [] if not selected or h.get("cluster") in selected]
    cluster_names = selected or sorted(set(h["cluster"] for h in hosts if h.get("cluster")))
    clusters = [_cluster_facts(name, raw) for name in cluster_names]
    scanned = dict((c["name"], c.get("hosts_components") or {}) for c in clusters)
    settings, settings_error = _outcome(raw.get("settings"), "settings")
    return {
        "vcenter": raw.get("vcenter"),
        "vcenter_error": vcenter_error,
        "hotmigrate": {"value": ((settings or {}).get("settings") or {}).get("before", {}).get(
            "vgpu.hotmigrate.enabled"), "error": settings_error},
        "clusters": clusters,
        "hosts": [_host_facts(h, raw, scanned.get(h.get("cluster"), {}).get(h["name"]), opts) for h in hosts],
        "vms": [_vm_facts(vm) for vm in inventory.get("vms") or []],
        "vms_error": None if vcenter_error else raw.get("vms_error"),
        "guests": [_guest_facts(g, raw.get("guest_cuda_home") or CUDA_LINK) for g in _guests(raw)],
        "guests_group": raw.get("guests_group"),
        "bmc_gathered": raw.get("bmc_gathered", True) is not False,
        "servers": _servers(raw),
        "k8s_nodes": node_facts(raw.get("k8s") or {}),
        "vmotion_drill": raw.get("vmotion_drill") or None,
    }


def _servers(raw):
    """Per bare-metal GPU server of ``servers``: its facts from its read (``server_reads``, a registered loop or
    the gather entry point's reads), ``server_facts`` (given, they win) and its DCGM verdict (``server_dcgm``, this
    run's gpu_validate or given)."""
    reads, given = _by_item(raw.get("server_reads")), raw.get("server_facts") or {}
    dcgm = raw.get("server_dcgm") or {}
    return [server_facts(name, given[name] if name in given else reads.get(name), (dcgm.get(name) or {}).get("verdict"),
                         (dcgm.get(name) or {}).get("source"))
            for name in raw.get("servers") or []]


def _cluster_facts(name, raw):
    automation, automation_error = _outcome(_by_item(raw.get("automation")).get(name), "previous")
    vlcm, vlcm_error = _outcome(_by_item(raw.get("vlcm")).get(name), "cluster")
    file_record = (raw.get("cluster_vgpu_records") or {}).get(name) or {}
    record = (automation or {}).get("record") or None
    facts = dict((key, ((automation or {}).get("previous") or {}).get(key))
                 for key in ("drs_enabled", "drs_behavior", "dpm_enabled", "dpm_behavior"))
    vlcm = vlcm or {}
    compliance = vlcm.get("compliance") or None
    facts.update(
        name=name,
        automation_error=automation_error,
        vlcm_gathered=bool(vlcm) or vlcm_error is not None,
        vlcm_error=vlcm_error,
        image_managed=(vlcm.get("cluster") or {}).get("image_managed"),
        image=(vlcm.get("image") or {}).get("components") if vlcm.get("image") else None,
        compliance={"status": compliance.get("status"), "scan_time": compliance.get("scan_time")}
        if compliance else None,
        hosts_components=dict((h["name"], dict((c, v.get("current")) for c, v in (h.get("components") or {}).items()
                                               if v.get("current")))
                              for h in (compliance or {}).get("hosts") or []),
        # The record cluster_vgpu's prepare keeps in vCenter; the controller file of earlier versions as a fallback.
        prepared_not_restored=bool(record) or file_record.get("state") == "prepared",
        prepared_by=dict((key, record.get(key)) for key in ("run", "by", "at")) if record else None,
        record_error=(automation or {}).get("record_error"),
    )
    return facts


def _host_facts(host, raw, compliance, opts):
    name = host["name"]
    given = _by_item(raw.get("host_nvidia_smi_given"))
    smi_read = given[name] if name in given else _by_item(raw.get("host_nvidia_smi")).get(name)
    smi, _smi_error = _smi(smi_read)
    by_bus = dict((bus_id(g.get("pci_bus_id")), g) for g in (smi or {}).get("gpus") or [])
    gpus = []
    for gpu in host.get("gpus") or []:
        seen = by_bus.get(bus_id(gpu.get("pci_id")), {})
        entry = dict((k, gpu.get(k)) for k in (
            "pci_id", "device_name", "model", "memory_mib", "graphics_type", "configured_graphics_type",
            "xorg_restart_pending", "vgpu_mode", "profile", "profiles", "vms", "used", "max", "free", "passthrough"))
        entry.update(temperature_celsius=seen.get("temperature_gpu_c"), ecc_current=seen.get("ecc_mode_current"),
                     ecc_pending=seen.get("ecc_mode_pending"))
        gpus.append(entry)
    sets, sets_source = nvlink_sets(name, smi, raw.get("passthrough_nvlink_sets"))
    return {
        "name": name,
        "cluster": host.get("cluster"),
        "nvlink_sets": sets,
        "nvlink_sets_source": sets_source,
        "connection_state": host.get("connection_state"),
        "maintenance_mode": host.get("maintenance_mode"),
        "gpus": gpus,
        "profiles": [dict((k, p.get(k)) for k in ("name", "max_per_gpu", "capacity", "free", "cuda"))
                     for p in host.get("supported_profiles") or []],
        "driver": _driver_facts(name, smi, raw, compliance, opts),
        "nvidia_smi": host_smi_facts(smi_read, host),
        "bmc": _bmc_facts(_bmc_entry(raw, name)),
    }


def host_smi_facts(value, host):
    """A host's nvidia-smi facts: ``value`` is an ``nvidia_smi_info`` result or its facts, ``host`` the host's
    ``gpu_info`` entry, whose PCI ids name the GPUs. None when nothing was read."""
    smi, smi_error = _smi(value)
    if smi is None and smi_error is None:
        return None
    vcenter_ids = dict((bus_id(g.get("pci_id")), g.get("pci_id")) for g in host.get("gpus") or [])
    vgpu = (smi or {}).get("vgpu")
    running = dict((bus_id(g.get("pci_bus_id")), sorted(v.get("vm_name") or "?" for v in g.get("vgpus") or []))
                   for g in (vgpu or {}).get("gpus") or [])
    vgpu_error = ((smi or {}).get("errors") or {}).get("vgpu")
    return {
        "error": smi_error or (None if (smi or {}).get("present", True) else "%s: %s" % (
            smi.get("kind"), smi.get("msg"))),
        "kind": (smi or {}).get("kind"),
        "driver_version": (smi or {}).get("driver_version"),
        # `nvidia-smi vgpu -q` read: the VMs whose vGPUs the host's vGPU manager runs, per GPU.
        "vgpus_read": vgpu is not None,
        "vgpu_error": "%s: %s" % (vgpu_error.get("kind"), vgpu_error.get("msg")) if vgpu_error else None,
        "gpus": [dict([("pci_id", vcenter_ids.get(bus_id(g.get("pci_bus_id")), g.get("pci_bus_id"))),
                       ("vgpu_vms", running.get(bus_id(g.get("pci_bus_id")), []) if vgpu is not None else None)] + [
            (k, g.get(k)) for k in ("name", "temperature_gpu_c", "ecc_mode_current", "ecc_mode_pending")])
            for g in (smi or {}).get("gpus") or []],
    }


def _driver_facts(name, smi, raw, compliance, opts):
    """What vGPU Manager the host runs: nvidia-smi first, then given components, then the last vLCM scan."""
    if smi and smi.get("present", True) and smi.get("driver_version"):
        return {"version": smi["driver_version"], "daemon": None, "source": "nvidia-smi", "components": None}
    given = (raw.get("host_drivers") or {}).get(name)
    if isinstance(given, str):
        return {"version": driver_of(given), "daemon": None, "source": "doctor_host_drivers", "components": None}
    components, source = (given, "doctor_host_drivers") if isinstance(given, dict) else (compliance, "vLCM scan")
    if not components:
        return None
    driver = sorted(v for c, v in components.items() if match(c, opts["driver_components"]))
    daemon = sorted(v for c, v in components.items() if match(c, opts["daemon_components"]))
    return {"version": driver_of(driver[-1]) if driver else None,
            "daemon": driver_of(daemon[-1]) if daemon else None, "source": source,
            "components": dict((c, v) for c, v in components.items()
                               if match(c, opts["driver_components"] + opts["daemon_components"]))}


def _bios_profile(info):
    """The BIOS comparison a ``bmc_info`` read made with ``bios_profile``, as a ``bios_settings`` result."""
    if not info or "bios_profile" not in info:
        return None
    return info["bios_profile"] or {"failed": True, "msg": info.get("bios_profile_error")}


def _bmc_facts(entry):
    if not entry:
        return None
    info, error = _outcome(entry.get("info"), "vendor")
    bios, bios_error = _outcome(entry.get("bios") or _bios_profile(info), "intents")
    info = info or {}
    return {
        "address": entry.get("address"),
        "error": error,
        "vendor": (info.get("vendor") or {}).get("family"),
        "model": info.get("model"),
        "bios_version": info.get("bios_version"),
        "inlet_celsius": info.get("inlet_celsius"),
        "temperatures": [dict((k, t.get(k)) for k in ("name", "context", "reading_celsius"))
                         for t in info.get("temperatures") or []],
        "attributes": (info.get("bios") or {}).get("attributes") or {},
        "pending": (info.get("bios") or {}).get("pending") or {},
        "intents": (bios or {}).get("intents"),
        "bios_error": bios_error,
    }


def _vm_facts(vm):
    return {"name": vm.get("name"), "host": vm.get("host"), "power_state": vm.get("power_state"),
            "profiles": [v.get("profile") for v in vm.get("vgpus") or []],
            "memory_fully_reserved": vm.get("memory_fully_reserved")}


def _cuda_toolkit(value, home=CUDA_LINK):
    """The CUDA version at ``home``: from a ``gpu_guest_info`` read of the toolkits (the ``/usr/local/cuda`` link or
    one of ``/usr/local/cuda-*``), a slurp of ``version.json``, a parsed ``version.json`` or a string."""
    if isinstance(value, dict) and "gpu_guest" in value:
        return _toolkit_at((value["gpu_guest"] or {}).get("cuda") or {}, home)
    if isinstance(value, dict) and ("content" in value or value.get("failed") or value.get("unreachable")):
        data, _error = _outcome(value, "content")
        try:
            value = json.loads(base64.b64decode(data["content"]).decode("utf-8")) if data else None
        except (ValueError, TypeError):
            return None
    if isinstance(value, dict):
        return (value.get("cuda") or {}).get("version")
    return str(value) if value else None


def read_by_guest_info(home):
    """Whether ``gpu_guest_info``'s toolkit read tells the CUDA version at ``home``; elsewhere ``version.json`` is
    read as a file."""
    home = str(home).rstrip("/")
    return home == CUDA_LINK or (home.startswith(CUDA_LINK + "-") and "/" not in home[len(CUDA_LINK):])


def _toolkit_at(cuda, home):
    home = str(home).rstrip("/")
    if home == CUDA_LINK:
        return (cuda.get("link") or {}).get("version")
    return next((toolkit.get("version") for toolkit in cuda.get("toolkits") or [] if toolkit.get("path") == home),
                None)


def _guest_facts(guest, cuda_home=CUDA_LINK):
    smi, error = _smi(guest.get("nvidia_smi"))
    smi = smi or {}
    return {
        "name": guest["name"],
        "vm": guest.get("vm") or guest["name"],
        "profile": guest.get("profile"),
        "gathered": bool(smi) or error is not None,
        "error": error,
        "present": smi.get("present", bool(smi)) if smi else None,
        "kind": smi.get("kind"),
        "msg": smi.get("msg"),
        "driver_version": smi.get("driver_version"),
        "cuda_version": smi.get("cuda_version"),
        "cuda_toolkit": _cuda_toolkit(guest.get("cuda"), cuda_home),
        "gpus": [dict((k, g.get(k)) for k in ("name", "license_product", "license_status", "licensed",
                                              "license_expiry")) for g in smi.get("gpus") or []],
    }
