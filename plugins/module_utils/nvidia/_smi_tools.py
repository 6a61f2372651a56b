# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The other nvidia-smi outputs: ``topo -m``, ``topo -p2p``, ``nvlink -s``/``-R``, ``-L``, ``mig -lgip``/``-lgi``/``-lci``, CSV.

Standard library only and Python 3.8 syntax: it also runs on ESXi's Python and on minimal guests. The public names
are re-exported by ``module_utils/nvidia_smi.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import re

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia._smi_values import (
    _ANSI_RE,
    _BUS_ID,
    _GPU_LINE_RE,
    _MIG_LINE_RE,
    _clean,
    _fail,
    detect_error,
)


# --- nvidia-smi topo -m -----------------------------------------------------------------------------------------


def _cells(line):
    if "\t" in line:
        return [cell.strip() for cell in line.split("\t")]
    return [cell.strip() for cell in re.split(r"\s{2,}", line.strip())]


def parse_topology(text):
    """Parse ``nvidia-smi topo -m``: tabs or spaces, ANSI escapes, NIC rows and empty cells."""
    lines = _ANSI_RE.sub("", text or "").splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    header = [cell for cell in _cells(lines[0]) if cell] if lines else []
    devices = []
    for cell in header:
        if "Affinity" in cell or "NUMA ID" in cell:
            break
        devices.append(cell)
    if not devices or not re.match(r"^(GPU|NIC)\d+$", devices[0]):
        _fail(text, "nvidia-smi topo -m")
    extra_columns = header[len(devices):]
    matrix, affinity = {}, {}
    for line in lines[1:]:
        if not line.strip() or line.strip().startswith("Legend"):
            break
        cells = _cells(line)
        row = cells[0]
        links = cells[1:1 + len(devices)]
        matrix[row] = dict((col, (links[i] or None) if i < len(links) else None) for i, col in enumerate(devices))
        rest = [cell for cell in cells[1 + len(devices):] if cell]
        affinity[row] = dict((col, _clean(rest[i]) if i < len(rest) else None) for i, col in enumerate(extra_columns))
    gpus = [name for name in devices if name.startswith("GPU")]
    pairs = []
    for i, left in enumerate(gpus):
        for right in gpus[i + 1:]:
            match = re.match(r"^NV(\d+)$", matrix.get(left, {}).get(right) or "")
            if match:
                pairs.append({"a": left, "b": right, "links": int(match.group(1))})

    def column(name):
        return dict((gpu, affinity.get(gpu, {}).get(name)) for gpu in gpus)

    return {
        "devices": devices,
        "matrix": matrix,
        "nvlink_pairs": pairs,
        "cpu_affinity": column("CPU Affinity"),
        "numa_affinity": column("NUMA Affinity"),
        "gpu_numa_id": column("GPU NUMA ID"),
        "nics": dict(re.findall(r"^\s*(NIC\d+):\s*(\S+)\s*$", text or "", re.M)),
    }


def parse_p2p(text):
    """Parse ``nvidia-smi topo -p2p <r|w|rw|n|a|p>``: the status word between each pair of GPUs (``OK``, ``CNS``
    chipset, ``GNS`` GPU, ``TNS`` topology not supported, ``NS`` not supported, ``U`` unknown, ``X`` self).

    ``pairs`` lists each unordered pair once, with its status both ways; ``ok`` is true when both ways are ``OK``.
    """
    rows = [[cell for cell in _cells(line) if cell] for line in _ANSI_RE.sub("", text or "").splitlines()]
    rows = [row for row in rows if row]
    while rows and not re.match(r"^GPU\d+$", rows[0][0]):
        rows.pop(0)  # a title line such as "P2P Connectivity Matrix"
    header = rows[0] if rows else []
    if not header or not all(re.match(r"^GPU\d+$", cell) for cell in header):
        _fail(text, "nvidia-smi topo -p2p")
    matrix = {}
    for cells in rows[1:]:
        if not re.match(r"^GPU\d+$", cells[0]):
            break
        matrix[cells[0]] = dict(zip(header, cells[1:]))
    pairs = []
    for i, left in enumerate(header):
        for right in header[i + 1:]:
            there, back = matrix.get(left, {}).get(right), matrix.get(right, {}).get(left)
            pairs.append({"a": left, "b": right, "status": there, "status_back": back,
                          "ok": there == "OK" and back == "OK"})
    return {"gpus": header, "matrix": matrix, "pairs": pairs}


# --- nvidia-smi nvlink -s / -R, -L ------------------------------------------------------------------------------

def _per_gpu(text, what, on_line):
    """Walk ``GPU n: name (UUID: ...)`` headers; ``on_line(gpu, stripped_line)`` handles the lines under each."""
    gpus, current = [], None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        header = _GPU_LINE_RE.match(line)
        if header:
            current = {"index": int(header.group(1)), "name": header.group(2), "uuid": header.group(3)}
            gpus.append(current)
            on_line(current, None)
        elif current is None or not on_line(current, line):
            _fail(text, what)
    return gpus


def parse_nvlink_status(text):
    """Parse ``nvidia-smi nvlink -s`` / ``--status``. Empty output (a GPU without NVLink) gives no GPUs."""
    def on_line(gpu, line):
        if line is None:
            gpu.update(links=[], active_links=0, error=None)
            return True
        match = re.match(r"^Link (\d+): (.*)$", line)
        if match:
            status = match.group(2).strip()
            speed = re.match(r"^([\d.]+)\s*([KMG])B/s$", status)
            gbps = float(speed.group(1)) * {"K": 1e-6, "M": 1e-3, "G": 1.0}[speed.group(2)] if speed else None
            gpu["links"].append({"link": int(match.group(1)), "active": gbps is not None, "speed_gbps": gbps,
                                 "status": status})
            gpu["active_links"] += 1 if gbps is not None else 0
            return True
        gpu["error"] = line if gpu["error"] is None else gpu["error"] + " " + line
        return True

    return {"gpus": _per_gpu(text, "nvidia-smi nvlink -s", on_line)}


def parse_nvlink_remote(text):
    """Parse ``nvidia-smi nvlink -R``: for each link, the PCI bus id and link number at the other end."""
    def on_line(gpu, line):
        if line is None:
            gpu["links"] = []
            return True
        match = re.match(r"^Link (\d+): Remote Device (%s): Link (\d+)$" % _BUS_ID, line)
        if match:
            gpu["links"].append({"link": int(match.group(1)), "remote_pci_bus_id": match.group(2),
                                 "remote_link": int(match.group(3))})
        return match is not None

    return {"gpus": _per_gpu(text, "nvidia-smi nvlink -R", on_line)}


def parse_list(text):
    """Parse ``nvidia-smi -L``, MIG devices included."""
    def on_line(gpu, line):
        if line is None:
            gpu["mig_devices"] = []
            return True
        match = _MIG_LINE_RE.match(line)
        if match:
            gpu["mig_devices"].append({"profile": match.group(1), "index": int(match.group(2)),
                                       "uuid": match.group(3)})
        return match is not None

    gpus = _per_gpu(text, "nvidia-smi -L", on_line)
    if not gpus:
        _fail(text, "nvidia-smi -L")
    return {"gpus": gpus}


# --- nvidia-smi mig -lgip / -lgi --------------------------------------------------------------------------------

_LGIP_RE = re.compile(r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)/(\d+)\s+([\d.]+)\s+(\S+)"
                      r"\s+(\d+)\s+(\d+)\s+(\d+)\s*\|$")
_LGIP_MORE_RE = re.compile(r"^\|\s+(\d+)\s+(\d+)\s+(\d+)\s*\|$")
_LGI_RE = re.compile(r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+):(\d+)\s*\|$")
# -lci rows: GPU, GPU instance id, name, CI profile id, CI id and, since R470, Placement Start:Size.
_LCI_RE = re.compile(r"^\|\s*(\d+)\s+(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)(?:\s+(\d+):(\d+))?\s*\|$")


def parse_mig(text):
    """Parse ``nvidia-smi mig -lgip``, ``mig -lgi`` and/or ``mig -lci`` tables.

    Returns ``gpu_instance_profiles``, ``gpu_instances`` and/or ``compute_instances`` for the tables found;
    ``No GPU instances found`` / ``No compute instances found`` (MIG on, nothing carved yet) give an empty list.
    """
    text = text or ""
    result = {}
    if "GPU instance profiles:" in text:
        profiles = []
        for line in text.splitlines():
            line = line.strip()
            row, more = _LGIP_RE.match(line), _LGIP_MORE_RE.match(line)
            if row:
                gpu, name, pid, free, total, mem, p2p, sm, dec, enc = row.groups()
                profiles.append({"gpu": int(gpu), "name": name, "profile_id": int(pid),
                                 "instances_free": int(free), "instances_total": int(total),
                                 "memory_gib": float(mem), "p2p": p2p.lower() == "yes", "sm": int(sm),
                                 "dec": int(dec), "enc": int(enc), "ce": None, "jpeg": None, "ofa": None})
            elif more and profiles:
                profiles[-1].update(zip(("ce", "jpeg", "ofa"), (int(part) for part in more.groups())))
        if not profiles:
            _fail(text, "nvidia-smi mig -lgip")
        result["gpu_instance_profiles"] = profiles
    if "GPU instances:" in text:
        instances = []
        for line in text.splitlines():
            row = _LGI_RE.match(line.strip())
            if row:
                gpu, name, pid, gid, start, size = row.groups()
                instances.append({"gpu": int(gpu), "name": name, "profile_id": int(pid), "instance_id": int(gid),
                                  "placement_start": int(start), "placement_size": int(size)})
        if not instances:  # without instances nvidia-smi prints "No GPU instances found", not an empty table
            _fail(text, "nvidia-smi mig -lgi")
        result["gpu_instances"] = instances
    elif re.search(r"^No GPU instances found", text, re.M):
        result["gpu_instances"] = []
    if "Compute instances:" in text:
        result["compute_instances"] = _compute_instances(text)
    elif re.search(r"^No compute instances found", text, re.M):
        result["compute_instances"] = []
    if not result:
        _fail(text, "nvidia-smi mig -lgip/-lgi")
    return result


def _compute_instances(text):
    instances = []
    for line in text.splitlines():
        row = _LCI_RE.match(line.strip())
        if row:
            gpu, gid, name, pid, cid, start, size = row.groups()
            instances.append({"gpu": int(gpu), "gpu_instance_id": int(gid), "name": name, "profile_id": int(pid),
                              "instance_id": int(cid),
                              "placement_start": None if start is None else int(start),
                              "placement_size": None if size is None else int(size)})
    if not instances:
        _fail(text, "nvidia-smi mig -lci")
    return instances


# --- nvidia-smi --query-gpu=... --format=csv --------------------------------------------------------------------

def parse_csv(text, fields=None):
    """Parse ``--query-gpu=... --format=csv`` (with or without ``noheader``/``nounits``).

    Field names lose their unit (``memory.total [MiB]`` -> ``memory.total``); values of fields with a unit become
    numbers, ``[N/A]`` and similar become None, everything else stays the string nvidia-smi printed. Pass
    ``fields`` for ``noheader`` output.
    """
    rows = [row for row in csv.reader((text or "").splitlines(), skipinitialspace=True) if row]
    if fields is None:
        # Field names have no spaces except before a unit; an error message is never a valid header.
        if not rows or not all(re.match(r"^[A-Za-z0-9_.]+(?: \[[^\]]+\])?$", cell.strip()) for cell in rows[0]):
            _fail(text, "nvidia-smi --format=csv")
        fields, rows = rows[0], rows[1:]
    elif len(fields) == 1 and detect_error(text) is not None:
        raise detect_error(text)
    names, units = [], {}
    for field in fields:
        match = re.match(r"^(.*?)\s*\[([^\]]+)\]$", field.strip())
        name = match.group(1) if match else field.strip()
        names.append(name)
        if match:
            units[name] = match.group(2)
    parsed = []
    for row in rows:
        if len(row) != len(names):
            _fail(text, "nvidia-smi --format=csv with %d fields" % len(names))
        parsed.append(dict((name, _csv_value(value, units.get(name))) for name, value in zip(names, row)))
    return {"fields": names, "units": units, "rows": parsed}


def _csv_value(value, unit):
    value = _clean(value)
    if value is None or unit is None:
        return value
    number = value[:-len(unit)].strip() if value.endswith(unit) else value
    if re.match(r"^-?\d+$", number):
        return int(number)
    if re.match(r"^-?\d+\.\d+$", number):
        return float(number)
    return value
