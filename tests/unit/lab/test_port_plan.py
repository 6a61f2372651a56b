# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's port plan: the integration tests run one lab per worker, 1000 ports apart (tests/integration/conftest.py),
and every port one worker's lab or its guest containers may take stays clear of every port of the next worker's."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
WORKER_SPACING = 1000


def _lab_module(name, *path):
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO, "lab", *path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CONTAINERS = _lab_module("gpuops_lab_containers", "guests", "containers.py")
SHELLS = _lab_module("gpuops_lab_shells", "hosts", "shells.py")


def lab_ports(offset):
    """Every port the default topology's lab at ``offset`` listens on or publishes, by what takes it."""
    with open(os.path.join(REPO, "lab", "topologies", "default.yml")) as handle:
        topology = yaml.safe_load(handle)
    with open(os.path.join(REPO, "inventories", "lab", "group_vars", "all.yml")) as handle:
        ports = {"vcenter": {yaml.safe_load(handle)["vcenter_port"] + offset}}
    hosts = list(SHELLS.topology_hosts(topology)) + list(topology.get("servers") or [])
    ports["bmc"] = set(host["bmc"]["port"] + offset for host in hosts if host.get("bmc"))
    ports["host shell"] = set(host["shell"]["port"] + offset for host in hosts if host.get("shell"))
    # A test may put a guest or a server anywhere in the guests' range: all of it is taken.
    ports["guest ssh"] = set(port + offset for port in CONTAINERS.GUEST_SSH_PORTS)
    ports["guest metrics"] = set(port + offset for port in CONTAINERS.GUEST_METRICS_PORTS)
    return ports


@pytest.mark.parametrize("workers", [2, 4])
def test_the_labs_of_different_workers_share_no_port(workers):
    taken = {}
    for worker in range(workers):
        for role, ports in lab_ports(worker * WORKER_SPACING).items():
            for port in ports:
                other = taken.setdefault(port, (worker, role))
                assert other[0] == worker, "port %d: worker %d's %s and worker %d's %s" % (
                    port, other[0], other[1], worker, role)


def test_the_servers_and_guests_of_the_topology_are_in_the_guests_range():
    with open(os.path.join(REPO, "lab", "topologies", "default.yml")) as handle:
        topology = yaml.safe_load(handle)
    for server in topology["servers"]:
        assert server["ssh_port"] in CONTAINERS.GUEST_SSH_PORTS


def test_a_guest_gets_the_metrics_port_at_its_ssh_ports_place():
    assert CONTAINERS.guest_ports({"name": "g"}, 0, 0) == (2201, 9101)
    assert CONTAINERS.guest_ports({"name": "g", "ssh_port": 2391}, 5, 1000) == (3391, 10291)
    assert CONTAINERS.guest_ports({"name": "g"}, 3, 800) == (3004, 9904)


@pytest.mark.parametrize("ssh_port", [2200, 2541, 8441])
def test_a_guest_outside_the_range_is_refused_with_its_port(ssh_port):
    with pytest.raises(SystemExit, match="ssh_port %d is outside 2201-2540" % ssh_port):
        CONTAINERS.guest_ports({"name": "g", "ssh_port": ssh_port}, 0, 0)
