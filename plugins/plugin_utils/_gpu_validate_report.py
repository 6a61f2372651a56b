# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_validate role's verdicts, worked out once from what the guest answered: the ``gpu_guest_info`` read
(nvidia-smi) and the outcomes of the checks' commands (``command_batch``: nvcc, the test program, the NVENC encode,
PyTorch). The passthrough, NCCL and DCGM checks come in already judged (their own filters)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _catalog
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _compatibility

LICENSE_KEYS = ("name", "license_product", "license_status", "licensed", "license_expiry")
_RELEASE = re.compile(r"release ([0-9.]+),")
_VERSION = re.compile(r"release [0-9.]+, V([0-9.]+)")
_SKIPPED = {"skipped": True}

# What ffmpeg prints when an NVENC encode fails, by cause, in the order they are tried.
NVENC_PATTERNS = (
    # ffmpeg built without NVENC.
    ("no_encoder", re.compile(r"Unknown encoder|Encoder \S+ not found")),
    # The driver works but refuses an encode session: no NVENC on this vGPU type or GPU (A100, A30, H100), or an
    # A16 type without it.
    ("not_available", re.compile(r"No (NVENC )?capable devices found|unsupported device|NV_ENC_ERR_UNSUPPORTED_DEVICE"
                                 r"|NV_ENC_ERR_NO_ENCODE_DEVICE|CUDA_ERROR_NOT_SUPPORTED")),
    # The driver is missing, broken or too old.
    ("driver", re.compile(r"Cannot load lib(nvidia-encode|cuda)|minimum required Nvidia driver"
                          r"|does not support the required nvenc API"
                          r"|CUDA_ERROR_(NO_DEVICE|NOT_INITIALIZED|INVALID_DEVICE|UNKNOWN)|cuInit")),
)
_NVENC_ERROR_LINE = re.compile(r"nvenc|Error|error|Unknown encoder|Cannot load")


# The roles of the guest layers whose changes each check's outcome rests on.
_DRIVER_ROLES = ("grid_driver", "nvidia_driver")
CHECKED_AFTER = {
    "driver": _DRIVER_ROLES,
    "license": _DRIVER_ROLES + ("grid_license",),
    "profile": _DRIVER_ROLES,
    "nvcc": _DRIVER_ROLES + ("cuda_toolkit",),
    "cuda_program": _DRIVER_ROLES + ("cuda_toolkit",),
    "nvenc": _DRIVER_ROLES,
    "pytorch": _DRIVER_ROLES + ("cuda_toolkit", "cudnn"),
}


def smi_facts(guest):
    """What nvidia-smi said in the read: the read itself where the driver works, else ``present`` false, no GPUs and
    why (``kind``, ``msg``)."""
    smi = guest.get("nvidia_smi") or {}
    if smi.get("present"):
        return smi
    error = (guest.get("errors") or {}).get("nvidia_smi") or {}
    return {"present": False, "gpus": [], "kind": error.get("kind", smi.get("kind", "error")),
            "msg": error.get("msg", smi.get("msg", ""))}


def gpu_validate_report(guest, outcomes, params, check_mode=False, passthrough=None, nccl=None, dcgm=None):
    """The role's result from ``guest`` (``gpu_guest_info``'s ``gpu_guest``), ``outcomes`` (``command_batch``'s, by
    command name) and ``params`` (the role's inputs: ``license``, ``vgpu_profile``, ``nvcc``, ``cuda_home``,
    ``cuda_version``, ``cuda_program``, ``marker``, ``nvenc``, ``nvenc_required``, ``ffmpeg``, ``nvenc_encoder``,
    ``pytorch_python``, and in check mode ``pending``: the roles earlier in the run that would change the guest).
    ``passthrough``, ``nccl`` and ``dcgm`` are those checks as judged elsewhere.

    Returns ``passed``, ``failed`` and ``warnings`` (check names) and ``checks`` (name to ``status`` and ``message``
    and the check's details), in the order the role reports them.
    """
    smi = smi_facts(guest)
    checks = {"driver": _driver(smi)}
    checks.update(passthrough or {})
    checks["license"] = _license(smi, params)
    checks["profile"] = _profile(smi, params)
    checks["nvcc"] = _nvcc(smi, outcomes.get("nvcc", _SKIPPED), params)
    checks["cuda_program"] = _cuda_program(smi, outcomes.get("cuda_program", _SKIPPED), params, checks["nvcc"],
                                           check_mode)
    checks["nvenc"] = _nvenc(outcomes.get("nvenc", _SKIPPED), params)
    checks["pytorch"] = _pytorch(outcomes.get("pytorch", _SKIPPED), params)
    checks["nccl"] = nccl or {"status": "skipped", "message": "not checked"}
    checks["dcgm"] = dcgm or {"status": "skipped", "message": "not checked"}
    if check_mode:
        _after_pending_changes(checks, params.get("pending") or [])
    failed = [name for name, check in checks.items() if check["status"] == "failed"]
    return {"passed": not failed, "failed": failed,
            "warnings": [name for name, check in checks.items() if check["status"] == "warning"], "checks": checks}


def _after_pending_changes(checks, pending):
    """In check mode, a check that fails on what a role earlier in the run would change first (``pending``: the roles
    whose result says they would change the guest) is not a verdict: it is skipped, saying which roles and what it
    found."""
    for name, check in checks.items():
        roles = [role for role in CHECKED_AFTER.get(name, ()) if role in pending]
        if check["status"] == "failed" and roles:
            check.update(status="skipped", message="not judged in check mode: %s would change the guest first (%s)"
                         % (" and ".join(roles), check["message"]))


def _names(gpus):
    return [str(gpu.get("name")) for gpu in gpus]


def _driver(smi):
    if smi["present"]:
        names = ", ".join(_names(smi.get("gpus") or []))
        message = "driver %s (CUDA %s), %s" % (smi.get("driver_version"), smi.get("cuda_version"), names)
    else:
        message = "nvidia-smi fails (%s): %s" % (smi["kind"], smi["msg"])
    return {"status": "ok" if smi["present"] else "failed", "message": message,
            "driver_version": smi.get("driver_version"), "cuda_version": smi.get("cuda_version"),
            "gpus": _names(smi.get("gpus") or [])}


def _license(smi, params):
    gpus = smi.get("gpus") or []
    details = [dict((key, value) for key, value in gpu.items() if key in LICENSE_KEYS) for gpu in gpus]
    if not params["license"] or not smi["present"]:
        return {"status": "skipped", "message": "not checked" if not params["license"] else "no working driver",
                "gpus": details}
    licensed = [gpu for gpu in gpus if gpu.get("licensed") is True]
    unlicensed = [gpu for gpu in gpus if gpu.get("licensed") is not True]
    if unlicensed:
        return {"status": "failed", "gpus": details, "message": "not licensed: " + ", ".join(
            "%s %s" % (gpu.get("name"), gpu.get("license_status") or "no license information") for gpu in unlicensed)}
    products = []
    for gpu in licensed:
        if gpu.get("license_product") not in products:
            products.append(gpu.get("license_product"))
    expiries = sorted(str(gpu["license_expiry"]) for gpu in licensed if gpu.get("license_expiry"))
    return {"status": "ok", "gpus": details, "message": "%s, expires %s" % (
        ", ".join(str(product) for product in products), expiries[0] if expiries else "never")}


def _profile(smi, params):
    asked = params.get("vgpu_profile")
    gpus = smi.get("gpus") or []
    seen = [_catalog.parse_profile(gpu["name"])["name"] for gpu in gpus if gpu.get("virtualization_mode") == "VGPU"]
    if not asked or not smi["present"]:
        return {"status": "skipped", "message": "no vgpu_profile given" if not asked else "no working driver",
                "expected": _catalog.parse_profile(asked)["name"] if asked else None, "seen": seen}
    wanted = _catalog.parse_profile(asked)
    match = wanted["name"] in seen
    message = "the guest sees " + (", ".join(seen) or "no vGPU (%s)" % ", ".join(_names(gpus)))
    if not match:
        message += ", the inventory says " + wanted["name"]
    if not wanted["cuda"]:
        message += "; this vGPU type does not run CUDA"
    return {"status": "failed" if not match else "ok" if wanted["cuda"] else "warning", "message": message,
            "expected": wanted["name"], "seen": seen}


def _nvcc(smi, nvcc, params):
    if not params["nvcc"]:
        return {"status": "skipped", "message": "not checked", "release": None, "version": None, "driver_check": None}
    out = nvcc.get("stdout") or ""
    release = (_RELEASE.search(out) or [None, ""])[1]
    version = (_VERSION.search(out) or [None, ""])[1]
    compat = _compatibility.cuda_driver_ok(release, smi["driver_version"]) if release and smi["present"] else {}
    wanted = str(params.get("cuda_version") or "")
    if nvcc.get("rc", 1) != 0 or not release:
        status = "failed"
        why = nvcc.get("msg") or (nvcc.get("stderr") or "").strip()
        message = "%s/bin/nvcc does not run: %s" % (params["cuda_home"], why)
    elif wanted and release != wanted:
        status, message = "failed", "nvcc %s, expected CUDA %s" % (version, wanted)
    elif compat.get("status", "ok") != "ok":
        status = "failed" if compat["status"] == "unsupported" else "warning"
        message = compat["message"]
    else:
        status, message = "ok", "nvcc %s (CUDA %s)" % (version, release)
    return {"status": status, "message": message, "release": release or None, "version": version or None,
            "driver_check": compat or None}


def _cuda_program(smi, program, params, nvcc_check, check_mode):
    if (not params["cuda_program"] or nvcc_check["status"] not in ("ok", "warning") or not smi["present"]
            or check_mode):
        return {"status": "skipped", "output": [],
                "message": "not run" if not params["cuda_program"] else "no working driver and nvcc"}
    parts = (program.get("stdout") or "").split(params["marker"])
    output = [line for line in parts[-1].splitlines() if line] if len(parts) > 1 else []
    if len(parts) < 2:
        status, message = "failed", "nvcc failed: " + (program.get("stderr") or program.get("msg") or "").strip()
    elif program.get("rc", 1) != 0 or "PASS" not in output:
        status, message = "failed", "the program failed (rc %s): %s" % (program.get("rc"), " | ".join(output))
    else:
        status, message = "ok", ", ".join(output)
    return {"status": status, "message": message, "output": output}


def nvenc_category(ffmpeg, wanted=True):
    """Why an NVENC encode failed, from ffmpeg's outcome: ``skipped``, ``ok``, ``no_ffmpeg``, ``no_encoder``,
    ``not_available`` (no NVENC on this GPU or vGPU type), ``driver`` or ``unknown``."""
    if not wanted:
        return "skipped"
    if ffmpeg.get("rc", 1) == 0:
        return "ok"
    text = ffmpeg.get("stderr") or ""
    if not text and "No such file" in (ffmpeg.get("msg") or ""):
        return "no_ffmpeg"
    return next((category for category, pattern in NVENC_PATTERNS if pattern.search(text)), "unknown")


def _nvenc(ffmpeg, params):
    category = nvenc_category(ffmpeg, params["nvenc"])
    errors = [line.strip() for line in (ffmpeg.get("stderr") or "").splitlines()
              if _NVENC_ERROR_LINE.search(line)][-3:]
    if category == "skipped":
        status = "skipped"
    elif category == "ok":
        status = "ok"
    elif category in ("not_available", "no_ffmpeg") and not params["nvenc_required"]:
        status = "warning"
    else:
        status = "failed"
    message = {
        "skipped": "not tried",
        "ok": "%s encodes" % params["nvenc_encoder"],
        "no_ffmpeg": "%s is not installed" % params["ffmpeg"],
        "no_encoder": "%s has no %s encoder: install an ffmpeg built with NVENC support" % (
            params["ffmpeg"], params["nvenc_encoder"]),
        "not_available": "NVENC is not available on this vGPU type or GPU (the driver refuses an encode session)",
        "driver": "the NVIDIA driver does not work for NVENC (a broken or missing driver)",
        "unknown": "the encode failed",
    }[category]
    if category not in ("skipped", "ok", "no_ffmpeg"):
        message += ": " + " | ".join(errors)
    return {"status": status, "category": category, "message": message, "errors": errors}


def _pytorch(torch, params):
    python = params.get("pytorch_python")
    if not python:
        return {"status": "skipped", "message": "no Python given", "details": {}}
    answer, message = {}, None
    if torch.get("rc", 1) == 0:
        try:
            answer = json.loads(torch.get("stdout") or "")
        except ValueError:
            message = "%s answered what is not JSON: %s" % (python, (torch.get("stdout") or "").strip()[-200:])
    if answer.get("available"):
        return {"status": "ok", "details": answer, "message": "torch %s (CUDA %s) sees %s" % (
            answer.get("torch"), answer.get("cuda"), ", ".join(str(name) for name in answer.get("devices") or []))}
    if "torch" in answer:
        message = "torch %s (CUDA %s): torch.cuda.is_available() is False" % (answer["torch"],
                                                                              answer.get("cuda") or "none")
    elif message is None:
        why = ((torch.get("stderr") or "") or (torch.get("msg") or "")).strip().splitlines()[-1:]
        message = "%s cannot import torch: %s" % (python, "".join(why))
    return {"status": "failed", "message": message, "details": answer}
