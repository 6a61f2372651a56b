# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the grid_driver role does on a guest, decided once from one ``gpu_guest_info`` read: the first broken rule
(in the order the role checks them), the steps that differ, and the role's result when nothing differs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible.module_utils.six.moves.urllib.parse import urlsplit

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._guest_driver import (
    VERSION_IN_NAME,
    lspci_source,
    nouveau_steps,
    read_error,
    visible_gpus,
)
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _compatibility

SOURCES = ("grid_driver_src", "grid_driver_url", "grid_driver_remote_src")
FORMATS = ("deb", "rpm", "run")
_GRID_RUNFILE = re.compile(r"-grid\.run$")


def driver_file(params):
    """File name, path on the guest, format and version of the driver the parameters name."""
    url_path = urlsplit(params.get("grid_driver_url") or "").path
    name = os.path.basename(params.get("grid_driver_remote_src") or params.get("grid_driver_src") or url_path)
    match = VERSION_IN_NAME.search(name)
    return {
        "file": name,
        "path": params.get("grid_driver_remote_src") or "%s/%s" % (params["grid_driver_staging_dir"], name),
        "format": os.path.splitext(name)[1][1:],
        "version": params.get("grid_driver_version") or (match.group(1) if match else ""),
    }


def _source_error(params):
    given = [name for name in SOURCES if params.get(name)]
    if len(given) == 1:
        return ""
    return ("Set exactly one of grid_driver_src (file on the controller), grid_driver_url or grid_driver_remote_src "
            "(file on the guest); %s." % ("none is set" if not given else " and ".join(given) + " are set"))


def _file_error(driver, os_info):
    name, fmt = driver["file"], driver["format"]
    if fmt not in FORMATS:
        return "%s is not a GRID driver package: expected a .deb, an .rpm or a -grid.run file." % name
    if fmt == "run" and not _GRID_RUNFILE.search(name):
        return ("%s is not the GRID driver's runfile (NVIDIA-Linux-x86_64-<version>-grid.run): the standard driver "
                "does not run a vGPU." % name)
    if not driver["version"]:
        return "No driver version in the file name %s: set grid_driver_version." % name
    family = os_info.get("family")
    if (fmt == "deb" and family != "Debian") or (fmt == "rpm" and family != "RedHat"):
        return "%s is a .%s package, which does not install on %s (%s family): use the %s or the runfile." % (
            name, fmt, os_info.get("name"), family, "deb" if family == "Debian" else "rpm")
    return ""


def _gpu_error(guest, hostname, vgpu_profile):
    pci_error = (guest.get("errors") or {}).get("pci")
    return ("No NVIDIA GPU is visible on the PCI bus of %s: %s lists no display or 3D controller%s. Give the VM a "
            "vGPU profile%s and power it on again (gpuops.vgpu.vgpu_assign), then rerun. Nothing was installed." % (
                hostname, lspci_source(guest),
                " (read error: %s)" % pci_error["msg"] if pci_error else "",
                " (%s)" % vgpu_profile if vgpu_profile is not None else ""))


def _host_error(host_version, params):
    host_from = params.get("grid_driver_host_manager_from") or ""
    if host_version or not (params.get("grid_driver_require_host_check") or host_from):
        return ""
    return ("The vGPU Manager version of the host is unknown: set grid_driver_host_manager_version, or "
            "grid_driver_host_manager_from to an inventory host on which gpuops.vgpu.nvidia_smi_info ran with "
            "set_facts%s." % (" (%s has no nvidia_smi facts)" % host_from if host_from else ""))


def installed_version(guest, fmt):
    """A package install is known by its package; a runfile install by the kernel module it built, else by what
    the running driver reports."""
    driver = guest.get("driver") or {}
    if fmt in ("deb", "rpm"):
        return (driver.get("version") or "") if driver.get("format") in ("deb", "rpm") else ""
    return driver.get("kernel_module_version") or (guest.get("nvidia_smi") or {}).get("driver_version") or ""


def _mixed_install_error(plan, driver_state, hostname):
    """A package over a runfile install, or the runfile over a package: both own the same files and libraries, and
    NVIDIA's installer and the distributions' packaging refuse the mix (Debian's nvidia-installer-cleanup: "Such an
    installation conflicts with the packaged drivers")."""
    installed = driver_state.get("format")
    if plan["format"] in ("deb", "rpm") and installed == "run":
        return ("The GRID driver %s was installed on %s with NVIDIA's runfile; the %s package would conflict with it. "
                "Remove it first (nvidia-uninstall), or give grid_driver_src the -grid.run of the version wanted. "
                "Nothing was changed." % ((driver_state.get("runfile") or {}).get("version") or "", hostname,
                                          plan["format"]))
    if plan["format"] == "run" and installed in ("deb", "rpm"):
        return ("The GRID driver %s is installed on %s as a %s package; NVIDIA's runfile would conflict with it. "
                "Remove the package first (apt-get purge / dnf remove), or give grid_driver_src the package of the "
                "version wanted. Nothing was changed." % (driver_state.get("version") or "", hostname, installed))
    return ""


def reboot_reasons(nouveau_loaded, smi, check_mode):
    """Why the driver cannot work before a reboot."""
    reasons = ["nouveau is loaded"] if nouveau_loaded else []
    if not (smi or {}).get("present", True) and not check_mode:
        reasons.append("nvidia-smi: %s" % smi.get("msg", ""))
    return reasons


def grid_driver_plan(guest, params, host_version="", check_mode=False, hostname="", vgpu_profile=None,
                     blacklist_file="", blacklist_content=""):
    """The plan: ``error`` (first broken rule, else empty), the driver file, the steps that differ (``install``,
    ``modprobe_dir``, ``blacklist``, ``reboot_reasons``), ``converged`` and ``result`` (the role's result when
    converged), ``notes`` to show."""
    plan = {"error": read_error(guest, hostname) or _source_error(params), "notes": [], "gpus": [],
            "host_version": host_version or "", "compat": {}}
    if plan["error"]:
        return plan
    os_info, driver_state = guest.get("os") or {}, guest.get("driver") or {}
    plan.update(driver_file(params))
    plan["error"] = _file_error(plan, os_info)
    if not plan["error"] and params.get("grid_driver_require_gpu"):
        plan["gpus"] = visible_gpus(guest)
        plan["error"] = "" if plan["gpus"] else _gpu_error(guest, hostname, vgpu_profile)
    if not plan["error"]:
        plan["error"] = _host_error(plan["host_version"], params)
    if not plan["error"] and plan["host_version"]:
        plan["compat"] = _compatibility.vgpu_guest_compat(plan["host_version"], plan["version"])
        if plan["compat"]["status"] == "incompatible":
            plan["error"] = "%s Nothing was installed." % plan["compat"]["message"]
        elif plan["compat"]["status"] == "ok-previous-branch":
            plan["notes"].append(plan["compat"]["message"])
    if plan["error"]:
        return plan
    blacklist = bool(params.get("grid_driver_blacklist_nouveau"))
    nouveau_loaded = bool((driver_state.get("nouveau") or {}).get("loaded"))
    plan.update(
        os=os_info,
        nouveau_loaded=nouveau_loaded,
        installed_version=installed_version(guest, plan["format"]),
        reboot_reasons=reboot_reasons(nouveau_loaded, guest.get("nvidia_smi"), check_mode),
    )
    plan.update(nouveau_steps(guest, blacklist, blacklist_file, blacklist_content))
    plan["install"] = plan["installed_version"] != plan["version"]
    plan["error"] = _mixed_install_error(plan, driver_state, hostname) if plan["install"] else ""
    if plan["error"]:
        return plan
    plan["converged"] = not (plan["install"] or plan["modprobe_dir"] or plan["blacklist"] or plan["reboot_reasons"])
    smi = guest.get("nvidia_smi") or {}
    if plan["converged"] and params.get("grid_driver_verify") and not check_mode and \
            smi.get("driver_version") != plan["version"]:
        plan["error"] = ("nvidia-smi reports driver %s after installing %s: the new driver is not the one that runs."
                         % (smi.get("driver_version"), plan["version"]))
    plan["result"] = result(plan, params, smi=None if check_mode else smi)
    return plan


def result(plan, params, smi=None, changed=False, initramfs_rebuilt=False, reboot_required=False, rebooted=False):
    """The role's ``grid_driver_result``."""
    return {
        "version": plan["version"],
        "previous_version": plan["installed_version"] or None,
        "installed": plan["install"],
        "format": plan["format"],
        "gpus": plan["gpus"],
        "host_manager_version": plan["host_version"] or None,
        "host_compat": plan["compat"] or None,
        "nouveau_blacklisted": bool(params.get("grid_driver_blacklist_nouveau")),
        "initramfs_rebuilt": initramfs_rebuilt,
        "reboot_required": reboot_required,
        "rebooted": rebooted,
        "nvidia_smi": smi,
        "changed": changed,
    }
