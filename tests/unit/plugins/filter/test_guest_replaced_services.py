# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which running services run a program a package replaced since they started."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.vgpu.plugins.filter import guest_plans


def service(active=True, since=1000.0, changed=900.0):
    return {"active": active, "active_since": since, "executable": "/usr/bin/nv-hostengine",
            "executable_changed_at": changed}


def replaced(**services):
    return guest_plans.guest_replaced_services({"services": services}, sorted(services))


def test_a_program_put_in_place_after_the_start_is_replaced():
    assert replaced(dcgm=service()) == []
    assert replaced(dcgm=service(changed=1000.25), fm=service(changed=1000.0)) == ["dcgm"]
    # Restarted after the upgrade: it runs the new program.
    assert replaced(dcgm=service(since=1000.5, changed=1000.25)) == []


@pytest.mark.parametrize("read", [
    service(active=False, since=None, changed=2000.0),  # stopped: starting it runs the new program anyway
    service(since=None, changed=2000.0),  # no start time
    service(changed=None),  # the program is gone, or the unit names none
    {},  # not read
])
def test_nothing_to_compare_is_nothing_replaced(read):
    assert replaced(dcgm=read) == []


def test_only_the_units_asked_for_and_bad_input_named():
    guest = {"services": {"dcgm": service(changed=2000.0), "fm": service(changed=2000.0)}}
    assert guest_plans.guest_replaced_services(guest, ["fm", "absent"]) == ["fm"]
    with pytest.raises(AnsibleFilterError, match="gpu_guest_info read"):
        guest_plans.guest_replaced_services(guest, "fm")
