# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU sharing on a Kubernetes node: the NVIDIA device plugin's configuration, the GPU Operator's objects that
carry it, what the node will advertise, and the vGPU licensing ConfigMap.

Schema and rules are the device plugin's own (NVIDIA/k8s-device-plugin, api/config/v1: ``version: v1``,
``flags.migStrategy`` none|single|mixed, ``sharing.timeSlicing`` / ``sharing.mps`` with ``renameByDefault``,
``failRequestsGreaterThanOne`` and ``resources[].name/replicas``; a shared resource needs 2 replicas or more:
``ReplicatedResource.UnmarshalJSON`` in replicas.go fails the whole config otherwise, and the plugin does not start;
MPS serves at most 48 clients per GPU of compute capability 7.5 and later, 16 before
(cmd/mps-control-daemon/mps/device.go); MPS is not supported on GPUs with MIG enabled (README, "With CUDA MPS");
a renamed shared resource is ``<name>.shared``). The node selects a config of the GPU Operator's device plugin
ConfigMap with the label ``nvidia.com/device-plugin.config`` (README, "Updating Per-Node Configuration With a Node
Label"). The GPU Operator (NVIDIA/gpu-operator, api/nvidia/v1/clusterpolicy_types.go) points the device plugin at
that ConfigMap with ClusterPolicy ``devicePlugin.config.name`` and ``.default`` (the config of nodes without the
label), and sets the plugin's ``MIG_STRATEGY`` from ``mig.strategy`` for every node (controllers/object_controls.go,
``applyMIGConfiguration``), over ``flags.migStrategy`` in the config file: one MIG strategy per cluster. On GPUs
without MIG the strategy changes nothing (device plugin internal/rm/device_map.go). The licensing object holds
``gridd.conf`` and ``client_configuration_token.tok``; the Operator mounts it into the driver container from a Secret
named by ``driver.licensingConfig.secretName`` (since v25.10.0; ``configMapName``, the only field before, is
deprecated in its favour) and mounts the token only when ``nlsEnabled`` is true (controllers/object_controls.go,
``applyLicensingConfig``; the CRD's default is false).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import hashlib
import json
import re
from collections import Counter

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.mig import _layout
from ansible_collections.gpuops.vgpu.plugins.module_utils.mig._profiles import mig_model

MODES = ("none", "time-slicing", "mps", "mig")
CONFIG_LABEL = "nvidia.com/device-plugin.config"
CLUSTER_POLICY = "cluster-policy"  # the GPU Operator Helm chart's ClusterPolicy
# The licensing object's kinds and the ClusterPolicy field that names each (api/nvidia/v1/clusterpolicy_types.go).
LICENSING_KINDS = {"Secret": "secretName", "ConfigMap": "configMapName"}
TOKEN_KEY = "client_configuration_token.tok"
GPU_RESOURCE = "nvidia.com/gpu"
# Lowest compute capability per architecture as nvidia-smi -q names it (CUDA C Programming Guide, appendix
# "Compute Capabilities"); enough for the MPS rules below.
_ARCH_CC = {"Kepler": 3.0, "Maxwell": 5.0, "Pascal": 6.0, "Volta": 7.0, "Turing": 7.5, "Ampere": 8.0,
            "Ada Lovelace": 8.9, "Hopper": 9.0, "Blackwell": 10.0}
MPS_MIN_CC = 3.5  # CUDA MPS documentation, "Hardware" requirements
_LABEL_MAX = 63  # Kubernetes label values
_DIGEST_LENGTH = 10
MIN_REPLICAS = 2  # NVIDIA/k8s-device-plugin api/config/v1/replicas.go: "number of replicas must be >= 2"


def _cc(gpu):
    return _ARCH_CC.get(gpu.get("product_architecture") or "")


def _mps_max_clients(gpu):
    cc = _cc(gpu)
    return 48 if cc is not None and cc >= 7.5 else 16


def _label(node, gpu):
    return "%s GPU %s (%s)" % (node, gpu.get("index"), gpu.get("name"))


def plan(node, gpus, mode, replicas=None, mig_strategy=None, mig_layout=None, rename_by_default=False,
         fail_requests_greater_than_one=False):
    """What the device plugin on ``node`` (whose GPUs ``gpus`` are nvidia_smi_info's) is configured with and will
    advertise. Refuses, with the value and the fix, what the device plugin or the GPUs cannot do."""
    if mode not in MODES:
        raise InputError("%s: sharing mode %r is not one of %s." % (node, mode, ", ".join(MODES)),
                         hint="Set k8s_gpu_sharing_mode to one of them.")
    if not gpus:
        raise InputError("%s has no NVIDIA GPU that nvidia-smi reports." % node,
                         hint="Install the GPU driver first (grid_driver), or leave the node out of k8s_gpu_nodes.")
    config = {"version": "v1", "flags": {"migStrategy": "none"}}
    advertised = Counter()
    notes = []
    if mode in ("time-slicing", "mps"):
        if isinstance(replicas, str) and re.match(r"^-?\d+$", replicas.strip()):
            replicas = int(replicas)
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < MIN_REPLICAS:
            raise InputError("%s: %s replicas %r: the NVIDIA device plugin takes a whole number of %d or more and "
                             "does not start with fewer (api/config/v1/replicas.go)." % (node, mode, replicas,
                                                                                         MIN_REPLICAS),
                             hint="Set k8s_gpu_sharing_replicas to how many pods may share one GPU, 2 or more, or "
                             "k8s_gpu_sharing_mode to none to give each pod a whole GPU.")
        if mode == "mps":
            _check_mps(node, gpus, replicas)
        shared = {"resources": [{"name": GPU_RESOURCE, "replicas": replicas}]}
        if rename_by_default:
            shared["renameByDefault"] = True
        if fail_requests_greater_than_one:
            shared["failRequestsGreaterThanOne"] = True
        config["sharing"] = {"timeSlicing" if mode == "time-slicing" else "mps": shared}
        name = GPU_RESOURCE + (".shared" if rename_by_default else "")
        advertised[name] = len(gpus) * replicas
        readable = "%s-%d" % (mode, replicas)
    elif mode == "mig":
        readable = _mig(node, gpus, mig_strategy, mig_layout, config, advertised, notes)
    else:
        advertised[GPU_RESOURCE] = len(gpus)
        readable = "none"
    return {"node": node, "mode": mode, "config_name": config_name(readable, config), "config": config,
            "advertised": dict(advertised), "gpu_count": advertised.get(GPU_RESOURCE, 0) + advertised.get(
                GPU_RESOURCE + ".shared", 0), "notes": notes}


def config_name(readable, config):
    """The name of ``config`` in the device plugin ConfigMap and in the node label: ``readable`` (the mode, replicas,
    MIG profiles) and a digest of the whole canonical config, so two configs that differ in anything
    (``renameByDefault``, ``failRequestsGreaterThanOne``...) never share a name. A ConfigMap key and a label value
    (at most 63 characters of ``[-._a-zA-Z0-9]``, alphanumeric at both ends) alike."""
    canonical = json.dumps(config, sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:_DIGEST_LENGTH]
    readable = re.sub(r"[^-._a-zA-Z0-9]+", "-", readable).strip("-._")
    return "%s-%s" % (readable[:_LABEL_MAX - _DIGEST_LENGTH - 1].rstrip("-._"), digest)


def _check_mps(node, gpus, replicas):
    for gpu in gpus:
        cc = _cc(gpu)
        if cc is not None and cc < MPS_MIN_CC:
            raise InputError("%s cannot run CUDA MPS: compute capability %s, MPS needs %s or later."
                             % (_label(node, gpu), cc, MPS_MIN_CC), hint="Use time-slicing on this node.")
        if gpu.get("mig_mode_current"):
            raise InputError("%s has MIG enabled; the device plugin does not support MPS on MIG devices."
                             % _label(node, gpu), hint="Disable MIG (gpuops.vgpu.nvidia_mig mig_mode=disabled) "
                             "or use mode mig.")
        if replicas > _mps_max_clients(gpu):
            raise InputError("%s: MPS replicas %d exceed the %d clients one MPS server takes on this GPU."
                             % (_label(node, gpu), replicas, _mps_max_clients(gpu)),
                             hint="Set k8s_gpu_sharing_replicas to %d or fewer." % _mps_max_clients(gpu))


def _mig(node, gpus, strategy, layout, config, advertised, notes):
    if strategy not in ("single", "mixed"):
        raise InputError("%s: MIG strategy %r is not single or mixed." % (node, strategy),
                         hint="Set k8s_gpu_sharing_mig_strategy to single (one profile, advertised as "
                         "nvidia.com/gpu) or mixed (nvidia.com/mig-<profile> per profile).")
    if layout in (None, "", []):
        raise InputError("%s: mode mig needs a layout." % node,
                         hint="Set k8s_gpu_sharing_mig_layout, e.g. all-1g.10gb or [3g.40gb, 3g.40gb].")
    profiles = Counter()
    for gpu in gpus:
        label = _label(node, gpu)
        if gpu.get("virtualization_mode") == "VGPU":
            raise InputError("%s is a vGPU; MIG on it is the hypervisor's (a MIG-backed vGPU profile)." % label,
                             hint="Use mode none or time-slicing on vGPU nodes, or a MIG-backed vGPU profile.")
        model = mig_model(gpu.get("name"))
        if model is None:
            raise InputError("%s has no MIG." % label, hint="Use time-slicing or MPS on this node.")
        names = [name for name, _start in _layout.check(_layout.resolve(layout, model, label), model, label)]
        profiles.update(names)
    if strategy == "single" and len(profiles) > 1:
        raise InputError("%s: MIG strategy single needs one profile on every GPU; the layout gives %s."
                         % (node, ", ".join(sorted(profiles))),
                         hint="Use strategy mixed, or a layout of one profile such as all-1g.10gb.")
    if strategy == "mixed" and len(profiles) == 1:
        notes.append("mixed strategy with one profile: pods request nvidia.com/mig-%s, not nvidia.com/gpu."
                     % next(iter(profiles)))
    config["flags"]["migStrategy"] = strategy
    if strategy == "single":
        advertised[GPU_RESOURCE] = sum(profiles.values())
    else:
        for name, count in profiles.items():
            advertised["nvidia.com/mig-" + name] = count
    return "mig-%s-%s" % (strategy, "-".join("%dx%s" % (c, n) for n, c in sorted(profiles.items())))


def objects(plans, namespace, configmap_name, cluster_policy_name=CLUSTER_POLICY, licensing=()):
    """The GPU Operator's device plugin ConfigMap with one config per plan and a default one, the ClusterPolicy
    patch that points the Operator at them (and at the licensing object of ``licensing``, ``{kind, name}`` per node
    that has a token) and sets the cluster's MIG strategy, and each node's label selecting its config. Refuses two
    MIG strategies and two licensing objects: the Operator has one of each per cluster."""
    import yaml  # the controller has PyYAML with ansible-core

    # Plain types: values coming through Ansible's templating are subclasses that PyYAML's safe dumper refuses.
    plans = json.loads(json.dumps(plans))
    default = {"version": "v1", "flags": {"migStrategy": "none"}}
    data = {config_name("none", default): yaml.safe_dump(default, default_flow_style=False, sort_keys=False)}
    for p in plans:
        text = yaml.safe_dump(p["config"], default_flow_style=False, sort_keys=False)
        if p["config_name"] != config_name(p["config_name"].rsplit("-", 1)[0], p["config"]) or \
                data.get(p["config_name"], text) != text:
            raise InputError("%s: config name %r does not identify its config; another node's config would take "
                             "its place in the ConfigMap." % (p["node"], p["config_name"]),
                             hint="Build each node's plan with gpuops.vgpu.k8s_sharing_plan and pass it unchanged.")
        data[p["config_name"]] = text
    spec = {"devicePlugin": {"config": {"name": configmap_name, "default": config_name("none", default)}}}
    strategy = mig_strategy(plans)
    if strategy:
        spec["mig"] = {"strategy": strategy}
    refs = sorted(set((ref["kind"], ref["name"]) for ref in json.loads(json.dumps(list(licensing or ())))))
    if len(refs) > 1:
        raise InputError("Licensing objects %s in one GPU Operator cluster: the Operator mounts one "
                         "(driver.licensingConfig)." % ", ".join("%s %s" % ref for ref in refs),
                         hint="Set k8s_gpu_sharing_licensing_kind and the licensing object's name the same on every "
                         "node that has a license token.")
    if refs:
        kind, name = refs[0]
        _licensing_kind(kind)
        spec["driver"] = {"licensingConfig": {LICENSING_KINDS[kind]: name, "nlsEnabled": True}}
    result = [{"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": configmap_name, "namespace": namespace}, "data": data},
              {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": cluster_policy_name},
               "spec": spec}]
    for p in plans:
        result.append({"apiVersion": "v1", "kind": "Node",
                       "metadata": {"name": p["node"], "labels": {CONFIG_LABEL: p["config_name"]}}})
    return result


def mig_strategy(plans):
    """The MIG strategy of the cluster the ``plans`` are for, or None when none of them is in mode mig. The GPU
    Operator sets the device plugin's ``MIG_STRATEGY`` from ClusterPolicy ``mig.strategy`` for every node, over the
    config's ``flags.migStrategy``, so nodes asking for two strategies cannot both get theirs."""
    by_strategy = {}
    for p in plans:
        if p.get("mode") == "mig":
            by_strategy.setdefault(p["config"]["flags"]["migStrategy"], []).append(p["node"])
    if len(by_strategy) > 1:
        raise InputError("MIG strategies %s in one GPU Operator cluster: the Operator sets one for every node "
                         "(ClusterPolicy mig.strategy, over each config's flags.migStrategy)." % "; ".join(
                             "%s on %s" % (s, ", ".join(sorted(nodes))) for s, nodes in sorted(by_strategy.items())),
                         hint="Set k8s_gpu_sharing_mig_strategy to the same value on every MIG node of the cluster.")
    return next(iter(by_strategy), None)


def _licensing_kind(kind):
    if kind not in LICENSING_KINDS:
        raise InputError("Licensing object kind %r is not Secret or ConfigMap." % (kind,),
                         hint="Use Secret (driver.licensingConfig.secretName, GPU Operator v25.10.0 and later), or "
                         "ConfigMap (driver.licensingConfig.configMapName) for an older Operator.")


def licensing_object(token, token_file_name, namespace, name, feature_type=1, kind="Secret"):
    """The GPU Operator's licensing object, a Secret (or a ConfigMap for Operators before v25.10.0): gridd.conf
    (FeatureType) and the client configuration token. With ``token`` None only the kind and the file name are
    checked (so a refusal can be shown without the token in the task)."""
    _licensing_kind(kind)
    if not (token_file_name or "").endswith(".tok"):
        raise InputError("License token file %r is not a client configuration token (.tok)." % token_file_name,
                         hint="Download the client configuration token from the NVIDIA License System; its name "
                         "ends in .tok.")
    if token is None:
        return None
    if not token.strip():
        raise InputError("The license token is empty.", hint="Set k8s_gpu_sharing_license_token from the vault.")
    data = {"gridd.conf": "# Written by gpuops.vgpu.k8s_gpu_sharing\nFeatureType=%d\n" % feature_type,
            TOKEN_KEY: token.strip()}
    result = {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": namespace}}
    if kind == "Secret":
        result["type"] = "Opaque"
        data = dict((key, base64.b64encode(value.encode("utf-8")).decode("ascii")) for key, value in data.items())
    result["data"] = data
    return result


def licensing_configmap(token, token_file_name, namespace, name, feature_type=1):
    """The licensing object as a ConfigMap, for GPU Operators before v25.10.0 (``licensing_object``)."""
    return licensing_object(token, token_file_name, namespace, name, feature_type, "ConfigMap")
