# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for every output of ``nvidia-smi`` the collection reads, and the collector behind ``nvidia_smi_info``.

Public API (see docs/nvidia-smi.md): ``parse_query``, ``parse_vgpu_query``, ``parse_topology``, ``parse_p2p``,
``parse_nvlink_status``, ``parse_nvlink_remote``, ``parse_mig``, ``parse_list``, ``parse_csv``, ``detect_error``,
``collect`` and ``NvidiaSmiError``. The parsers live in ``nvidia/_smi_query.py`` (``-q``, ``vgpu -q``) and
``nvidia/_smi_tools.py`` (the other commands), the error kinds and value readers in ``nvidia/_smi_values.py``; this
file runs the commands. Standard library only and Python 3.8 syntax: it also runs on ESXi's Python and on minimal
guests.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia._smi_values import (
    ERROR_KINDS,
    HINTS,
    MISSING_KINDS,
    NvidiaSmiError,
    detect_error,
)
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia._smi_query import (
    leading_lines,
    parse_query,
    parse_vgpu_query,
)
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia._smi_tools import (
    parse_csv,
    parse_list,
    parse_mig,
    parse_nvlink_remote,
    parse_nvlink_status,
    parse_p2p,
    parse_topology,
)

__all__ = ["ERROR_KINDS", "HINTS", "MISSING_KINDS", "NvidiaSmiError", "SEARCH_DIRS", "collect", "default_gather",
           "detect_error",
           "parse_csv", "parse_list", "parse_mig", "parse_nvlink_remote", "parse_nvlink_status", "parse_p2p",
           "parse_query", "parse_topology", "parse_vgpu_query", "run_parsed"]

# Where NVIDIA's installers put nvidia-smi on ESXi, guests and bare metal, looked at besides PATH.
SEARCH_DIRS = ["/usr/bin", "/opt/nvidia/bin", "/usr/local/bin", "/usr/local/nvidia/bin"]

# --- running nvidia-smi -----------------------------------------------------------------------------------------

# In the order they run.
GATHER_COMMANDS = {
    "topology": ((("topo", "-m"), parse_topology),),
    "nvlink": ((("nvlink", "-s"), parse_nvlink_status),),
    "list": ((("-L",), parse_list),),
    "vgpu": ((("vgpu", "-q"), parse_vgpu_query),),
    "mig": ((("mig", "-lgip"), parse_mig), (("mig", "-lgi"), parse_mig)),
    # Peer-to-peer read and write between the GPUs; asked for (passthrough guests), never gathered by default.
    "p2p": ((("topo", "-p2p", "rw"), parse_p2p),),
}


def default_gather(query):
    """What applies to a machine: topology, NVLink and the GPU list always; vGPUs on a vGPU host; MIG when on."""
    gather = ["topology", "nvlink", "list"]
    if any(gpu["virtualization_mode"] == "Host VGPU" for gpu in query["gpus"]):
        gather.append("vgpu")
    if any(gpu["mig_mode_current"] for gpu in query["gpus"]):
        gather.append("mig")
    return gather


def run_parsed(run, args, parser):
    """``run(args) -> (rc, stdout, stderr)``; returns ``parser``'s result or raises ``NvidiaSmiError``.

    nvidia-smi prints most errors on stdout: the text parsed is stdout, or stderr when stdout is empty. Lines on
    stderr next to output that parsed are added to the result's ``warnings`` where it has them.
    """
    rc, out, err = run(list(args))
    command = " ".join(("nvidia-smi",) + tuple(args))
    out, err = out or "", err or ""
    text = out if out.strip() else err
    try:
        if rc and not text.strip():
            raise detect_error(text, rc)
        result = parser(text)
    except NvidiaSmiError as error:
        if error.kind == "unparsable" and rc:
            error = detect_error(text, rc) or error
        error.rc, error.command = rc, command
        raise error
    if out.strip() and err.strip() and isinstance(result.get("warnings"), list):
        result["warnings"].extend(leading_lines(err))
    return result


def collect(run, gather=None, query_format="xml"):
    """Everything ``nvidia_smi_info`` returns: ``-q -x`` (or ``-q`` when ``query_format`` is ``text``) plus the
    ``gather`` commands (None: what applies).

    A failing ``-q -x`` raises ``NvidiaSmiError``; a failing gather command is recorded under ``errors`` with
    its key (``topology``, ``vgpu``...), and its result is None.
    """
    facts = run_parsed(run, ("-q", "-x") if query_format == "xml" else ("-q",), parse_query)
    wanted = default_gather(facts) if gather is None else gather
    facts["gathered"] = [name for name in GATHER_COMMANDS if name in wanted]
    facts["errors"] = {}
    for name in GATHER_COMMANDS:
        facts[name] = None
        if name not in wanted:
            continue
        merged = {}
        try:
            for args, parser in GATHER_COMMANDS[name]:
                merged.update(run_parsed(run, args, parser))
        except NvidiaSmiError as error:
            facts["errors"][name] = error.as_dict()
            continue
        facts[name] = merged
    return facts
