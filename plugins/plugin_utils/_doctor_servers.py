# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's view of bare-metal GPU servers (the ``gpu_servers`` group): per server, NVIDIA's data center driver
(branch, version, kernel module flavour), the NVSwitch fabric, the GPUs and their NVLink, and the last DCGM verdict.

``server_facts`` makes a server's facts from one ``gpu_guest_info`` read (probes ``pci``, ``packages``, ``driver``,
``nvidia_smi``, ``topology``) and the DCGM verdict of ``gpu_validate`` (its ``checks.dcgm``) or ``dcgmi diag``'s
output; ``server_checks`` turns them into findings of the layer ``server``. The rules are the collection's own:
the installed driver as ``nvidia_driver`` tells it (``_nvidia_driver_plan.installed_driver``), the kernel module
flavour from ``modinfo``'s license (``gpu_guest_info``), the fabric verdict of ``_fabric.check``, DCGM's of
``_dcgm_diag.dcgm_check``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import HINTS as SMI_HINTS
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _dcgm_diag, _fabric
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._nvidia_driver_plan import installed_driver
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._nvidia_kernel_module import kernel_module

# What a server's read asks gpu_guest_info for (roles/doctor: tasks/gather.yml and tasks/nvidia_smi.yml).
PROBES = ["pci", "packages", "driver", "nvidia_smi", "topology"]
# What the doctor keeps of each GPU nvidia-smi lists.
GPU_KEYS = ("index", "pci_bus_id", "name", "fabric_state", "fabric_status", "temperature_gpu_c")

FIX = {
    "driver": "Install NVIDIA's data center driver: run playbooks/servers.yml on the server (role "
              "gpuops.vgpu.nvidia_driver with nvidia_driver_branch).",
    "driver_library_mismatch": "The installed driver waits for a reboot: reboot the server (or run "
                               "playbooks/servers.yml with nvidia_driver_reboot: true) so its kernel module runs.",
    "nouveau": "nouveau holds the GPUs: run playbooks/servers.yml with nvidia_driver_reboot: true (role "
               "gpuops.vgpu.nvidia_driver blacklists nouveau and reboots).",
    "grid": "Remove the GRID guest driver (its nvidia-linux-grid package or nvidia-uninstall) and install NVIDIA's "
            "data center driver (role gpuops.vgpu.nvidia_driver, playbooks/servers.yml).",
    "fabric": "Install and start Fabric Manager of exactly the driver's version (role gpuops.vgpu.fabric_manager, "
              "playbooks/servers.yml), then check 'systemctl status nvidia-fabricmanager' and its log "
              "/var/log/fabricmanager.log for why the fabric did not complete.",
    "gpu_lost": "nvidia-smi does not see every GPU on the PCI bus: check the BMC's event log for the missing GPUs, "
                "reseat or replace them; a GPU that fell off the bus comes back only after a reboot.",
    "nvlink": "Check the NVLink links with 'nvidia-smi nvlink -e' (errors) on the server; links that stay inactive "
              "after a reboot need the board or bridge serviced.",
    "dcgm_not_run": "Run DCGM's diagnostic (playbooks/servers.yml with gpu_validate_dcgm_level 1 to 4, DCGM from "
                    "role gpuops.vgpu.dcgm): gpu_validate keeps its verdict for the doctor of this and later runs "
                    "(gpu_validate_dcgm_records); or pass doctor_server_dcgm.",
    "dcgm_missing": "Install DCGM and start its host engine (role gpuops.vgpu.dcgm), then run the diagnostic again "
                    "(playbooks/servers.yml with gpu_validate_dcgm_level).",
    "dcgm_failed": "Take the GPUs DCGM names out of service, act on DCGM's message, then run 'dcgmi diag -r <level> "
                   "-i <GPU>' on them again (gpu_validate_dcgm_level); replace a GPU that fails again.",
    "unreachable": "Check the server's connection variables (gpu_servers) and that it is up.",
    "gpu_rule": "Install a branch and kernel module flavour the GPUs run (playbooks/servers.yml, role "
                "gpuops.vgpu.nvidia_driver with nvidia_driver_branch and nvidia_driver_kernel_module: auto), then "
                "reboot the server so the new module runs.",
}


def _read_outcome(read):
    """``(gpu_guest, error)`` of a registered ``gpu_guest_info`` read, or of a ``gpu_guest`` dict as it is."""
    if not isinstance(read, dict):
        return None, None
    if read.get("unreachable"):
        return None, "unreachable: %s" % (read.get("msg") or "no answer")
    if read.get("skipped"):
        return None, None
    if "gpu_guest" in read:
        return read["gpu_guest"] or {}, None
    if "gathered" in read:
        return read, None
    return None, read.get("msg") or "no gpu_guest in the result"


def dcgm_verdict(value, gpus=None):
    """The DCGM verdict of a server: ``gpu_validate``'s ``checks.dcgm`` (or its whole ``gpu_validate_result``) as it
    is, or ``{"stdout", "level"}`` (``dcgmi diag``'s output) judged by ``_dcgm_diag.dcgm_check``, which names each GPU
    by its bus id from ``gpus`` (nvidia-smi's); None when none."""
    if not isinstance(value, dict) or not value:
        return None
    if "checks" in value:
        value = (value.get("checks") or {}).get("dcgm")
        if not isinstance(value, dict):
            return None
    if "stdout" in value and "status" not in value:
        verdict = _dcgm_diag.dcgm_check(value, value.get("level") or 1, gpus=gpus)
        return dict(verdict, source="dcgmi diag output")
    if value.get("status") not in ("ok", "warning", "failed", "skipped"):
        return None
    return dict((k, value.get(k)) for k in ("status", "message", "level", "version", "failures", "source")
                if value.get(k) is not None)


def server_facts(name, read, dcgm=None, dcgm_source=None):
    """A server's facts from its read (see the module docstring) and its DCGM verdict."""
    state, error = _read_outcome(read)
    state = state or {}
    smi = state.get("nvidia_smi") or {}
    driver = state.get("driver") or {}
    installed = installed_driver(state) if state else None
    topology = state.get("topology") or {}
    verdict = dcgm_verdict(dcgm, smi.get("gpus"))
    if verdict is not None and dcgm_source and "source" not in verdict:
        verdict["source"] = dcgm_source
    errors = state.get("errors") or {}
    pci_gpus = (state.get("pci") or {}).get("gpus") or []
    return {
        "name": name,
        "gathered": bool(state) or error is not None,
        "error": error,
        "installed": installed,
        "kernel_module": {
            "flavour": driver.get("kernel_module_flavour"),
            "version": driver.get("kernel_module_version"),
            "loaded": driver.get("loaded"),
            "loaded_version": driver.get("loaded_version"),
        } if driver else None,
        # A GRID guest driver (its packages or licensing daemon) is a vGPU guest's, not a server's.
        "grid_driver": bool(driver.get("packages") or driver.get("gridd")),
        "nouveau": bool(any(gpu.get("driver") == "nouveau" for gpu in pci_gpus)),
        "gpu_rule": _gpu_rule(pci_gpus, installed),
        "pci_gpus": [gpu.get("address") for gpu in (state.get("pci") or {}).get("gpus") or []]
        if state.get("pci") is not None else None,
        "nvidia_smi": {
            "present": smi.get("present"),
            "kind": smi.get("kind"),
            "msg": smi.get("msg"),
            "driver_version": smi.get("driver_version"),
            "cuda_version": smi.get("cuda_version"),
        } if smi else None,
        "gpus": [dict((k, gpu.get(k)) for k in GPU_KEYS + ("ecc_mode_current",)) for gpu in smi.get("gpus") or []],
        "topology_read": "topology" in (state.get("gathered") or []),
        "nvlink_pairs": (topology.get("topology") or {}).get("nvlink_pairs"),
        "nvlink": [{"index": gpu.get("index"), "name": gpu.get("name"),
                    "active": sum(1 for link in gpu.get("links") or [] if link.get("active")),
                    "inactive": [link.get("link") for link in gpu.get("links") or [] if not link.get("active")]}
                   for gpu in (topology.get("nvlink") or {}).get("gpus") or []]
        if topology.get("nvlink") is not None else None,
        "topology_errors": dict((key.split(".", 1)[1], (value or {}).get("msg")) for key, value in errors.items()
                                if key.startswith("topology.")),
        "dcgm": verdict,
    }


def _gpu_rule(pci_gpus, installed):
    """What in the installed driver the GPUs cannot run (its branch, its kernel module flavour), by
    ``nvidia_driver``'s rule; empty when they run it or it cannot be told."""
    if not installed or not pci_gpus or installed.get("flavour") not in ("open", "proprietary"):
        return ""
    verdict = kernel_module(pci_gpus, int(installed["branch"]), installed["flavour"])
    unknown = verdict["error"].startswith("the generation of")
    return "" if unknown else verdict["error"]


def server_checks(out, servers, group="gpu_servers"):
    """The findings of the ``server`` layer: ``server_driver``, ``fabric``, ``gpus_nvlink`` and ``dcgm`` per server.
    No finding at all without servers in the inventory (a vGPU-only site)."""
    for server in servers or []:
        name = server["name"]
        if server["error"]:
            out.add("server", name, "server_driver", "WARN", "Server not read: %s" % server["error"],
                    FIX["unreachable"])
            continue
        if not server["gathered"]:
            out.add("server", name, "server_driver", "SKIP", "Server not read.",
                    "Enable doctor_gather_servers or pass doctor_server_facts for it.")
            continue
        works = _driver(out, server)
        _fabric_check(out, server, works)
        _gpus(out, server, works)
        _dcgm(out, server)


def _label(installed):
    if not installed:
        return "no data center driver package installed"
    return "R%s %s (%s %s)" % (installed["branch"], installed["version"], installed["source"],
                               ", ".join(installed["packages"]) or "NVIDIA-Linux-*.run")


def _driver(out, server):
    """``server_driver``: nvidia-smi answers from the installed data center driver. Returns whether it does."""
    name, smi, installed = server["name"], server["nvidia_smi"] or {}, server["installed"]
    module = server["kernel_module"] or {}
    if smi.get("present") and server.get("grid_driver"):
        out.add("server", name, "server_driver", "FAIL", "nvidia-smi answers from a GRID guest driver (%s), which is a "
                "vGPU guest's driver, not a bare-metal server's." % smi.get("driver_version"), FIX["grid"])
        return True
    if smi.get("present"):
        flavour = module.get("flavour") or (installed or {}).get("flavour")
        cuda = ", CUDA %s" % smi["cuda_version"] if smi.get("cuda_version") else ""
        source = ", from %s" % _label(installed) if installed else ""
        out.add("server", name, "server_driver", "PASS", "Driver %s, R%s, %s kernel modules%s%s." % (
            smi.get("driver_version"), str(smi.get("driver_version") or "?").split(".", 1)[0],
            flavour or "unknown", cuda, source))
        return True
    kind = smi.get("kind") or "not_installed"
    if server["nouveau"]:
        out.add("server", name, "server_driver", "FAIL", "nouveau holds the GPUs; nvidia-smi fails (%s): %s; %s." % (
            kind, smi.get("msg"), _label(installed)), FIX["nouveau"])
    elif kind == "driver_library_mismatch" or (
            installed and module.get("loaded_version") and module.get("loaded_version") != installed["version"]):
        out.add("server", name, "server_driver", "FAIL", "Driver %s is installed, but the kernel module that runs is "
                "another (%s): nvidia-smi fails (%s): %s" % (
                    (installed or {}).get("version") or "?", module.get("loaded_version") or "unknown", kind,
                    smi.get("msg")), FIX["driver_library_mismatch"])
    elif installed and server.get("gpu_rule"):
        out.add("server", name, "server_driver", "FAIL", "Driver %s is installed (%s kernel modules), which the GPUs "
                "cannot run: %s; nvidia-smi fails (%s): %s" % (
                    _label(installed), installed.get("flavour"), server["gpu_rule"], kind, smi.get("msg")),
                FIX["gpu_rule"])
    elif installed:
        modules = module.get("flavour") or installed.get("flavour") or "unknown"
        out.add("server", name, "server_driver", "FAIL", "Driver %s is installed (%s kernel modules), but nvidia-smi "
                "fails (%s): %s" % (_label(installed), modules, kind, smi.get("msg")),
                SMI_HINTS.get(kind, FIX["driver"]))
    else:
        out.add("server", name, "server_driver", "FAIL", "No NVIDIA data center driver: nvidia-smi fails (%s): %s" % (
            kind, smi.get("msg")), FIX["driver"])
    return False


def _fabric_check(out, server, works):
    name = server["name"]
    if not works:
        out.add("server", name, "fabric", "SKIP", "No working driver to report the NVSwitch fabric.", FIX["driver"])
        return
    verdict = _fabric.check({"gpus": server["gpus"]})
    if verdict["ready"]:
        out.add("server", name, "fabric", "PASS", verdict["message"])
    elif verdict["waiting"] or verdict["failed"]:
        out.add("server", name, "fabric", "FAIL", verdict["message"] + " CUDA fails on these GPUs until it completes.",
                FIX["fabric"])
    else:
        out.add("server", name, "fabric", "PASS", "%s No Fabric Manager needed." % verdict["message"])


def _gpus(out, server, works):
    """``gpus_nvlink``: every GPU on the PCI bus answers in nvidia-smi, and its NVLink links are up."""
    name = server["name"]
    if not works:
        out.add("server", name, "gpus_nvlink", "SKIP", "No working driver to list the GPUs and their NVLink%s." % (
            " (%d GPU(s) on the PCI bus)" % len(server["pci_gpus"]) if server["pci_gpus"] is not None else ""),
            FIX["driver"])
        return
    gpus = server["gpus"]
    models = sorted(set(gpu.get("name") or "?" for gpu in gpus))
    summary = "%d GPU(s) (%s)" % (len(gpus), ", ".join(models))
    links = _nvlink_summary(server)
    pci = server["pci_gpus"]
    if pci is not None and len(pci) > len(gpus):
        out.add("server", name, "gpus_nvlink", "FAIL", "%s answer in nvidia-smi, but %d are on the PCI bus. %s" % (
            summary, len(pci), links), FIX["gpu_lost"])
        return
    down = ["GPU%s link(s) %s" % (gpu["index"], ", ".join(str(link) for link in gpu["inactive"]))
            for gpu in server["nvlink"] or [] if gpu["inactive"] and gpu["active"]]
    if down:
        out.add("server", name, "gpus_nvlink", "WARN", "%s; NVLink links inactive: %s. %s" % (
            summary, "; ".join(down), links), FIX["nvlink"])
        return
    out.add("server", name, "gpus_nvlink", "PASS", "%s. %s" % (summary, links))


def _nvlink_summary(server):
    if not server["topology_read"]:
        return "NVLink not read."
    if server["topology_errors"]:
        return "NVLink not read: %s." % "; ".join("%s: %s" % item for item in sorted(server["topology_errors"].items()))
    pairs = server["nvlink_pairs"] or []
    if not pairs:
        return "No NVLink between the GPUs (PCIe only)."
    counts = sorted(set(pair.get("links") for pair in pairs))
    gpus = sorted(set(pair["a"] for pair in pairs) | set(pair["b"] for pair in pairs))
    every = len(pairs) == len(gpus) * (len(gpus) - 1) // 2
    return "NVLink: %d GPU pair(s)%s, NV%s%s." % (
        len(pairs), " (every pair of %d GPUs)" % len(gpus) if every and len(gpus) > 2 else "",
        "/NV".join(str(count) for count in counts),
        ", every link active" if server["nvlink"] and not any(g["inactive"] for g in server["nvlink"]) else "")


def _dcgm(out, server):
    name, verdict = server["name"], server["dcgm"]
    if not verdict or verdict.get("status") == "skipped":
        out.add("server", name, "dcgm", "SKIP", "No DCGM diagnostic in this run or kept from an earlier one%s." % (
            " (%s)" % verdict["message"] if verdict and verdict.get("message") else ""), FIX["dcgm_not_run"])
        return
    label = verdict.get("message") or "no message"
    source = " (%s)" % verdict["source"] if verdict.get("source") else ""
    if verdict["status"] == "failed":
        # A run without any test result (no dcgmi, no host engine) is DCGM's installation to fix, not a GPU.
        fix = FIX["dcgm_failed"] if verdict.get("failures") else FIX["dcgm_missing"]
        out.add("server", name, "dcgm", "FAIL", "DCGM failed%s: %s" % (source, label), fix)
    elif verdict["status"] == "warning":
        out.add("server", name, "dcgm", "WARN", "DCGM warned%s: %s" % (source, label), FIX["dcgm_failed"])
    else:
        out.add("server", name, "dcgm", "PASS", "DCGM passed%s: %s" % (source, label))
