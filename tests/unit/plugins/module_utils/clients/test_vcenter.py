# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""VCenterClient.hosts(): choosing hosts by cluster, names and datacenter from one PropertyCollector read."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import NotFound
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter import VCenterClient

vim = pytest.importorskip("pyVmomi").vim


class TreeClient(VCenterClient):
    """A client whose single read answers from a fixed tree: two datacenters, each with a 'gpu' cluster."""

    def __init__(self):  # no connection
        self.endpoint = "vc.test:443"
        self.reads = []
        dc1, dc2 = vim.Datacenter("datacenter-1"), vim.Datacenter("datacenter-2")
        folder1, folder2, sub = vim.Folder("group-h1"), vim.Folder("group-h2"), vim.Folder("group-h3")
        gpu1, gpu2 = vim.ClusterComputeResource("domain-c1"), vim.ClusterComputeResource("domain-c2")
        other, single = vim.ClusterComputeResource("domain-c3"), vim.ComputeResource("domain-s1")

        def host(moid, name, parent):
            return {"obj": vim.HostSystem(moid), "moid": moid, "name": name, "parent": parent,
                    "runtime.inMaintenanceMode": False}

        self.tree = {
            vim.HostSystem: [host("host-3", "esxi-03", gpu1), host("host-1", "esxi-01", gpu1),
                             host("host-5", "esxi-05", gpu2), host("host-7", "esxi-07", other),
                             host("host-9", "esxi-sa", single)],
            vim.ComputeResource: [
                {"obj": gpu1, "moid": "domain-c1", "name": "gpu", "parent": folder1},
                {"obj": gpu2, "moid": "domain-c2", "name": "gpu", "parent": folder2},
                {"obj": other, "moid": "domain-c3", "name": "other", "parent": sub},
                {"obj": single, "moid": "domain-s1", "name": "esxi-sa", "parent": folder1},
            ],
            vim.Datacenter: [{"obj": dc1, "moid": "datacenter-1", "name": "dc-one"},
                             {"obj": dc2, "moid": "datacenter-2", "name": "dc-two"}],
            vim.Folder: [{"obj": folder1, "moid": "group-h1", "parent": dc1},
                         {"obj": folder2, "moid": "group-h2", "parent": dc2},
                         {"obj": sub, "moid": "group-h3", "parent": folder1}],
        }

    def retrieve(self, specs, root=None):
        self.reads.append(dict(specs))
        return dict((vim_type, [dict(item) for item in self.tree[vim_type]]) for vim_type in specs)


def _names(items):
    return [(item["name"], item["cluster"], item["datacenter"]) for item in items]


def test_one_read_with_the_asked_properties_and_places():
    client = TreeClient()
    items = client.hosts(["runtime.inMaintenanceMode"], cluster="gpu", datacenter="dc-one")
    assert _names(items) == [("esxi-01", "gpu", "dc-one"), ("esxi-03", "gpu", "dc-one")]
    assert len(client.reads) == 1
    assert client.reads[0][vim.HostSystem] == ["name", "parent", "runtime.inMaintenanceMode"]


def test_all_hosts_sorted_with_nested_folders_and_standalone_hosts():
    assert _names(TreeClient().hosts([])) == [
        ("esxi-01", "gpu", "dc-one"), ("esxi-03", "gpu", "dc-one"), ("esxi-05", "gpu", "dc-two"),
        ("esxi-07", "other", "dc-one"), ("esxi-sa", None, "dc-one")]


def test_names_keep_their_order_and_duplicates_collapse():
    items = TreeClient().hosts([], esxi_hostnames=["esxi-sa", "esxi-01", "esxi-sa"])
    assert [item["name"] for item in items] == ["esxi-sa", "esxi-01"]


@pytest.mark.parametrize("options, words", [
    ({"cluster": "gpu"}, ["ambiguous", "dc-one, dc-two", "datacenter option"]),
    ({"cluster": "nope"}, ["Cluster 'nope' was not found", "Known clusters: gpu, other"]),
    ({"datacenter": "dc-x"}, ["Datacenter 'dc-x'", "dc-one, dc-two"]),
    ({"cluster": "other", "esxi_hostnames": ["esxi-01"]},
     ["not found in cluster 'other': esxi-01", "Known hosts: esxi-07"]),
    ({"esxi_hostnames": ["esxi-99"]}, ["esxi-99", "esxi-01"]),
])
def test_unknown_or_ambiguous_names_fail_listing_what_exists(options, words):
    with pytest.raises(NotFound) as err:
        TreeClient().hosts([], **options)
    for word in words:
        assert word in str(err.value)
