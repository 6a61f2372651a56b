# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the nvidia_driver role does on a bare-metal server or passthrough guest, decided once from one
``gpu_guest_info`` read: the first refusal (before any change), the kernel module flavour, the packages or file to
install, the nouveau and persistence steps, and whether the running kernel module must change (a reboot)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _compatibility
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._guest_driver import (
    VERSION_IN_NAME,
    lspci_source,
    nouveau_steps,
    read_error,
    visible_gpus,
)
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._nvidia_kernel_module import kernel_module

SOURCES = ("repository", "packages", "runfile")
# The top packages of NVIDIA's CUDA repository per flavour: cuda-drivers-<branch> (proprietary) and
# nvidia-open-<branch> (open) on apt; on dnf the nvidia-driver module's <branch>-dkms and <branch>-open streams
# (NVIDIA Driver Installation Guide, "Kernel Modules" and "Version locking").
APT_PACKAGES = {"proprietary": "cuda-drivers-%d", "open": "nvidia-open-%d"}
DNF_MODULES = {"proprietary": "@nvidia-driver:%d-dkms", "open": "@nvidia-driver:%d-open"}
# An installed data center driver, by its top package: cuda-drivers-580, nvidia-open-580, nvidia-driver-535-open.
_DATACENTER_PACKAGE_RE = re.compile(r"^(cuda-drivers|nvidia-open|nvidia-driver)-(\d{3})(-open)?$")
_RUNFILE_RE = re.compile(r"^NVIDIA-Linux-[a-z0-9_]+-(\d+\.\d+(?:\.\d+)?)\.run$")
_UPSTREAM_RE = re.compile(r"^(?:\d+:)?(\d+(?:\.\d+)+)")
PERSISTENCED = "nvidia-persistenced"


def installed_driver(guest):
    """The data center driver installed: ``source`` (``package`` or ``runfile``), ``packages``, ``branch``,
    ``version``, ``flavour``; None when there is none."""
    driver = guest.get("driver") or {}
    found = []
    for name, version in sorted((guest.get("packages") or {}).items()):
        match = _DATACENTER_PACKAGE_RE.match(name)
        if match:
            upstream = _UPSTREAM_RE.match(version or "")
            found.append({"name": name, "branch": int(match.group(2)),
                          "version": upstream.group(1) if upstream else version,
                          "flavour": "open" if match.group(1) == "nvidia-open" or match.group(3) else "proprietary"})
    if found:
        newest = found[-1]
        return {"source": "package", "packages": [item["name"] for item in found], "branch": newest["branch"],
                "version": newest["version"], "flavour": newest["flavour"]}
    runfile = driver.get("runfile") or {}
    if runfile.get("installed") and not driver.get("gridd") and runfile.get("version"):
        return {"source": "runfile", "packages": [], "branch": int(runfile["version"].split(".")[0]),
                "version": runfile["version"], "flavour": driver.get("kernel_module_flavour")}
    return None


def owned_gpu_driver_packages(guest, vgpu_guest=False):
    """The installed packages that are the data center driver of a machine that owns its GPUs (a bare-metal server,
    a passthrough VM): none on a vGPU guest or where a GRID guest driver is installed, whose driver they would
    replace."""
    if vgpu_guest or _grid_installed(guest):
        return []
    return (installed_driver(guest) or {}).get("packages") or []


def _grid_installed(guest):
    driver = guest.get("driver") or {}
    return bool(driver.get("packages") or driver.get("gridd"))


def _branch(params):
    text = str(params.get("branch") or "").strip().upper().lstrip("R")
    if not re.match(r"^\d{3}$", text):
        raise InputError("nvidia_driver_branch %r is not a driver branch: give its three digits, such as 580."
                         % (params.get("branch"),), value=params.get("branch"))
    return int(text)


def _file(params, os_info):
    """The package files' or runfile's version, and the first problem with them."""
    source = params["source"]
    if source == "packages":
        files = params.get("package_files") or []
        if not files:
            return None, ("nvidia_driver_source is packages but nvidia_driver_package_files is empty: list the "
                          "driver's package files on the machine.")
        fmt = "deb" if os_info.get("family") == "Debian" else "rpm"
        wrong = [path for path in files if not path.endswith("." + fmt)]
        if wrong:
            return None, ("nvidia_driver_package_files %s are not .%s files, which is what %s installs: give the "
                          ".%s packages of the driver." % (", ".join(wrong), fmt, os_info.get("name"), fmt))
        names = [VERSION_IN_NAME.search(os.path.basename(path)) for path in files]
        versions = sorted(set(match.group(1) for match in names if match))
        if len(versions) != 1:
            return None, ("nvidia_driver_package_files name %s: the files must carry one driver version in their "
                          "names (cuda-drivers-580_580.65.06-1_amd64.deb)." % (
                              " and ".join(versions) if versions else "no version"))
        return versions[0], ""
    if source == "runfile":
        name = os.path.basename(params.get("runfile") or "")
        match = _RUNFILE_RE.match(name)
        if not match:
            return None, ("nvidia_driver_runfile %r is not NVIDIA's data center driver installer "
                          "(NVIDIA-Linux-x86_64-<version>.run; the -grid.run is the vGPU guest driver: "
                          "gpuops.vgpu.grid_driver)." % (params.get("runfile") or ""))
        return match.group(1), ""
    return None, ""


def _cuda_check(cuda_versions, branch, version):
    """Each toolkit's verdict against the driver to install (its exact version where known, else its branch)."""
    verdicts = []
    for cuda in cuda_versions:
        verdict = (_compatibility.cuda_driver_ok(cuda, version) if version
                   else _compatibility.cuda_branch_ok(cuda, branch))
        verdicts.append(verdict)
    return verdicts


def _secure_boot_error(guest, params, install, hostname):
    driver = guest.get("driver") or {}
    if not driver.get("secure_boot"):
        return ""
    cert = params.get("signing_cert") or ""
    cert_state = (guest.get("files") or {}).get(cert) or {}
    if not install and driver.get("kernel_module_signed"):
        return ""
    if cert and cert_state.get("exists") and params.get("signing_key_enrolled"):
        return ""
    return ("Secure Boot is on on %s and the NVIDIA kernel modules would not be signed with an enrolled key, so the "
            "kernel would refuse to load them. Make a key pair (DKMS makes /var/lib/dkms/mok.key and mok.pub), enrol "
            "its certificate with 'mokutil --import %s', reboot and confirm it in the MOK manager on the console, "
            "then set nvidia_driver_signing_cert to it and nvidia_driver_signing_key_enrolled to true "
            "('mokutil --test-key %s' says whether it is enrolled). Nothing was changed."
            % (hostname, cert or "/var/lib/dkms/mok.pub", cert or "/var/lib/dkms/mok.pub"))


def _running_module(guest):
    """What runs now: ``nouveau`` holding a GPU, else the nvidia module's version as nvidia-smi reports it
    (``mismatch`` when nvidia-smi finds another version than its library's), else None."""
    gpus = (guest.get("pci") or {}).get("gpus") or []
    if any(gpu.get("driver") == "nouveau" for gpu in gpus):
        return "nouveau"
    smi = guest.get("nvidia_smi") or {}
    if smi.get("present"):
        return smi.get("driver_version")
    if smi.get("kind") == "driver_library_mismatch":
        return "mismatch"
    if any(gpu.get("driver") == "nvidia" for gpu in gpus):
        return "unknown"
    return None


def _reboot_reasons(guest, installed, plan):
    running = _running_module(guest)
    wanted = plan["version"] or "branch %d" % plan["branch"]
    if running == "nouveau":
        return ["nouveau holds the GPU and lets go of it only at a reboot once it is blacklisted"]
    if plan["install"] and running:
        now = {"mismatch": "another version", "unknown": "another version"}.get(running, running)
        return ["the running nvidia kernel module (%s) must be replaced by %s %s" % (
            now, wanted, plan["flavour"])]
    if not plan["install"] and installed and running in ("mismatch", "unknown"):
        return ["driver %s is installed but the running kernel module is another (nvidia-smi: %s)" % (
            installed["version"], (guest.get("nvidia_smi") or {}).get("msg") or "")]
    return []


def nvidia_driver_plan(guest, params, check_mode=False, hostname="", vgpu_guest=False,
                       blacklist_file="", blacklist_content=""):
    """``_decide``'s plan, each refusal saying that nothing was changed."""
    plan = _decide(guest, params, check_mode, hostname, vgpu_guest, blacklist_file, blacklist_content)
    if plan["error"] and "Nothing was changed" not in plan["error"]:
        plan["error"] += " Nothing was changed."
    return plan


def _decide(guest, params, check_mode, hostname, vgpu_guest, blacklist_file, blacklist_content):
    """The plan: ``error`` (first refusal, else empty), ``flavour``, ``branch``, ``version`` (exact where the files
    tell), ``install``, ``packages``/``dnf_modules``/``remove``, the nouveau steps, ``persistenced``,
    ``reboot_reasons``, ``notes``, ``converged`` and ``result``."""
    plan = {"error": "", "notes": [], "install": False, "reboot_reasons": [], "converged": False, "result": {}}
    plan["error"] = read_error(guest, hostname, ("os", "pci", "packages", "driver", "files", "services"))
    if plan["error"]:
        return plan
    if vgpu_guest:
        plan["error"] = ("%s is a vGPU guest (in gpu_guests): its GPU is a vGPU, which runs the GRID guest driver "
                         "matched to the host's vGPU Manager. Use gpuops.vgpu.grid_driver there; nvidia_driver is for "
                         "bare-metal servers and passthrough guests." % hostname)
        return plan
    if _grid_installed(guest):
        grid = (guest.get("driver") or {}).get("packages") or []
        plan["error"] = ("A GRID guest driver is installed on %s (%s): the data center driver would replace it. "
                         "Remove it first (apt-get purge / dnf remove of the package, or nvidia-uninstall), or keep "
                         "it with gpuops.vgpu.grid_driver if this is a vGPU guest. Nothing was changed." % (
                             hostname, ", ".join(item["name"] for item in grid) or "nvidia-gridd"))
        return plan
    source = params.get("source")
    if source not in SOURCES:
        plan["error"] = "nvidia_driver_source %r is not one of %s." % (source, ", ".join(SOURCES))
        return plan
    os_info = guest.get("os") or {}
    try:
        branch = _branch(params)
    except InputError as err:
        plan["error"] = str(err)
        return plan
    version, plan["error"] = _file(params, os_info)
    if plan["error"]:
        return plan
    if version and int(version.split(".")[0]) != branch:
        plan["error"] = ("The driver file is version %s, of branch %s, but nvidia_driver_branch is %d: give the "
                         "files of branch %d or set the branch to %s." % (
                             version, version.split(".")[0], branch, branch, version.split(".")[0]))
        return plan
    gpus = (guest.get("pci") or {}).get("gpus") or []
    if not gpus:
        plan["error"] = ("No NVIDIA GPU is visible on the PCI bus of %s: %s lists no display or 3D controller. Give "
                         "the VM its GPUs (gpuops.vgpu.gpu_passthrough) or check the server's GPUs in its BMC, then "
                         "rerun. Nothing was installed." % (hostname, lspci_source(guest)))
        return plan
    module = kernel_module(gpus, branch, params.get("kernel_module") or "auto")
    if module["error"]:
        plan["error"] = "On %s: %s. Nothing was changed." % (hostname, module["error"])
        return plan
    flavour = module["flavour"]
    installed = installed_driver(guest)
    plan.update(branch=branch, version=version, flavour=flavour, flavour_reason=module["reason"],
                architectures=module["architectures"], gpus=visible_gpus(guest), os=os_info,
                installed=installed, source=source)
    for verdict in _cuda_check(params.get("cuda_versions") or [], branch, version):
        if verdict["status"] == "unsupported":
            plan["error"] = "%s Nothing was changed." % verdict["message"]
            return plan
        if verdict["status"] == "minor-compat-only":
            plan["notes"].append(verdict["message"])
    if source == "runfile" and installed and installed["source"] == "package":
        plan["error"] = ("The driver on %s was installed by the package manager (%s): the .run installer would "
                         "fight over the same files. Keep nvidia_driver_source repository or packages, or remove "
                         "those packages first. Nothing was changed." % (hostname, ", ".join(installed["packages"])))
        return plan
    if installed is None:
        plan["install"] = True
    elif version:
        plan["install"] = installed["version"] != version or (installed["flavour"] or flavour) != flavour
    else:
        plan["install"] = installed["branch"] != branch or (installed["flavour"] or flavour) != flavour
    family = os_info.get("family")
    plan["packages"] = [APT_PACKAGES[flavour] % branch] if source == "repository" and family == "Debian" else []
    plan["dnf_modules"] = [DNF_MODULES[flavour] % branch] if source == "repository" and family != "Debian" else []
    plan["remove"] = [name for name in (installed or {}).get("packages") or []
                      if plan["install"] and name not in plan["packages"]]
    plan["error"] = _secure_boot_error(guest, params, plan["install"], hostname)
    if plan["error"]:
        return plan
    blacklist = bool(params.get("blacklist_nouveau"))
    plan.update(nouveau_steps(guest, blacklist, blacklist_file, blacklist_content))
    plan["reboot_reasons"] = _reboot_reasons(guest, installed, plan)
    if plan["reboot_reasons"] and not params.get("reboot"):
        plan["error"] = ("%s needs a reboot before driver %s (%s) can run: %s. nvidia_driver_reboot is false. Nothing "
                         "was changed: set it to true, or reboot %s in a maintenance window and rerun."
                         % (hostname, version or "R%d" % branch, flavour, "; ".join(plan["reboot_reasons"]),
                            hostname))
        return plan
    service = (guest.get("services") or {}).get(PERSISTENCED) or {}
    plan["persistenced"] = bool(params.get("persistenced")) and not (service.get("enabled") and service.get("active"))
    plan["converged"] = not (plan["install"] or plan["modprobe_dir"] or plan["blacklist"] or plan["persistenced"]
                             or plan["reboot_reasons"])
    smi = guest.get("nvidia_smi") or {}
    plan["result"] = result(plan, smi=None if check_mode else smi)
    return plan


def result(plan, smi=None, changed=False, initramfs_rebuilt=False, rebooted=False):
    """The role's ``nvidia_driver_result``."""
    installed = plan.get("installed") or {}
    smi = smi or {}
    return {
        "branch": plan.get("branch"),
        "version": smi.get("driver_version") or plan.get("version") or (
            installed.get("version") if not plan.get("install") else None),
        "kernel_module": plan.get("flavour"),
        "kernel_module_reason": plan.get("flavour_reason"),
        "source": plan.get("source"),
        "previous_version": installed.get("version"),
        "installed": plan.get("install", False),
        "gpus": plan.get("gpus", []),
        "architectures": plan.get("architectures", []),
        "initramfs_rebuilt": initramfs_rebuilt,
        "rebooted": rebooted,
        "nvidia_smi": smi or None,
        "notes": plan.get("notes", []),
        "changed": changed,
    }
