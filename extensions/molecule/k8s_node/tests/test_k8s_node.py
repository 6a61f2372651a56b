# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes GPU nodes: containerd's own view of the nvidia runtime, no restart on the second run, the CDI spec,
the written objects against the Kubernetes schemas, the MIG layouts as the stand-in nvidia-smi holds them, and
every refusal with nothing changed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import os
import re
import subprocess
import tempfile

import pytest
import yaml

MIG = "gpuops-k8s-mig"
VGPU = "gpuops-k8s-vgpu"
RUNTIME = "/usr/bin/nvidia-container-runtime"
OBJECTS = "/etc/gpuops/k8s/objects"
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
# kubernetes-validate (tests/requirements.txt) carries the Kubernetes JSON schemas in its package: no network.
VALIDATE = os.environ.get("KUBERNETES_VALIDATE", os.path.join(ROOT, ".venv", "bin", "kubernetes-validate"))


def name_of(host):
    return host.backend.get_hostname()


def outcomes(host):
    return json.loads(host.file("/var/lib/gpuops-lab/outcomes.json").content_string)


def test_containerd_itself_knows_the_nvidia_runtime(host):
    dump = host.check_output("containerd config dump")
    config = __import__("tomllib").loads(dump)
    runtimes = config["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]
    assert runtimes["nvidia"]["runtime_type"] == "io.containerd.runc.v2"
    assert runtimes["nvidia"]["options"]["BinaryName"] == RUNTIME
    assert "runc" in runtimes  # containerd's own default stays


def test_the_cri_plugin_loaded_the_nvidia_handler(host):
    # containerd's CRI plugin logs its runtime list as it starts ("Start cri plugin with config {...}").
    log = host.check_output("journalctl -u containerd --no-pager -o cat | grep 'Start cri plugin with config' | tail -n 1")
    assert "nvidia:{Type:io.containerd.runc.v2" in log
    assert "BinaryName:%s" % RUNTIME in log


def test_the_cri_plugin_is_up(host):
    # A configuration that loses runc (the default runtime) leaves the CRI plugin in "error".
    plugins = host.check_output("ctr plugins ls")
    assert any(line.split()[:2] == ["io.containerd.grpc.v1", "cri"] and line.split()[-1] == "ok"
               for line in plugins.splitlines()), plugins


def systemd_properties(text):
    return dict(line.split("=", 1) for line in text.split())


def test_the_second_run_did_not_restart_containerd(host):
    first = systemd_properties(host.file("/var/lib/gpuops-lab/containerd-first.txt").content_string)
    # The vGPU node's side effect restarts containerd afterwards; it recorded containerd before.
    second = host.file("/var/lib/gpuops-lab/containerd-second.txt")
    now = systemd_properties(second.content_string if second.exists else host.check_output(
        "systemctl show containerd -p MainPID -p ExecMainStartTimestampMonotonic"))
    assert now == first and int(now["MainPID"]) > 0
    assert host.service("containerd").is_running


def test_a_configuration_containerd_has_not_read_since_it_changed_restarts_it(host):
    """The side effect left containerd running on a configuration without the nvidia runtime, the file with it (a
    run killed between the write and the restart): the next run wrote nothing and restarted containerd, which
    now runs the nvidia runtime (test_the_cri_plugin_loaded_the_nvidia_handler reads its last start)."""
    if name_of(host) != VGPU:
        pytest.skip("the case runs on the vGPU node")
    assert outcomes(host)["interrupted_restart"] == {
        "unapplied": {"containerd": ["/etc/containerd/config.toml"]}, "reconfigured": []}
    interrupted = systemd_properties(host.file("/var/lib/gpuops-lab/containerd-interrupted.txt").content_string)
    now = systemd_properties(host.check_output("systemctl show containerd -p ExecMainStartTimestampMonotonic"))
    assert int(now["ExecMainStartTimestampMonotonic"]) > int(interrupted["ExecMainStartTimestampMonotonic"])


def test_the_toolkit_is_installed_and_the_driver_untouched(host):
    assert host.package("nvidia-container-toolkit").version == "1.17.8-1"
    assert host.package("nvidia-container-toolkit-base").is_installed
    if name_of(host) == VGPU:
        assert host.package("nvidia-linux-grid-510").version == "510.47.03"


def test_cdi_spec_names_every_gpu_and_mig_device(host):
    spec = yaml.safe_load(host.file("/etc/cdi/nvidia.yaml").content_string)
    assert spec["kind"] == "nvidia.com/gpu"
    names = [device["name"] for device in spec["devices"]]
    listing = host.check_output("nvidia-smi -L")
    if name_of(host) == MIG:
        # Written by the converge, when the H100 held seven 1g.10gb instances.
        assert names[:2] == ["0", "GPU-00000000-0000-0000-0000-000000000000"]
        assert ["0:%d" % i for i in range(7)] == [n for n in names if ":" in n]
    else:
        assert "GRID" in listing or names
    assert names[-1] == "all"


def test_device_plugin_configuration_in_upstream_schema(host):
    config = yaml.safe_load(host.file("/etc/gpuops/k8s/device-plugin-config.yaml").content_string)
    if name_of(host) == MIG:
        assert config == {"version": "v1", "flags": {"migStrategy": "single"}}
    else:
        assert config == {"version": "v1", "flags": {"migStrategy": "none"},
                          "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}}}


def test_configmap_has_every_nodes_config_and_the_label_selects_this_ones(host):
    configmap = yaml.safe_load(host.file(OBJECTS + "/device-plugin-configmap.yaml").content_string)
    assert configmap["metadata"] == {"name": "gpuops-device-plugin-config", "namespace": "gpu-operator"}
    # Each name: readable, then a digest of the config it names; "none" is the default config.
    assert sorted(re.sub(r"-[0-9a-f]{10}$", "", name) for name in configmap["data"]) == [
        "mig-single-7x1g.10gb", "none", "time-slicing-4"]
    policy = yaml.safe_load(host.file(OBJECTS + "/cluster-policy-patch.yaml").content_string)
    assert policy["kind"] == "ClusterPolicy" and policy["spec"]["mig"] == {"strategy": "single"}
    assert policy["spec"]["devicePlugin"]["config"]["name"] == "gpuops-device-plugin-config"
    assert policy["spec"]["devicePlugin"]["config"]["default"] in configmap["data"]
    label = yaml.safe_load(host.file(OBJECTS + "/node-label.yaml").content_string)
    assert label["kind"] == "Node" and label["metadata"]["name"] == name_of(host)
    selected = label["metadata"]["labels"]["nvidia.com/device-plugin.config"]
    assert yaml.safe_load(configmap["data"][selected]) == yaml.safe_load(
        host.file("/etc/gpuops/k8s/device-plugin-config.yaml").content_string)


def test_licensing_secret_only_on_the_vgpu_node_and_private(host):
    licensing = host.file(OBJECTS + "/licensing-secret.yaml")
    if name_of(host) == MIG:
        assert not licensing.exists
        return
    assert licensing.mode == 0o600
    data = yaml.safe_load(licensing.content_string)
    token = host.file("/srv/lab-artifacts/client_configuration_token_05-26-2022-00-08-28.tok").content_string
    assert data["kind"] == "Secret" and data["metadata"] == {"name": "licensing-config", "namespace": "gpu-operator"}
    assert base64.b64decode(data["data"]["client_configuration_token.tok"]).decode() == token.strip()
    assert "FeatureType=1" in base64.b64decode(data["data"]["gridd.conf"]).decode().splitlines()
    # The GPU Operator mounts the token only with nlsEnabled (controllers/object_controls.go).
    policy = yaml.safe_load(host.file(OBJECTS + "/cluster-policy-patch.yaml").content_string)
    assert policy["spec"]["driver"] == {"licensingConfig": {"secretName": "licensing-config", "nlsEnabled": True}}


def test_written_objects_are_valid_kubernetes_objects(host):
    if not os.access(VALIDATE, os.X_OK):
        pytest.fail("kubernetes-validate is not at %s (make deps installs it from tests/requirements.txt, or set "
                    "KUBERNETES_VALIDATE)" % VALIDATE)
    folder = tempfile.mkdtemp(prefix="gpuops-k8s-objects.")
    # The ClusterPolicy is the GPU Operator's custom resource: kubernetes-validate has no schema for it; the unit
    # tests hold it to the Operator's CRD (tests/fixtures/specs).
    names = [n for n in host.check_output("ls %s" % OBJECTS).split() if n != "cluster-policy-patch.yaml"]
    assert names
    for name in names:
        with open(os.path.join(folder, name), "w") as handle:
            handle.write(host.file(os.path.join(OBJECTS, name)).content_string)
    run = subprocess.run([VALIDATE, "--strict", "-k", "1.31.0"] + [os.path.join(folder, n) for n in sorted(names)],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count(" passed for resource ") == len(names), run.stdout


def test_nvidia_mig_check_mode_predicts_and_changes_nothing(host):
    if name_of(host) != MIG:
        pytest.skip("MIG cases run on the passthrough node")
    case = outcomes(host)["check_mode"]
    assert case["result"]["changed"] is True and case["result"]["commands"] == []
    assert sorted(gi["profile"] for gi in case["state"]["gpus"][0]["instances"]) == ["1g.10gb"] * 7
    assert case["result"]["diff"]["after"]["0"]["layout"] == ["3g.40gb", "4g.40gb"]


def layout(case):
    return sorted((gi["profile"], gi["start"]) for gi in case["state"]["gpus"][0]["instances"])


def test_nvidia_mig_changes_the_layout_then_leaves_it(host):
    if name_of(host) != MIG:
        pytest.skip("MIG cases run on the passthrough node")
    cases = outcomes(host)
    assert cases["change"]["result"]["changed"] is True
    assert layout(cases["change"]) == [("3g.40gb", 4), ("4g.40gb", 0)]
    assert all(len(gi["compute"]) == 1 for gi in cases["change"]["state"]["gpus"][0]["instances"])
    assert cases["rerun"]["result"]["changed"] is False and cases["rerun"]["result"]["commands"] == []
    assert cases["rerun"]["state"] == cases["change"]["state"]


def test_nvidia_mig_keeps_the_instance_that_matches(host):
    if name_of(host) != MIG:
        pytest.skip("MIG cases run on the passthrough node")
    cases = outcomes(host)
    kept = [gi["id"] for gi in cases["change"]["state"]["gpus"][0]["instances"] if gi["profile"] == "3g.40gb"]
    after = cases["partial"]["state"]["gpus"][0]["instances"]
    assert [gi["id"] for gi in after if gi["profile"] == "3g.40gb"] == kept
    assert layout(cases["partial"]) == [("1g.10gb", 2), ("1g.10gb", 3), ("2g.20gb", 0), ("3g.40gb", 4)]


@pytest.mark.parametrize("case, phrases", [
    ("too_many_4g", ["2 x 4g.40gb", "holds at most 1"]),
    ("no_placement", ["3g.40gb+3g.40gb+1g.10gb overfills GPU 0", "memory slices"]),
    ("too_many_slices", ["8 compute slices", "has 7"]),
    ("other_gpus_profile", ["'1g.5gb' is not offered by GPU 0 (NVIDIA H100 80GB HBM3)", "1g.10gb"]),
    ("unknown_named_layout", ["'all-2g.10gb'"]),
    ("no_such_gpu", ["GPU index 3 is not on this node"]),
    ("layout_with_mig_off", ["layout was given with mig_mode=disabled"]),
    ("l40s", ["GPU 1 (NVIDIA L40S) has no MIG mode"]),
])
def test_nvidia_mig_refuses_before_any_change(host, case, phrases):
    if name_of(host) != MIG:
        pytest.skip("MIG cases run on the passthrough node")
    cases = outcomes(host)
    assert cases[case]["failed"] is True
    for phrase in phrases:
        assert phrase in cases[case]["msg"]
    before = cases["partial"] if case != "l40s" else cases["enable_reset"]
    assert cases[case]["state"]["gpus"][0] == before["state"]["gpus"][0]


def test_nvidia_mig_mode_changes_say_when_a_reset_is_needed(host):
    if name_of(host) != MIG:
        pytest.skip("MIG cases run on the passthrough node")
    cases = outcomes(host)
    disabled = cases["disable"]["state"]["gpus"][0]
    assert disabled["mig"] == {"current": False, "pending": False} and disabled["instances"] == []
    pending = cases["enable_pending"]
    assert pending["result"]["reset_required"] is True and pending["result"]["changed"] is True
    assert pending["state"]["gpus"][0]["mig"] == {"current": False, "pending": True}
    assert pending["state"]["gpus"][0]["instances"] == []
    done = cases["enable_reset"]
    assert done["result"]["reset_required"] is False
    assert done["state"]["gpus"][0]["mig"] == {"current": True, "pending": True}
    assert layout(done) == [("3g.40gb", 0), ("3g.40gb", 4)]


def test_nvidia_mig_reads_a_vgpu_and_refuses_to_change_it(host):
    if name_of(host) != VGPU:
        pytest.skip("vGPU cases run on the vGPU node")
    cases = outcomes(host)
    read = cases["vgpu_read"]["result"]
    assert read["changed"] is False and read["gpus"][0]["virtualization_mode"] == "VGPU"
    assert read["gpus"][0]["name"] == "GRID A100-4C"
    assert cases["vgpu_change"]["failed"] is True
    assert "is a vGPU; its MIG mode and layout cannot be changed from the guest" in cases["vgpu_change"]["msg"]


@pytest.mark.parametrize("node, case, phrases", [
    (MIG, "mps_on_mig", ["has MIG enabled", "does not support MPS"]),
    (MIG, "mig_on_l40s", ["GPU 1 (NVIDIA L40S) has no MIG"]),
    (MIG, "single_with_two_profiles", ["strategy single needs one profile", "3g.40gb, 4g.40gb"]),
    (VGPU, "replicas_one", ["time-slicing replicas 1: the NVIDIA device plugin takes a whole number of 2 or more"]),
    (VGPU, "replicas_negative", ["replicas -2"]),
    (VGPU, "mps_too_many", ["MPS replicas 64 exceed the 48 clients"]),
    (VGPU, "mig_on_vgpu", ["is a vGPU; MIG on it is the hypervisor's"]),
    (VGPU, "token_not_tok", ["'client_configuration_token.txt' is not a client configuration token (.tok)"]),
    (VGPU, "runtime_not_installed", ["docker in container_toolkit_runtimes is not installed", "Nothing was changed"]),
])
def test_roles_refuse_before_any_change(host, node, case, phrases):
    if name_of(host) != node:
        pytest.skip("case of the other node")
    outcome = outcomes(host)[case]
    assert outcome["failed"] is True, case
    for phrase in phrases:
        assert phrase in outcome["msg"]
    assert outcome["unchanged"] is True
    assert "a-token-that-never-gets-written" not in outcome["msg"]
