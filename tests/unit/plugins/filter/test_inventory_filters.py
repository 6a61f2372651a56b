# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.vgpu.plugins.filter.inventory import (
    FilterModule,
    apply_plan,
    plan_requests,
    vgpu_requests,
)

HOSTVARS = {
    "train-1": {"vgpu_profile": "grid_p40-8q"},
    "train-2.example.com": {"vgpu_profile": "grid_p40-8q", "vgpu_vm_name": "train-2"},
    "no-gpu": {},
    "light-1": {"vgpu_profile": "grid_p40-3q"},
}


def test_requests_in_inventory_order():
    assert vgpu_requests(["train-1", "train-2.example.com", "no-gpu", "light-1"], HOSTVARS) == [
        {"name": "train-1", "profile": "grid_p40-8q"},
        {"name": "train-2", "profile": "grid_p40-8q"},
        {"name": "light-1", "profile": "grid_p40-3q"},
    ]
    assert vgpu_requests([], HOSTVARS) == []


def test_two_guests_for_one_vm():
    hostvars = dict(HOSTVARS, dup={"vgpu_profile": "grid_p40-4q", "vgpu_vm_name": "train-1"})
    with pytest.raises(AnsibleFilterError, match="train-1 and dup both name the VM train-1"):
        vgpu_requests(["train-1", "dup"], hostvars)


def test_profile_must_be_a_name():
    with pytest.raises(AnsibleFilterError, match="vgpu_profile of odd"):
        vgpu_requests(["odd"], {"odd": {"vgpu_profile": ["grid_p40-8q"]}})


def test_plan_round_trip():
    vms = [{"name": "a", "profile": "grid_p40-8q"}, {"name": "b", "profile": "grid_p40-8q"},
           {"name": "c", "profile": "grid_p40-3q"}]
    assert plan_requests(vms) == [{"vm": "a", "profile": "grid_p40-8q"}, {"vm": "b", "profile": "grid_p40-8q"},
                                  {"vm": "c", "profile": "grid_p40-3q"}]
    plan = {"placements": [{"vm": "a", "host": "esxi-02", "current": False},
                           {"vm": "b", "host": "esxi-01", "current": True}]}
    assert apply_plan(vms, plan) == [{"name": "a", "profile": "grid_p40-8q", "host": "esxi-02"},
                                     {"name": "b", "profile": "grid_p40-8q"}, {"name": "c", "profile": "grid_p40-3q"}]
    assert "host" not in vms[0], "the input list is left as it was"


def test_filter_map():
    assert FilterModule().filters() == {"vgpu_requests": vgpu_requests, "plan_requests": plan_requests,
                                        "apply_plan": apply_plan}
