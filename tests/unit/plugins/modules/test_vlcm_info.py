# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vlcm_info's real main() against a fake vCenter: what each gather reads, and what it refuses."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.modules import vlcm_info
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.vlcm.vlcm_fake import (
    BASE_IMAGE,
    DAEMON,
    DAEMON_VERSION,
    DRIVER,
    DRIVER_VERSION,
    HOSTS,
    install,
    run_module,
)


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
