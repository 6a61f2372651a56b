# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's checks of the Kubernetes GPU nodes: the nvidia runtime in containerd's own configuration, the CDI
specification against the node's GPUs and MIG devices, the MIG layout against the requested one, and the device
plugin configuration on the node against what the node's k8s_gpu_sharing_* variables ask for."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.mig import _layout
from ansible_collections.gpuops.vgpu.plugins.module_utils.mig._profiles import mig_model
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _k8s_sharing

RUN = "Run playbooks/k8s_nodes.yml on the node"


def node_facts(raw):
    """One entry per node from what the doctor read on it: ``containerd config dump`` (``runtime``), the CDI spec
    and the device plugin config (slurped), ``nvidia_mig`` without options (``mig``), and the requested sharing."""
    nodes = []
    for name in raw.get("nodes") or []:
        item = dict((key, _by_item(raw.get(key)).get(name)) for key in ("runtime", "cdi", "config", "mig"))
        nodes.append({"name": name, "requested": (raw.get("requested") or {}).get(name) or {},
                      "runtime": _text(item["runtime"], "stdout"), "cdi": _slurped(item["cdi"]),
                      "config": _slurped(item["config"]), "mig": _text(item["mig"], "gpus")})
    return nodes


def _by_item(results):
    return dict((r.get("item"), r) for r in (results or {}).get("results") or [] if isinstance(r, dict))


def _text(result, key):
    if not result or result.get("skipped"):
        return {"error": "not read"}
    if result.get("unreachable"):
        return {"error": "unreachable: %s" % (result.get("msg") or "no answer")}
    if result.get("rc", 0) != 0 or key not in result or result.get("failed"):
        return {"error": (result.get("msg") or result.get("stderr") or "no %s" % key).strip()}
    return {"value": result[key]}


def _slurped(result):
    found = _text(result, "content")
    if "value" in found:
        found["value"] = base64.b64decode(found["value"]).decode("utf-8", "replace")
    return found


def k8s_checks(out, facts):
    import yaml  # the controller has PyYAML with ansible-core

    for node in facts.get("k8s_nodes") or []:
        name = node["name"]
        _runtime(out, name, node["runtime"])
        gpus = node["mig"].get("value")
        if gpus is None:
            out.add("k8s", name, "gpus", "FAIL", "The node's GPUs cannot be read: %s" % node["mig"]["error"],
                    "Check the GPU driver on the node (role gpuops.vgpu.grid_driver).")
            continue
        _cdi(out, name, node["cdi"], gpus, yaml)
        _mig(out, name, node["requested"], gpus)
        _sharing(out, name, node["requested"], node["config"], gpus, yaml)


def _runtime(out, name, dump):
    if "error" in dump:
        out.add("k8s", name, "runtime", "FAIL", "containerd config dump failed: %s" % dump["error"],
                "Install containerd, then %s (role gpuops.vgpu.container_toolkit)." % RUN)
        return
    try:
        import tomllib
        config = tomllib.loads(dump["value"])
    except (ImportError, ValueError) as err:
        out.add("k8s", name, "runtime", "SKIP", "containerd's configuration cannot be read here: %s" % err,
                "Run the doctor with Python 3.11 or later on the controller.")
        return
    cri = config.get("plugins", {}).get("io.containerd.grpc.v1.cri", {}).get("containerd", {})
    binary = cri.get("runtimes", {}).get("nvidia", {}).get("options", {}).get("BinaryName", "")
    if binary.endswith("nvidia-container-runtime"):
        out.add("k8s", name, "runtime", "PASS", "containerd has the nvidia runtime (%s)%s." % (
            binary, ", the default" if cri.get("default_runtime_name") == "nvidia" else ""))
    else:
        out.add("k8s", name, "runtime", "FAIL", "containerd has no nvidia runtime.",
                "%s (role gpuops.vgpu.container_toolkit)." % RUN)


def _cdi(out, name, spec, gpus, yaml):
    if "error" in spec:
        out.add("k8s", name, "cdi", "FAIL", "No CDI specification: %s" % spec["error"],
                "%s (role gpuops.vgpu.container_toolkit, container_toolkit_cdi)." % RUN)
        return
    names = set(d.get("name") for d in (yaml.safe_load(spec["value"]) or {}).get("devices") or [])
    wanted = set(str(g["index"]) for g in gpus)
    wanted.update("%d:%d" % (g["index"], n) for g in gpus for n in range(len(g.get("gpu_instances") or [])))
    missing = sorted(wanted - names)
    if missing:
        out.add("k8s", name, "cdi", "FAIL", "The CDI specification lacks %s." % ", ".join(missing),
                "Regenerate it: %s (role gpuops.vgpu.container_toolkit) after any MIG change." % RUN)
    else:
        out.add("k8s", name, "cdi", "PASS", "The CDI specification names all %d GPU and MIG devices." % len(wanted))


def _mig(out, name, requested, gpus):
    if requested.get("mode") != "mig":
        return
    for gpu in gpus:
        label = "GPU %d (%s)" % (gpu["index"], gpu["name"])
        model = mig_model(gpu["name"])
        try:
            wanted = sorted(_layout.resolve(requested.get("mig_layout"), model, label)) if model else None
        except InputError as err:
            wanted, problem = None, str(err)
        else:
            problem = "%s has no MIG." % label
        if wanted is None:
            out.add("k8s", name, "mig_layout", "FAIL", problem, "Fix k8s_gpu_sharing_mig_layout for this node.")
        elif gpu.get("reset_required"):
            out.add("k8s", name, "mig_layout", "FAIL", "%s: MIG mode change pending." % label,
                    "Reset the GPU (k8s_gpu_sharing_mig_gpu_reset: true) or reboot, then %s." % RUN)
        elif gpu.get("layout") != wanted:
            out.add("k8s", name, "mig_layout", "FAIL", "%s holds %s; %s is requested." % (
                label, ", ".join(gpu.get("layout") or []) or "no MIG instance", ", ".join(wanted)),
                "%s (role gpuops.vgpu.k8s_gpu_sharing)." % RUN)
        else:
            out.add("k8s", name, "mig_layout", "PASS", "%s holds the requested %s." % (label, ", ".join(wanted)))


def _sharing(out, name, requested, config, gpus, yaml):
    try:
        plan = _k8s_sharing.plan(name, gpus, requested.get("mode") or "none", requested.get("replicas"),
                                 requested.get("mig_strategy"), requested.get("mig_layout"),
                                 requested.get("rename_by_default", False),
                                 requested.get("fail_requests_greater_than_one", False))
    except InputError as err:
        out.add("k8s", name, "sharing", "FAIL", str(err.message), err.hint)
        return
    if "error" in config:
        out.add("k8s", name, "sharing", "FAIL", "No device plugin configuration on the node: %s" % config["error"],
                "%s (role gpuops.vgpu.k8s_gpu_sharing)." % RUN)
    elif yaml.safe_load(config["value"]) != plan["config"]:
        out.add("k8s", name, "sharing", "FAIL", "The node's device plugin configuration is not the requested %s."
                % plan["config_name"], "%s (role gpuops.vgpu.k8s_gpu_sharing)." % RUN)
    else:
        out.add("k8s", name, "sharing", "PASS", "%s: advertises %s." % (plan["config_name"], ", ".join(
            "%d %s" % (count, resource) for resource, count in sorted(plan["advertised"].items()))))
