# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the cuda_toolkit role does on a guest, decided once from one ``gpu_guest_info`` read: the first rule the
inputs or the guest break (in the order the role checks them), the driver check, the steps that differ, and the
role's result as read."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import re

from ansible_collections.gpuops.vgpu.plugins.plugin_utils._file_state import file_as
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _compatibility
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._nvidia_driver_plan import owned_gpu_driver_packages

_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")
_UNREAD = ("packages", "cuda", "files")


def cuda_toolkit_plan(guest, params, check_mode=False, hostname="", version_json=None, vgpu_guest=True):
    """The plan for ``guest`` (``gpu_guest_info``'s ``gpu_guest``) and the role's ``params`` (its inputs and the
    values its vars derive: ``sources``, ``version``, ``series``, ``file``, ``prefix``, ``home``, ``bin``,
    ``env_path``, the managed files' paths and contents). ``version_json`` is the base64 content of the toolkit's
    version.json where the install root is not /usr/local (read by the role), else None. ``vgpu_guest`` false says
    the machine owns its GPUs, so the data center driver's packages there are its driver, not a conflict.

    Returns ``error`` (empty, or the first broken rule), ``installed_version``, ``warnings``, ``changes`` (of
    install, link, profile, environment, loader), ``run_nvcc`` and ``result`` (the role's result as read).
    """
    facts = _facts(guest, params, check_mode, version_json)
    error = _first_error(guest, params, facts, check_mode, hostname, vgpu_guest)
    steps = [] if error else _steps(guest, params, facts)
    verdict = facts["verdict"]
    warnings = [verdict["message"]] if verdict.get("status") == "minor-compat-only" else []
    return {
        "error": error,
        "installed_version": facts["found_version"],
        "warnings": warnings,
        "changes": steps,
        "run_nvcc": bool(facts["nvcc_to_run"] and not error),
        "result": {
            "version": params["version"],
            "path": params["prefix"],
            "home": params["home"],
            "previous_version": facts["found_version"] or None,
            "installed": False,
            "nvcc_version": (None if check_mode or facts["nvcc_to_run"]
                             else facts["found"].get("nvcc_version")),
            "driver_version": facts["driver_version"],
            "driver_check": verdict,
            "warnings": warnings,
            "changed": bool(steps),
        },
    }


def _facts(guest, params, check_mode, version_json):
    smi = guest.get("nvidia_smi") or {}
    driver_version = params.get("driver_version") or smi.get("driver_version") or ""
    unread = [name for name in (guest.get("errors") or {}) if name in _UNREAD]
    version_ok = bool(_VERSION.match(params["version"]))
    inputs_ok = (len(params["sources"]) == 1 and version_ok and not _driver_options(params) and not unread)
    verdict = (_compatibility.cuda_driver_ok(params["version"], driver_version)
               if inputs_ok and driver_version else {})
    toolkits = (guest.get("cuda") or {}).get("toolkits") or []
    found = next((toolkit for toolkit in toolkits if toolkit.get("path") == params["prefix"]), {})
    if params["install_root"] == "/usr/local":
        found_version = found.get("version") or ""
    else:
        found_version = _version_from_json(version_json)
    install = not re.match("^" + re.escape(params["version"]) + r"(\.|$)", found_version)
    return {
        "smi": smi, "driver_version": driver_version, "unread": unread, "version_ok": version_ok,
        "verdict": verdict, "found": found, "found_version": found_version, "install": install,
        "nvcc_to_run": not check_mode and (install or not found.get("nvcc_version")),
        "nvcc_release": ".".join((found.get("nvcc_version") or "").split(".")[:2]),
    }


def _version_from_json(content):
    if content is None:
        return ""
    try:
        return ((json.loads(base64.b64decode(content)).get("cuda") or {}).get("version")) or ""
    except (ValueError, TypeError, AttributeError):
        return ""


def _driver_options(params):
    return [option for option in params["installer_options"] if re.match("^--driver", option)]


def _conflicts(names, params):
    pattern = re.compile("^(%s)$" % "|".join(params["conflicting_packages"]))
    return [name for name in names if pattern.match(name)]


def _first_error(guest, params, facts, check_mode, hostname, vgpu_guest):
    sources = params["sources"]
    version = params["version"]
    if len(sources) != 1:
        return ("Set exactly one of cuda_toolkit_src (runfile on the controller), cuda_toolkit_url or "
                "cuda_toolkit_remote_src (runfile on the guest); %s."
                % ("none is set" if not sources else " and ".join(sources) + " are set"))
    if not facts["version_ok"]:
        return ("No CUDA version in the runfile name %s (expected cuda_<version>_<driver>_linux.run): set "
                "cuda_toolkit_version." % params["file"])
    if _driver_options(params):
        return ("cuda_toolkit_installer_options contains --driver: the runfile's driver would replace the GRID "
                "driver of this vGPU guest. Remove it.")
    if facts["unread"]:
        errors = guest["errors"]
        return ("Could not read %s on %s: %s. Nothing was changed."
                % (" and ".join(facts["unread"]), hostname,
                   "; ".join(str(errors[name].get("msg")) for name in facts["unread"])))
    owned = owned_gpu_driver_packages(guest, vgpu_guest)
    installed = sorted(name for name in _conflicts(guest.get("packages") or {}, params) if name not in owned)
    if installed:
        return ("%s installed on %s: distribution CUDA packages pull a non-GRID NVIDIA driver and remove the GRID "
                "driver of this vGPU guest. Remove %s, reinstall the GRID driver if it is gone "
                "(gpuops.vgpu.grid_driver), then rerun; this role installs the toolkit from the runfile without its "
                "driver. Nothing was changed." % (", ".join(installed), hostname, " ".join(installed)))
    requested = _conflicts(params["prerequisites"], params)
    if requested:
        return ("cuda_toolkit_prerequisites asks for %s: distribution CUDA packages pull a non-GRID NVIDIA driver "
                "and remove the GRID driver of this vGPU guest. Take %s out of cuda_toolkit_prerequisites; this "
                "role installs the toolkit from the runfile without its driver. Nothing was changed."
                % (", ".join(requested), ", ".join(requested)))
    smi = facts["smi"]
    if not params.get("driver_version") and not smi.get("present"):
        return ("No working NVIDIA driver on %s to check CUDA %s against (nvidia-smi: %s: %s). Install the GRID "
                "driver first (gpuops.vgpu.grid_driver), or set cuda_toolkit_driver_version when a reboot is "
                "pending. Nothing was installed." % (hostname, version, _text(smi, "kind"), _text(smi, "msg")))
    status = facts["verdict"].get("status") or ""
    if status == "unsupported" or (status == "minor-compat-only" and not params["allow_minor_compat"]):
        return "%s Nothing was installed." % facts["verdict"]["message"]
    if not check_mode and not facts["nvcc_to_run"]:
        nvcc = "%s/bin/nvcc" % params["prefix"]
        if not facts["found"].get("nvcc"):
            return "%s is missing or not executable" % nvcc
        if facts["nvcc_release"] != params["series"]:
            return "%s reports release '%s', not %s" % (nvcc, facts["nvcc_release"], params["series"])
    return ""


def _text(values, key):
    """A value as a Jinja template writes it: missing is empty, None is ``None``."""
    return "" if key not in values else str(values[key])


def _steps(guest, params, facts):
    files = guest.get("files") or {}
    steps = ["install"] if facts["install"] else []
    if params["symlink"] and not file_as(files.get(params["link_path"]) or {}, {"target": params["prefix"]}):
        steps.append("link")
    if params["profile_d"] and not file_as(files.get(params["profile_path"]) or {},
                                           {"content": params["profile_script"], "mode": "0644"}):
        steps.append("profile")
    if params["etc_environment"] and params["bin"] not in params["env_path"]:
        steps.append("environment")
    if params["ldconfig"] and not file_as(files.get(params["loader_path"]) or {},
                                          {"content": params["loader_conf"], "mode": "0644"}):
        steps.append("loader")
    return steps
