# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Device plugin configuration, advertised resources and refusals of the k8s_gpu_sharing rules, from recorded
nvidia-smi -q outputs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import itertools
import json
import os
import re

import pytest
import yaml

from ansible_collections.gpuops.vgpu.tests.unit.plugins.nvidia_smi_fixtures import read
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import parse_query
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _k8s_sharing


def gpus(name, count=1):
    return parse_query(read(name))["gpus"] * count


H100 = "q_h100_80gb_hbm3_passthrough_ecc_on_driver590.txt"
H100_MIG = "q_h100_80gb_mig_enabled_driver590.txt"
L40S = "q_l40s_ada_passthrough_driver595.txt"
VGPU = "q_vgpu_guest_grid_a100-4c_licensed_expiry_driver510_TRUNCATED.txt"
TITAN_V = "q_titan_v_volta_driver560.txt"


def test_time_slicing_in_the_device_plugins_schema():
    plan = _k8s_sharing.plan("node-1", gpus(L40S, 2), "time-slicing", 4)
    assert plan["config"] == {"version": "v1", "flags": {"migStrategy": "none"},
                              "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}}}
    assert plan["advertised"] == {"nvidia.com/gpu": 8} and plan["gpu_count"] == 8
    assert re.match(r"^time-slicing-4-[0-9a-f]{10}$", plan["config_name"])


def test_renamed_mps_with_failing_large_requests():
    plan = _k8s_sharing.plan("n", gpus(H100), "mps", 10, rename_by_default=True, fail_requests_greater_than_one=True)
    assert plan["config"]["sharing"] == {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 10}],
                                                 "renameByDefault": True, "failRequestsGreaterThanOne": True}}
    assert plan["advertised"] == {"nvidia.com/gpu.shared": 10} and plan["gpu_count"] == 10


def test_no_sharing_advertises_each_gpu_once():
    plan = _k8s_sharing.plan("n", gpus(VGPU), "none")
    assert plan["advertised"] == {"nvidia.com/gpu": 1} and "sharing" not in plan["config"]


@pytest.mark.parametrize("layout, strategy, advertised", [
    ("all-1g.10gb", "single", {"nvidia.com/gpu": 7}),
    (["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"], "mixed",
     {"nvidia.com/mig-3g.40gb": 1, "nvidia.com/mig-2g.20gb": 1, "nvidia.com/mig-1g.10gb": 2}),
    # A mixed strategy with one profile is valid for the device plugin (it advertises nvidia.com/mig-<profile>).
    ("all-3g.40gb", "mixed", {"nvidia.com/mig-3g.40gb": 2}),
])
def test_mig_strategies(layout, strategy, advertised):
    plan = _k8s_sharing.plan("n", gpus(H100), "mig", mig_strategy=strategy, mig_layout=layout)
    assert plan["config"] == {"version": "v1", "flags": {"migStrategy": strategy}}
    assert plan["advertised"] == advertised


def test_mixed_with_one_profile_gets_a_note_not_a_refusal():
    plan = _k8s_sharing.plan("n", gpus(H100, 2), "mig", mig_strategy="mixed", mig_layout="all-3g.40gb")
    assert plan["advertised"] == {"nvidia.com/mig-3g.40gb": 4}
    assert "nvidia.com/mig-3g.40gb" in plan["notes"][0]


@pytest.mark.parametrize("args, message", [
    (dict(gpus_from=L40S, mode="time-slicing", replicas=0), "time-slicing replicas 0: the NVIDIA device plugin"),
    # NVIDIA/k8s-device-plugin api/config/v1/replicas.go refuses replicas below 2; the plugin does not start.
    (dict(gpus_from=L40S, mode="time-slicing", replicas=1), "time-slicing replicas 1: the NVIDIA device plugin "
     "takes a whole number of 2 or more"),
    (dict(gpus_from=L40S, mode="mps", replicas="1"), "mps replicas 1: the NVIDIA device plugin"),
    (dict(gpus_from=L40S, mode="mps", replicas=-1), "mps replicas -1"),
    (dict(gpus_from=L40S, mode="time-slicing", replicas=None), "replicas None"),
    (dict(gpus_from=L40S, mode="sliced"), "sharing mode 'sliced' is not one of"),
    (dict(gpus_from=H100, mode="mps", replicas=49), "MPS replicas 49 exceed the 48 clients"),
    (dict(gpus_from=TITAN_V, mode="mps", replicas=17), "MPS replicas 17 exceed the 16 clients"),
    (dict(gpus_from=H100_MIG, mode="mps", replicas=2), "has MIG enabled"),
    (dict(gpus_from=L40S, mode="mig", mig_strategy="single", mig_layout="all-1g.10gb"), "(NVIDIA L40S) has no MIG"),
    (dict(gpus_from=VGPU, mode="mig", mig_strategy="single", mig_layout="all-1g.5gb"), "is a vGPU"),
    (dict(gpus_from=H100, mode="mig", mig_strategy="single", mig_layout=["3g.40gb", "4g.40gb"]),
     "strategy single needs one profile on every GPU; the layout gives 3g.40gb, 4g.40gb"),
    (dict(gpus_from=H100, mode="mig", mig_strategy="single", mig_layout=["4g.40gb", "4g.40gb"]), "holds at most 1"),
    (dict(gpus_from=H100, mode="mig", mig_strategy="both", mig_layout="all-1g.10gb"), "'both' is not single or mixed"),
    (dict(gpus_from=H100, mode="mig", mig_strategy="single"), "mode mig needs a layout"),
])
def test_refusals_name_the_value(args, message):
    source = args.pop("gpus_from")
    with pytest.raises(InputError) as err:
        _k8s_sharing.plan("node-1", gpus(source), **args)
    assert message in str(err.value)
    assert err.value.hint


def test_a_node_without_gpus_is_refused():
    with pytest.raises(InputError, match="node-1 has no NVIDIA GPU"):
        _k8s_sharing.plan("node-1", [], "none")


def test_objects_carry_every_nodes_config_and_one_label_per_node():
    plans = [_k8s_sharing.plan("a", gpus(L40S), "time-slicing", 4),
             _k8s_sharing.plan("b", gpus(H100), "mig", mig_strategy="single", mig_layout="all-1g.10gb")]
    configmap, policy, node_a, node_b = _k8s_sharing.objects(plans, "gpu-operator", "dp-config")
    assert configmap["metadata"] == {"name": "dp-config", "namespace": "gpu-operator"}
    name_a, name_b = plans[0]["config_name"], plans[1]["config_name"]
    assert name_a.startswith("time-slicing-4-") and name_b.startswith("mig-single-7x1g.10gb-")
    default = policy["spec"]["devicePlugin"]["config"]["default"]
    assert sorted(configmap["data"]) == sorted([name_a, name_b, default])
    assert yaml.safe_load(configmap["data"][name_a]) == plans[0]["config"]
    assert node_a["metadata"] == {"name": "a", "labels": {"nvidia.com/device-plugin.config": name_a}}
    assert node_b["metadata"]["labels"]["nvidia.com/device-plugin.config"] == name_b


def _every_plan():
    """A plan for every combination of the role's sharing options on an H100 80GB (two GPUs)."""
    h100 = gpus(H100, 2)
    for mode, replicas, rename, fail in itertools.product(("time-slicing", "mps"), (2, 3, 4, 7, 10, 48),
                                                          (False, True), (False, True)):
        yield _k8s_sharing.plan("n", h100, mode, replicas, rename_by_default=rename,
                                fail_requests_greater_than_one=fail)
    layouts = ("all-1g.10gb", "all-1g.20gb", "all-2g.20gb", "all-3g.40gb", "all-balanced", ["7g.80gb"],
               ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"], ["1g.10gb+me", "1g.10gb", "2g.20gb", "3g.40gb"],
               ["4g.40gb", "2g.20gb", "1g.10gb"], ["4g.40gb", "3g.40gb"])
    for strategy, layout in itertools.product(("single", "mixed"), layouts):
        try:
            yield _k8s_sharing.plan("n", h100, "mig", mig_strategy=strategy, mig_layout=layout)
        except InputError:
            pass  # single with several profiles
    yield _k8s_sharing.plan("n", h100, "none")


def test_two_differing_configs_never_share_a_name():
    """Every name identifies its config: a node on time-slicing 4 and one on time-slicing 4 with renameByDefault
    (or failRequestsGreaterThanOne) get different names, so the one ConfigMap holds both and each node's label
    selects its own config."""
    by_name = {}
    for plan in _every_plan():
        by_name.setdefault(plan["config_name"], []).append(plan["config"])
    assert len(by_name) > 60
    for name, configs in by_name.items():
        assert all(config == configs[0] for config in configs), name
        # A ConfigMap key and a label value.
        assert re.match(r"^[a-zA-Z0-9]([-._a-zA-Z0-9]{0,61}[a-zA-Z0-9])?$", name), name


def test_a_node_on_renamed_time_slicing_keeps_its_own_config():
    plans = [_k8s_sharing.plan("a", gpus(L40S), "time-slicing", 4),
             _k8s_sharing.plan("b", gpus(L40S), "time-slicing", 4, rename_by_default=True),
             _k8s_sharing.plan("c", gpus(L40S), "time-slicing", 4, fail_requests_greater_than_one=True),
             _k8s_sharing.plan("d", gpus(L40S, 2), "time-slicing", 4)]
    objects = _k8s_sharing.objects(plans, "gpu-operator", "dp-config")
    data = objects[0]["data"]
    assert len(data) == 4  # three configs and the default
    for plan, node in zip(plans, objects[2:]):
        assert yaml.safe_load(data[node["metadata"]["labels"]["nvidia.com/device-plugin.config"]]) == plan["config"]


def test_a_plan_whose_name_does_not_match_its_config_is_refused():
    plans = [_k8s_sharing.plan("a", gpus(L40S), "time-slicing", 4),
             _k8s_sharing.plan("b", gpus(L40S), "time-slicing", 4, rename_by_default=True)]
    plans[1]["config_name"] = plans[0]["config_name"]
    with pytest.raises(InputError, match="b: config name 'time-slicing-4-[0-9a-f]+' does not identify its config"):
        _k8s_sharing.objects(plans, "gpu-operator", "dp-config")


def _mig_plan(node, strategy, layout="all-3g.40gb"):
    return _k8s_sharing.plan(node, gpus(H100), "mig", mig_strategy=strategy, mig_layout=layout)


def test_cluster_policy_patch_names_the_configmap_its_default_and_the_mig_strategy():
    """NVIDIA/gpu-operator: ClusterPolicy spec.devicePlugin.config.name/.default (api/nvidia/v1) and spec.mig.strategy,
    which the Operator sets as the device plugin's MIG_STRATEGY on every node (controllers/object_controls.go)."""
    plans = [_mig_plan("a", "mixed"), _mig_plan("b", "mixed", ["4g.40gb", "3g.40gb"]),
             _k8s_sharing.plan("c", gpus(L40S), "time-slicing", 4)]
    configmap, policy = _k8s_sharing.objects(plans, "gpu-operator", "dp-config", "my-policy")[:2]
    default = policy["spec"]["devicePlugin"]["config"]["default"]
    assert policy == {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "my-policy"},
                      "spec": {"devicePlugin": {"config": {"name": "dp-config", "default": default}},
                               "mig": {"strategy": "mixed"}}}
    assert yaml.safe_load(configmap["data"][default]) == {"version": "v1", "flags": {"migStrategy": "none"}}


CRD = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "fixtures", "specs",
                                    "gpu-operator-clusterpolicies-crd.yaml"))


def _against_schema(value, schema, path):
    """Strict: every key of ``value`` is a property of ``schema`` (a patch, so required fields may be absent)."""
    kind = schema.get("type")
    if kind == "object":
        assert isinstance(value, dict), path
        for key, item in value.items():
            assert key in schema.get("properties", {}), "%s.%s is not a ClusterPolicy field" % (path, key)
            _against_schema(item, schema["properties"][key], "%s.%s" % (path, key))
    elif kind == "string":
        assert isinstance(value, str), path
        assert value in schema.get("enum", [value]), "%s: %r is not one of %s" % (path, value, schema["enum"])
    elif kind == "boolean":
        assert isinstance(value, bool), path
    else:
        raise AssertionError("%s: schema type %r not handled here" % (path, kind))


@pytest.mark.parametrize("plans", [
    [_mig_plan("a", "mixed"), _k8s_sharing.plan("c", gpus(L40S), "time-slicing", 4)],
    [_mig_plan("a", "single", "all-1g.10gb")],
    [_k8s_sharing.plan("c", gpus(L40S), "mps", 4)],
])
@pytest.mark.parametrize("licensing", [(), [{"kind": "Secret", "name": "lic"}], [{"kind": "ConfigMap", "name": "lic"}]])
def test_cluster_policy_patch_matches_the_operators_crd(plans, licensing):
    if not os.path.isfile(CRD):
        raise AssertionError("%s is missing; restore tests/fixtures/specs from git" % CRD)
    with open(CRD) as handle:
        crd = yaml.safe_load(handle)
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    policy = _k8s_sharing.objects(plans, "gpu-operator", "dp-config", licensing=licensing)[1]
    assert (policy["apiVersion"], policy["kind"]) == ("%s/v1" % crd["spec"]["group"], crd["spec"]["names"]["kind"])
    _against_schema(policy["spec"], version["schema"]["openAPIV3Schema"]["properties"]["spec"], "spec")


def test_without_a_mig_node_the_cluster_policy_keeps_its_mig_strategy():
    policy = _k8s_sharing.objects([_k8s_sharing.plan("c", gpus(L40S), "time-slicing", 4)], "ns", "dp-config")[1]
    assert policy["metadata"] == {"name": "cluster-policy"} and "mig" not in policy["spec"]


def test_two_mig_strategies_in_one_operator_cluster_are_refused():
    plans = [_mig_plan("a", "single"), _mig_plan("b", "mixed"), _mig_plan("c", "single")]
    with pytest.raises(InputError) as err:
        _k8s_sharing.objects(plans, "gpu-operator", "dp-config")
    assert "MIG strategies mixed on b; single on a, c in one GPU Operator cluster" in str(err.value)
    assert "k8s_gpu_sharing_mig_strategy" in err.value.hint


def test_licensing_secret_by_default():
    """NVIDIA/gpu-operator v25.10.0 and later: driver.licensingConfig.secretName; the Operator mounts gridd.conf and,
    with nlsEnabled, client_configuration_token.tok from it (controllers/object_controls.go)."""
    secret = _k8s_sharing.licensing_object("tok-content\n", "client_configuration_token_x.tok", "gpu-operator",
                                           "licensing-config")
    assert secret["kind"] == "Secret" and secret["type"] == "Opaque"
    assert secret["metadata"] == {"name": "licensing-config", "namespace": "gpu-operator"}
    assert sorted(secret["data"]) == ["client_configuration_token.tok", "gridd.conf"]
    assert base64.b64decode(secret["data"]["client_configuration_token.tok"]) == b"tok-content"
    assert "FeatureType=1" in base64.b64decode(secret["data"]["gridd.conf"]).decode().splitlines()
    assert "tok-content" not in json.dumps(secret)


def test_licensing_configmap_for_older_operators():
    cm = _k8s_sharing.licensing_object("tok", "x.tok", "gpu-operator", "lic", kind="ConfigMap")
    assert cm["kind"] == "ConfigMap" and cm["data"]["client_configuration_token.tok"] == "tok"


@pytest.mark.parametrize("kind, field", [("Secret", "secretName"), ("ConfigMap", "configMapName")])
def test_cluster_policy_points_at_the_licensing_object_with_nls_enabled(kind, field):
    plans = [_k8s_sharing.plan("c", gpus(VGPU), "time-slicing", 4)]
    refs = [{"kind": kind, "name": "lic"}, {"kind": kind, "name": "lic"}]
    policy = _k8s_sharing.objects(plans, "gpu-operator", "dp-config", licensing=refs)[1]
    assert policy["spec"]["driver"] == {"licensingConfig": {field: "lic", "nlsEnabled": True}}


def test_two_licensing_objects_in_one_cluster_are_refused():
    plans = [_k8s_sharing.plan("c", gpus(VGPU), "time-slicing", 4)]
    refs = [{"kind": "Secret", "name": "lic"}, {"kind": "ConfigMap", "name": "lic"}]
    with pytest.raises(InputError, match="Licensing objects ConfigMap lic, Secret lic in one GPU Operator cluster"):
        _k8s_sharing.objects(plans, "gpu-operator", "dp-config", licensing=refs)


def test_licensing_kind_other_than_secret_or_configmap_is_refused_before_the_token_is_read():
    with pytest.raises(InputError, match="Licensing object kind 'Opaque' is not Secret or ConfigMap") as err:
        _k8s_sharing.licensing_object(None, "x.tok", "ns", "n", kind="Opaque")
    assert "v25.10.0" in err.value.hint


def test_licensing_configmap():
    cm = _k8s_sharing.licensing_configmap("tok-content\n", "client_configuration_token_x.tok", "gpu-operator",
                                          "licensing-config")
    assert cm["data"]["client_configuration_token.tok"] == "tok-content"
    assert "FeatureType=1" in cm["data"]["gridd.conf"].splitlines()


@pytest.mark.parametrize("token, name, message", [
    ("t", "token.txt", "'token.txt' is not a client configuration token (.tok)"),
    ("t", "", "'' is not a client configuration token"),
    ("  ", "x.tok", "The license token is empty"),
])
def test_licensing_refusals_never_show_the_token(token, name, message):
    with pytest.raises(InputError) as err:
        _k8s_sharing.licensing_configmap(token, name, "gpu-operator", "licensing-config")
    assert message in str(err.value)


def test_file_name_alone_can_be_checked():
    assert _k8s_sharing.licensing_configmap(None, "a.tok", "ns", "n") is None
