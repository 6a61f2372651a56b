# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GRID guest driver: installed (Debian package, RHEL rpm or runfile) and loaded, and nouveau.

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
MODPROBE_DIRS = ("/etc/modprobe.d", "/run/modprobe.d", "/usr/lib/modprobe.d", "/lib/modprobe.d")

_VERSION_RE = re.compile(r"^(?:\d+:)?(\d+(?:\.\d+)+)")
_LOG_VERSION_RES = (
    re.compile(r"\(version: (\d+(?:\.\d+)+)\) is now complete"),
    re.compile(r"^installer version: (\d+(?:\.\d+)+)", re.M),
)
_PROC_VERSION_RE = re.compile(r"Kernel Module\s+(\d+(?:\.\d+)+)")
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
    return {
        "installed": driver_format is not None,
        "format": driver_format,
        "version": version,
        "packages": grid,
        "runfile": runfile,
        "kernel_module_version": _modinfo_version(guest),
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


def _modinfo_version(guest):
    """The version of the nvidia kernel module installed for the running kernel; None when there is none."""
    modinfo = guest.which("modinfo")
    if modinfo is None:
        return None
    rc, out, _err = guest.run([modinfo, "-F", "version", "nvidia"])
    if rc != 0:
        return None
    return (out or "").strip() or None


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
