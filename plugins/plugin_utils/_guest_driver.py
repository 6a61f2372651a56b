# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the driver roles (grid_driver, nvidia_driver) decide alike from one ``gpu_guest_info`` read: a read that
failed, the GPUs on the PCI bus, a driver's version in its file name, the nouveau blacklist steps."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._file_state import file_as

VERSION_IN_NAME = re.compile(r"(\d{3,}\.\d+(?:\.\d+)?)")


def read_error(guest, hostname, probes=("os", "driver", "files")):
    """The message for probes of ``probes`` the read could not answer; empty when all answered."""
    errors = guest.get("errors") or {}
    failed = [name for name in errors if name in probes]
    if failed:
        return "Could not read %s on %s: %s. Nothing was changed." % (
            " and ".join(failed), hostname, "; ".join(errors[name]["msg"] for name in failed))
    return ""


def visible_gpus(guest):
    """Each NVIDIA display or 3D controller on the PCI bus, by description (else address)."""
    return [gpu.get("description") or gpu.get("address") for gpu in (guest.get("pci") or {}).get("gpus") or []]


def lspci_source(guest):
    """How the read listed the PCI bus, for messages."""
    return "'lspci -nnk -d 10de:'" if (guest.get("pci") or {}).get("source") == "lspci" else "sysfs"


def nouveau_steps(guest, blacklist, blacklist_file, blacklist_content):
    """``modprobe_dir`` and ``blacklist``: whether /etc/modprobe.d and the nouveau blacklist still need writing.

    A blacklist already in force is kept as it is: a ``blacklist nouveau`` line in any modprobe.d file (the file of
    NVIDIA's guides, /etc/modprobe.d/blacklist-nouveau.conf with ``blacklist nouveau`` and ``options nouveau
    modeset=0``, written by hand; a distribution's or a driver package's own) or on the kernel command line, as
    gpu_guest_info's driver read finds it (``driver.nouveau.blacklisted``). Rewriting it to the role's bytes would
    change nothing in what the kernel loads."""
    files = guest.get("files") or {}
    in_force = bool(((guest.get("driver") or {}).get("nouveau") or {}).get("blacklisted"))
    write = blacklist and not in_force
    return {
        "modprobe_dir": write and not file_as(files.get("/etc/modprobe.d") or {}, {"type": "directory", "mode": "0755"}),
        "blacklist": write and not file_as(files.get(blacklist_file) or {}, {"content": blacklist_content, "mode": "0644"}),
    }
