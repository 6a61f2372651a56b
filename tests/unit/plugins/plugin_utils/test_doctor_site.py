# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's facts from one gpu_site_info read are those of the separate reads it stands for."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _doctor, _doctor_facts
from ansible_collections.gpuops.vgpu.tests.unit.plugins.plugin_utils.doctor_data import NOW, healthy

PARTS = ("gpu_info", "settings", "automation", "vlcm")


def site_of(raw, **changes):
    """The gpu_site_info result that answers what ``raw``'s separate reads answered."""
    clusters = [{"name": name, "automation": raw["automation"][name], "automation_error": None,
                 "vlcm": raw["vlcm"][name], "vlcm_error": None} for name in raw["clusters"]]
    site = {"gathered": ["inventory", "automation", "vlcm", "settings"], "hosts": raw["gpu_info"]["hosts"],
            "vms": raw["gpu_info"]["vms"], "vms_error": None, "inventory_error": None,
            "settings": raw["settings"]["settings"]["before"], "settings_error": None, "clusters": clusters}
    site.update(changes)
    return site


def with_site(raw, site):
    return dict(dict((key, value) for key, value in raw.items() if key not in PARTS), site=site)


def by_check(facts):
    return dict(((f["check"], f["object"]), f) for f in _doctor.run_checks(facts, {"now": NOW}))


def test_one_read_gives_the_facts_and_findings_of_the_separate_reads():
    raw = healthy()
    separate = _doctor_facts.collect(raw)
    together = _doctor_facts.collect(with_site(raw, site_of(raw)))
    assert together == separate
    assert by_check(together) == by_check(separate)


def test_a_part_that_failed_is_that_parts_error_and_the_rest_is_checked():
    raw = healthy()
    site = site_of(raw, vms_error="VM(s) not found: gpu-vm-01.", settings=None,
                   settings_error="vCenter vc answered 503.")
    site["clusters"][0].update(automation=None, automation_error="Cluster 'gpu-cluster' was not found.",
                               vlcm=None, vlcm_error="vCenter vc refused the login of user 'u'.")
    facts = _doctor_facts.collect(with_site(raw, site))
    cluster = facts["clusters"][0]
    assert cluster["automation_error"] == "Cluster 'gpu-cluster' was not found."
    assert cluster["vlcm_error"] == "vCenter vc refused the login of user 'u'." and cluster["vlcm_gathered"]
    assert facts["hotmigrate"] == {"value": None, "error": "vCenter vc answered 503."}
    assert facts["vms_error"] == "VM(s) not found: gpu-vm-01."
    assert [h["name"] for h in facts["hosts"]] == [h["name"] for h in raw["gpu_info"]["hosts"]]
    assert facts["vcenter_error"] is None


def test_vlcm_not_gathered_is_not_an_error():
    raw = healthy()
    site = site_of(raw, gathered=["inventory", "automation", "settings"])
    for entry in site["clusters"]:
        del entry["vlcm"], entry["vlcm_error"]
    cluster = _doctor_facts.collect(with_site(raw, site))["clusters"][0]
    assert cluster["vlcm_gathered"] is False and cluster["vlcm_error"] is None


def test_a_read_that_failed_as_a_whole_is_every_parts_error():
    raw = healthy()
    failed = {"failed": True, "msg": "Cannot reach vCenter vc.example.com: connection refused."}
    facts = _doctor_facts.collect(with_site(raw, failed))
    assert facts["vcenter_error"] == failed["msg"] and facts["hosts"] == []
    assert facts["hotmigrate"]["error"] == failed["msg"]
    assert [c["automation_error"] for c in facts["clusters"]] == [failed["msg"]]
    assert by_check(facts)[("vcenter", "vc.example.com")]["status"] == "FAIL"
