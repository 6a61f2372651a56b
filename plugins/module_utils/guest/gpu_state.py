# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One read of everything the guest roles decide on, behind ``gpu_guest_info``.

Public API (see docs/gpu_guest_info.md): ``read_gpu_state(guest, probes)``, ``PROBES``, ``Guest`` and
``GuestFiles``. A probe that fails leaves its key None and its error under ``errors``; the others still answer.
Standard library only and Python 3.8 syntax: it runs on the guest.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import os

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._access import CommandFailed, Guest, GuestFiles
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._cuda import (
    read_container_toolkit,
    read_cuda,
    read_cudnn,
)
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._driver import read_driver
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._license import GRIDD_SERVICE, read_license
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._probe_names import ALL_PROBES, PROBES
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._system import (
    read_clock_synchronized,
    read_os,
    read_packages,
    read_pci,
    read_service,
)
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia._catalog import parse_profile
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import (
    GATHER_COMMANDS,
    MISSING_KINDS,
    SEARCH_DIRS,
    NvidiaSmiError,
    collect,
    run_parsed,
)

__all__ = ["ALL_PROBES", "CommandFailed", "Guest", "GuestFiles", "PROBES", "gpu_guest_info", "read_gpu_state",
           "read_nvidia_smi", "read_topology"]

# The guest's root; tests point it at a fake tree.
ROOT = "/"

# collect()'s keys for commands this read never runs.
_UNUSED_SMI_KEYS = ("topology", "nvlink", "list", "vgpu", "mig", "gathered", "errors")


def gpu_guest_info(client, params, check_mode):
    """The ``gpu_guest_info`` module: ``read_gpu_state`` of the machine it runs on, and the facts if asked."""
    def command(args):
        return client.run_command(args, environ_update={"LC_ALL": "C"})

    guest = Guest(GuestFiles(ROOT), command, path_dirs=os.environ.get("PATH", "").split(os.pathsep),
                  nvidia_smi_path=params["nvidia_smi_path"], query_format=params["query_format"])
    state = read_gpu_state(guest, params["gather"], params["files"], params["services"])
    result = {"gpu_guest": state}
    if params["set_facts"]:
        result["ansible_facts"] = {"gpu_guest": state}
    return result


def read_gpu_state(guest, probes=None, files=(), services=()):
    """``{probe: facts}`` for ``probes`` (None: all of ``PROBES``), plus ``gathered`` and ``errors``, under
    ``files`` the state of each path of ``files`` (``GuestFiles.state_of``), and under ``services`` the state of
    each systemd unit of ``services`` (``read_service``), for the tasks that manage them.

    Reads several probes share (installed packages, nvidia-smi) run once. ``errors`` maps a probe to what went
    wrong (``msg``; nvidia-smi's errors also ``kind``, ``rc`` and ``command``); a failed probe's key is None.
    nvidia-smi reporting a guest without a working driver is not an error: ``nvidia_smi.present`` is false.
    """
    wanted = PROBES if probes is None else probes
    state = {"gathered": [], "errors": guest.errors}
    for name in ALL_PROBES:
        if name not in wanted:
            continue
        state[name] = _part(guest, name, functools.partial(_READERS[name], guest))
        state["gathered"].append(name)
    if files:
        state["files"] = dict((path, _part(guest, "files", functools.partial(guest.files.state_of, path)))
                              for path in files)
    if services:
        state["services"] = dict((name, _part(guest, "services", functools.partial(read_service, guest, name)))
                                 for name in services)
    return state


def _part(guest, name, read):
    """``read()``, or None with its error recorded under ``errors[name]``, so that the rest of the read goes on."""
    try:
        return read()
    except Exception as err:  # pylint: disable=broad-except  # see read_gpu_state
        guest.errors[name] = {"msg": str(err) or type(err).__name__}
        return None


def _license(guest):
    service = _part(guest, "license.service", lambda: read_service(guest, GRIDD_SERVICE))
    clock = _part(guest, "license.clock", lambda: read_clock_synchronized(guest))
    return read_license(guest, _smi(guest), service, clock)


def _packages(guest):
    return guest.once("packages", lambda: read_packages(guest))


def _smi(guest):
    return guest.once("nvidia_smi", lambda: read_nvidia_smi(guest))


def read_nvidia_smi(guest):
    """``nvidia-smi -q -x`` (``-q`` where this nvidia-smi has no XML output) through the public parser.

    Returns ``parse_query``'s facts with ``present``, ``path`` and, per GPU, ``vgpu_profile`` (the vSphere name,
    ``grid_a100-4c``, of a vGPU); ``vgpu_profiles`` lists them. Without a working driver: ``present`` false with
    nvidia-smi's ``kind`` and ``msg``; kinds other than a missing driver are also recorded under ``guest.errors``.
    """
    path = guest.nvidia_smi_path or guest.which("nvidia-smi", SEARCH_DIRS)
    if path is None or not guest.files.is_executable(path):
        where = path or "PATH nor in %s" % ", ".join(SEARCH_DIRS)
        return _absent(NvidiaSmiError("not_installed", "No executable nvidia-smi in %s." % where), path)

    def nvidia_smi(args):
        return guest.run([path] + list(args))

    try:
        try:
            facts = collect(nvidia_smi, [], guest.query_format)
        except NvidiaSmiError as err:
            if guest.query_format == "text" or err.kind not in ("not_supported", "unparsable"):
                raise
            facts = collect(nvidia_smi, [], "text")
    except NvidiaSmiError as err:
        if err.kind not in MISSING_KINDS:
            guest.errors["nvidia_smi"] = err.as_dict()
        return _absent(err, path)
    for key in _UNUSED_SMI_KEYS:
        facts.pop(key, None)
    for gpu in facts["gpus"]:
        gpu["vgpu_profile"] = _vgpu_profile(gpu)
    facts.update(present=True, path=path, kind=None, msg=None,
                 vgpu_profiles=[gpu["vgpu_profile"] for gpu in facts["gpus"] if gpu["vgpu_profile"]])
    return facts


def _absent(err, path):
    return {"present": False, "path": path, "kind": err.kind, "msg": err.message, "gpus": [], "vgpu_profiles": []}


def _vgpu_profile(gpu):
    if gpu.get("virtualization_mode") != "VGPU" or not gpu.get("name"):
        return None
    try:
        return parse_profile(gpu["name"])["name"]
    except InputError:
        return None


def read_topology(guest):
    """``nvidia-smi topo -m``, ``nvlink -s`` and ``topo -p2p rw`` through the public parsers, as ``nvidia_smi_info``
    gives them: ``{"topology", "nvlink", "p2p"}``, each None where its command failed (its error under ``errors``,
    as ``topology.topology``, ``topology.nvlink`` or ``topology.p2p``). None without a working nvidia-smi."""
    smi = _smi(guest)
    if not smi.get("present"):
        return None
    found = {}
    for name in ("topology", "nvlink", "p2p"):
        try:
            found[name] = {}
            for args, parser in GATHER_COMMANDS[name]:
                found[name].update(run_parsed(lambda argv: guest.run([smi["path"]] + list(argv)), args, parser))
        except NvidiaSmiError as err:
            guest.errors["topology." + name] = err.as_dict()
            found[name] = None
    return found


_READERS = {
    "os": lambda guest: guest.once("os", lambda: read_os(guest)),
    "pci": read_pci,
    "packages": _packages,
    "driver": lambda guest: read_driver(guest, _packages(guest)),
    "license": _license,
    "nvidia_smi": _smi,
    "cuda": read_cuda,
    "cudnn": lambda guest: read_cudnn(guest, _packages(guest)),
    "container_toolkit": lambda guest: read_container_toolkit(guest, _packages(guest)),
    "topology": read_topology,
}
