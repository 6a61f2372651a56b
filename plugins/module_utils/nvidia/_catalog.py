# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vGPU catalog: GPU models and their vGPU types, driver branches, CUDA driver minimums and the rules between them.

Pure logic over the tables in ``_catalog_data``, stdlib only, so it also runs on ESXi and in minimal guests.
Every public function raises ``InputError`` for input it cannot read and returns fresh dicts and lists that the
caller may change freely.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

if __name__.startswith("ansible_collections."):
    from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
    from ansible_collections.gpuops.vgpu.plugins.module_utils._versions import compare_versions
    from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia._catalog_data import (
        CUDA_DRIVER_MINIMUMS,
        CUDA_MINOR_COMPAT_MINIMUMS,
        CUDA_ONLY_8Q_GPUS,
        DRIVER_BRANCHES,
        GPUS,
        OLDER_BRANCHES,
    )
else:
    # Loaded by file path from a checkout (the lab tools do this): read the sibling files, never an installed copy.
    import os
    from importlib.util import module_from_spec, spec_from_file_location

    def _load_sibling(*parts):
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), *parts) + ".py"
        spec = spec_from_file_location("gpuops_vgpu_catalog_" + parts[-1], path)
        module = module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    InputError = _load_sibling("..", "_errors").InputError
    compare_versions = _load_sibling("..", "_versions").compare_versions
    _data = _load_sibling("_catalog_data")
    CUDA_DRIVER_MINIMUMS = _data.CUDA_DRIVER_MINIMUMS
    CUDA_MINOR_COMPAT_MINIMUMS = _data.CUDA_MINOR_COMPAT_MINIMUMS
    CUDA_ONLY_8Q_GPUS = _data.CUDA_ONLY_8Q_GPUS
    DRIVER_BRANCHES = _data.DRIVER_BRANCHES
    GPUS = _data.GPUS
    OLDER_BRANCHES = _data.OLDER_BRANCHES

SERIES = ("Q", "B", "A", "C")

# vSphere "grid_p40-8q", guest nvidia-smi "GRID P40-8Q" / "NVIDIA A10-4Q", or bare "p40-8q"; MIG-backed types carry
# the GPU slices first ("a100-3-20c"), B types may name a display-head variant ("2b4"), "me" marks media extensions.
_PROFILE_RE = re.compile(
    r"^(?:grid[_ ]|nvidia[_ ])?"
    r"(?P<gpu>[a-z][a-z0-9]*(?:-ada)?)-"
    r"(?:(?P<slices>[1-7])-)?"
    r"(?P<fb>\d{1,3})(?P<series>[qabc])(?P<variant>\d|me)?$"
)
_DEVICE_NAME_NOISE = re.compile(r"\b(?:nvidia corporation|nvidia|tesla|grid)\b")
_VERSION_RE = re.compile(r"^\d+(?:\.\d+)*$")
_CUDA_RE = re.compile(
    r"^(?:cuda\s*)?v?(?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<third>\d+))?"
    r"(?:\s*(?:u|update\s*)(?P<update>\d+)|\s*ga)?$",
    re.IGNORECASE,
)
# A third CUDA version field this large is a build number (nvcc: "V12.1.105"), not an update.
_CUDA_MAX_UPDATE = 9


def _profile_parts(name):
    if not isinstance(name, str):
        raise InputError(
            "vGPU profile must be a string, got %s %r." % (type(name).__name__, name),
            hint="Write it as vSphere does, e.g. grid_p40-8q.",
        )
    text = " ".join(name.strip().lower().split())
    match = _PROFILE_RE.match(text)
    problem = None
    if not match:
        problem = "it is not of the form grid_<gpu>-<framebuffer GB><series>"
    else:
        slices, fb, series, variant = match.group("slices", "fb", "series", "variant")
        if variant == "me" and not slices:
            problem = "media extensions (me) exist only on MIG-backed C types such as a100-1-5cme"
        elif variant and variant != "me" and series != "b":
            problem = "a display-head variant (the digit after the series) exists only on B types such as 2b4"
        elif slices and series != "c":
            problem = "MIG-backed types (<slices>-<GB>) are C types only, such as a100-3-20c"
        elif int(fb) == 0 and (slices or series not in "qb"):
            problem = "only the 0.5 GB Q and B types of Maxwell GPUs have a framebuffer of 0"
    if problem:
        raise InputError(
            "%r is not a vGPU profile name: %s." % (name, problem),
            hint="Accepted spellings: grid_p40-8q (vSphere), GRID P40-8Q (guest nvidia-smi), p40-8q; "
            "MIG-backed: grid_a100-3-20c.",
            value=name,
        )
    return match.group("gpu"), slices, int(fb), series, variant


def _profile_record(name, model_id=None, max_per_gpu=None, confirmed=False):
    gpu, slices, fb, series, variant = _profile_parts(name)
    canonical = "grid_%s-%s%d%s%s" % (gpu, slices + "-" if slices else "", fb, series, variant or "")
    if gpu in CUDA_ONLY_8Q_GPUS:
        cuda = series == "q" and fb == 8
    else:
        cuda = series in "qc"
    return {
        "name": canonical,
        "gpu": gpu,
        "model": model_id,
        "series": series.upper(),
        "framebuffer_gb": fb if fb else 0.5,
        "framebuffer_mib": fb * 1024 if fb else 512,
        "mig": bool(slices),
        "mig_slices": int(slices) if slices else None,
        "sharing": "mig" if slices else "timeSliced",
        "profile_class": "compute" if series == "c" else "quadro",
        "cuda": cuda,
        "max_per_gpu": max_per_gpu,
        "known": model_id is not None and max_per_gpu is not None,
        "confirmed": confirmed,
    }


def _normalise_device_name(text):
    return " ".join(re.findall(r"[a-z0-9]+", _DEVICE_NAME_NOISE.sub(" ", text.lower())))


def _device_name_keys(text):
    """The full name and any bracketed part (lspci: "GP102GL [Tesla P40]"), normalised for matching."""
    keys = [_normalise_device_name(text)]
    keys.extend(_normalise_device_name(inner) for inner in re.findall(r"\[([^\]]*)\]", text))
    return [key for key in keys if key]


def _build_catalog():
    models, profiles, prefixes, names, pci_ids = {}, {}, {}, {}, {}
    for model_id, raw in GPUS.items():
        prefix = raw["profile_prefix"]
        prefixes[prefix] = model_id
        records = []
        for types, confirmed in ((raw["types"], True), (raw["types_unconfirmed"], False)):
            for suffix, max_per_gpu in types:
                record = _profile_record("grid_%s-%s" % (prefix, suffix), model_id, max_per_gpu, confirmed)
                records.append(record)
                profiles[record["name"]] = record
        records.sort(key=lambda r: (r["mig"], SERIES.index(r["series"]), -r["framebuffer_mib"], r["name"]))
        models[model_id] = {
            "model": model_id,
            "device_name": raw["device_name"],
            "aliases": list(raw["aliases"]),
            "pci_device_id": "0x%04x" % raw["pci_device_id"],
            "pci_device_id_shared": raw.get("pci_device_id_shared", False),
            "profile_prefix": prefix,
            "framebuffer_mib": raw["framebuffer_mib"],
            "gpus_per_board": raw["gpus_per_board"],
            "architecture": raw["architecture"],
            "mig_capable": raw["mig_capable"],
            "mixed_size_capable": raw["mixed_size_capable"],
            "mixed_size_confirmed": raw["mixed_size_confirmed"],
            "last_vgpu_release": raw["last_vgpu_release"],
            "profiles_confirmed": not raw["types_unconfirmed"],
            "profiles": records,
        }
        pci_ids[raw["pci_device_id"]] = model_id
        for device_name in (raw["device_name"],) + tuple(raw["aliases"]):
            for key in _device_name_keys(device_name):
                if names.setdefault(key, model_id) != model_id:
                    raise ValueError("device name %r matches both %s and %s" % (key, names[key], model_id))
    return models, profiles, prefixes, names, pci_ids


_MODELS, _PROFILES, _MODEL_BY_PREFIX, _MODEL_BY_NAME, _MODEL_BY_PCI_ID = _build_catalog()


def gpu_models():
    """Return every GPU model of the catalog: a dict of model id (``P40``, ``A100-40``...) to model dict.

    A model dict has ``model``, ``device_name`` (as nvidia-smi and vSphere show it), ``aliases``,
    ``pci_device_id`` (``0x1b38``), ``pci_device_id_shared``, ``profile_prefix`` (``p40``), ``framebuffer_mib`` per
    physical GPU, ``gpus_per_board``, ``architecture``, ``mig_capable``, ``mixed_size_capable`` (with
    ``mixed_size_confirmed``), ``last_vgpu_release`` (None while supported), ``profiles_confirmed`` and
    ``profiles`` (profile dicts as ``parse_profile`` returns them).
    """
    return copy.deepcopy(_MODELS)


def gpu_model(model_id):
    """Return the model dict of one model id (case-insensitive, e.g. ``P40`` or ``a100-40``)."""
    return copy.deepcopy(_MODELS[_model_id(model_id)])


def _model_id(model_id):
    if isinstance(model_id, str):
        wanted = model_id.strip().upper()
        if wanted in _MODELS:
            return wanted
    raise InputError(
        "Unknown GPU model %r." % (model_id,),
        hint="Known models: %s." % ", ".join(sorted(_MODELS)),
        value=model_id,
    )


def _pci_device_id(value):
    """Return the 16-bit device id, or None when the value names another vendor's device ("8086:1234")."""
    if isinstance(value, bool):
        raise InputError("PCI device id must be an integer or a hex string, got %r." % (value,))
    if isinstance(value, int):
        if -0x8000 <= value <= 0xFFFF:
            return value & 0xFFFF  # vSphere reports deviceId as a signed 16-bit short
    elif isinstance(value, str):
        text = value.strip().lower()
        vendor, sep, device = text.rpartition(":")
        if sep and vendor.replace("0x", "", 1) != "10de":
            return None
        device = device[2:] if device.startswith("0x") else device
        if re.match(r"^[0-9a-f]{1,4}$", device):
            return int(device, 16)
    raise InputError(
        "PCI device id %r cannot be read." % (value,),
        hint="Give the integer vSphere reports (signed 16-bit) or hex such as 0x1b38, 1b38 or 10de:1b38.",
        value=value,
    )


def model_for_device(device_name=None, pci_device_id=None):
    """Return the model id of a physical GPU, or None when the catalog does not know it.

    ``device_name`` is matched the way vSphere (``HostGraphicsInfo.deviceName``), nvidia-smi (``Tesla P40``) or
    lspci (``GP102GL [Tesla P40]``) spell it. ``pci_device_id`` is vSphere's ``deviceId`` (signed 16-bit int) or
    a hex string. With both, a name that names another model than the id yields None; an id that several boards
    share (A16 and A2) needs a matching name.
    """
    if device_name is None and pci_device_id is None:
        raise InputError("model_for_device needs a device_name or a pci_device_id.")
    by_name = None
    if device_name is not None:
        if not isinstance(device_name, str):
            raise InputError("device_name must be a string, got %r." % (device_name,))
        for key in _device_name_keys(device_name):
            by_name = _MODEL_BY_NAME.get(key)
            if by_name:
                break
    device_id = _pci_device_id(pci_device_id) if pci_device_id is not None else None
    if by_name:
        if device_id is not None and GPUS[by_name]["pci_device_id"] != device_id:
            return None
        if pci_device_id is not None and device_id is None:
            return None
        return by_name
    by_id = _MODEL_BY_PCI_ID.get(device_id)
    if by_id and GPUS[by_id].get("pci_device_id_shared"):
        return None
    return by_id


def parse_profile(name):
    """Read a vGPU profile name and return what it means.

    Accepts ``grid_p40-8q`` (vSphere), ``GRID P40-8Q`` or ``NVIDIA A10-4Q`` (guest nvidia-smi) and ``p40-8q``.
    Returns ``name`` (vSphere spelling), ``gpu`` (``p40``), ``model`` (model id or None), ``framebuffer_gb`` (int,
    0.5 for Maxwell's 0Q/0B), ``framebuffer_mib``, ``series`` (Q, B, A or C), ``mig``, ``mig_slices``, ``sharing``
    (``timeSliced`` or ``mig``), ``profile_class`` (``compute`` for C, else ``quadro``), ``cuda``, ``max_per_gpu``
    (None when unknown), ``known`` (the profile is in the catalog) and ``confirmed`` (its data has a source).
    Raises ``InputError`` for anything that is not a profile name.
    """
    record = _profile_record(name)
    known = _PROFILES.get(record["name"])
    if known:
        return copy.deepcopy(known)
    record["model"] = _MODEL_BY_PREFIX.get(record["gpu"])
    return record


def profiles_for_model(model_id):
    """Return the profile dicts of one GPU model: time-sliced types by series (Q, B, A, C) and size, then MIG."""
    return copy.deepcopy(_MODELS[_model_id(model_id)]["profiles"])


def _version_tuple(value, what):
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, float):
        raise InputError(
            "%s %r was read as a number, which loses digits (570.20 becomes 570.2)." % (what.capitalize(), value),
            hint="Quote it in YAML, e.g. '525.105.17'.",
            value=value,
        )
    if isinstance(value, str) and _VERSION_RE.match(value.strip()):
        return tuple(int(part) for part in value.strip().split("."))
    raise InputError(
        "%s %r cannot be read." % (what.capitalize(), value),
        hint="Give dotted numbers such as 525.105.17.",
        value=value,
    )


def _at_least(driver_parts, minimum):
    """Whether a driver (its version as numbers, from ``_driver``) is ``minimum`` or newer."""
    return compare_versions(".".join(str(part) for part in driver_parts), minimum) >= 0


def _driver(value):
    """Return (display text, version tuple) of an NVIDIA driver version; ``R535`` and ``535`` name a branch."""
    if isinstance(value, str) and value.strip()[:1] in ("R", "r"):
        value = value.strip()[1:]
    parts = _version_tuple(value, "driver version")
    if not 100 <= parts[0] <= 9999 or len(parts) > 3:
        raise InputError(
            "%r is not an NVIDIA driver version." % (value,),
            hint="Driver versions look like 525.105.17 (host 525.105.14); branches like R535.",
            value=value,
        )
    return (str(value).strip() if len(parts) > 1 else "R%d" % parts[0]), parts


_BRANCH_ROWS = dict((row["branch"], row) for row in DRIVER_BRANCHES)
_RELEASE_BRANCHES = sorted(
    [(int(row["vgpu_release"]), row["branch"], row["lts"]) for row in DRIVER_BRANCHES + OLDER_BRANCHES]
)
_BRANCH_RELEASE = dict((branch, (release, lts)) for release, branch, lts in _RELEASE_BRANCHES)


def driver_branch(version):
    """Return the driver branch of a host or guest driver version (``525.105.17``, ``R535`` or ``535``).

    Returns ``branch`` (``R525``), ``vgpu_release`` (``15``; None when the branch is no vGPU branch), ``lts``,
    ``max_cuda`` (highest CUDA the branch's guest driver runs, None when not in the catalog),
    ``max_cuda_confirmed`` and ``known`` (the branch is in the catalog's table, vGPU 15 and later).
    """
    major = _driver(version)[1][0]
    row = _BRANCH_ROWS.get(major)
    release, lts = _BRANCH_RELEASE.get(major, (None, False))
    return {
        "branch": "R%d" % major,
        "vgpu_release": str(release) if release is not None else None,
        "lts": lts,
        "max_cuda": row["max_cuda"] if row else None,
        "max_cuda_confirmed": row["max_cuda_confirmed"] if row else False,
        "known": row is not None,
    }


def _older_accepted_branches(host_major):
    """The previous branch and, for an LTS manager, the previous LTS branch whose guests the manager accepts."""
    if host_major not in _BRANCH_RELEASE:
        return None, None
    release, lts = _BRANCH_RELEASE[host_major]
    previous = [branch for rel, branch, _lts in _RELEASE_BRANCHES if rel == release - 1]
    older_lts = [branch for rel, branch, is_lts in _RELEASE_BRANCHES if is_lts and rel < release] if lts else []
    return (previous[0] if previous else None), (older_lts[-1] if older_lts else None)


def _or_list(items):
    return items[0] if len(items) == 1 else "%s or %s" % (", ".join(items[:-1]), items[-1])


def _branch_label(info):
    if info["vgpu_release"] is None:
        return "%s, not a vGPU branch" % info["branch"]
    return "%s, vGPU %s%s" % (info["branch"], info["vgpu_release"], " LTS" if info["lts"] else "")


def vgpu_guest_compat(host_driver, guest_driver):
    """Tell whether a guest driver works with a host vGPU Manager driver.

    Rule (vGPU release notes): same branch works; a manager also accepts guests of the previous branch, and an LTS
    manager guests of the previous LTS branch (R535 on R580). Anything else fails to initialise the vGPU.
    Returns ``status`` (``ok``, ``ok-previous-branch`` or ``incompatible``), ``host_branch``, ``guest_branch``,
    ``accepted_guest_branches`` and ``message``.
    """
    host_version, host_parts = _driver(host_driver)
    guest_version, guest_parts = _driver(guest_driver)
    host, guest = driver_branch(host_version), driver_branch(guest_version)
    previous, previous_lts = _older_accepted_branches(host_parts[0])
    accepted = [host_parts[0]] + [b for b in (previous, previous_lts) if b is not None and b != host_parts[0]]
    accepted_names = ["R%d" % branch for branch in sorted(set(accepted), reverse=True)]
    if guest_parts[0] == host_parts[0]:
        status = "ok"
        message = "Guest driver %s and vGPU Manager %s are on the same branch (%s): compatible." % (
            guest_version, host_version, _branch_label(host))
    elif guest_parts[0] in accepted:
        status = "ok-previous-branch"
        reason = "the previous branch" if guest_parts[0] == previous else "the previous LTS branch"
        message = (
            "vGPU Manager %s (%s) accepts guest driver %s from %s (%s); move the guest to %s when convenient."
            % (host_version, _branch_label(host), guest_version, reason, _branch_label(guest), host["branch"])
        )
    else:
        status = "incompatible"
        message = (
            "Guest driver %s (%s) does not work with vGPU Manager %s (%s): the vGPU fails to initialise in the "
            "guest; install a GRID guest driver from %s."
            % (guest_version, _branch_label(guest), host_version, _branch_label(host), _or_list(accepted_names))
        )
    return {
        "status": status,
        "host_branch": host["branch"],
        "guest_branch": guest["branch"],
        "accepted_guest_branches": accepted_names,
        "message": message,
    }


def _cuda(value):
    """Return (major, minor, update) of a CUDA version; update None when only a build number was given."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = repr(value) if isinstance(value, float) else "%d.0" % value
    match = _CUDA_RE.match(value.strip()) if isinstance(value, str) else None
    if match and not (match.group("third") and match.group("update")):
        major, minor = int(match.group("major")), int(match.group("minor"))
        third, update = match.group("third"), match.group("update")
        if update is not None:
            update = int(update)
        elif third is not None:
            update = int(third) if int(third) <= _CUDA_MAX_UPDATE else None
        else:
            update = 0
        if major in CUDA_MINOR_COMPAT_MINIMUMS:
            return major, minor, update
        raise InputError(
            "CUDA %s is outside the catalog's range." % value.strip(),
            hint="The catalog covers CUDA %s.x to %s.x." % (min(CUDA_MINOR_COMPAT_MINIMUMS),
                                                            max(CUDA_MINOR_COMPAT_MINIMUMS)),
            value=value,
        )
    raise InputError(
        "CUDA version %r cannot be read." % (value,),
        hint="Give it as 12.1, 12.1.1 (update 1) or '12.2 U2'.",
        value=value,
    )


def _cuda_label(major, minor, update):
    if update is None:
        return "%d.%d (update unknown)" % (major, minor)
    return "%d.%d Update %d" % (major, minor, update) if update else "%d.%d" % (major, minor)


def _cuda_minimum(major, minor, update):
    """Full-feature minimum driver, or None when the minor is not in the table. Unknown update: the strictest."""
    rows = [(row_update, driver) for (row_major, row_minor, row_update), driver in CUDA_DRIVER_MINIMUMS
            if (row_major, row_minor) == (major, minor)]
    if not rows:
        return None
    usable = [row for row in rows if update is None or row[0] <= update]
    return max(usable)[1]


def newest_cuda_for_driver(driver_version):
    """Return the newest CUDA toolkit (label such as ``12.0 Update 1``) a driver fully supports, or None."""
    return _newest_cuda(_driver(driver_version)[1])


def _newest_cuda(driver_parts):
    for (major, minor, update), minimum in CUDA_DRIVER_MINIMUMS:
        if _at_least(driver_parts, minimum):
            return _cuda_label(major, minor, update)
    return None


def _remedy(newest, minimum):
    """What a user can do about a driver too old for a toolkit: an older toolkit or a newer vGPU release."""
    steps = ["CUDA %s or older" % newest if newest else "an older CUDA toolkit"]
    if minimum:
        branch = [row for row in DRIVER_BRANCHES if compare_versions(row["guest_examples"][-1], minimum) >= 0]
        steps.append("a vGPU release whose guest driver is %s or newer%s" % (
            minimum, " (R%d, vGPU %s)" % (branch[0]["branch"], branch[0]["vgpu_release"]) if branch else ""))
    return ", or ".join(steps)


def cuda_driver_ok(cuda_version, driver_version):
    """Check a CUDA toolkit version against an installed Linux driver (in a vGPU guest: the GRID driver).

    ``cuda_version`` is ``12.1``, ``12.1.1`` (= 12.1 Update 1) or ``12.2 U2``; a build number (``12.1.105``) counts
    as the strictest update of that minor. Returns ``status``: ``ok`` (driver at least the toolkit's full-feature
    minimum), ``minor-compat-only`` (below it, or the minimum is not in the catalog, but at least the major's
    minor-version compatibility floor) or ``unsupported``; ``minimum`` (None when the catalog's table does not
    list that minor), ``minor_compat_minimum``, ``cuda`` (normalised), ``driver``, ``newest_full_cuda`` (newest
    toolkit the driver fully supports) and ``message``.
    """
    major, minor, update = _cuda(cuda_version)
    driver, driver_parts = _driver(driver_version)
    label = _cuda_label(major, minor, update)
    minimum = _cuda_minimum(major, minor, update)
    floor = CUDA_MINOR_COMPAT_MINIMUMS[major]
    floor_met = _at_least(driver_parts, floor)
    newest = _newest_cuda(driver_parts)
    if minimum is None:
        status = "minor-compat-only" if floor_met else "unsupported"
        message = (
            "CUDA %s is newer than the catalog's table, so its full-feature minimum driver is not known; driver %s "
            "%s the CUDA %d.x minor-version compatibility floor (%s): %s."
            % (label, driver, "meets" if floor_met else "is below", major, floor,
               "check NVIDIA's CUDA release notes before relying on newer features" if floor_met
               else "use " + _remedy(newest, None))
        )
    elif _at_least(driver_parts, minimum):
        status = "ok"
        message = "CUDA %s is fully supported by driver %s (it needs %s or newer)." % (label, driver, minimum)
    elif floor_met:
        status = "minor-compat-only"
        message = (
            "CUDA %s needs driver %s or newer for full support; driver %s runs it only under CUDA minor-version "
            "compatibility (PTX JIT and features newer than the driver fail): use %s."
            % (label, minimum, driver, _remedy(newest, minimum))
        )
    else:
        status = "unsupported"
        message = (
            "CUDA %s needs driver %s or newer (%s under minor-version compatibility); driver %s cannot run it: "
            "use %s." % (label, minimum, floor, driver, _remedy(newest, minimum))
        )
    return {
        "status": status,
        "minimum": minimum,
        "minor_compat_minimum": floor,
        "cuda": label,
        "driver": driver,
        "newest_full_cuda": newest,
        "message": message,
    }
