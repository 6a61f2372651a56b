# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which configuration files a running service has not read since they changed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.vgpu.plugins.filter import guest_plans

CONFIG = "/etc/containerd/config.toml"
DAEMON_JSON = "/etc/docker/daemon.json"
SERVICES = {"containerd": "containerd", "docker": "docker"}
FILES = {"containerd": CONFIG, "docker": [DAEMON_JSON]}


def read(containerd_since=1000.0, config_mtime=999.0, docker_active=True):
    return {"files": {CONFIG: {"path": CONFIG, "exists": True, "mtime": config_mtime},
                      DAEMON_JSON: {"path": DAEMON_JSON, "exists": True, "mtime": 1500.0}},
            "services": {"containerd": {"active": True, "active_since": containerd_since},
                         "docker": {"active": docker_active, "active_since": 1000.0 if docker_active else None}}}


def unapplied(guest, services=None):
    return guest_plans.guest_unapplied_files(guest, services or SERVICES, FILES)


def test_a_file_changed_after_its_service_started_is_unapplied():
    assert unapplied(read(docker_active=False)) == {}
    assert unapplied(read()) == {"docker": [DAEMON_JSON]}
    assert unapplied(read(config_mtime=1000.25)) == {"containerd": [CONFIG], "docker": [DAEMON_JSON]}
    # Restarted after the change: applied.
    assert unapplied(read(containerd_since=1000.5, config_mtime=1000.25, docker_active=False)) == {}


@pytest.mark.parametrize("state", [
    {"path": CONFIG, "exists": False},  # removed since: nothing to read
    {"path": CONFIG, "exists": True},  # no modification time read
    {},  # not read at all
])
def test_nothing_to_compare_is_nothing_unapplied(state):
    guest = read(config_mtime=2000.0)
    guest["files"][CONFIG] = state
    assert unapplied(guest, {"containerd": "containerd"}) == {}
    assert unapplied({}, {"containerd": "containerd"}) == {}


def test_bad_input_names_what_to_give():
    with pytest.raises(AnsibleFilterError, match="gpu_guest_info read"):
        guest_plans.guest_unapplied_files(read(), [CONFIG], FILES)
