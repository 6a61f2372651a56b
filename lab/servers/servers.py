# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's bare-metal GPU servers: systemd containers like the guests (lab/guests/containers.py), each with the
GPUs, NVSwitches and NVLink bridges the topology's ``servers:`` entry gives it, a lab BMC (lab/bmc, started with the
ESXi hosts' BMCs) and the data center driver's nvidia-smi stand-in (standins/nvidia-smi) answering from them.

A topology entry::

    - {name: hgx-01.lab.local, gpus: [{model: H100-SXM5-80, count: 8}], nvswitches: 4, ssh_port: 2241,
       bmc: {vendor: supermicro, port: 8451}}
    - {name: pcie-01.lab.local, gpus: [{model: H100-80, count: 2}], nvlink: [[0, 1]], ssh_port: 2242, ...}

``nvswitches: N`` makes an HGX board (every GPU linked to every other through the switches); ``nvlink`` bridges
pairs of GPUs by index. ``driver: preinstalled`` starts the server with the driver stand-in installed and its module
loaded, ``driver: none`` without any driver; servers that say nothing get ``DEFAULT_DRIVER``.
"""

import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "guests"))
from containers import podman, start_guests, stop_guests  # noqa: E402


def _standins_packing():
    """lab/guests/standins/packing.py, whose pci_dump writes lspci's configuration-space dumps."""
    spec = importlib.util.spec_from_file_location(
        "gpuops_lab_standins_packing", os.path.join(HERE, "..", "guests", "standins", "packing.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# What a server starts with when its entry does not say: no driver, as a server fresh from its installer; the
# servers layer's gpuops.vgpu.nvidia_driver installs it from the lab's stand-in of NVIDIA's CUDA repository, and the
# driver's nvidia-smi hands over to the server's own (standins/nvidia-smi).
DEFAULT_DRIVER = "none"
# The driver the pre-installed stand-in reports: the 8x H100 bare-metal recording's (tests/fixtures/nvidia-smi).
PREINSTALLED_DRIVER = {"version": "535.161.08", "cuda": "12.2"}
SERVER_KNOWN_HOSTS = "server_known_hosts"
# GPU buses: an HGX H100 board's as recorded (q_8xH100_80gb_hbm3_baremetal_ecc_on_driver535.161.txt), then more.
GPU_BUSES = (0x19, 0x3B, 0x4C, 0x5D, 0x9B, 0xBB, 0xCB, 0xDB, 0x1A, 0x3C)
# NVSwitches per GPU architecture (lab/vcenter/gpu/nvswitch.go: the PCI ID database's names), on buses 05...
NVSWITCH_MODELS = {"hopper": (0x22A3, "GH100 [H100 NVSwitch]"), "ampere": (0x1AF1, "GA100 [A100 NVSwitch]")}
NVSWITCH_BUSES = (0x05, 0x06, 0x07, 0x08, 0x09, 0x0A)
NVIDIA = 0x10DE


def describe(server, catalog):
    """/etc/gpuops-lab/server.json of ``server``: GPUs in bus order, NVSwitches, each GPU's NVLink peers."""
    gpus = []
    for spec in server["gpus"]:
        model = catalog[spec["model"]]
        for _ in range(spec.get("count", 1) * model.get("gpus_per_board", 1)):
            gpus.append({"model": spec["model"], "pci_id": "0000:%02x:00.0" % GPU_BUSES[len(gpus)],
                         "device_name": model["device_name"], "device_id": model["pci_device_id"],
                         "memory_mib": model["framebuffer_mib"], "architecture": model["architecture"],
                         "ecc_mode": spec.get("ecc", "enabled"), "temperature_c": 34})
    architecture = gpus[0]["architecture"] if gpus else "hopper"
    device_id, name = NVSWITCH_MODELS.get(architecture, NVSWITCH_MODELS["hopper"])
    switches = [{"pci_id": "0000:%02x:00.0" % bus, "device_id": "0x%04x" % device_id, "device_name": name}
                for bus in NVSWITCH_BUSES[:server.get("nvswitches", 0)]]
    groups = [list(range(len(gpus)))] if switches else server.get("nvlink") or []
    peers = {}
    for group in groups:
        for a in group:
            peers[gpus[a]["pci_id"]] = [gpus[b]["pci_id"] for b in group if b != a]
    return {"name": server["name"], "gpus": gpus, "nvswitches": switches, "peers": peers}


def bus(description):
    """lspci's view of the server: its GPUs (3D controllers) and NVSwitches (other bridges), for the lspci
    stand-in."""
    devices = [(g["pci_id"][5:], NVIDIA, int(g["device_id"], 16), 0x03, 0x02, 0xA1, NVIDIA, 0x16C1)
               for g in description["gpus"]]
    devices += [(s["pci_id"][5:], NVIDIA, int(s["device_id"], 16), 0x06, 0x80, 0xA1, NVIDIA, 0x1796)
                for s in description["nvswitches"]]
    return _standins_packing().pci_dump(sorted(devices))


def start_servers(servers, state_dir, port_offset, catalog_path):
    """Start the topology's ``servers`` (podman containers named like the guests, host keys in
    ``SERVER_KNOWN_HOSTS``) and return ``{name: {"container", "ssh_port", "metrics_port", "driver"}}``."""
    with open(catalog_path) as handle:
        catalog = json.load(handle)["gpus"]
    specs = [{"name": s["name"], "ssh_port": s["ssh_port"]} for s in servers]
    started = start_guests(specs, state_dir, port_offset, known_hosts_file=SERVER_KNOWN_HOSTS, reboots=True)
    for server in servers:
        container = started[server["name"]]["container"]
        description = describe(server, catalog)
        driver = server.get("driver", DEFAULT_DRIVER)
        if driver not in ("preinstalled", "none"):
            sys.exit("Lab server %s: driver must be preinstalled or none, not %r." % (server["name"], driver))
        write(container, "/etc/gpuops-lab/server.json", json.dumps(description, indent=1))
        write(container, "/usr/share/gpuops-lab/vm-pci.dump", bus(description))
        podman("exec", container, "sh", "-ec",
               "install -d /usr/lib/gpuops-lab/server; cp /srv/lab-artifacts/server/* /usr/lib/gpuops-lab/server/; "
               # The lab's stand-in of NVIDIA's CUDA repository: where gpuops.vgpu.nvidia_driver finds the driver.
               "echo 'deb [trusted=yes] file:/srv/lab-artifacts/cuda-repo ./' >/etc/apt/sources.list.d/cuda-lab.list; "
               # The lab kernel's boot at every later start: the driver a reboot leaves running.
               "cp /usr/lib/gpuops-lab/server/gpuops-lab-boot.service /etc/systemd/system/; "
               "systemctl enable --quiet gpuops-lab-boot.service")
        if driver == "preinstalled":
            install_driver(container, PREINSTALLED_DRIVER)
        started[server["name"]]["driver"] = driver
    return started


def install_driver(container, driver):
    """The driver stand-in as a driver package and the reboot after it leave it: nvidia-smi on PATH, the version it
    reports (/usr/share/nvidia/lab-dc/driver.json) and its kernel module running in the lab's kernel state
    (/var/lib/gpuops-lab/kernel.json, the lab's modprobe stand-in's format)."""
    write(container, "/usr/share/nvidia/lab-dc/driver.json", json.dumps(driver))
    write(container, "/var/lib/gpuops-lab/kernel.json", json.dumps(
        {"bound": "nvidia", "nvidia": {"version": driver["version"], "flavour": "open"}}))
    podman("exec", container, "ln", "-sf", "/usr/lib/gpuops-lab/server/nvidia-smi", "/usr/bin/nvidia-smi")


def write(container, path, text):
    podman("exec", container, "mkdir", "-p", os.path.dirname(path))
    podman("exec", container, "sh", "-ec", "cat > %s <<'GPUOPS_LAB_EOF'\n%s\nGPUOPS_LAB_EOF" % (path, text))


__all__ = ["DEFAULT_DRIVER", "SERVER_KNOWN_HOSTS", "describe", "install_driver", "start_servers", "stop_guests"]
