# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA Fabric Manager on NVSwitch systems: which package, whether its version may run, and whether the fabric
is ready, from nvidia-smi's own report.

NVIDIA's Fabric Manager User Guide (https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html,
"NVSwitch and NVLink Initialization"): at start the service checks the version of the loaded kernel driver stack
and aborts when it is not its own; the fabric manager package and the driver must be of the same version. The
daemon's words when they differ, seen in NVIDIA/gpu-operator#544 and siderolabs/pkgs#720: "fabric manager NVIDIA
GPU driver interface version X don't match with driver version Y".

Packages in NVIDIA's CUDA repository: ``nvidia-fabricmanager-<branch>`` at ``<driver version>-1`` on Debian and
Ubuntu (file ``nvidia-fabricmanager-510_510.85.02-1_amd64.deb`` in Azure/azhpc-images), ``nvidia-fabricmanager``
without the branch from R580 (NVIDIA/gpu-driver-container#735); ``nvidia-fabric-manager`` on RHEL (not confirmed
from a recording here).

The fabric of each GPU is in ``nvidia-smi -q``'s ``Fabric`` section (tests/fixtures/nvidia-smi: ``State :
Completed`` / ``Status : Success`` on a bare-metal HGX H100, ``In Progress`` / ``N/A`` while Fabric Manager has not
configured it, ``N/A`` on GPUs without one).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._system import NVSWITCH_CLASS
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._file_state import replaced_since_start

# The first branch whose Debian package carries no branch in its name.
UNVERSIONED_NAME_FROM = 580
_VERSION = re.compile(r"^(\d{3})\.\d+(?:\.\d+)?$")
_PACKAGE_FILE = re.compile(r"^nvidia-fabric-?manager(?:-(\d{3}))?[_-](\d{3}\.\d+(?:\.\d+)?)-[^_]+(?:_amd64\.deb|"
                           r"\.x86_64\.rpm|\.aarch64\.rpm|_arm64\.deb)$")
# Installed package names across NVIDIA's repositories and branches.
_INSTALLED_NAME = re.compile(r"^nvidia-fabric-?manager(?:-\d{3})?$")
# nvidia-smi -q's Fabric State words (NVML's nvmlGpuFabricState_t as printed).
WAITING_STATES = ("Not Started", "In Progress")


def package_name(version, package_manager="apt"):
    """``nvidia-fabricmanager-535`` for 535.161.08 with apt, ``nvidia-fabricmanager`` from R580, and
    ``nvidia-fabric-manager`` with dnf."""
    if package_manager == "dnf":
        return "nvidia-fabric-manager"
    branch = int(_branch(version))
    return "nvidia-fabricmanager" if branch >= UNVERSIONED_NAME_FROM else "nvidia-fabricmanager-%d" % branch


def _branch(version):
    match = _VERSION.match(version or "")
    if not match:
        raise InputError("The NVIDIA driver version %r is not a driver version." % (version,),
                         hint="Give the full version of the driver that runs, such as 535.161.08.")
    return match.group(1)


def package_file_version(path):
    """The Fabric Manager version a package file carries in NVIDIA's file name, or None."""
    match = _PACKAGE_FILE.match((path or "").rsplit("/", 1)[-1])
    return match.group(2) if match else None


def plan(driver_version, nvswitches, version=None, src=None, package_manager="apt", machine=None,
         service="nvidia-fabricmanager"):
    """What to install: ``{"needed", "package", "version", "package_spec", "remove", "reason", "installed",
    "converged"}``.

    ``driver_version``: the driver that runs (nvidia_driver's ``nvidia_driver_version``); ``nvswitches``: the PCI
    addresses of the machine's NVSwitches; ``version``: the Fabric Manager version asked for (default: the
    driver's); ``src``: a package file given instead of the repository. A version other than the driver's is
    refused, before anything changes, whatever the machine.

    ``machine``: ``gpu_guest_info``'s read of it (``packages``, ``services`` with the unit ``service``,
    ``nvidia_smi``), when there is one.
    ``installed`` is the Fabric Manager version its packages hold; ``remove``, its Fabric Manager packages of another
    name (another branch's: both hold the same daemon and unit), to go before the new one comes; ``converged`` says
    that nothing is to do: that version installed, its service enabled and running the program installed, and the
    fabric ready in the read's nvidia-smi report. ``restart`` says that the service runs a program its package has
    replaced since it started (a run stopped between the upgrade and the restart): only a restart starts the new
    one."""
    _branch(driver_version)
    file_version = package_file_version(src) if src else None
    if src and file_version is None and not version:
        raise InputError("Cannot tell the Fabric Manager version of %s from its name." % src,
                         hint="Keep NVIDIA's file name (nvidia-fabricmanager-<branch>_<version>-1_amd64.deb) or "
                              "set fabric_manager_version.")
    for asked in (version, file_version):
        if asked and asked != driver_version:
            raise InputError(
                "Fabric Manager %s does not match the NVIDIA driver %s on this machine." % (asked, driver_version),
                hint="NVIDIA requires Fabric Manager of exactly the driver's version (its service aborts "
                     "otherwise): install Fabric Manager %s, or change the driver first." % driver_version)
    asked = driver_version
    name = package_name(asked, package_manager)
    packages = (machine or {}).get("packages")
    installed = installed_version(packages)
    if not nvswitches:
        return {"needed": False, "package": name, "version": asked, "package_spec": None, "remove": [],
                "installed": installed, "restart": False, "converged": True,
                "reason": "no NVSwitch on the PCI bus: Fabric Manager is for NVSwitch systems only"}
    separator = "-" if package_manager == "dnf" else "="
    restart = replaced_since_start(((machine or {}).get("services") or {}).get(service))
    return {"needed": True, "package": name, "version": asked,
            "package_spec": src or "%s%s%s-1" % (name, separator, asked),
            "remove": sorted(other for other in packages or {} if _INSTALLED_NAME.match(other) and other != name),
            "installed": installed, "restart": restart,
            "converged": machine is not None and _runs(machine, asked, service) and not restart,
            "reason": "%d NVSwitch(es): %s" % (len(nvswitches), ", ".join(nvswitches))}


def installed_version(packages):
    """The Fabric Manager version among ``{name: version}`` installed packages (``535.161.08`` of
    ``535.161.08-1``), or None."""
    for name, full in sorted((packages or {}).items()):
        if _INSTALLED_NAME.match(name) and full:
            return full.split(":", 1)[-1].split("-", 1)[0]
    return None


def _runs(machine, version, service):
    """Fabric Manager ``version`` installed, its service enabled and active, the fabric ready: nothing to do."""
    unit = (machine.get("services") or {}).get(service) or {}
    return (installed_version(machine.get("packages")) == version
            and bool(unit.get("active")) and bool(unit.get("enabled"))
            and check(machine.get("nvidia_smi") or {})["ready"])


def nvswitches(lspci_text):
    """PCI addresses of NVIDIA NVSwitches in ``lspci -n`` output: vendor 10de, class 0680 (other bridge)."""
    found = []
    for line in (lspci_text or "").splitlines():
        match = re.match(r"^(\S+)\s+%s:\s+10de:[0-9a-f]{4}\b" % NVSWITCH_CLASS, line.strip(), re.I)
        if match:
            found.append(match.group(1))
    return found


def waiting(gpus):
    """Whether a GPU of ``gpus`` (nvidia_smi's) waits for Fabric Manager to configure its fabric, which it does on
    its own after it starts: each GPU goes from Not Started through In Progress to Completed as the daemon trains the
    NVLinks and registers it (NVIDIA/NVSentinel#883)."""
    return any(gpu.get("fabric_state") in WAITING_STATES for gpu in gpus or [])


def check(query):
    """The fabric verdict from ``nvidia_smi_info``'s facts (``-q``): ``{"ready", "completed", "waiting", "failed",
    "not_reported", "message"}``. Ready when no GPU waits for the fabric or failed in it, and at least one
    reports it."""
    groups = {"completed": [], "waiting": [], "failed": [], "not_reported": []}
    for gpu in query.get("gpus") or []:
        state, status = gpu.get("fabric_state"), gpu.get("fabric_status")
        bus_id = gpu.get("pci_bus_id")
        if state is None:
            groups["not_reported"].append(bus_id)
        elif state in WAITING_STATES:
            groups["waiting"].append("%s (%s)" % (bus_id, state))
        elif state == "Completed" and status == "Success":
            groups["completed"].append(bus_id)
        else:
            groups["failed"].append("%s (%s, %s)" % (bus_id, state, status or "N/A"))
    ready = bool(groups["completed"]) and not groups["waiting"] and not groups["failed"]
    if ready:
        message = "The NVSwitch fabric is ready: %d GPU(s) Completed, Success." % len(groups["completed"])
    elif groups["failed"] or groups["waiting"]:
        message = "The NVSwitch fabric is not ready: %s." % "; ".join(
            part for part in ("failed on " + ", ".join(groups["failed"]) if groups["failed"] else "",
                              "waiting on " + ", ".join(groups["waiting"]) if groups["waiting"] else "") if part)
    else:
        message = "No GPU reports an NVSwitch fabric (Fabric State N/A)."
    return dict(groups, ready=ready, message=message)
