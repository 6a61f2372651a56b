# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MIG layouts: from a declarative spec to GPU-instance profiles, whether they fit, and what to change.

A layout fits when every profile is offered by the GPU, no profile exceeds its instance count, the compute slices
add up to at most the GPU's, the instances need no more media engines (JPEG, OFA: one set per GPU, which a ``+me``
instance takes; MIG user guide, "Supported MIG Profiles") than the GPU has, and every instance gets a placement of
its own on the memory-slice axis (the rule ``nvidia-smi mig -lgipp`` prints; MIG user guide, "Placements").
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import Counter

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.mig._profiles import MEDIA_ENGINES

# mig-parted's named configurations (NVIDIA/mig-parted examples/config.yaml): all-<profile> fills the GPU with
# one profile; all-balanced is 2x 1g, 1x 2g, 1x 3g on 8-slice GPUs.
_BALANCED = {8: ((1, 2), (2, 1), (3, 1)), 4: ((1, 2), (2, 1))}


def resolve(spec, model, gpu_label):
    """The profile names a layout spec asks for, largest first. ``spec``: ``all-<profile>``, ``all-balanced``, or a
    list of profile names (``3g.40gb``) or ids (``9``)."""
    profiles = model["profiles"]
    if isinstance(spec, str):
        if spec == "all-balanced":
            names = []
            for compute, count in _BALANCED[model["memory_slices"]]:
                name = min((p for p in profiles.values() if p["compute_slices"] == compute and "+" not in p["name"]),
                           key=lambda p: p["placement_size"])["name"]
                names.extend([name] * count)
            return _largest_first(names, profiles)
        if spec.startswith("all-") and spec[4:] in profiles:
            profile = profiles[spec[4:]]
            count = min(profile["max_instances"], model["compute_slices"] // profile["compute_slices"],
                        len(_starts_that_fit(profile, model["memory_slices"])))
            return [profile["name"]] * count
        raise InputError("MIG layout %r is not a layout %s (%s) can hold." % (spec, gpu_label, model["model"]),
                         hint="Use all-balanced, all-<profile> with a profile of %s, or a list of profiles."
                         % ", ".join(sorted(profiles)))
    by_id = dict((str(p["profile_id"]), name) for name, p in profiles.items())
    names = []
    for item in spec:
        name = str(item)
        name = by_id.get(name, name[4:] if name.startswith("MIG ") else name)
        if name not in profiles:
            raise InputError("MIG profile %r is not offered by %s (%s)." % (item, gpu_label, model["model"]),
                             hint="Profiles it offers: %s." % ", ".join(sorted(profiles)))
        names.append(name)
    return _largest_first(names, profiles)


def _largest_first(names, profiles):
    return sorted(names, key=lambda n: (-profiles[n]["placement_size"], -profiles[n]["compute_slices"], n))


def _starts_that_fit(profile, memory_slices):
    return [s for s in profile["placements"] if s + profile["placement_size"] <= memory_slices]


def check(names, model, gpu_label):
    """Refuse, before any change, a layout the GPU cannot hold. Returns one placement per profile."""
    profiles = model["profiles"]
    for name, count in Counter(names).items():
        if count > profiles[name]["max_instances"]:
            raise InputError("MIG layout on %s asks for %d x %s; %s holds at most %d." % (
                gpu_label, count, name, model["model"], profiles[name]["max_instances"]),
                hint="Ask for fewer %s instances." % name)
    slices = sum(profiles[name]["compute_slices"] for name in names)
    if slices > model["compute_slices"]:
        raise InputError("MIG layout %s overfills %s: %d compute slices, %s has %d." % (
            "+".join(names), gpu_label, slices, model["model"], model["compute_slices"]),
            hint="Remove profiles until the slices (the number before g) add up to at most %d."
            % model["compute_slices"])
    for engine in MEDIA_ENGINES:
        users = [name for name in names if profiles[name][engine]]
        if sum(profiles[name][engine] for name in users) > model["media_engines"][engine]:
            raise InputError("MIG layout on %s asks for %d instances with media extensions (%s); %s has one set of "
                             "media engines (%d %s), so at most one +me instance can exist on it." % (
                                 gpu_label, len(users), ", ".join(users), model["model"],
                                 model["media_engines"][engine], engine.upper()),
                             hint="Keep one +me profile and ask for the others without +me (%s)." % ", ".join(
                                 sorted(set(name.split("+")[0] for name in users))))
    placed = place(names, model, {})
    if placed is None:
        raise InputError("MIG layout %s overfills %s: no placement of these instances fits its %d memory slices."
                         % ("+".join(names), gpu_label, model["memory_slices"]),
                         hint="See nvidia-smi mig -lgipp for where each profile may start; use fewer or "
                         "smaller profiles.")
    return placed


def place(names, model, taken):
    """Placements ``[(name, start)]`` for ``names`` around the slices already ``taken`` ({slice: owner}), or None."""
    profiles = model["profiles"]
    used = set(taken)
    result = []

    def fill(index):
        if index == len(names):
            return True
        profile = profiles[names[index]]
        for start in _starts_that_fit(profile, model["memory_slices"]):
            span = set(range(start, start + profile["placement_size"]))
            if span & used:
                continue
            used.update(span)
            result.append((names[index], start))
            if fill(index + 1):
                return True
            result.pop()
            used.difference_update(span)
        return False

    return result if fill(0) else None


def plan(current, names, model):
    """What turns the GPU instances ``current`` (parsed ``-lgi`` rows of one GPU, each with its ``compute``
    instances) into ``names``: ``{"destroy": [gi rows], "create": [names], "placements": [(name, start)]}``.
    Instances already asked for stay where they are when the rest still fits around them; otherwise everything is
    carved anew. Every new instance gets its placement here, so the driver's own choice can never block the next."""
    wanted = Counter(names)
    keep, destroy = [], []
    for gi in sorted(current, key=lambda g: g["instance_id"]):
        if wanted[gi["name"]] > 0 and _has_full_compute_instance(gi):
            wanted[gi["name"]] -= 1
            keep.append(gi)
        else:
            destroy.append(gi)
    create = _largest_first(list(wanted.elements()), model["profiles"])
    taken = {}
    for gi in keep:
        for slot in range(gi["placement_start"], gi["placement_start"] + gi["placement_size"]):
            taken[slot] = gi["instance_id"]
    placements = place(create, model, taken) if create else []
    if placements is None:
        create = _largest_first(list(names), model["profiles"])
        return {"destroy": sorted(current, key=lambda g: g["instance_id"]), "create": create,
                "placements": place(create, model, {})}
    return {"destroy": destroy, "create": create, "placements": placements}


def _has_full_compute_instance(gi):
    """The GI holds exactly one compute instance spanning it (what ``-C`` creates and the device plugin counts)."""
    cis = gi.get("compute", [])
    return len(cis) == 1 and cis[0]["name"] == gi["name"]
