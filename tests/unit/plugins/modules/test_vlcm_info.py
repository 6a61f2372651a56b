# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vlcm_info's real main() against a fake vCenter: what each gather reads, and what it refuses."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest

from ansible_collections.gpuops.vgpu.plugins.modules import vlcm_info
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.vlcm.vlcm_fake import (
    BASE_IMAGE,
    DAEMON,
    DAEMON_VERSION,
    DRIVER,
    DRIVER_535,
    DRIVER_VERSION,
    HOSTS,
    install,
    run_module,
)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "lab", "tools"))
import make_bundle  # noqa: E402  pylint: disable=wrong-import-position


@pytest.fixture
def vcenter(monkeypatch):
    fake = install(monkeypatch)
    fake.add_depot("https://depot/z-driver.zip", [(DRIVER, DRIVER_VERSION)])
    fake.add_depot("https://depot/a-daemon.zip", [(DAEMON, DAEMON_VERSION)])
    fake.image["components"] = {DRIVER: DRIVER_VERSION}
    return fake


def run(args, capsys, **kwargs):
    return run_module(vlcm_info, args, capsys, **kwargs)


def test_without_a_cluster_returns_the_depots_and_their_content(vcenter, capsys):
    failed, result = run({}, capsys)
    assert not failed and result["changed"] is False
    assert sorted(result) == ["changed", "components", "depots"]
    assert [(d["id"], d["location"]) for d in result["depots"]] == [
        ("offline-depot-2", "https://depot/a-daemon.zip"), ("offline-depot-1", "https://depot/z-driver.zip")]
    assert result["depots"][1]["components"] == [{"name": DRIVER, "version": DRIVER_VERSION, "display_name": DRIVER,
                                                  "display_version": "525.105.14", "vendor": "NVIDIA"}]
    assert [(c["name"], c["version"]) for c in result["components"]] == [
        ("ESXi", BASE_IMAGE), (DRIVER, DRIVER_VERSION), (DAEMON, DAEMON_VERSION)]
    assert len(vcenter.calls) == 4  # the depot list, one content read per depot, the depots' components


def test_a_cluster_adds_its_image_and_last_compliance(vcenter, capsys):
    failed, result = run({"cluster": "gpu-cluster", "datacenter": "lab-dc"}, capsys, check_mode=True)
    assert not failed and result["changed"] is False
    assert result["cluster"] == {"id": "domain-c7", "name": "gpu-cluster", "image_managed": True}
    assert result["image"] == {"base_image": BASE_IMAGE, "components": {DRIVER: DRIVER_VERSION}}
    assert result["compliance"] is None  # never scanned; vlcm_info starts no scan

    vcenter.request("POST", "/api/esx/settings/clusters/domain-c7/software?action=scan&vmw-task=true")
    vcenter.calls = []
    failed, again = run({"cluster": "gpu-cluster", "gather": ["compliance"]}, capsys)
    assert not failed and sorted(again) == ["changed", "cluster", "compliance"]
    assert [(h["name"], h["status"]) for h in again["compliance"]["hosts"]] == [
        (name, "NON_COMPLIANT") for name in HOSTS]
    assert vcenter.writes() == []


def test_a_cluster_on_baselines_has_no_image(vcenter, capsys):
    failed, result = run({"cluster": "mixed-cluster", "gather": ["image", "compliance"]}, capsys)
    assert not failed
    assert result == {"changed": False, "cluster": {"id": "domain-c9", "name": "mixed-cluster", "image_managed": False},
                      "image": None, "compliance": None}


def test_image_without_a_cluster_fails_before_connecting(vcenter, capsys):
    failed, result = run({"gather": ["depots", "image", "compliance"]}, capsys)
    assert failed
    assert result["msg"] == ("gather compliance, image needs the cluster option. Set cluster, or gather only depots "
                             "and components.")
    assert vcenter.built_with is None


def test_a_gather_outside_the_choices_fails(vcenter, capsys):
    failed, result = run({"gather": ["drivers"]}, capsys)
    assert failed and "gather" in result["msg"] and "drivers" in result["msg"]
    assert vcenter.built_with is None


def test_an_unknown_cluster_names_the_known_ones(vcenter, capsys):
    failed, result = run({"cluster": "gpu", "gather": ["image"]}, capsys)
    assert failed
    assert result["msg"] == "Cluster 'gpu' was not found. Known clusters: gpu-cluster, mixed-cluster."
    assert vcenter.closed


def test_the_hosts_of_a_cluster(vcenter, capsys):
    failed, result = run({"cluster": "gpu-cluster", "gather": ["hosts"]}, capsys)
    assert not failed and sorted(result) == ["changed", "cluster", "hosts"]
    assert [(h["name"], h["id"], h["connection_state"]) for h in result["hosts"]] == [
        (name, "host-%d" % i, "CONNECTED") for i, name in enumerate(HOSTS, 1)]


def test_hosts_without_a_cluster_fail_before_connecting(vcenter, capsys):
    failed, result = run({"gather": ["hosts"]}, capsys)
    assert failed and result["msg"].startswith("gather hosts needs the cluster option.")
    assert vcenter.built_with is None


def test_bundles_on_the_controller_are_read_with_what_vlcm_holds(vcenter, capsys, tmp_path):
    driver = make_bundle.nvidia_host_driver(str(tmp_path), driver="535.54.06")
    daemon = make_bundle.nvidia_gpu_mgmt_daemon(str(tmp_path), driver="525.105.14")
    failed, result = run({"bundles": [driver, daemon], "gather": ["components"]}, capsys)
    assert not failed and result["changed"] is False
    assert [(b["path"], b["file_name"]) for b in result["bundles"]] == [
        (driver, os.path.basename(driver)), (daemon, os.path.basename(daemon))]
    assert [[(c["name"], c["version"]) for c in b["components"]] for b in result["bundles"]] == [
        [(DRIVER, DRIVER_535)], [(DAEMON, DAEMON_VERSION)]]
    assert (DRIVER, DRIVER_535) not in [(c["name"], c["version"]) for c in result["components"]]


def test_a_corrupt_bundle_fails_before_vcenter_is_asked(vcenter, capsys, tmp_path):
    good = make_bundle.nvidia_host_driver(str(tmp_path), driver="525.105.14")
    corrupt = tmp_path / "NVD-VGPU-800_corrupt.zip"
    corrupt.write_bytes(b"PK\x03\x04 an interrupted download")
    failed, result = run({"bundles": [good, str(corrupt)], "cluster": "gpu-cluster"}, capsys)
    assert failed and result["msg"].startswith("%s is not a valid ESXi offline bundle" % corrupt)
    assert vcenter.built_with is None
