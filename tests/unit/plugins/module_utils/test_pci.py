# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one PCI bus address spelling, and the two callers that rely on it: host_graphics and the doctor's facts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils._pci import pci_bus_address
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _doctor_facts


@pytest.mark.parametrize("given, expected", [
    ("0000:3b:00.0", "0000:3b:00.0"),
    ("3b:00.0", "0000:3b:00.0"),
    ("0000:3B:00.0", "0000:3b:00.0"),
    ("00000000:3B:00.0", "0000:3b:00.0"),
    (" 0001:af:1f.7 ", "0001:af:1f.7"),
    ("0:3:0.1", "0000:03:00.1"),
    ("00010000:C1:00.0", "10000:c1:00.0"),
])
def test_addresses_take_vsphere_spelling(given, expected):
    assert pci_bus_address(given) == expected


@pytest.mark.parametrize("given", ["3b", "0000:3b:00", "gpu0", "0000:3b:00.9", "", None, "000000000:3b:00.0"])
def test_anything_else_fails_naming_the_value(given):
    with pytest.raises(InputError, match="'%s' is not a PCI id" % given):
        pci_bus_address(given)


@pytest.mark.parametrize("given", ["gpu0", "", None])
def test_a_default_replaces_the_failure(given):
    assert pci_bus_address(given, default="fallback") == "fallback"


def test_the_doctor_matches_vsphere_and_nvidia_smi_ids_of_one_gpu_only():
    vsphere = _doctor_facts.bus_id("0000:3b:00.0")
    assert vsphere == _doctor_facts.bus_id("00000000:3B:00.0") == "0000:3b:00.0"
    assert vsphere != _doctor_facts.bus_id("00000001:3B:00.0")
    assert vsphere != _doctor_facts.bus_id("0000:3b:00.1")


def test_the_doctor_keys_an_unreadable_id_by_itself():
    assert _doctor_facts.bus_id("n/a") == "n/a"
    assert _doctor_facts.bus_id(None) is None
