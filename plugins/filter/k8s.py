# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The k8s_gpu_sharing role's filters; the logic is in ``plugin_utils/_k8s_sharing.py``, the docs in the YAML files
of the same names."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._lazy import lazy_module
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._filter_errors import filter_errors

# Imported where a filter of this file runs (plugin_utils/_lazy.py says why).
_k8s_sharing = lazy_module("plugin_utils._k8s_sharing")


@filter_errors(InputError)
def k8s_sharing_plan(gpus, node, mode, replicas=None, mig_strategy=None, mig_layout=None, rename_by_default=False,
                     fail_requests_greater_than_one=False):
    """``nvidia_smi.gpus | gpuops.vgpu.k8s_sharing_plan(node, mode, ...)``: the device plugin config of a node."""
    return _k8s_sharing.plan(node, gpus, mode, replicas, mig_strategy, mig_layout, rename_by_default,
                             fail_requests_greater_than_one)


@filter_errors(InputError)
def k8s_sharing_objects(plans, namespace="gpu-operator", configmap_name="gpuops-device-plugin-config",
                        cluster_policy_name="cluster-policy", licensing=None):
    """``plans | gpuops.vgpu.k8s_sharing_objects(namespace, name)``: the ConfigMap, the ClusterPolicy patch and the
    nodes' labels."""
    return _k8s_sharing.objects(plans, namespace, configmap_name, cluster_policy_name, licensing or ())


@filter_errors(InputError)
def k8s_licensing_object(token, token_file_name, namespace="gpu-operator", name="licensing-config", feature_type=1,
                         kind="Secret"):
    """``token | gpuops.vgpu.k8s_licensing_object(file_name)``: the GPU Operator's licensing Secret (or ConfigMap)."""
    return _k8s_sharing.licensing_object(token, token_file_name, namespace, name, feature_type, kind)


@filter_errors(InputError)
def k8s_licensing_configmap(token, token_file_name, namespace="gpu-operator", name="licensing-config",
                            feature_type=1):
    """``token | gpuops.vgpu.k8s_licensing_configmap(file_name)``: the GPU Operator's licensing ConfigMap."""
    return _k8s_sharing.licensing_configmap(token, token_file_name, namespace, name, feature_type)


class FilterModule(object):
    """The k8s_gpu_sharing role's filters."""

    def filters(self):
        return {"k8s_sharing_plan": k8s_sharing_plan, "k8s_sharing_objects": k8s_sharing_objects,
                "k8s_licensing_object": k8s_licensing_object, "k8s_licensing_configmap": k8s_licensing_configmap}
