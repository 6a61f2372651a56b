# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guest's OS, its NVIDIA and CUDA packages, the NVIDIA GPUs on its PCI bus, systemd units and the clock.

Standard library only and Python 3.8 syntax: it runs on the guest.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import time

# ID and ID_LIKE of /etc/os-release, to the family names Ansible's facts use.
OS_FAMILIES = {
    "debian": "Debian", "ubuntu": "Debian",
    "rhel": "RedHat", "centos": "RedHat", "fedora": "RedHat", "rocky": "RedHat", "almalinux": "RedHat",
    "ol": "RedHat", "amzn": "RedHat",
    "suse": "Suse", "sles": "Suse", "opensuse": "Suse", "opensuse-leap": "Suse",
}
PACKAGE_FORMATS = {"Debian": "deb", "RedHat": "rpm", "Suse": "rpm"}

# Packages the guest roles decide on: the GRID driver, distribution CUDA packages that pull another driver,
# cuDNN, NCCL and the container toolkit.
NVIDIA_PACKAGE_RE = re.compile(r"^(nvidia|libnvidia|cuda|libcuda|cudnn|libcudnn|libnccl|kmod-nvidia)")
DPKG_STATUS = "/var/lib/dpkg/status"

# lspci -nn: "02:01.0 3D controller [0302]: NVIDIA Corporation GA100 [A100 PCIe 40GB] [10de:20f1] (rev a1)"
_LSPCI_RE = re.compile(r"^(\S+) .*\[([0-9a-f]{4})\]: .*\[(10de):([0-9a-f]{4})\]", re.I)
_GPU_CLASSES = ("0300", "0302")  # VGA and 3D controllers
# NVSwitches of HGX and DGX boards: "07:00.0 Bridge [0680]: NVIDIA Corporation Device [10de:22a3] (rev a1)"
NVSWITCH_CLASS = "0680"
# lspci -k, under a device: "\tKernel driver in use: nouveau"
_LSPCI_DRIVER_RE = re.compile(r"^\s+Kernel driver in use:\s*(\S+)")
_EXEC_PATH_RE = re.compile(r"\bpath=(/[^ ;]+)")
UNIT_DIRS = ("/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system")


def read_os(guest):
    """Family (``Debian``, ``RedHat``, ``Suse``), distribution, version, kernel, package format and manager."""
    release = _os_release(guest.files)
    ids = [release.get("ID", "").lower()] + release.get("ID_LIKE", "").lower().split()
    family = next((OS_FAMILIES[name] for name in ids if name in OS_FAMILIES), None)
    kernel = (guest.files.read("/proc/sys/kernel/osrelease") or "").strip() or None
    return {
        "family": family,
        "distribution": release.get("ID"),
        "version": release.get("VERSION_ID"),
        "name": release.get("PRETTY_NAME"),
        "kernel": kernel,
        "package_format": PACKAGE_FORMATS.get(family),
        "package_manager": _package_manager(guest),
    }


def _os_release(files):
    text = files.read("/etc/os-release")
    if text is None:
        text = files.read("/usr/lib/os-release") or ""
    values = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() and not key.lstrip().startswith("#"):
            values[key.strip()] = value.strip().strip("\"'")
    return values


def _package_manager(guest):
    """The manager Ansible's ``pkg_mgr`` fact names: dnf5 where ``dnf`` is dnf5."""
    if guest.which("apt-get"):
        return "apt"
    dnf = guest.which("dnf")
    if dnf is None and guest.which("dnf5") or dnf and os.path.basename(guest.files.resolve(dnf)).startswith("dnf5"):
        return "dnf5"
    for name in ("dnf", "yum", "zypper"):
        if guest.which(name):
            return name
    return None


def read_packages(guest):
    """``{name: version}`` of the installed NVIDIA, CUDA and cuDNN packages (``NVIDIA_PACKAGE_RE``).

    dpkg's status file where it exists, else ``rpm``; ``{}`` on a guest with neither.
    """
    status = guest.files.read(DPKG_STATUS)
    if status is not None:
        return _dpkg_packages(status)
    rpm = guest.which("rpm")
    if rpm is None:
        return {}
    out = guest.output([rpm, "--query", "--all", "--queryformat", "%{NAME}|%{VERSION}-%{RELEASE}\\n"])
    packages = {}
    for line in out.splitlines():
        name, sep, version = line.strip().partition("|")
        if sep and NVIDIA_PACKAGE_RE.match(name):
            packages[name] = version
    return packages


def _dpkg_packages(status):
    packages = {}
    for stanza in re.split(r"\n\s*\n", status):
        fields = {}
        for line in stanza.splitlines():
            key, sep, value = line.partition(":")
            if sep and not line[:1].isspace():
                fields[key] = value.strip()
        name = fields.get("Package", "")
        # "install ok installed" (or "hold ok installed"): unpacked or half-configured packages do not count.
        if NVIDIA_PACKAGE_RE.match(name) and fields.get("Status", "").split()[-1:] == ["installed"]:
            packages[name] = fields.get("Version")
    return packages


def read_pci(guest):
    """NVIDIA display and 3D controllers: from ``lspci -nnk -d 10de:`` like the grid_driver role, else from sysfs.

    ``driver`` is the kernel driver bound to the GPU (``nvidia``, ``nouveau``, ``vfio-pci``), None when none is;
    ``nvswitches`` the addresses of NVIDIA's NVSwitches (class 0680), which need Fabric Manager.
    """
    lspci = guest.which("lspci")
    if lspci:
        gpus, switches = [], []
        device = None
        for line in guest.output([lspci, "-nnk", "-d", "10de:"]).splitlines():
            match = _LSPCI_RE.match(line.strip())
            if match:
                device = None
                if match.group(2) == NVSWITCH_CLASS:
                    switches.append(match.group(1))
                if match.group(2) in _GPU_CLASSES:
                    device = {"address": match.group(1), "class": match.group(2),
                              "device_id": "%s:%s" % (match.group(3).lower(), match.group(4).lower()),
                              "description": line.strip(), "driver": None}
                    gpus.append(device)
                continue
            bound = _LSPCI_DRIVER_RE.match(line)
            if bound and device is not None:
                device["driver"] = bound.group(1)
        return {"source": "lspci", "gpus": gpus, "nvswitches": switches}
    gpus, switches = [], []
    for device in guest.files.glob("/sys/bus/pci/devices/*"):
        vendor = (guest.files.read(device + "/vendor") or "").strip().lower()
        klass = (guest.files.read(device + "/class") or "").strip().lower()
        if vendor == "0x10de" and klass[2:6] == NVSWITCH_CLASS:
            switches.append(os.path.basename(device))
        if vendor == "0x10de" and klass[2:6] in _GPU_CLASSES:
            model = (guest.files.read(device + "/device") or "").strip().lower()[2:]
            driver = guest.files.resolve(device + "/driver") if guest.files.exists(device + "/driver") else None
            gpus.append({"address": os.path.basename(device), "class": klass[2:6],
                         "device_id": "10de:%s" % model, "description": None,
                         "driver": os.path.basename(driver) if driver else None})
    return {"source": "sysfs", "gpus": gpus, "nvswitches": switches}


def read_service(guest, name):
    """State of the systemd unit ``name``: its unit file, and with systemd running, whether it is active and enabled."""
    unit = name if "." in name else name + ".service"
    unit_file = next((path for path in (d + "/" + unit for d in UNIT_DIRS) if guest.files.exists(path)), None)
    facts = {"name": name, "unit_file": unit_file, "systemd": systemd_running(guest), "exists": unit_file is not None,
             "active": None, "state": None, "enabled": None, "unit_file_state": None, "active_since": None,
             "need_daemon_reload": None, "executable": None, "executable_changed_at": None}
    systemctl = guest.which("systemctl")
    if not facts["systemd"] or systemctl is None:
        return facts
    out = guest.output([systemctl, "show", unit, "--no-pager",
                        "--property=LoadState,ActiveState,SubState,UnitFileState,ActiveEnterTimestampMonotonic,"
                        "NeedDaemonReload,ExecStart"])
    props = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    facts.update(
        exists=props.get("LoadState") == "loaded",
        active=props.get("ActiveState") == "active",
        state=props.get("ActiveState") or None,
        enabled=props.get("UnitFileState") in ("enabled", "enabled-runtime"),
        unit_file_state=props.get("UnitFileState") or None,
        active_since=_active_since(props.get("ActiveEnterTimestampMonotonic")),
        # The unit file (or a drop-in) changed since systemd loaded it: systemd runs the old one until a daemon-reload.
        need_daemon_reload=props.get("NeedDaemonReload") == "yes",
    )
    # The program the unit starts, and when a package last put it in place: newer than the start, the daemon still
    # runs the program it replaced.
    executable = _exec_path(props.get("ExecStart"))
    if executable:
        facts.update(executable=executable, executable_changed_at=guest.files.changed_at(executable))
    return facts


def _exec_path(exec_start):
    """The program of systemd's first ExecStart entry (``{ path=/usr/bin/x ; argv[]=... }``), or None."""
    match = _EXEC_PATH_RE.search(exec_start or "")
    return match.group(1) if match else None


def clocks():
    """The wall clock and CLOCK_MONOTONIC (systemd's monotonic timestamps), in seconds."""
    return time.time(), time.monotonic()


def _active_since(monotonic_usec):
    """When the unit last became active, in seconds since the epoch, or None where it never did.

    systemd stamps the state change on CLOCK_MONOTONIC; it is taken back to the wall clock as the distance from now,
    so that it compares with a file's modification time. A step of the wall clock since (VMware Tools after a
    suspend, for one) moves the answer by as much.
    """
    try:
        since = int(monotonic_usec or 0)
    except ValueError:
        return None
    if since <= 0:
        return None
    wall, monotonic = clocks()
    return round(wall - (monotonic - since / 1e6), 6)


def systemd_running(guest):
    """Whether systemd is the running init (how ``sd_booted`` tells)."""
    return guest.files.is_dir("/run/systemd/system")


def read_clock_synchronized(guest):
    """``timedatectl``'s NTPSynchronized as a bool; None where it cannot tell (no systemd)."""
    timedatectl = guest.which("timedatectl")
    if timedatectl is None or not systemd_running(guest):
        return None
    answer = guest.output([timedatectl, "show", "--property=NTPSynchronized", "--value"]).strip()
    return {"yes": True, "no": False}.get(answer)
