# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_site_info against the lab vCenter: each part answers as its own module does, in one call, read-only."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from vsphere_direct import Direct

CLUSTERS = ["gpu-cluster", "hpc-cluster"]
SETTING = "vgpu.hotmigrate.enabled"
READS = ("RetrieveServiceContent", "Login", "Logout", "CreateContainerView", "DestroyView", "RetrieveProperties",
         "RetrievePropertiesEx", "ContinueRetrievePropertiesEx", "QueryConfigTarget", "CurrentTime")


def site(run_tasks, check=False, **options):
    return run_tasks([{"name": "site", "gpuops.vgpu.gpu_site_info": options}], check=check).result(0)


def separate_reads(run_tasks, vms):
    tasks = [{"name": "inventory", "gpuops.vgpu.gpu_info": {"vms": vms}},
             {"name": "settings", "gpuops.vgpu.vcenter_settings": {"settings": {SETTING: True}, "allow_new": True},
              "check_mode": True}]
    for name in CLUSTERS:
        tasks += [{"name": "automation " + name, "gpuops.vgpu.cluster_automation": {"cluster": name},
                   "check_mode": True},
                  {"name": "vlcm " + name, "gpuops.vgpu.vlcm_info": {"cluster": name,
                                                                     "gather": ["image", "compliance"]}}]
    run = run_tasks(tasks)
    return dict((task["name"], run.result(index)) for index, task in enumerate(tasks))


def test_every_part_answers_as_its_own_module_in_one_session_each(lab, run_tasks):
    direct = Direct(lab)
    try:
        direct.shared_direct("esxi-01.lab.local")
        direct.add_vgpu("gpu-vm-01", "grid_p40-8q")
        direct.power_on("gpu-vm-01")
    finally:
        direct.close()
    before = lab.state()
    alone = separate_reads(run_tasks, ["gpu-vm-01"])
    lab.reset_stats()
    result = site(run_tasks, clusters=CLUSTERS, vms=["gpu-vm-01"], settings=[SETTING, "no.such.key"])

    assert result["changed"] is False and result["gathered"] == ["inventory", "automation", "vlcm", "settings"]
    assert result["hosts"] == [h for h in alone["inventory"]["hosts"] if h["cluster"] in CLUSTERS]
    assert [h["name"] for h in result["hosts"]] == sorted(
        h["name"] for h in before["hosts"] if h["cluster"] in CLUSTERS and h["gpus"])
    assert result["vms"] == alone["inventory"]["vms"] and result["vms"][0]["power_state"] == "poweredOn"
    assert result["settings"] == {SETTING: alone["settings"]["settings"]["before"][SETTING], "no.such.key": None}
    assert [c["name"] for c in result["clusters"]] == CLUSTERS
    for cluster in result["clusters"]:
        automation = dict(alone["automation " + cluster["name"]])
        for key in ("changed", "diff", "invocation", "_ansible_no_log", "_task", "action"):
            automation.pop(key, None)
        assert cluster["automation"] == automation and cluster["automation_error"] is None
        truth = next(c for c in before["clusters"] if c["name"] == cluster["name"])
        assert cluster["automation"]["previous"]["drs_enabled"] == truth["drs"]["enabled"]
        vlcm = alone["vlcm " + cluster["name"]]
        assert (cluster["vlcm"]["cluster"], cluster["vlcm"]["image"], cluster["vlcm"]["compliance"]) == (
            vlcm["cluster"], vlcm["image"], vlcm["compliance"])
    stats = lab.stats()
    assert stats["by_method"]["Login"] == 1
    assert [route for route in stats["rest_by_route"] if route.endswith(" /api/session")] in (
        ["POST /api/session", "DELETE /api/session"], ["DELETE /api/session", "POST /api/session"])
    assert stats["rest_by_route"]["POST /api/session"] == 1
    assert [m for m in stats["by_method"] if m not in READS] == []
    assert lab.state() == before


def test_a_part_that_cannot_be_read_leaves_the_others(lab, run_tasks):
    result = site(run_tasks, check=True, clusters=["gpu-cluster", "no-such-cluster"], vms=["no-such-vm"])
    assert result["vms_error"].startswith("VM(s) not found: no-such-vm.")
    assert result["inventory_error"] is None and result["vms"] == []
    assert result["hosts"] and all(h["cluster"] == "gpu-cluster" for h in result["hosts"])
    good, bad = result["clusters"]
    assert good["automation_error"] is None and good["vlcm_error"] is None
    assert bad["automation"] is None and bad["automation_error"].startswith("Cluster 'no-such-cluster' was not found")
    assert bad["vlcm"] is None and "no-such-cluster" in bad["vlcm_error"]


def test_without_vlcm_no_rest_session_is_opened(lab, run_tasks):
    lab.reset_stats()
    result = site(run_tasks, gather=["automation"])
    assert result["gathered"] == ["automation"] and "hosts" not in result
    assert [c["name"] for c in result["clusters"]] == [], "without the inventory an empty clusters option reads none"
    result = site(run_tasks, clusters=["gpu-cluster"], gather=["automation"])
    assert [sorted(c) for c in result["clusters"]] == [["automation", "automation_error", "name"]]
    assert lab.stats()["rest_by_route"] == {}


def test_bad_options_fail_before_any_request(lab, run_tasks):
    lab.reset_stats()
    run = run_tasks([{"name": "site", "gpuops.vgpu.gpu_site_info": {"gather": ["everything"]}}], expect_failure=True)
    assert "gather" in run.result(0)["msg"] and "everything" in run.result(0)["msg"]
    assert lab.stats()["by_method"] == {} and lab.stats()["rest_by_route"] == {}
