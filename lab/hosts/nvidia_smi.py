#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lab stand-in for the vGPU manager's nvidia-smi on an ESXi host, answering from the lab's live state.

Each call reads the lab vCenter's GET /lab/state (the host's GPUs and PCI ids, ECC mode, temperature, NVLink pairs,
the vGPUs of its powered-on VMs, its installed components) and the lab's catalog (vGPU profile sizes). Settings
come from the environment, which labctl's host shell wrapper sets: GPUOPS_LAB_URL (https://.../lab),
GPUOPS_LAB_HOST (the host's vCenter name), GPUOPS_LAB_CAFILE (the lab certificate, verified), GPUOPS_LAB_CATALOG.

Commands, in the vGPU manager's formats (layouts after the recordings in tests/fixtures/nvidia-smi, see
lab/hosts/README.md): -q and -q -x (optionally -d TEMPERATURE|ECC|MEMORY, -i N), -L, vgpu, vgpu -q,
topo -m, nvlink -s / --status, nvlink -R, --query-gpu=... --format=csv[,noheader][,nounits]. Anything else fails as
nvidia-smi does on an unknown option. Without the NVD-VGPU component on the host there is no nvidia-smi: it answers
like the ESXi shell does for a missing command.
"""

import json
import os
import ssl
import sys
import time
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from smi_render import KEY_WIDTH, render_text, render_xml  # noqa: E402 (the stand-in runs as a script)
from smi_models import Fail, csv_fields, gpu_sections, model_facts  # noqa: E402

DRIVER_COMPONENT_PREFIX = "NVD-VGPU-"
VGPU_ID_BASE = 3251634176  # the vGPU IDs the vGPU manager prints start near here (NVIDIA's user guide examples)


def lab_state():
    context = ssl.create_default_context(cafile=os.environ["GPUOPS_LAB_CAFILE"])
    with urllib.request.urlopen(os.environ["GPUOPS_LAB_URL"] + "/state", context=context, timeout=30) as answer:
        return json.load(answer)


def lab_catalog(path=None):
    """GPU models by id, and vGPU profiles by name with their position in the model's list (the lab's type id)."""
    with open(path or os.environ["GPUOPS_LAB_CATALOG"]) as handle:
        models = json.load(handle)["gpus"]
    profiles = {}
    for model in models.values():
        for position, profile in enumerate(model["profiles"]):
            profiles[profile["name"]] = dict(profile, type_id=position)
    return models, profiles


def stable_uuid(*parts):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "gpuops-lab:" + "/".join(parts)))


def vgpu_name(profile):
    """vSphere's grid_p40-8q is the vGPU manager's GRID P40-8Q."""
    return "GRID " + profile.split("_", 1)[-1].upper()


def machine(state, host_name, catalog):
    """The host as its nvidia-smi sees it: driver version and GPUs in PCI bus order, each with its vGPUs.
    ``catalog`` is what ``lab_catalog()`` returns."""
    host = next((h for h in state["hosts"] if h["name"] == host_name), None)
    if host is None:
        raise Fail("No devices were found", 6)
    driver = next((v.split("-")[0] for c, v in sorted(host.get("components", {}).items())
                   if c.startswith(DRIVER_COMPONENT_PREFIX)), None)
    if driver is None:
        raise Fail("-sh: nvidia-smi: not found", 127)
    models, profiles = catalog
    gpus = sorted(host["gpus"], key=lambda g: g["pci_id"])
    peers = nvlink_peers(host)
    running = {}
    for vm in state["vms"]:
        if vm["host"] != host_name or vm["power_state"] != "poweredOn":
            continue
        for vgpu in vm["vgpus"]:
            if vgpu.get("gpu"):
                running.setdefault(vgpu["gpu"], []).append((vm, vgpu))
    out = []
    counter = 0
    for index, gpu in enumerate(gpus):
        vgpus = []
        for vm, vgpu in running.get(gpu["pci_id"], []):
            profile = profiles.get(vgpu["profile"], {})
            vgpus.append({
                "id": VGPU_ID_BASE + 1 + counter, "vm_name": vm["name"], "vm_uuid": vm["uuid"],
                "name": vgpu_name(vgpu["profile"]), "type_id": profile.get("type_id"),
                "uuid": stable_uuid(host_name, vm["uuid"], str(vgpu["key"])),
                "fb_mib": profile.get("framebuffer_mib", 0),
            })
            counter += 1
        out.append(dict(gpu, index=index, bus_id="0000" + gpu["pci_id"].upper(),
                        uuid="GPU-" + stable_uuid(host_name, gpu["pci_id"]),
                        serial=str(int(stable_uuid(host_name, gpu["pci_id"], "serial")[:8], 16)).zfill(13),
                        vgpus=vgpus, peers=peers.get(gpu["pci_id"], []), facts=model_facts(gpu["model"]),
                        architecture=models.get(gpu["model"], {}).get("architecture")))
    return {"driver": driver, "gpus": out, "nvswitches": host.get("nvswitches") or []}


def nvlink_peers(host):
    """PCI id -> the PCI ids of the GPUs it has NVLinks to (a bridged pair: one; an NVSwitch board: the others)."""
    peers = {}
    for a, b in host.get("nvlink") or []:
        peers.setdefault(a, []).append(b)
        peers.setdefault(b, []).append(a)
    return peers


def select(gpus, args):
    if "-i" in args:
        wanted = args[args.index("-i") + 1] if args.index("-i") + 1 < len(args) else ""
        chosen = [g for g in gpus if wanted in (str(g["index"]), g["bus_id"], g["pci_id"], g["uuid"])]
        if not chosen:
            raise Fail("No devices were found", 6)
        return chosen
    return gpus


def query(m, args):
    displays = None
    if "-d" in args and args.index("-d") + 1 < len(args):
        displays = set(word.strip().lower() for word in args[args.index("-d") + 1].split(","))
    gpus = select(m["gpus"], args)
    stamp = time.strftime("%a %b %d %H:%M:%S %Y", time.localtime())
    head = [("Timestamp", "timestamp", stamp), ("Driver Version", "driver_version", m["driver"]),
            ("CUDA Version", "cuda_version", "Not Found"), ("Attached GPUs", "attached_gpus", str(len(m["gpus"])))]
    body = [(g["bus_id"], gpu_sections(g, displays)) for g in gpus]
    if "-x" in args:
        return render_xml(head, body)
    return render_text(head, body)


def gpu_list(m):
    return "".join("GPU %d: %s (UUID: %s)\n" % (g["index"], g["device_name"], g["uuid"]) for g in m["gpus"])


def vgpu_summary(m):
    """`nvidia-smi vgpu`: the table layout of NVIDIA's vGPU user guide ("Using nvidia-smi to monitor ...")."""
    rule = "+-------------------------------+--------------------------------+------------+\n"
    lines = [time.strftime("%a %b %d %H:%M:%S %Y", time.localtime()) + "\n",
             "+-----------------------------------------------------------------------------+\n",
             "| NVIDIA-SMI %-22s Driver Version: %-26s|\n" % (m["driver"], m["driver"]),
             "|-------------------------------+--------------------------------+------------+\n",
             "| GPU  Name                     | Bus-Id                         | GPU-Util   |\n",
             "|      vGPU ID     Name         | VM ID     VM Name              | vGPU-Util  |\n",
             "|===============================+================================+============|\n"]
    for g in m["gpus"]:
        lines.append("| %3d  %-25s| %-31s|   %3d%%     |\n" % (g["index"], g["device_name"][:24], g["bus_id"],
                                                            min(99, 4 * len(g["vgpus"]))))
        for v in g["vgpus"]:
            lines.append("|      %-10d  %-13s| %-8s  %-21s|   %3d%%     |\n" % (
                v["id"], v["name"][:13], str(v["id"] % 100000)[:8], v["vm_name"][:21], 4))
        lines.append(rule)
    return "".join(lines)


def vgpu_query(m, args):
    lines = []
    for g in select(m["gpus"], args):
        lines.append("GPU %s\n" % g["bus_id"])
        lines.append("    %-*s: %d\n" % (KEY_WIDTH - 4, "Active vGPUs", len(g["vgpus"])))
        for v in g["vgpus"]:
            lines.append("    %-*s: %d\n" % (KEY_WIDTH - 4, "vGPU ID", v["id"]))
            rows = [("VM UUID", v["vm_uuid"]), ("VM Name", v["vm_name"]), ("vGPU Name", v["name"]),
                    ("vGPU Type", "N/A" if v["type_id"] is None else str(v["type_id"])), ("vGPU UUID", v["uuid"]),
                    ("Guest Driver Version", "N/A"), ("License Status", "N/A (Expiry: N/A)"),
                    ("GPU Instance ID", "N/A"), ("Accounting Mode", "Disabled"),
                    ("ECC Mode", "Enabled" if g["ecc_mode"] == "enabled" else "Disabled"),
                    ("Accounting Buffer Size", "4000"), ("Frame Rate Limit", "N/A")]
            lines.extend("        %-*s: %s\n" % (KEY_WIDTH - 8, k, val) for k, val in rows)
            lines.append("        FB Memory Usage\n")
            lines.extend("            %-*s: %d MiB\n" % (KEY_WIDTH - 12, k, val) for k, val in (
                ("Total", v["fb_mib"]), ("Used", 0), ("Free", v["fb_mib"])))
            lines.append("        Utilization\n")
            lines.extend("            %-*s: 0 %%\n" % (KEY_WIDTH - 12, k) for k in ("Gpu", "Memory", "Encoder",
                                                                                   "Decoder"))
    return "".join(lines)


def topology(m):
    gpus = m["gpus"]
    head = "\t" + "\t".join("GPU%d" % g["index"] for g in gpus) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    rows = []
    for g in gpus:
        cells = []
        for other in gpus:
            if other is g:
                cells.append(" X ")
            elif other["pci_id"] in g["peers"]:
                cells.append("NV%d" % g["facts"]["nvlink_links"])
            else:
                cells.append("SYS" if (int(g["pci_id"][5:7], 16) < 0x80) != (int(other["pci_id"][5:7], 16) < 0x80)
                             else "NODE")
        socket = 0 if int(g["pci_id"][5:7], 16) < 0x80 else 1
        rows.append("GPU%d\t%s\t%s\t%d\t\tN/A\n" % (g["index"], "\t".join(cells), "0-15" if socket == 0 else
                                                    "16-31", socket))
    legend = ("\nLegend:\n\n"
              "  X    = Self\n"
              "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
              "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a"
              " NUMA node\n"
              "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
              "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
              "  PIX  = Connection traversing at most a single PCIe bridge\n"
              "  NV#  = Connection traversing a bonded set of # NVLinks\n")
    return head + "".join(rows) + legend


def nvlink_status(m, args):
    lines = []
    for g in select(m["gpus"], args):
        if not g["facts"]["nvlink_slots"]:
            continue  # a GPU without NVLink prints nothing (tests/fixtures: nvlink_status_a10_empty_output.txt)
        lines.append("GPU %d: %s (UUID: %s)\n" % (g["index"], g["device_name"], g["uuid"]))
        if not g["peers"]:
            lines.append("NVML: Unable to retrieve NVLink information as all links are inActive\n")
            continue
        active = g["facts"]["nvlink_active"]
        lines.extend("\t Link %d: %s\n" % (n, "%s GB/s" % g["facts"]["nvlink_gbps"] if n in active else "<inactive>")
                     for n in range(g["facts"]["nvlink_slots"]))
    return "".join(lines)


def nvlink_remote(m, args):
    """`nvidia-smi nvlink -R`: each active link's far end (a bridged pair joins link n to link n; on an NVSwitch
    board the links go to the switches, spread over them in turn: the lab's choice, not from a recording)."""
    by_pci = dict((g["pci_id"], g) for g in m["gpus"])
    lines = []
    for g in select(m["gpus"], args):
        if not g["facts"]["nvlink_links"]:
            continue
        lines.append("GPU %d: %s (UUID: %s)\n" % (g["index"], g["device_name"], g["uuid"]))
        switches = m.get("nvswitches") or []
        if len(g["peers"]) > 1 and switches:
            lines.extend("\t Link %d: Remote Device %s: Link %d\n" % (
                n, "0000" + switches[n % len(switches)]["pci_id"].upper(), g["index"] * 2 + n // len(switches))
                for n in g["facts"]["nvlink_active"])
        elif g["peers"]:
            peer = by_pci[g["peers"][0]]
            lines.extend("\t Link %d: Remote Device %s: Link %d\n" % (n, peer["bus_id"], n)
                         for n in g["facts"]["nvlink_active"])
    return "".join(lines)


def csv_query(m, args):
    fields, fmt = None, None
    for position, arg in enumerate(args):
        if arg.startswith("--query-gpu="):
            fields = arg.split("=", 1)[1]
        elif arg == "--query-gpu" and position + 1 < len(args):
            fields = args[position + 1]
        elif arg.startswith("--format="):
            fmt = arg.split("=", 1)[1]
    if fmt is None or "csv" not in fmt.split(","):
        raise Fail('Field "--format" must be specified.', 2)
    names = [f.strip() for f in (fields or "").split(",") if f.strip()]
    return csv_fields(select(m["gpus"], args), names, m["driver"], fmt.split(","))


def answer(m, args):
    """What nvidia-smi prints for ``args`` on the machine ``m``; raises ``Fail`` where it fails."""
    if args[:1] == ["vgpu"]:
        return vgpu_query(m, args[1:]) if "-q" in args[1:] else vgpu_summary(m)
    if args[:2] == ["topo", "-m"]:
        return topology(m)
    if args[:1] == ["nvlink"] and ("-s" in args or "--status" in args):
        return nvlink_status(m, args[1:])
    if args[:1] == ["nvlink"] and ("-R" in args or "--remotelinkinfo" in args):
        return nvlink_remote(m, args[1:])
    if args[:1] in (["-L"], ["--list-gpus"]):
        return gpu_list(m)
    if any(a.startswith("--query-gpu") for a in args):
        return csv_query(m, args)
    if "-q" in args:
        return query(m, args)
    raise Fail("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"
               "(gpuops lab stand-in: not modelled: %s)" % " ".join(args), 2)


def main(args):
    try:
        text = answer(machine(lab_state(), os.environ["GPUOPS_LAB_HOST"], lab_catalog()), args)
    except Fail as failure:
        stream = sys.stderr if failure.rc == 127 else sys.stdout
        stream.write(str(failure) + "\n")
        return failure.rc
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
