# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host_graphics role against the lab: credentials from the inventory, end state from the lab's ground truth."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from pyVmomi import vim

from vsphere_direct import Direct

CLUSTER_HOSTS = ["esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local"]
P40 = "0000:3b:00.0"
SET = "Set the graphics type, assignment policy and restart Xorg where changed"
READ_BACK = ["Read the active graphics type of every GPU", "Check that every GPU runs the wanted graphics type"]
# host_graphics' one read of the hosts: login, one container view read for all hosts, logout.
MAX_CONVERGED_SOAP_REQUESTS = 8


def role(lab, run_tasks, check=False, expect_failure=False, verbosity=0, callback="ansible.posix.json", **role_vars):
    """Include the role in a play that sets the vCenter connection once, for the role too."""
    return run_tasks([{"name": "host_graphics role", "ansible.builtin.include_role": {"name": "gpuops.vgpu.host_graphics"},
                       "vars": role_vars}],
                     check=check, expect_failure=expect_failure, verbosity=verbosity, callback=callback)


def task(run, name):
    """The result of the role's task called ``name`` (the callback prefixes the role's name)."""
    return next(result for result in run.results if result["_task"].endswith(name))


def executed(run):
    """The role's tasks that ran (not skipped), argument validation aside, in order."""
    return [r["_task"].split(" : ", 1)[1] for r in run.results
            if " : " in r["_task"] and not r.get("skipped") and "Validating arguments" not in r["_task"]]


def restarts(lab):
    return dict((host["name"], host["xorg_restarts"]) for host in lab.state()["hosts"])


def test_check_mode_reports_and_changes_nothing(lab, run_tasks):
    before = lab.state()
    run = role(lab, run_tasks, check=True)
    configure = task(run, "Set the graphics type, assignment policy and restart Xorg where changed")
    assert configure["changed"] is True
    assert [host["name"] for host in configure["hosts"]] == CLUSTER_HOSTS
    assert lab.state() == before


def test_the_cluster_gets_shared_direct_and_a_rerun_changes_nothing(lab, run_tasks):
    start = restarts(lab)
    run = role(lab, run_tasks)
    assert any(result.get("changed") for result in run.results)
    verified = task(run, "Check that every GPU runs the wanted graphics type")
    assert verified["msg"] == "3 GPU(s) run sharedDirect."
    for name in CLUSTER_HOSTS:
        host = lab.host(name)
        assert host["graphics_config"]["default_graphics_type"] == "sharedDirect"
        assert host["graphics_config"]["assignment_policy"] == "performance"
        assert [(gpu["graphics_type"], gpu["configured_graphics_type"]) for gpu in host["gpus"]] == [
            ("sharedDirect", "sharedDirect")]
    after = restarts(lab)
    assert after == dict(start, **dict((name, start[name] + 1) for name in CLUSTER_HOSTS))

    again = role(lab, run_tasks)
    assert [result["_task"] for result in again.results if result.get("changed")] == []
    assert restarts(lab) == after


def test_named_hosts_with_another_policy(lab, run_tasks):
    start = lab.state()
    role(lab, run_tasks, host_graphics_esxi_hostnames=["esxi-11.lab.local", "esxi-12.lab.local"],
         host_graphics_assignment_policy="consolidation")
    for host in lab.state()["hosts"]:
        before = next(item for item in start["hosts"] if item["name"] == host["name"])
        if host["name"] in ("esxi-11.lab.local", "esxi-12.lab.local"):
            assert host["graphics_config"]["assignment_policy"] == "consolidation"
            assert [gpu["graphics_type"] for gpu in host["gpus"]] == ["sharedDirect"] * len(host["gpus"])
        else:
            assert host == before


def test_a_gpu_that_keeps_its_type_fails_the_check_naming_it(lab, run_tasks):
    direct = Direct(lab)
    try:
        direct.shared_direct("esxi-01.lab.local")
        direct.add_vgpu("gpu-vm-01", "grid_p40-8q")
        direct.power_on("gpu-vm-01")
    finally:
        direct.close()

    refused = role(lab, run_tasks, expect_failure=True, host_graphics_esxi_hostnames=["esxi-01.lab.local"],
                   host_graphics_type="shared")
    assert "gpu-vm-01" in refused.failed[0]["msg"]
    assert lab.host("esxi-01.lab.local")["graphics_config"]["default_graphics_type"] == "sharedDirect"

    forced = role(lab, run_tasks, expect_failure=True, host_graphics_esxi_hostnames=["esxi-01.lab.local"],
                  host_graphics_type="shared", host_graphics_force=True)
    message = forced.failed[0]["msg"]
    assert "GPUs not running shared" in message
    assert "esxi-01.lab.local %s (Tesla P40, active sharedDirect, configured shared)" % P40 in message

    direct = Direct(lab)
    try:
        direct.power_off("gpu-vm-01")
    finally:
        direct.close()
    role(lab, run_tasks, host_graphics_esxi_hostnames=["esxi-01.lab.local"])
    assert lab.host("esxi-01.lab.local")["gpus"][0]["graphics_type"] == "sharedDirect"


def test_arguments_are_validated_before_anything_runs(lab, run_tasks):
    before = lab.state()
    run = role(lab, run_tasks, expect_failure=True, host_graphics_type="direct")
    assert "host_graphics_type" in run.failed[0]["msg"] and "sharedDirect" in run.failed[0]["msg"]
    run = role(lab, run_tasks, expect_failure=True, host_graphics_cluster="")
    assert "cluster, esxi_hostnames" in run.failed[0]["msg"]
    assert lab.state() == before


def test_the_password_stays_out_of_the_output(lab, run_tasks):
    run = role(lab, run_tasks, verbosity=3, callback="ansible.builtin.default")
    password = lab.vcenter_vars["vcenter_password"]
    assert "Check that every GPU runs the wanted graphics type" in run.stdout
    assert password not in run.stdout + run.stderr


def test_a_converged_cluster_costs_one_read_and_no_read_back(lab, run_tasks):
    first = role(lab, run_tasks)
    assert executed(first) == [SET] + READ_BACK
    before = lab.state()
    for check in (False, True):
        lab.reset_stats()
        run = role(lab, run_tasks, check=check)
        assert executed(run) == [SET], "check mode %s" % check
        assert not any(result.get("changed") for result in run.results)
        stats = lab.stats()
        assert stats["soap_requests"] <= MAX_CONVERGED_SOAP_REQUESTS, stats["by_method"]
        assert stats["rest_requests"] == 0
    assert lab.state() == before


def test_a_gpu_waiting_for_its_type_gets_the_restart_and_the_read_back(lab, run_tasks):
    role(lab, run_tasks, host_graphics_esxi_hostnames=["esxi-01.lab.local"], host_graphics_type="shared")
    # The configuration as the role sets it, without the Xorg restart that makes the type active.
    direct = Direct(lab)
    try:
        direct.host("esxi-01.lab.local").configManager.graphicsManager.UpdateGraphicsConfig(vim.host.GraphicsConfig(
            hostDefaultGraphicsType="sharedDirect", sharedPassthruAssignmentPolicy="performance",
            deviceType=[vim.host.GraphicsConfig.DeviceType(deviceId=P40, graphicsType="sharedDirect")]))
    finally:
        direct.close()
    assert lab.host("esxi-01.lab.local")["gpus"][0]["graphics_type"] == "shared"
    start = restarts(lab)

    run = role(lab, run_tasks, host_graphics_esxi_hostnames=["esxi-01.lab.local"])
    assert executed(run) == [SET] + READ_BACK
    assert task(run, SET)["hosts"][0]["xorg_restart_reason"].startswith("GPU(s) %s did not run" % P40)
    assert task(run, READ_BACK[1])["msg"] == "1 GPU(s) run sharedDirect."
    assert lab.host("esxi-01.lab.local")["gpus"][0]["graphics_type"] == "sharedDirect"
    assert restarts(lab) == dict(start, **{"esxi-01.lab.local": start["esxi-01.lab.local"] + 1})
