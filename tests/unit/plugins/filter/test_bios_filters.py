# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.vgpu.plugins.filter.bios import FilterModule, bios_summary


def result(pending=None, intents=None):
    return {"pending_reboot": bool(pending), "pending": pending or {},
            "intents": intents or {"iommu": {"status": "ok"}}}


HOSTVARS = {
    "ready": {"bios_result": result(), "bios_reboot_allowed": True},
    "waits": {"bios_result": result({"SriovGlobalEnable": "Enabled"}), "bios_reboot_allowed": "false"},
    "reboots": {"bios_result": result({"ProcVirtualization": "Enabled"}, {
        "pcie_aer": {"status": "not_exposed"}, "sriov": {"status": "read_only", "note": "locked by the vendor"},
        "iommu": {"status": "ok"}}), "bios_reboot_allowed": "yes"},
}


def test_hosts_sorted_by_what_their_bios_needs():
    assert bios_summary(["ready", "waits", "reboots"], HOSTVARS, failed=["gone"]) == {
        "ready": ["ready"],
        "waiting": ["waits", "reboots"],
        "reboot": ["reboots"],
        "pending": {"waits": {"SriovGlobalEnable": "Enabled"}, "reboots": {"ProcVirtualization": "Enabled"}},
        "unmet": {"reboots": ["pcie_aer (not exposed)", "sriov (locked by the vendor)"]},
        "failed": ["gone"],
    }
    assert bios_summary([], HOSTVARS)["failed"] == []


def test_a_host_without_its_result():
    with pytest.raises(AnsibleFilterError, match="bios_summary: each host needs the bios_result"):
        bios_summary(["odd"], {"odd": {"bios_result": {"pending_reboot": True}}})
    assert FilterModule().filters() == {"bios_summary": bios_summary}
