# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.vcenter import _vm_vgpu_changes as vm_changes
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError


def state(*profiles, **kwargs):
    return {"vgpus": [{"key": 13000 + n, "profile": p} for n, p in enumerate(profiles)],
            "locked": kwargs.get("locked", True), "reserved_mb": kwargs.get("reserved_mb", 0),
            "power_state": kwargs.get("power_state", "poweredOff")}


def request(*profiles, **kwargs):
    return {"kind": "name", "ident": "vm", "label": "vms[0] (name vm)", "state": kwargs.get("state", "present"),
            "profiles": list(profiles)}


class TestNormalize:
    def test_defaults_fill_in(self):
        out = vm_changes.normalize_requests([{"name": "a"}, {"uuid": "U-1", "profile": "grid_p40-4q"},
                                             {"moid": "vm-9", "state": "absent"}], default_profile="grid_p40-8q")
        assert [(r["kind"], r["state"], r["profiles"]) for r in out] == [
            ("name", "present", ["grid_p40-8q"]), ("uuid", "present", ["grid_p40-4q"]), ("moid", "absent", [])]

    def test_an_empty_list_asks_for_nothing(self):
        assert vm_changes.normalize_requests([]) == []

    def test_multi_vgpu(self):
        out = vm_changes.normalize_requests([{"name": "a", "profiles": ["grid_a100-40c", "grid_a100-40c"]}])
        assert out[0]["profiles"] == ["grid_a100-40c", "grid_a100-40c"]

    @pytest.mark.parametrize("vms, words", [
        ([{"profile": "grid_p40-8q"}], ["exactly one of name, uuid or moid", "none"]),
        ([{"name": "a", "moid": "vm-1"}], ["exactly one", "name, moid"]),
        ([{"name": "a"}], ["no profile"]),
        ([{"name": "a", "profile": "x", "profiles": ["x"]}], ["both profile and profiles"]),
        ([{"name": "a", "profiles": ["grid_p40-8q", "grid_p40-4q"]}], ["same profile"]),
        ([{"name": "a", "state": "absent", "profile": "grid_p40-8q"}], ["absent and a profile"]),
        ([{"name": "a", "profile": "p"}, {"name": "a", "profile": "p"}], ["listed twice"]),
    ])
    def test_bad_entries(self, vms, words):
        with pytest.raises(InputError) as caught:
            vm_changes.normalize_requests(vms)
        for word in words:
            assert word in str(caught.value)


class TestVmChange:
    def test_nothing_to_do(self):
        assert vm_changes.vm_change(state("grid_p40-8q"), request("grid_p40-8q")) is None

    def test_add_to_empty_vm_locks_memory(self):
        out = vm_changes.vm_change(state(locked=False), request("grid_p40-8q"))
        assert out == {"remove_keys": [], "add_profiles": ["grid_p40-8q"], "lock_memory": True,
                       "release_reservation": False, "move_to": None}

    def test_profile_change_replaces_the_device(self):
        out = vm_changes.vm_change(state("grid_p40-4q"), request("grid_p40-8q"))
        assert out["remove_keys"] == [13000]
        assert out["add_profiles"] == ["grid_p40-8q"]
        after = vm_changes.predict(state("grid_p40-4q"), out)
        assert after["profiles"] == ["grid_p40-8q"]

    def test_second_vgpu_keeps_the_first(self):
        out = vm_changes.vm_change(state("grid_p40-12q"), request("grid_p40-12q", "grid_p40-12q"))
        assert out["remove_keys"] == [] and out["add_profiles"] == ["grid_p40-12q"]

    def test_fewer_vgpus_removes_the_extra(self):
        out = vm_changes.vm_change(state("grid_p40-12q", "grid_p40-12q"), request("grid_p40-12q"))
        assert out["remove_keys"] == [13001] and out["add_profiles"] == []

    def test_lock_only(self):
        out = vm_changes.vm_change(state("grid_p40-8q", locked=False), request("grid_p40-8q"))
        assert out["remove_keys"] == [] and out["add_profiles"] == [] and out["lock_memory"] is True

    def test_absent_keeps_the_reservation_unless_asked(self):
        removal = vm_changes.vm_change(state("grid_p40-8q"), request(state="absent"))
        assert removal["remove_keys"] == [13000] and removal["lock_memory"] is None
        release = vm_changes.vm_change(state("grid_p40-8q"), request(state="absent"), release_memory_reservation=True)
        assert release["lock_memory"] is False and release["release_reservation"] is True
        assert vm_changes.vm_change(state(locked=False), request(state="absent")) is None
        assert vm_changes.vm_change(state(locked=False, reserved_mb=0), request(state="absent"), True) is None
        assert vm_changes.vm_change(state(locked=False, reserved_mb=4096), request(state="absent"), True) is not None


def test_power_policy():
    on = state("grid_p40-4q", power_state="poweredOn")
    suspended = state(power_state="suspended")
    rows = [(request("grid_p40-8q"), on, vm_changes.vm_change(on, request("grid_p40-8q"))),
            (request("grid_p40-8q"), suspended, vm_changes.vm_change(suspended, request("grid_p40-8q"))),
            (request("grid_p40-4q"), on, None)]
    assert [reason for label, reason in vm_changes.blocked_by_power(rows, "never")] == [
        "is powered on and power is 'never'", "is suspended; resume and shut it down, or power it off first"]
    assert len(vm_changes.blocked_by_power(rows, "shutdown_guest")) == 1


def test_unsupported_profiles():
    assert vm_changes.unsupported_profiles(request("grid_p40-9q"), ["grid_p40-8q"]) == ["grid_p40-9q"]
    assert vm_changes.unsupported_profiles(request("grid_p40-8q"), ["grid_p40-8q"]) == []


def test_move_to_another_host():
    current = dict(state("grid_p40-8q"), host="esxi-01")
    move = vm_changes.vm_change(current, dict(request("grid_p40-8q"), host="esxi-02"))
    assert move["move_to"] == "esxi-02" and not vm_changes.needs_reconfigure(move)
    assert vm_changes.predict(current, move)["host"] == "esxi-02"
    assert vm_changes.vm_change(current, dict(request("grid_p40-8q"), host="esxi-01")) is None
    both = vm_changes.vm_change(current, dict(request("grid_p40-4q"), host="esxi-02"))
    assert both["move_to"] == "esxi-02" and vm_changes.needs_reconfigure(both)
