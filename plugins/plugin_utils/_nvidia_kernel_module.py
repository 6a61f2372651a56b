# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which kernel module flavour of NVIDIA's data center driver a machine's GPUs can run, and which driver branches
support them: the one place of that rule.

Sources:

* NVIDIA Driver Installation Guide, "Kernel Modules"
  (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/kernel-modules.html): from the 515 series the
  driver comes in two flavours; the proprietary one is required for Maxwell, Pascal and Volta, with which the open
  modules are not compatible; the open modules are for Turing and newer; from the 560 series the open flavour is the
  default. Its R620 edition lists the open flavour only.
* NVIDIA's Unix graphics feature deprecation schedule (forums.developer.nvidia.com/t/60588): from 560 the .run
  installer picks the open modules when every NVIDIA GPU of the system can be driven by them. ``auto`` does the same.
* NVIDIA's announcement "NVIDIA Transitions Fully Towards Open-Source GPU Kernel Modules" (July 2024): Grace Hopper
  and Blackwell must use the open modules. Read as quoted by others (wiki.nixos.org's NVIDIA page, press reports),
  not on NVIDIA's page itself.
* The last branch for Maxwell, Pascal and Volta is taken to be R580 (distributions package R580 as their legacy
  branch for them, and the R620 guide has no proprietary flavour): not confirmed on an NVIDIA page.
* First branches: Blackwell (HGX B200) needs 570 (NVIDIA GPU Operator platform support: "HGX B200 requires a driver
  container version of 570.133.20 or later"); Hopper 520 (the CUDA 11.8 driver, the first with H100): not confirmed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog

FLAVOURS = ("open", "proprietary")
# Oldest first.
ARCHITECTURES = ("maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell")
PROPRIETARY_ONLY = ("maxwell", "pascal", "volta")
OPEN_ONLY = ("blackwell",)
FIRST_OPEN_BRANCH = 515
OPEN_DEFAULT_BRANCH = 560
LAST_BRANCH = {"maxwell": 580, "pascal": 580, "volta": 580}
FIRST_BRANCH = {"hopper": 520, "blackwell": 570}
# Data center GPUs the vGPU catalog does not list, by PCI device id (the PCI ID Repository, pci-ids.ucw.cz: 2901
# "GB100 [B200]"), for machines whose pci.ids is older than the GPU.
_DEVICE_ARCHITECTURES = {0x2901: "blackwell"}
# The chip in lspci's name for a GPU the catalog does not know: "GH100 [H100 SXM5 80GB]".
_CHIP_RE = re.compile(r"\b(GM|GP|GV|TU|GA|AD|GH|GB)\d{3}", re.I)
_CHIP_ARCHITECTURES = {"gm": "maxwell", "gp": "pascal", "gv": "volta", "tu": "turing", "ga": "ampere", "ad": "ada",
                       "gh": "hopper", "gb": "blackwell"}


def gpu_architecture(gpu):
    """The architecture of one GPU of ``gpu_guest_info``'s ``pci.gpus`` (``device_id``, ``description``): from the
    catalog by PCI id, else from the chip lspci names; None when neither tells."""
    device_id = gpu.get("device_id")
    model = None
    if device_id:
        try:
            model = _catalog.model_for_device(pci_device_id=device_id)
        except InputError:
            model = None
    if model:
        return _catalog.gpu_model(model)["architecture"]
    if device_id and device_id.lower().startswith("10de:"):
        known = _DEVICE_ARCHITECTURES.get(int(device_id[5:], 16))
        if known:
            return known
    match = _CHIP_RE.search(gpu.get("description") or "")
    return _CHIP_ARCHITECTURES[match.group(1).lower()] if match else None


def _branch_error(architecture, branch, name):
    first, last = FIRST_BRANCH.get(architecture), LAST_BRANCH.get(architecture)
    if first and branch < first:
        return "branch %d does not support %s (%s): use branch %d or newer" % (branch, name, architecture, first)
    if last and branch > last:
        return "branch %d does not support %s (%s): R%d is the last branch for %s GPUs" % (
            branch, name, architecture, last, architecture.capitalize())
    return ""


def kernel_module(gpus, branch, wanted="auto"):
    """The flavour to install for ``gpus`` (``pci.gpus``) on driver ``branch`` (an int), ``wanted`` being ``open``,
    ``proprietary`` or ``auto``.

    Returns ``flavour`` (None on an error), ``architectures`` (one per GPU, None where unknown), ``error`` (the first
    rule broken: a branch that does not support a GPU, a flavour a GPU cannot use, ``auto`` with GPUs whose needs
    differ or are unknown) and ``reason``.
    """
    if wanted not in FLAVOURS + ("auto",):
        raise InputError("Kernel module flavour %r is not open, proprietary or auto." % (wanted,), value=wanted)
    named = [(gpu.get("description") or gpu.get("device_id") or gpu.get("address"), gpu_architecture(gpu))
             for gpu in gpus]
    result = {"flavour": None, "architectures": [arch for _name, arch in named], "error": "", "reason": ""}
    for name, arch in named:
        error = _branch_error(arch, branch, name) if arch else ""
        if error:
            result["error"] = error
            return result
    known = [arch for _name, arch in named if arch]
    open_only = [name for name, arch in named if arch in OPEN_ONLY]
    proprietary_only = [name for name, arch in named if arch in PROPRIETARY_ONLY]
    unknown = [name for name, arch in named if not arch]
    if wanted == "proprietary" and open_only:
        result["error"] = ("%s runs only the open kernel modules (Grace Hopper and Blackwell): set "
                           "nvidia_driver_kernel_module to open or auto" % ", ".join(open_only))
    elif wanted == "open" and proprietary_only:
        result["error"] = ("%s cannot use the open kernel modules (Maxwell, Pascal and Volta need the proprietary "
                           "ones): set nvidia_driver_kernel_module to proprietary or auto" % ", ".join(proprietary_only))
    elif wanted == "open" and branch < FIRST_OPEN_BRANCH:
        result["error"] = ("branch %d has no open kernel modules (they start with 515): choose branch 515 or newer, "
                           "or the proprietary modules" % branch)
    elif wanted != "auto":
        result.update(flavour=wanted, reason="asked for")
    elif open_only and proprietary_only:
        result["error"] = ("%s need the open kernel modules and %s the proprietary ones: no single driver runs both; "
                           "split the GPUs between machines" % (", ".join(open_only), ", ".join(proprietary_only)))
    elif unknown:
        result["error"] = ("the generation of %s is not known here, so the kernel module flavour cannot be chosen: "
                           "set nvidia_driver_kernel_module to open (Turing and newer) or proprietary"
                           % ", ".join(unknown))
    elif proprietary_only:
        result.update(flavour="proprietary", reason="%s cannot use the open modules" % "/".join(sorted(set(known))))
    elif open_only or branch >= OPEN_DEFAULT_BRANCH:
        result.update(flavour="open", reason="every GPU runs the open modules%s" % (
            "" if open_only else ", NVIDIA's default from branch 560"))
    elif branch >= FIRST_OPEN_BRANCH:
        result.update(flavour="proprietary", reason="NVIDIA's default before branch 560")
    else:
        result.update(flavour="proprietary", reason="branch %d has no open modules" % branch)
    if result["error"]:
        result["flavour"] = None
    return result
