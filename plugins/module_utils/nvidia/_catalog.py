# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vGPU catalog: GPU models and their vGPU types, read from vSphere, nvidia-smi or bare profile names.

Pure logic over the tables in ``_catalog_data``, stdlib only, so it also runs on ESXi and in minimal guests. The
rules between driver branches, guest drivers and CUDA are in ``_compatibility``.
Every public function raises ``InputError`` for input it cannot read and returns fresh dicts and lists that the
caller may change freely.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

if __name__.startswith("ansible_collections."):
    from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
    from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia._catalog_data import (
        CUDA_ONLY_8Q_GPUS,
        GPUS,
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
    _data = _load_sibling("_catalog_data")
    CUDA_ONLY_8Q_GPUS = _data.CUDA_ONLY_8Q_GPUS
    GPUS = _data.GPUS

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
        "mixed_size_placements": None,
        "mixed_size_max": None,
        "mixed_size_confirmed": False,
    }


def _normalise_device_name(text):
    return " ".join(re.findall(r"[a-z0-9]+", _DEVICE_NAME_NOISE.sub(" ", text.lower())))


def _device_name_keys(text):
    """The full name and any bracketed part (lspci: "GP102GL [Tesla P40]"), normalised for matching."""
    keys = [_normalise_device_name(text)]
    keys.extend(_normalise_device_name(inner) for inner in re.findall(r"\[([^\]]*)\]", text))
    return [key for key in keys if key]


def _add_placements(record, placements):
    """Mixed-size placement IDs of a time-sliced type (None: not offered in mixed-size mode, or not known)."""
    ids = None if record["mig"] else placements.get(record["framebuffer_gb"])
    record["mixed_size_placements"] = list(ids) if ids else None
    record["mixed_size_max"] = len(ids) if ids else None
    # NVIDIA's placement tables list the C types; other series are taken to share them by size.
    record["mixed_size_confirmed"] = bool(ids) and record["series"] == "C"


def _build_catalog():
    models, profiles, prefixes, names, pci_ids = {}, {}, {}, {}, {}
    for model_id, raw in GPUS.items():
        prefix = raw["profile_prefix"]
        prefixes[prefix] = model_id
        records = []
        placements = raw.get("mixed_size_placements", {})
        for types, confirmed in ((raw["types"], True), (raw["types_unconfirmed"], False)):
            for suffix, max_per_gpu in types:
                record = _profile_record("grid_%s-%s" % (prefix, suffix), model_id, max_per_gpu, confirmed)
                _add_placements(record, placements)
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
    (None when unknown), ``known`` (the profile is in the catalog) and ``confirmed`` (its data has a source);
    ``mixed_size_placements`` (GB offsets where a vGPU of the type may start on a GPU in mixed-size mode, None when
    the type has no known placement there), ``mixed_size_max`` (their number) and ``mixed_size_confirmed``.
    Raises ``InputError`` for anything that is not a profile name.
    """
    record = _profile_record(name)
    known = _PROFILES.get(record["name"])
    if known:
        return copy.deepcopy(known)
    record["model"] = _MODEL_BY_PREFIX.get(record["gpu"])
    return record
