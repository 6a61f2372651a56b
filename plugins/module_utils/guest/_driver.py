# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NVIDIA driver: the GRID guest driver's packages, a runfile install, the kernel module installed (its version,
flavour and signature) and loaded, the GRID licensing daemon, Secure Boot, and nouveau.

Standard library only and Python 3.8 syntax: it runs on the guest.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._system import DPKG_STATUS

# NVIDIA's GRID guest driver packages: nvidia-linux-grid-<branch> as .deb and as .rpm.
GRID_PACKAGE_RE = re.compile(r"^nvidia-linux-grid")
# Only the runfile installs it; its log names the version installed.
RUNFILE_UNINSTALLER = "/usr/bin/nvidia-uninstall"
INSTALLER_LOG = "/var/log/nvidia-installer.log"
# Only the GRID guest driver has a licensing daemon; the data center driver has none.
GRIDD = "/usr/bin/nvidia-gridd"
# The UEFI variable that says whether Secure Boot is on (its last byte), where mokutil is missing.
SECURE_BOOT_EFIVAR = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
MODPROBE_DIRS = ("/etc/modprobe.d", "/run/modprobe.d", "/usr/lib/modprobe.d", "/lib/modprobe.d")

_VERSION_RE = re.compile(r"^(?:\d+:)?(\d+(?:\.\d+)+)")
_LOG_VERSION_RES = (
    re.compile(r"\(version: (\d+(?:\.\d+)+)\) is now complete"),
    re.compile(r"^installer version: (\d+(?:\.\d+)+)", re.M),
)
_PROC_VERSION_RE = re.compile(r"Kernel Module(?: for \S+)?\s+(\d+(?:\.\d+)+)")
# modinfo's license of nvidia.ko: the open kernel modules are "Dual MIT/GPL", the proprietary ones "NVIDIA"
# (NVIDIA/open-gpu-kernel-modules, MODULE_LICENSE of kernel-open/nvidia/nv.c).
_MODULE_FLAVOURS = {"Dual MIT/GPL": "open", "NVIDIA": "proprietary"}
_BLACKLIST_RE = re.compile(r"^\s*blacklist\s+nouveau\s*(#.*)?$")
_CMDLINE_BLACKLIST_RE = re.compile(r"(?:^|\s)(?:modprobe|rd\.driver)\.blacklist=\S*\bnouveau\b")


def read_driver(guest, packages):
    """The GRID driver installed and the one loaded; ``packages`` is ``read_packages``'s answer.

    ``format`` is ``deb`` or ``rpm`` for a package, ``run`` for the runfile, None when none is installed;
    ``version`` the installed version (``510.47.03``).
    """
    files = guest.files
    grid = [{"name": name, "version": packages[name]} for name in sorted(packages) if GRID_PACKAGE_RE.match(name)]
    runfile = {"installed": files.exists(RUNFILE_UNINSTALLER), "version": None}
    if runfile["installed"]:
        runfile["version"] = _runfile_version(files.read(INSTALLER_LOG) or "")
    if grid:
        driver_format = "deb" if files.exists(DPKG_STATUS) else "rpm"
        version = _upstream(grid[0]["version"])
    elif runfile["installed"]:
        driver_format, version = "run", runfile["version"]
    else:
        driver_format, version = None, None
    modules = loaded_modules(files)
    module = _modinfo(guest)
    return {
        "installed": driver_format is not None,
        "format": driver_format,
        "version": version,
        "packages": grid,
        "runfile": runfile,
        "kernel_module_version": module.get("version"),
        "kernel_module_flavour": _MODULE_FLAVOURS.get(module.get("license")),
        "kernel_module_signed": bool(module.get("signer")) if module else None,
        "gridd": files.exists(GRIDD),
        "secure_boot": read_secure_boot(guest),
        "loaded": "nvidia" in modules,
        "loaded_version": _loaded_version(files) if "nvidia" in modules or files.exists("/sys/module/nvidia") else None,
        "nouveau": read_nouveau(files, modules),
    }


def _upstream(version):
    match = _VERSION_RE.match(version or "")
    return match.group(1) if match else version


def _runfile_version(log):
    for regex in _LOG_VERSION_RES:
        match = regex.search(log)
        if match:
            return match.group(1)
    return None


def _modinfo(guest):
    """``modinfo nvidia``'s fields (``version``, ``license``, ``signer``) for the running kernel; {} without one."""
    modinfo = guest.which("modinfo")
    if modinfo is None:
        return {}
    rc, out, _err = guest.run([modinfo, "nvidia"])
    if rc != 0:
        return {}
    fields = {}
    for line in (out or "").splitlines():
        key, sep, value = line.partition(":")
        if sep and not line[:1].isspace() and key not in fields:
            fields[key.strip()] = value.strip()
    return fields


def read_secure_boot(guest):
    """Whether UEFI Secure Boot is on: ``mokutil --sb-state``, else the SecureBoot UEFI variable; None where the
    machine boots without UEFI (neither answers)."""
    mokutil = guest.which("mokutil")
    if mokutil is not None:
        rc, out, err = guest.run([mokutil, "--sb-state"])
        text = (out or "") + (err or "")
        if "SecureBoot enabled" in text:
            return True
        if "SecureBoot disabled" in text:
            return False
    raw = guest.files.read(SECURE_BOOT_EFIVAR)
    if raw:
        return raw[-1:] in ("\x01", "\u0001")
    return None


def loaded_modules(files):
    """Names of the kernel modules in /proc/modules."""
    return set(line.split()[0] for line in files.lines("/proc/modules") if line.strip())


def _loaded_version(files):
    version = (files.read("/sys/module/nvidia/version") or "").strip()
    if version:
        return version
    match = _PROC_VERSION_RE.search(files.read("/proc/driver/nvidia/version") or "")
    return match.group(1) if match else None


def read_nouveau(files, modules=None):
    """Whether nouveau is loaded (what the grid_driver role reboots for) and where it is blacklisted."""
    modules = loaded_modules(files) if modules is None else modules
    blacklist_files = []
    for directory in MODPROBE_DIRS:
        for path in files.glob(directory + "/*.conf"):
            if any(_BLACKLIST_RE.match(line) for line in files.lines(path)):
                blacklist_files.append(path)
    on_cmdline = bool(_CMDLINE_BLACKLIST_RE.search(files.read("/proc/cmdline") or ""))
    return {
        "loaded": "nouveau" in modules or files.exists("/sys/module/nouveau"),
        "blacklisted": bool(blacklist_files) or on_cmdline,
        "blacklist_files": blacklist_files,
        "blacklisted_on_cmdline": on_cmdline,
    }
