# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MIG mode and GPU/compute-instance layout of a node's GPUs, read and changed through nvidia-smi.

Reads cost three commands whatever the number of GPUs (``-q``, ``mig -lgi``, ``mig -lci``). Every request is
checked for every GPU before the first change. ``smi(args)`` runs nvidia-smi and returns ``(rc, out, err)``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, InputError, NotFound
from ansible_collections.gpuops.vgpu.plugins.module_utils.mig import _layout
from ansible_collections.gpuops.vgpu.plugins.module_utils.mig._profiles import mig_model
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import SEARCH_DIRS, parse_mig, parse_query

VGPU_HINT = ("A vGPU's MIG layout is the hypervisor's: change the VM's vGPU profile (gpuops.vgpu.vm_vgpu) "
             "instead, or leave mig_mode and layout unset here to only read it.")


def _run(smi, args):
    rc, out, err = smi(args)
    return rc, (out or "") + (err or "")


def read_state(smi):
    """The GPUs as ``-q`` reports them, with the GPU instances of those in MIG mode and their compute instances."""
    rc, text = _run(smi, ["-q"])
    gpus = [dict(index=g["index"], name=g["name"], uuid=g["uuid"], mig_current=g["mig_mode_current"],
                 mig_pending=g["mig_mode_pending"], virtualization=g["virtualization_mode"],
                 architecture=g.get("product_architecture"), instances=[])
            for g in parse_query(text)["gpus"]]
    if any(g["mig_current"] for g in gpus):
        instances = parse_mig(_run(smi, ["mig", "-lgi"])[1]).get("gpu_instances", [])
        computes = parse_mig(_run(smi, ["mig", "-lci"])[1]).get("compute_instances", [])
        for gi in instances:
            key = (gi["gpu"], gi["instance_id"])
            gi["compute"] = [ci for ci in computes if (ci["gpu"], ci["gpu_instance_id"]) == key]
        for gpu in gpus:
            gpu["instances"] = [gi for gi in instances if gi["gpu"] == gpu["index"]]
    return gpus


def describe(gpu):
    return {"index": gpu["index"], "name": gpu["name"], "uuid": gpu["uuid"], "virtualization_mode": gpu["virtualization"],
            "product_architecture": gpu["architecture"],
            "mig_mode_current": gpu["mig_current"], "mig_mode_pending": gpu["mig_pending"],
            "reset_required": bool(gpu["mig_pending"] is not None and gpu["mig_pending"] != gpu["mig_current"]),
            "layout": sorted(gi["name"] for gi in gpu["instances"]),
            "gpu_instances": [{"profile": gi["name"], "gpu_instance_id": gi["instance_id"],
                               "placement": "%d:%d" % (gi["placement_start"], gi["placement_size"]),
                               "compute_instances": [ci["name"] for ci in gi.get("compute", [])]}
                              for gi in gpu["instances"]]}


def plan(gpus, selected, mig_mode, layout, gpu_reset=False):
    """One entry per GPU that must change: ``{gpu, mode, reset, destroy, create}``. Raises InputError before any
    change. A GPU whose MIG mode stays pending (no ``gpu_reset``) gets no layout: it cannot hold one yet."""
    by_index = dict((g["index"], g) for g in gpus)
    for index in selected or []:
        if index not in by_index:
            raise InputError("GPU index %s is not on this node; it has %s." % (index, sorted(by_index) or "none"),
                             hint="Pick indexes from nvidia-smi -L.")
    if layout is not None and mig_mode == "disabled":
        raise InputError("layout was given with mig_mode=disabled.", hint="Drop layout, or set mig_mode=enabled.")
    want_mode = {"enabled": True, "disabled": False}.get(mig_mode, True if layout is not None else None)
    steps = []
    for gpu in (by_index[i] for i in (selected if selected else sorted(by_index))):
        label = "GPU %d (%s)" % (gpu["index"], gpu["name"])
        if want_mode is None:
            continue
        if gpu["virtualization"] == "VGPU":
            raise InputError("%s is a vGPU; its MIG mode and layout cannot be changed from the guest." % label,
                             hint=VGPU_HINT)
        model = mig_model(gpu["name"])
        if model is None or gpu["mig_current"] is None:
            raise InputError("%s has no MIG mode (MIG is on A100, A30, H100 and later data-center GPUs)." % label,
                             hint="Leave mig_mode and layout unset for this GPU, or use time-slicing or MPS "
                             "to share it.")
        names = _layout.check(_layout.resolve(layout, model, label), model, label) if layout is not None else None
        step = {"gpu": gpu, "model": model, "mode": None, "reset": False, "destroy": [], "create": [],
                "placements": []}
        if gpu["mig_pending"] != want_mode:
            step["mode"] = want_mode
        step["reset"] = bool(gpu_reset) and gpu["mig_current"] != want_mode
        if want_mode is False:
            step["destroy"] = list(gpu["instances"])
        elif names is not None and (gpu["mig_current"] or step["reset"]):
            current = gpu["instances"] if gpu["mig_current"] else []
            step.update(_layout.plan(current, [name for name, _start in names], model))
        if step["mode"] is not None or step["reset"] or step["destroy"] or step["create"]:
            steps.append(step)
    return steps


def apply(smi, steps):
    """Carry out ``steps``; returns the commands run. A GPU whose MIG mode stays pending gets no layout."""
    commands = []

    def run(args):
        commands.append("nvidia-smi " + " ".join(args))
        rc, text = _run(smi, args)
        if rc != 0:
            raise ApiError("nvidia-smi %s failed (rc %d): %s" % (" ".join(args), rc, text.strip()),
                           hint="Nothing after this command ran; earlier ones did: %s." % "; ".join(commands[:-1]),
                           commands=commands)
        return text

    for step in steps:
        index = str(step["gpu"]["index"])
        if step["destroy"]:
            with_ci = ",".join(str(gi["instance_id"]) for gi in step["destroy"] if gi.get("compute"))
            if with_ci:
                run(["mig", "-i", index, "-gi", with_ci, "-dci"])
            run(["mig", "-i", index, "-gi", ",".join(str(gi["instance_id"]) for gi in step["destroy"]), "-dgi"])
        if step["mode"] is not None:
            run(["-i", index, "-mig", "1" if step["mode"] else "0"])
        if step["reset"]:
            run(["--gpu-reset", "-i", index])
        if step["create"]:
            gpu = [g for g in read_state(smi) if g["index"] == step["gpu"]["index"]][0]
            if not gpu["mig_current"]:
                continue
            # A profile tuple is "<profile>:<placement start>" (nvidia-smi mig -h, --create-gpu-instance).
            profiles = step["model"]["profiles"]
            tuples = ["%d:%d" % (profiles[name]["profile_id"], start) for name, start in step["placements"]]
            run(["mig", "-i", index, "-cgi", ",".join(tuples), "-C"])
    return commands


def nvidia_mig(client, params, check_mode):
    """The ``nvidia_mig`` module: ``manage`` with the host's nvidia-smi (``path``, else found in PATH or
    ``SEARCH_DIRS``)."""
    path = params["path"] or client.get_bin_path("nvidia-smi", opt_dirs=SEARCH_DIRS)
    if path is None:
        raise NotFound("nvidia-smi is not in PATH nor in %s." % ", ".join(SEARCH_DIRS),
                       hint="Install the GPU driver first, or set path.")

    def smi(args):
        return client.run_command([path] + args, environ_update={"LC_ALL": "C"})

    return manage(smi, params, check_mode)


def manage(smi, params, check_mode):
    """The module's work: read, plan (refusing bad input), apply unless in check mode, read back."""
    layout = params.get("layout")
    if isinstance(layout, list) and len(layout) == 1 and str(layout[0]).startswith("all-"):
        layout = layout[0]
    before = read_state(smi)
    steps = plan(before, params.get("gpus"), params.get("mig_mode"), layout, params.get("gpu_reset"))
    commands = [] if check_mode or not steps else apply(smi, steps)
    after = read_state(smi) if commands else before
    gpus = [describe(gpu) for gpu in after]
    if check_mode:
        for step, gpu in ((s, g) for s in steps for g in gpus if g["index"] == s["gpu"]["index"]):
            if step["mode"] is not None:
                gpu["mig_mode_pending"] = step["mode"]
            if step["reset"]:
                gpu["mig_mode_current"] = gpu["mig_mode_pending"]
            gpu["reset_required"] = gpu["mig_mode_current"] != gpu["mig_mode_pending"]
            gone = set(gi["instance_id"] for gi in step["destroy"])
            gpu["layout"] = sorted([gi["profile"] for gi in gpu["gpu_instances"]
                                    if gi["gpu_instance_id"] not in gone] + step["create"])
    selected = set(s["gpu"]["index"] for s in steps)
    asked = set(params.get("gpus") or [g["index"] for g in gpus])
    result = {"changed": bool(steps), "gpus": gpus, "commands": commands,
              "reset_required": any(g["reset_required"] for g in gpus if g["index"] in asked),
              "diff": {"before": dict((str(g["index"]), _view(g)) for g in map(describe, before)
                                      if g["index"] in selected),
                       "after": dict((str(g["index"]), _view(g)) for g in gpus if g["index"] in selected)}}
    return result


def _view(gpu):
    return {"mig_mode_pending": gpu["mig_mode_pending"], "layout": gpu["layout"]}
