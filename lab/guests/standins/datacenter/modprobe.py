#!/usr/bin/python3
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's stand-in for the kernel's side of NVIDIA's data center driver: which driver holds the GPUs.

A container has no GPU and loads no kernel module, so the lab keeps in /var/lib/gpuops-lab/kernel.json what the
kernel would: ``bound`` (``nouveau``, ``nvidia`` or null) and ``nvidia`` (the loaded module's version and flavour).

    modprobe.py load   what the driver's package scripts and installer do: load the installed module, unless
                       nouveau holds the GPU (it lets go only at a reboot) or another nvidia module runs (it stays
                       until a reboot: nvidia-smi then finds a version mismatch)
    modprobe.py boot   what a boot does: nouveau takes the GPU unless blacklisted in /etc/modprobe.d; else the
                       installed nvidia module (if any) is loaded
    modprobe.py nouveau  the state of a machine fresh from its installer: nouveau holds the GPU

lspci (tools/lspci) shows ``bound`` as "Kernel driver in use".
"""
import glob
import json
import os
import re
import sys

KERNEL = os.environ.get("GPUOPS_LAB_KERNEL", "/var/lib/gpuops-lab/kernel.json")
DRIVER = "/usr/share/nvidia/lab-dc/driver.json"


def read_json(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def write(state):
    os.makedirs(os.path.dirname(KERNEL), exist_ok=True)
    with open(KERNEL, "w") as handle:
        json.dump(state, handle)


def installed():
    driver = read_json(DRIVER)
    return {"version": driver["version"], "flavour": driver["flavour"]} if driver else None


def nouveau_blacklisted():
    for path in glob.glob("/etc/modprobe.d/*.conf"):
        with open(path) as handle:
            if any(re.match(r"^\s*blacklist\s+nouveau\s*$", line) for line in handle):
                return True
    return False


def main(args):
    state = read_json(KERNEL) or {"bound": None, "nvidia": None}
    command = args[0] if args else ""
    if command == "load":
        if state.get("bound") != "nouveau" and not state.get("nvidia") and installed():
            state = {"bound": "nvidia", "nvidia": installed()}
    elif command == "boot":
        module = installed()
        if not nouveau_blacklisted():
            state = {"bound": "nouveau", "nvidia": None}
        else:
            state = {"bound": "nvidia" if module else None, "nvidia": module}
    elif command == "nouveau":
        state = {"bound": "nouveau", "nvidia": None}
    else:
        sys.stderr.write("usage: modprobe.py load|boot|nouveau\n")
        return 2
    write(state)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
