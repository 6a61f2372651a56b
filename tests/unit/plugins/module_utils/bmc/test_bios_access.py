# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""BIOS access and restart waits of the Redfish client against a scripted BMC."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.bmc import _bios_access as rb
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import TimeoutExpired
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.clients.redfish_fake import FakeBmc

BIOS_ROUTES = {
    ("GET", "/rf/Systems/"): (200, {}, {"Members": [{"@odata.id": "/rf/Systems/1"}]}),
    ("GET", "/rf/Systems/1"): (200, {}, {"Bios": {"@odata.id": "/rf/systems/1/bios/"}}),
    ("GET", "/rf/systems/1/bios/"): (200, {}, {
        "@odata.id": "/rf/systems/1/bios/", "AttributeRegistry": "BiosReg.v1", "Attributes": {"A": "Disabled"},
        "@Redfish.Settings": {"SettingsObject": {"@odata.id": "/rf/systems/1/bios/sd/"},
                              "SupportedApplyTimes": ["OnReset"]}}),
    ("GET", "/rf/systems/1/bios/sd/"): (200, {"ETag": 'W/"4"'}, {"Attributes": {"A": "Enabled"}}),
    ("GET", "/rf/Registries"): (200, {}, {"Members": [{"@odata.id": "/rf/Registries/Base"},
                                                      {"@odata.id": "/rf/Registries/BiosReg.v1"}]}),
    ("GET", "/rf/Registries/BiosReg.v1"): (200, {}, {"Registry": "BiosReg.v1", "Location": [
        {"Language": "ja", "Uri": "/rf/store/ja/bios"}, {"Language": "en", "Uri": "/rf/store/en/bios"}]}),
    ("GET", "/rf/store/en/bios"): (200, {}, {"RegistryEntries": {"Attributes": []}}),
    ("PATCH", "/rf/systems/1/bios/sd/"): (202, {"Location": "/rf/Managers/1/Jobs/JID_9"}, {}),
}


def test_bios_read_follows_links_to_current_pending_etag_and_registry():
    bmc = FakeBmc(BIOS_ROUTES)
    access = rb.BiosAccess(bmc.client(auth="basic"))
    state = access.read()
    assert state == {"uri": "/rf/systems/1/bios/", "current": {"A": "Disabled"},
                     "settings_uri": "/rf/systems/1/bios/sd/", "shown": {"A": "Enabled"}, "etag": 'W/"4"',
                     "apply_times": ["OnReset"], "registry": "BiosReg.v1"}
    assert access.registry("BiosReg.v1") == {"RegistryEntries": {"Attributes": []}}
    assert ("GET", "/rf/Registries/Base") not in bmc.requests()


def test_bios_patch_sends_if_match_and_apply_time_only_when_given():
    bmc = FakeBmc(BIOS_ROUTES)
    access = rb.BiosAccess(bmc.client(auth="basic"))
    assert access.patch("/rf/systems/1/bios/sd/", {"A": "Enabled"}, "OnReset", 'W/"4"') == "/rf/Managers/1/Jobs/JID_9"
    _m, _p, body, headers = bmc.log[-1]
    assert body == {"Attributes": {"A": "Enabled"}, "@Redfish.SettingsApplyTime": {"ApplyTime": "OnReset"}}
    assert headers["If-Match"] == 'W/"4"'
    access.patch("/rf/systems/1/bios/sd/", {"A": "Enabled"})
    _m, _p, body, headers = bmc.log[-1]
    assert body == {"Attributes": {"A": "Enabled"}}
    assert "If-Match" not in headers


def test_wait_for_gives_up_at_the_timeout():
    bmc = FakeBmc()
    with pytest.raises(TimeoutExpired, match="The restart did not happen within 10 s"):
        rb.wait_for(lambda: False, 10, "The restart", sleep=bmc.sleep, clock=bmc.clock)
    assert bmc.sleeps == [1.0, 1.5, 2.25, 3.375]
    assert rb.wait_for(lambda: "done", 10, "x", sleep=bmc.sleep, clock=bmc.clock) == "done"
