# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL's own collective test (``all_reduce_perf`` from nccl-tests): its output, and what the topology promises.

Both layouts of the output are read (tests/fixtures/nccl-tests): the older one with an ``error`` column and the
current one with ``root`` and ``#wrong`` columns. Bus bandwidth (``busbw``) is what nccl-tests reports as
comparable with the hardware's link speed whatever the number of GPUs (nccl-tests doc/PERFORMANCE.md).

A multi-node run started with Open MPI's ``mpirun --tag-output`` (as the Kubeflow MPI Operator's examples do)
prefixes every line with ``[jobid,rank]<stdout>:`` (or ``<stderr>:``; orterun(1), ``--tag-output``); the prefix is
read off before the line is parsed, and NCCL's own log lines between the table's rows are skipped.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

# Open MPI's --tag-output prefix: [jobid,MCW_rank]<stdout|stderr|stddiag>:
_MPI_TAG = re.compile(r"^\[\d+,\d+\]<std(?:out|err|diag)>:")
# Nominal one-direction PCIe x1 lane rates in GB/s after encoding (PCI-SIG: 8b/10b for gen 1-2, 128b/130b after).
PCIE_LANE_GBPS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}


def parse_all_reduce(text):
    """``all_reduce_perf`` output: devices, one row per message size (out-of-place and in-place time, algbw,
    busbw, errors) and the average bus bandwidth. Raises InputError when no result row is found."""
    devices, rows, average, wrong = [], [], None, None
    columns = None
    for line in (text or "").splitlines():
        line = _MPI_TAG.sub("", line)
        stripped = line.strip()
        device = re.match(r"^#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+"
                          r"\[([^\]]+)\]\s+(.+?)\s*$", stripped)
        if device:
            devices.append({"rank": int(device.group(1)), "host": device.group(2), "device": int(device.group(3)),
                            "bus_id": device.group(4), "name": device.group(5)})
            continue
        if stripped.startswith("#") and "size" in stripped and "busbw" in stripped:
            columns = stripped.lstrip("#").split()
            continue
        match = re.match(r"^# Avg bus bandwidth\s*:\s*([\d.]+)", stripped)
        if match:
            average = float(match.group(1))
            continue
        match = re.match(r"^# Out of bounds values\s*:\s*(\d+)", stripped)
        if match:
            wrong = int(match.group(1))
            continue
        if columns and stripped and stripped[0].isdigit():
            rows.append(_row(columns, stripped.split(), line))
    if not rows:
        raise InputError("all_reduce_perf printed no result rows: %s" % _tail(text),
                         hint="Run it by hand on the guest (all_reduce_perf -b 8M -e 128M -f 2 -g <GPUs>) to see why.")
    return {"devices": devices, "rows": rows, "avg_busbw_gbps": average, "out_of_bounds": wrong,
            "peak_busbw_gbps": max(max(r["out_of_place"]["busbw"], r["in_place"]["busbw"]) for r in rows),
            "errors": sum(r["out_of_place"]["wrong"] + r["in_place"]["wrong"] for r in rows)}


def _row(columns, cells, line):
    # size count type redop [root] | time algbw busbw error|#wrong | time algbw busbw error|#wrong
    fixed = 5 if "root" in columns else 4
    if len(cells) != fixed + 8:
        raise InputError("all_reduce_perf result row has %d values, %d expected: %s"
                         % (len(cells), fixed + 8, line.strip()))
    halves = []
    for start in (fixed, fixed + 4):
        time, algbw, busbw, check = cells[start:start + 4]
        # The older layout prints the numerical error (1e-07), the current one the number of wrong elements.
        wrong = int(check) if re.match(r"^\d+$", check) else 0
        halves.append({"time_us": float(time), "algbw": float(algbw), "busbw": float(busbw), "wrong": wrong})
    return {"size": int(cells[0]), "count": int(cells[1]), "type": cells[2], "redop": cells[3],
            "out_of_place": halves[0], "in_place": halves[1]}


def _tail(text):
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return " / ".join(lines[-3:]) or "(nothing)"


def expected_busbw(topology, link_gbps, pcie_gen, pcie_width):
    """What the topology promises between the GPUs: the slowest pair's path.

    ``topology`` is ``nvidia_smi.parse_topology``'s result; a pair joined by ``NV<n>`` gets n links of
    ``link_gbps`` (``nvidia-smi nvlink -s``), any other pair the PCIe link of gen ``pcie_gen`` x ``pcie_width``.
    Returns ``{"path": "NVLink"|"PCIe", "gbps": nominal GB/s one way, "pairs": {"0-1": "NV12", ...}}``."""
    gpus = [name for name in topology.get("devices") or [] if name.startswith("GPU")]
    matrix = topology.get("matrix") or {}
    pcie = PCIE_LANE_GBPS.get(int(pcie_gen or 0), 0) * int(pcie_width or 0)
    slowest, pairs = None, {}
    for index, gpu in enumerate(gpus):
        for other in gpus[index + 1:]:
            link = (matrix.get(gpu) or {}).get(other) or ""
            pairs["%s-%s" % (gpu[3:], other[3:])] = link
            nvlinks = re.match(r"^NV(\d+)$", link)
            on_nvlink = bool(nvlinks and link_gbps)
            speed = int(nvlinks.group(1)) * float(link_gbps) if on_nvlink else pcie
            if slowest is None or speed < slowest[1]:
                slowest = ("NVLink" if on_nvlink else "PCIe", speed)
    if slowest is None:
        raise InputError("nvidia-smi topo -m lists fewer than two GPUs, so there is nothing to test between them.",
                         hint="The NCCL check needs a guest with several GPUs.")
    return {"path": slowest[0], "gbps": round(slowest[1], 2), "pairs": pairs}


def check_all_reduce(output, topology, link_gbps=None, pcie_gen=None, pcie_width=None, min_share=0.5,
                     expect_nvlink=False):
    """The verdict on one ``all_reduce_perf`` run: ``ok`` when the peak bus bandwidth reaches ``min_share`` of
    what the slowest GPU pair's path promises and no element was wrong, ``failed`` otherwise, with the topology
    in the message to explain a miss. ``expect_nvlink`` fails a guest whose GPUs should be NVLink peers but are
    not joined by NVLink in ``nvidia-smi topo -m``."""
    result = parse_all_reduce(output)
    promise = expected_busbw(topology, link_gbps, pcie_gen, pcie_width)
    floor = round(promise["gbps"] * float(min_share), 2)
    pairs = ", ".join("GPU%s: %s" % (pair.replace("-", "-GPU"), link or "?")
                      for pair, link in sorted(promise["pairs"].items()))
    summary = {"peak_busbw_gbps": result["peak_busbw_gbps"], "avg_busbw_gbps": result["avg_busbw_gbps"],
               "path": promise["path"], "nominal_gbps": promise["gbps"], "floor_gbps": floor,
               "topology": promise["pairs"], "gpus": len(result["devices"])}
    problems = []
    if result["errors"] or result["out_of_bounds"]:
        problems.append("%d wrong results (nccl-tests' validation)" % (result["errors"] or result["out_of_bounds"]))
    if expect_nvlink and promise["path"] != "NVLink":
        problems.append("the GPUs should be NVLink peers but nvidia-smi topo -m shows %s: the NVLink bridge is "
                        "missing or its links are down (nvidia-smi nvlink -s)" % pairs)
    if promise["gbps"] and result["peak_busbw_gbps"] < floor:
        problems.append("peak bus bandwidth %.2f GB/s is below %d%% of the %.2f GB/s that %s promises (%s)" % (
            result["peak_busbw_gbps"], round(float(min_share) * 100), promise["gbps"], promise["path"], pairs))
    if problems:
        return dict(summary, status="failed", message="; ".join(problems))
    return dict(summary, status="ok", message="all_reduce across %d GPUs: peak bus bandwidth %.2f GB/s over %s "
                "(nominal %.2f GB/s; %s)" % (len(result["devices"]), result["peak_busbw_gbps"], promise["path"],
                                             promise["gbps"], pairs))


def check_from_outputs(output, topo_text, nvlink_text="", pcie_csv="", min_share=0.5, expect_nvlink=False):
    """``check_all_reduce`` from the raw outputs of ``all_reduce_perf``, ``nvidia-smi topo -m``, ``nvidia-smi
    nvlink -s`` (empty on GPUs without NVLink) and ``nvidia-smi --query-gpu=pcie.link.gen.current,
    pcie.link.width.current --format=csv,noheader,nounits``."""
    from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import parse_nvlink_status, parse_topology

    speeds = [link["speed_gbps"] for gpu in (parse_nvlink_status(nvlink_text)["gpus"] if (nvlink_text or "").strip()
                                             else []) for link in gpu["links"] if link["speed_gbps"]]
    lanes = [line.split(",") for line in (pcie_csv or "").splitlines() if line.strip()]
    gens = [int(cells[0]) for cells in lanes if len(cells) == 2 and cells[0].strip().isdigit()]
    widths = [int(cells[1]) for cells in lanes if len(cells) == 2 and cells[1].strip().isdigit()]
    return check_all_reduce(output, parse_topology(topo_text), min(speeds) if speeds else None,
                            min(gens) if gens else None, min(widths) if widths else None, min_share, expect_nvlink)
