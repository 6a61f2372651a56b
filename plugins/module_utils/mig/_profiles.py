# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MIG GPU-instance profiles per GPU model: names, profile ids, how many fit, where they may be placed.

Source: NVIDIA Multi-Instance GPU User Guide, "Supported MIG Profiles" (the per-GPU tables) and "Placements"
(``nvidia-smi mig -lgipp``). Every GPU below has 8 memory slices and 7 compute slices (A30: 4 and 4); a placement
``start:size`` is on the memory-slice axis, as ``nvidia-smi mig -lgi`` prints it. The A100 40GB rows match the
recording tests/fixtures/nvidia-smi/mig_lgip_a100_pcie_40gb_esxi_driver510.txt; the placement sets match the
``-lgipp`` output the guide prints for A100 and H100. Memory (GiB) and SM counts are the guide's; the H100 SM
counts of the profiles smaller than 7g are not confirmed against a recording.

Media engines: a GPU has one optical flow accelerator (OFA) and, on A100 and A30, one JPEG decoder; the whole-GPU
profile has them, and of the smaller profiles only the ``+me`` (media extensions) ones take them (the guide's
"Hardware Units" column: ``1 JPEG / 1 OFA`` for ``1g.5gb+me``, ``1g.6gb+me``, ``2g.12gb+me`` and the full GPU, ``0
JPEG / 0 OFA`` for the others; "a single 1g [or 2g] profile can include media extensions"). So at most one ``+me``
instance exists per GPU, whichever ``+me`` profiles the GPU offers (the A30 offers two). The A100 40GB counts match
the JPEG and OFA columns of the recorded ``-lgip``; the H100 ones (a JPEG decoder per compute slice, one OFA) are
from ``nvidia-smi mig -lgip`` outputs published for H100 80GB, not confirmed against a recording here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# (compute slices, profile id, max instances, placement starts, placement size)
_SHAPE = {
    "1g": (1, 19, 7, (0, 1, 2, 3, 4, 5, 6), 1),
    "1g+me": (1, 20, 1, (0, 1, 2, 3, 4, 5, 6), 1),
    "1g.2x": (1, 15, 4, (0, 2, 4, 6), 2),
    "2g": (2, 14, 3, (0, 2, 4), 2),
    "3g": (3, 9, 2, (0, 4), 4),
    "4g": (4, 5, 1, (0,), 4),
    "7g": (7, 0, 1, (0,), 8),
}
# A30: 4 memory and 4 compute slices (MIG user guide, A30 24GB table).
_A30_SHAPE = {
    "1g": (1, 14, 4, (0, 1, 2, 3), 1),
    "1g+me": (1, 21, 1, (0, 1, 2, 3), 1),
    "2g": (2, 5, 2, (0, 2), 2),
    "2g+me": (2, 6, 1, (0, 2), 2),
    "4g": (4, 0, 1, (0,), 4),
}


# (JPEG decoders, OFAs) per shape; a shape not named has none.
_MEDIA_A100 = {"1g+me": (1, 1), "7g": (1, 1)}
_MEDIA_A30 = {"1g+me": (1, 1), "2g+me": (1, 1), "4g": (1, 1)}
_MEDIA_H100 = {"1g": (1, 0), "1g+me": (1, 1), "1g.2x": (1, 0), "2g": (2, 0), "3g": (3, 0), "4g": (4, 0), "7g": (7, 1)}
MEDIA_ENGINES = ("ofa", "jpeg")


def _profiles(shapes, names, memory, sms, media):
    profiles = {}
    for shape, name in names.items():
        compute, pid, count, starts, size = shapes[shape]
        jpeg, ofa = media.get(shape, (0, 0))
        profiles[name] = {"name": name, "profile_id": pid, "compute_slices": compute, "max_instances": count,
                          "placements": starts, "placement_size": size, "memory_gib": memory[name],
                          "sm": sms[name], "jpeg": jpeg, "ofa": ofa}
    return profiles


A100_40GB = _profiles(
    _SHAPE,
    {"1g": "1g.5gb", "1g+me": "1g.5gb+me", "1g.2x": "1g.10gb", "2g": "2g.10gb", "3g": "3g.20gb",
     "4g": "4g.20gb", "7g": "7g.40gb"},
    {"1g.5gb": 4.75, "1g.5gb+me": 4.75, "1g.10gb": 9.62, "2g.10gb": 9.75, "3g.20gb": 19.62, "4g.20gb": 19.62,
     "7g.40gb": 39.50},
    {"1g.5gb": 14, "1g.5gb+me": 14, "1g.10gb": 14, "2g.10gb": 28, "3g.20gb": 42, "4g.20gb": 56, "7g.40gb": 98},
    _MEDIA_A100)
# A100 80GB and H100 80GB carve alike: same profile names, ids, placements and memory; their SM counts differ.
_NAMES_80GB = {"1g": "1g.10gb", "1g+me": "1g.10gb+me", "1g.2x": "1g.20gb", "2g": "2g.20gb", "3g": "3g.40gb",
               "4g": "4g.40gb", "7g": "7g.80gb"}
_MEMORY_80GB = {"1g.10gb": 9.75, "1g.10gb+me": 9.75, "1g.20gb": 19.62, "2g.20gb": 19.62, "3g.40gb": 39.50,
                "4g.40gb": 39.50, "7g.80gb": 79.25}
A100_80GB = _profiles(_SHAPE, _NAMES_80GB, _MEMORY_80GB, {
    "1g.10gb": 14, "1g.10gb+me": 14, "1g.20gb": 14, "2g.20gb": 28, "3g.40gb": 42, "4g.40gb": 56, "7g.80gb": 98},
    _MEDIA_A100)
H100_80GB = _profiles(_SHAPE, _NAMES_80GB, _MEMORY_80GB, {
    "1g.10gb": 16, "1g.10gb+me": 16, "1g.20gb": 26, "2g.20gb": 32, "3g.40gb": 60, "4g.40gb": 64, "7g.80gb": 132},
    _MEDIA_H100)
A30_24GB = _profiles(
    _A30_SHAPE,
    {"1g": "1g.6gb", "1g+me": "1g.6gb+me", "2g": "2g.12gb", "2g+me": "2g.12gb+me", "4g": "4g.24gb"},
    {"1g.6gb": 5.81, "1g.6gb+me": 5.81, "2g.12gb": 11.75, "2g.12gb+me": 11.75, "4g.24gb": 23.62},
    {"1g.6gb": 14, "1g.6gb+me": 14, "2g.12gb": 28, "2g.12gb+me": 28, "4g.24gb": 56}, _MEDIA_A30)

# Product names as nvidia-smi prints them (``Product Name`` in -q, the name in -L), matched in this order.
_MODELS = (
    (r"A100.*80GB", "A100 80GB", A100_80GB, 8, 7),
    (r"A100", "A100 40GB", A100_40GB, 8, 7),
    (r"H100.*(80GB|PCIe)", "H100 80GB", H100_80GB, 8, 7),
    (r"A30\b", "A30 24GB", A30_24GB, 4, 4),
)


def mig_model(product_name):
    """The MIG model of a GPU from its product name: ``{model, profiles, memory_slices, compute_slices}``, or None
    for a GPU without MIG (T4, L40S, P40, A10, ...) or a vGPU (``GRID ...``), which cannot partition itself."""
    name = product_name or ""
    if name.startswith("GRID "):
        return None
    for pattern, model, profiles, memory_slices, compute_slices in _MODELS:
        if re.search(pattern, name):
            # The GPU's media engines are those of its whole-GPU profile.
            full = max(profiles.values(), key=lambda p: p["compute_slices"])
            return {"model": model, "profiles": profiles, "memory_slices": memory_slices,
                    "compute_slices": compute_slices,
                    "media_engines": dict((engine, full[engine]) for engine in MEDIA_ENGINES)}
    return None
