# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the grid_license role does on a guest, decided once from one ``gpu_guest_info`` read: the first broken rule
(in the order the role checks them), the steps that differ, and the role's result (``license_report``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import re

from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._license import license_state
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._file_state import changed_since_start, file_as

GPU_KEYS = ("pci_bus_id", "name", "license_product", "license_status", "licensed", "license_expiry")
DEFAULT_SERVICE = "nvidia-gridd"
# The token's mode and owner NVIDIA's licensing guide asks for (root, 0744).
TOKEN_MODE = "0744"
_TOKEN_NAME = re.compile(r"^[^/]+\.tok$")


def _input_error(params):
    has_src, has_token = bool(params.get("grid_license_token_src")), bool(params.get("grid_license_token"))
    if has_src == has_token:
        return ("%s: set grid_license_token_src to the .tok file downloaded from the NVIDIA Licensing Portal or a DLS "
                "appliance, or grid_license_token to its content (from a vault), not both. Nothing was changed." % (
                    "No client configuration token given" if not has_src
                    else "Both grid_license_token_src and grid_license_token are set"))
    if not _TOKEN_NAME.match(params["token_name"]):
        return ("nvidia-gridd reads only *.tok files from %s; '%s' is not one: set grid_license_token_filename."
                % (params["grid_license_token_dir"], params["token_name"]))
    return ""


def _read_error(guest, hostname):
    errors = guest.get("errors") or {}
    if not [name for name in errors if name in ("license", "files")]:
        return ""
    return "Could not read the license state of %s: %s. Nothing was changed." % (
        hostname, "; ".join(error["msg"] for error in errors.values()))


def _settings_in_force(license_state, params):
    """The gridd.conf settings in force (same key, same value, not commented out), where gpu_guest_info read this
    gridd.conf; else none, so that every key is handed to lineinfile."""
    gridd_conf = license_state.get("gridd_conf") or {}
    return (gridd_conf.get("settings") or {}) if gridd_conf.get("path") == params["grid_license_gridd_conf"] else {}


def grid_license_plan(guest, params, check_mode=False, hostname="", now=None):
    """The plan: ``error``, the steps that differ (``create_conf``, ``settings``, ``token_dir``, ``token``,
    ``find_tokens``, ``old_tokens``, ``start``, ``unapplied``: the files changed since nvidia-gridd started),
    ``changes``, ``wait`` and ``result`` (the role's result when no step runs)."""
    plan = {"error": _input_error(params) or _read_error(guest, hostname)}
    if plan["error"]:
        return plan
    files = guest.get("files") or {}
    state = guest.get("license") or {}
    conf, template = files.get(params["grid_license_gridd_conf"]) or {}, files.get(params["grid_license_gridd_template"]) or {}
    if not conf.get("exists") and not template.get("exists"):
        plan["error"] = ("Neither %s nor %s exists on %s: install the GRID guest driver first (gpuops.vgpu.grid_driver)."
                         % (params["grid_license_gridd_conf"], params["grid_license_gridd_template"], hostname))
        return plan
    token_dir = params["token_dir"]
    token_name, token_file, placed = _token_in_place(files, state, params)
    settings = _settings_in_force(state, params)
    remove_old = bool(params.get("grid_license_remove_old_tokens"))
    find_tokens = remove_old and (state.get("token_dir") or {}).get("path") != token_dir
    service = (state.get("service") or {}) if params["grid_license_service"] == DEFAULT_SERVICE else {}
    plan.update(
        create_conf=not conf.get("exists"),
        feature_type=settings.get("FeatureType") != str(params["grid_license_feature_type"]),
        settings=dict((key, value) for key, value in _options(params, settings).items()
                      if settings.get(key) != str(value)),
        token_dir=not file_as(files.get(token_dir) or {}, {"type": "directory", "mode": "0755"}),
        token=not (placed.get("exists") and placed.get("checksum") == params["token_checksum"]),
        find_tokens=find_tokens,
        old_tokens=[token["path"] for token in state.get("tokens") or []
                    if token.get("name") != token_name] if remove_old and not find_tokens else [],
        start=not (service.get("active") and service.get("enabled")),
        # gridd.conf, the token or the token directory (a token added or removed) changed since nvidia-gridd started:
        # a run stopped before its restart. nvidia-gridd reads them only when it starts.
        unapplied=changed_since_start(service, [conf, placed, files.get(token_dir)]),
        token_name=token_name,
        token_file=token_file,
        licensed=state.get("licensed") is True,
    )
    # Only the mode or owner of a token whose content is right: set without a restart, nvidia-gridd reads it as it did.
    plan["token_mode"] = not plan["token"] and not file_as(placed, {"mode": TOKEN_MODE})
    touches_gridd = any(plan[step] for step in ("create_conf", "feature_type", "settings", "token_dir", "token",
                                                "find_tokens", "old_tokens", "start", "unapplied"))
    plan["changes"] = touches_gridd or plan["token_mode"]
    plan["wait"] = bool(params.get("grid_license_wait")) and not check_mode and not (
        plan["licensed"] and not touches_gridd)
    as_read = ((guest.get("nvidia_smi") or {}).get("gpus") or []) if plan["licensed"] and not plan["changes"] else []
    plan["result"] = license_report(as_read, state, dict(params, token_file=token_file), hostname, now=now)
    return plan


def _options(params, settings):
    """The gridd.conf keys to set besides FeatureType: those asked, and ClientConfigTokenPath wherever the gridd.conf in
    force names another token directory than the one the token goes to (else nvidia-gridd would not read it)."""
    named = settings.get("ClientConfigTokenPath")
    if named is not None and "ClientConfigTokenPath" not in params["options"] \
            and (named.rstrip("/") or "/") != params["token_dir"]:
        return dict(params["options"], ClientConfigTokenPath=params["token_dir"].rstrip("/") + "/")
    return params["options"]


def _token_in_place(files, state, params):
    """The token file to keep (name, path, its state as read): the one asked for, or, where no file name was given
    (``grid_license_token_filename``), a token of the directory nvidia-gridd reads with the same content under
    another name, as a guest licensed by hand has it (the Licensing Portal names its downloads by date)."""
    asked = (params["token_name"], params["token_file"], files.get(params["token_file"]) or {})
    tokens = state.get("tokens") or []
    if (params.get("token_name_given") or (state.get("token_dir") or {}).get("path") != params["token_dir"]
            or any(token.get("name") == params["token_name"] for token in tokens)):
        return asked
    same = min((token for token in tokens if token.get("checksum") == params["token_checksum"]),
               key=lambda token: token["name"], default=None)
    return (same["name"], same["path"], dict(same, exists=True, type="file")) if same else asked


def days_left(expiry, now=None):
    """Days from now (UTC) to an nvidia-smi license expiry (``2026-01-31T12:00:00Z``), to one decimal."""
    now = now or datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    return round((datetime.datetime.strptime(expiry, "%Y-%m-%dT%H:%M:%SZ") - now).total_seconds() / 86400, 1)


def _warnings(state, params, hostname, days):
    warnings = []
    clock = state.get("clock_synchronized")
    if params.get("grid_license_check_clock") and clock is not True:
        warnings.append(
            "The clock of %s is not synchronised (timedatectl: %s): licenses are time-signed, so a drifting clock "
            "loses the license. Enable NTP (chrony or systemd-timesyncd)." % (
                hostname, "no answer" if clock is None else "NTPSynchronized=no"))
    if days is not None and days < float(params["grid_license_expiry_warning_days"]):
        warnings.append(
            "The license of %s expired %s days ago by the controller clock although the guest reports it Licensed: "
            "check the guest clock." % (hostname, abs(days)) if days < 0 else
            "The license of %s expires in %s days: check that the guest renews its lease from the license server."
            % (hostname, days))
    return warnings


def _unapplied_note(params, hostname, restarted):
    unapplied = params.get("unapplied") or []
    if not unapplied:
        return []
    return ["nvidia-gridd on %s had been running since before %s changed (a run stopped before restarting it): %s."
            % (hostname, ", ".join(unapplied), "restarted it" if restarted else "it is to be restarted")]


def license_report(gpus, state, params, hostname="", restarted=False, changed=False, now=None):
    """The role's ``grid_license_result`` from the GPUs nvidia-smi reported (empty when not read)."""
    summary = license_state({"present": True, "gpus": gpus})
    days = days_left(summary["expiry"], now) if summary["expiry"] else None
    return {
        "licensed": summary["licensed"],
        "gpus": [dict((key, value) for key, value in gpu.items() if key in GPU_KEYS) for gpu in gpus],
        "product": summary["product"],
        "expiry": summary["expiry"],
        "days_left": days,
        "feature_type": params["grid_license_feature_type"],
        "token_file": params["token_file"],
        "restarted": restarted,
        "unapplied": list(params.get("unapplied") or []),
        "clock_synchronized": state.get("clock_synchronized") if params.get("grid_license_check_clock") else None,
        "warnings": _warnings(state, params, hostname, days) + _unapplied_note(params, hostname, restarted),
        "changed": changed,
    }
