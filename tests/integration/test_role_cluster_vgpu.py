# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster_vgpu role against the lab: prepare and restore across runs and controllers (the record lives in
vCenter, the cluster's custom attribute), checks that stop it before any change, the file record of older versions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest
from pyVmomi import vim

from vsphere_direct import Direct

HOTMIGRATE = "vgpu.hotmigrate.enabled"
FIELD = "gpuops.vgpu.cluster_vgpu.automation"


def include(entry_point="prepare", **role_vars):
    return {"name": "cluster_vgpu role", "ansible.builtin.include_role": {
        "name": "gpuops.vgpu.cluster_vgpu", "tasks_from": entry_point}, "vars": role_vars}


def play(lab, run_tasks, tasks, check=False, expect_failure=False, controller=None):
    """Tasks in a play that sets the vCenter connection once, for the role too. ``controller``: a folder of its own
    for the playbook, as on another controller (the default file record is next to the playbook)."""
    name = "playbook.yml"
    if controller is not None:
        controller.mkdir(exist_ok=True)
        name = str(controller / "playbook.yml")
    return run_tasks(tasks, check=check, expect_failure=expect_failure, playbook_name=name)


def record(lab, name="gpu-cluster"):
    """The DRS/DPM record the cluster carries in vCenter, parsed; None when empty or unset."""
    cluster = next(cluster for cluster in lab.state()["clusters"] if cluster["name"] == name)
    raw = cluster["custom_values"].get(FIELD)
    return json.loads(raw) if raw else None


def custom_value(lab, name="gpu-cluster"):
    cluster = next(cluster for cluster in lab.state()["clusters"] if cluster["name"] == name)
    return cluster["custom_values"].get(FIELD)


def plant(lab, make_value):
    """A record left in gpu-cluster by another run, written with plain pyVmomi calls: ``make_value(vcenter uuid,
    cluster moid)`` gives its text."""
    direct = Direct(lab)
    try:
        cluster = direct._find(vim.ClusterComputeResource, "gpu-cluster")
        manager = direct.content.customFieldsManager
        field = next((f for f in manager.field if f.name == FIELD), None) or manager.AddCustomFieldDef(
            name=FIELD, moType=vim.ClusterComputeResource)
        manager.SetField(entity=cluster, key=field.key, value=make_value(direct.content.about.instanceUuid,
                                                                         cluster._moId))
    finally:
        direct.close()


def automation(lab, name="gpu-cluster"):
    cluster = next(cluster for cluster in lab.state()["clusters"] if cluster["name"] == name)
    return {"drs_enabled": cluster["drs"]["enabled"], "drs_behavior": cluster["drs"]["behavior"],
            "dpm_enabled": cluster["dpm"]["enabled"], "dpm_behavior": cluster["dpm"]["behavior"]}


def smi(*ecc):
    """A host's nvidia_smi result as gpuops.vgpu.nvidia_smi_info returns it, one GPU per ECC value."""
    return {"present": True, "gpus": [{"pci_bus_id": "00000000:%02X:00.0" % (0x3B + n), "ecc_mode_current": value}
                                      for n, value in enumerate(ecc)]}


def gpu(lab, host):
    """PCI id of the host's first GPU, as vCenter names it."""
    return lab.host(host)["gpus"][0]["pci_id"]


@pytest.fixture
def start(lab):
    state = {"gpu-cluster": automation(lab), "mixed-cluster": automation(lab, "mixed-cluster"),
             HOTMIGRATE: lab.state()["settings"][HOTMIGRATE]}
    assert state["gpu-cluster"] == {"drs_enabled": True, "drs_behavior": "fullyAutomated", "dpm_enabled": True,
                                    "dpm_behavior": "automated"}
    assert state[HOTMIGRATE] is False
    return state


@pytest.fixture
def state_file(tmp_path):
    """Where an older version kept its record: the legacy file the role still reads."""
    return str(tmp_path / "gpu-cluster.json")


@pytest.fixture
def prepared(lab, run_tasks, start):
    """gpu-cluster after a prepare, recorded in vCenter."""
    play(lab, run_tasks, [include()])
    assert record(lab)["previous"] == start["gpu-cluster"]


def test_prepare_in_check_mode_changes_nothing(lab, run_tasks, start, state_file):
    before = lab.state()
    run = play(lab, run_tasks, [include(cluster_vgpu_state_file=state_file)], check=True)
    assert any(result.get("changed") for result in run.results)
    assert lab.state() == before
    with pytest.raises(IOError):
        open(state_file)


def test_prepare_records_drs_dpm_in_vcenter_turns_them_off_and_allows_vgpu_vmotion(lab, run_tasks, start,
                                                                                   state_file):
    run = play(lab, run_tasks, [include(cluster_vgpu_state_file=state_file),
                                {"name": "fact", "ansible.builtin.debug": {"var": "cluster_vgpu_previous"}}])
    assert automation(lab) == dict(start["gpu-cluster"], drs_enabled=False, dpm_enabled=False)
    assert lab.state()["settings"][HOTMIGRATE] is True
    assert automation(lab, "mixed-cluster") == start["mixed-cluster"]
    recorded = record(lab)
    moid = next(cluster["moid"] for cluster in lab.state()["clusters"] if cluster["name"] == "gpu-cluster")
    assert recorded["previous"] == start["gpu-cluster"] and recorded["cluster"] == moid and recorded["v"] == 1
    assert recorded["vcenter"] and recorded["run"] and "@" in recorded["by"] and recorded["at"]
    assert record(lab, "mixed-cluster") is None
    with pytest.raises(IOError):
        open(state_file)  # no file any more
    assert run.result(-1)["cluster_vgpu_previous"] == start["gpu-cluster"]
    assert not any("WARNING" in str(result.get("msg", "")) for result in run.results), "gpu-cluster is symmetric"


def test_a_second_prepare_changes_nothing_and_keeps_the_first_record(lab, run_tasks, start, prepared):
    before = lab.state()
    run = play(lab, run_tasks, [include()])
    assert [result["_task"] for result in run.results if result.get("changed")] == []
    assert lab.state() == before
    assert any("not restored yet" in str(result.get("msg", "")) for result in run.results)


def test_restore_from_another_controller_puts_drs_dpm_back_from_vcenter_and_clears_the_record(
        lab, run_tasks, start, tmp_path):
    play(lab, run_tasks, [include()], controller=tmp_path / "ctl-a")
    assert custom_value(lab) and not (tmp_path / "ctl-a" / ".cluster_vgpu").exists()
    run = play(lab, run_tasks, [include("restore")], controller=tmp_path / "ctl-b")
    assert automation(lab) == start["gpu-cluster"]
    assert custom_value(lab) == "", "the attribute is set, then cleared"
    assert lab.state()["settings"][HOTMIGRATE] is True, "restore leaves vGPU vMotion on"
    assert any("put back as run" in str(result.get("msg", "")) for result in run.results)

    before = lab.state()
    again = play(lab, run_tasks, [include("restore")], controller=tmp_path / "ctl-c")
    assert [result["_task"] for result in again.results if result.get("changed")] == []
    assert lab.state() == before
    assert any("Nothing to restore" in str(result.get("msg", "")) for result in again.results)


# Login, the cluster, the custom field definitions, DRS/DPM and the record, logout.
RESTORE_READ_SOAP_REQUESTS = 13


def test_a_restore_with_nothing_to_put_back_is_one_read_per_cluster(lab, run_tasks, start, prepared):
    play(lab, run_tasks, [include("restore")])
    assert automation(lab) == start["gpu-cluster"] and custom_value(lab) == ""
    before = lab.state()
    lab.reset_stats()
    again = play(lab, run_tasks, [include("restore"), include("restore", cluster_vgpu_cluster="mixed-cluster")])
    stats = lab.stats()
    assert [task.split(" : ")[-1] for task in again.module_runs] == [
        "Put DRS and DPM back as they were before the vGPU work"] * 2, "no file record to read, one read per cluster"
    assert [result["_task"] for result in again.results if result.get("changed")] == []
    assert lab.state() == before
    assert stats["soap_requests"] <= 2 * RESTORE_READ_SOAP_REQUESTS, stats
    assert not [method for method in stats["by_method"] if method.endswith("_Task") or method == "SetField"], stats


def test_prepare_and_restore_in_one_run(lab, run_tasks, start, tmp_path):
    play(lab, run_tasks, [include(), include("restore")])
    assert automation(lab) == start["gpu-cluster"] and custom_value(lab) == ""
    assert not (tmp_path / ".cluster_vgpu").exists()


def test_restore_without_a_record_changes_nothing_and_says_so(lab, run_tasks, tmp_path):
    before = lab.state()
    run = play(lab, run_tasks, [include("restore", cluster_vgpu_state_file=str(tmp_path / "nothing.json"))])
    assert [result["_task"] for result in run.results if result.get("changed")] == []
    assert any("Nothing to restore for cluster gpu-cluster" in str(result.get("msg", "")) for result in run.results)
    assert lab.state() == before


def test_an_asymmetric_cluster_fails_before_any_change_or_warns(lab, run_tasks, start):
    before = lab.state()
    run = play(lab, run_tasks, [include(cluster_vgpu_cluster="mixed-cluster", cluster_vgpu_symmetry="fail")],
               expect_failure=True)
    message = run.failed[0]["msg"]
    assert "esxi-11.lab.local: Tesla T4 + Tesla T4" in message
    assert "esxi-12.lab.local: NVIDIA A100-PCIE-40GB" in message
    assert lab.state() == before

    run = play(lab, run_tasks, [include(cluster_vgpu_cluster="mixed-cluster")])
    assert any("WARNING" in str(result.get("msg", "")) and "esxi-11.lab.local" in str(result.get("msg", ""))
               for result in run.results)
    assert automation(lab, "mixed-cluster")["drs_enabled"] is False
    assert record(lab, "mixed-cluster")["previous"] == start["mixed-cluster"]
    play(lab, run_tasks, [include("restore", cluster_vgpu_cluster="mixed-cluster")])
    assert automation(lab, "mixed-cluster") == start["mixed-cluster"]


def test_ecc_that_differs_fails_before_any_change_naming_the_gpus(lab, run_tasks, start):
    before = lab.state()
    facts = {"esxi-01.lab.local": smi(True), "esxi-02.lab.local": {"nvidia_smi": smi(False)},
             "esxi-03.lab.local": smi(True)}
    run = play(lab, run_tasks, [include(cluster_vgpu_nvidia_smi_facts=facts)], expect_failure=True)
    message = run.failed[0]["msg"]
    assert "esxi-02.lab.local %s: ECC off" % gpu(lab, "esxi-02.lab.local") in message
    assert "esxi-01.lab.local %s: ECC on" % gpu(lab, "esxi-01.lab.local") in message
    assert lab.state() == before


def test_ecc_alike_passes(lab, run_tasks, start):
    facts = {"esxi-01.lab.local": smi(True), "esxi-02.lab.local": smi(True), "esxi-03.lab.local": smi(True)}
    play(lab, run_tasks, [include(cluster_vgpu_nvidia_smi_facts=facts), include("restore")])
    assert automation(lab) == start["gpu-cluster"]


def test_arguments_are_validated_before_anything_runs(lab, run_tasks):
    before = lab.state()
    run = play(lab, run_tasks, [include(cluster_vgpu_symmetry="maybe")], expect_failure=True)
    assert "cluster_vgpu_symmetry" in run.failed[0]["msg"] and "fail, warn, ignore" in run.failed[0]["msg"]
    assert lab.state() == before


TRUNCATED = '{\n    "cluster": "gpu-cluster",\n    "previous": {\n        "dpm_behavior": "autom'


@pytest.mark.parametrize("entry_point", ["restore", "prepare"])
def test_a_truncated_file_record_is_refused_before_any_change_naming_the_file_and_the_fix(
        lab, run_tasks, start, state_file, entry_point):
    with open(state_file, "w") as handle:
        handle.write(TRUNCATED)
    before = lab.state()
    run = play(lab, run_tasks, [include(entry_point, cluster_vgpu_state_file=state_file)], expect_failure=True)
    message = run.failed[0]["msg"]
    assert message.startswith("The record %s is damaged: it is not complete JSON" % state_file)
    assert "Check DRS and DPM of the cluster in vCenter" in message and "delete %s" % state_file in message
    assert "Traceback" not in message and "from_json" not in message
    assert lab.state() == before
    with open(state_file) as handle:
        assert handle.read() == TRUNCATED, "the damaged record is left for the user to look at"


@pytest.mark.parametrize("entry_point", ["restore", "prepare"])
@pytest.mark.parametrize("make_value, words", [
    (lambda vcenter, moid: json.dumps({"v": 1, "run": "r", "by": "ops@ctl-9", "vcenter": "another-vcenter",
                                       "cluster": moid, "at": "2026-11-28T09:00:00.000000Z",
                                       "previous": {"drs_enabled": True, "drs_behavior": "manual",
                                                    "dpm_enabled": True, "dpm_behavior": "manual"}}),
     ["another-vcenter"]),
    (lambda vcenter, moid: json.dumps({"v": 1, "run": "r", "by": "ops@ctl-9", "vcenter": vcenter,
                                       "cluster": "domain-c999", "at": "2026-11-28T09:00:00.000000Z",
                                       "previous": {"drs_enabled": True, "drs_behavior": "manual",
                                                    "dpm_enabled": True, "dpm_behavior": "manual"}}),
     ["domain-c999"]),
    (lambda vcenter, moid: '{"v": 1, "run": "r", "by": "ops@ctl-9", "vcen', ["cut short"]),
], ids=["another-vcenter", "another-cluster", "cut-short"])
def test_a_record_in_vcenter_that_cannot_be_trusted_is_refused_before_any_change(lab, run_tasks, start,
                                                                                 entry_point, make_value, words):
    plant(lab, make_value)
    before = lab.state()
    run = play(lab, run_tasks, [include(entry_point)], expect_failure=True)
    message = run.failed[0]["msg"]
    for word in words + ["Nothing was changed", "cluster gpu-cluster", FIELD, "clear its attribute"]:
        assert word in message
    assert lab.state() == before


def test_killed_after_drs_dpm_off_then_restored_from_another_controller(lab, run_tasks, start, tmp_path):
    # The module writes the record before it turns DRS/DPM off; a run killed then leaves both behind.
    run_tasks([{"name": "record, then DRS/DPM off", "gpuops.vgpu.cluster_automation": {
        "cluster": "gpu-cluster", "drs_enabled": False, "dpm_enabled": False, "record": True,
        "run_id": "run-killed"}}])
    play(lab, run_tasks, [include(), include("restore")], controller=tmp_path / "ctl-b")
    assert automation(lab) == start["gpu-cluster"] and custom_value(lab) == ""


def test_a_file_record_of_an_older_version_wins_and_goes_into_vcenter(lab, run_tasks, start, state_file, tmp_path):
    # An older version's prepare: its file holds the state from before, DRS/DPM are off, vCenter holds no record.
    with open(state_file, "w") as handle:
        json.dump({"vcenter": "127.0.0.1", "cluster": "gpu-cluster", "state": "prepared",
                   "previous": start["gpu-cluster"]}, handle)
    run_tasks([{"name": "DRS/DPM off", "gpuops.vgpu.cluster_automation": {
        "cluster": "gpu-cluster", "drs_enabled": False, "dpm_enabled": False}}])
    play(lab, run_tasks, [include(cluster_vgpu_state_file=state_file)])
    assert record(lab)["previous"] == start["gpu-cluster"] and record(lab)["adopted"] is True

    play(lab, run_tasks, [include("restore")], controller=tmp_path / "ctl-b")  # sees no file, only vCenter
    assert automation(lab) == start["gpu-cluster"] and custom_value(lab) == ""
    play(lab, run_tasks, [include("restore", cluster_vgpu_state_file=state_file)])
    with open(state_file) as handle:
        assert json.load(handle)["state"] == "restored"
    assert automation(lab) == start["gpu-cluster"]


def test_a_file_record_of_an_older_version_is_restored_by_a_restore_alone(lab, run_tasks, start, state_file):
    with open(state_file, "w") as handle:
        json.dump({"vcenter": "127.0.0.1", "cluster": "gpu-cluster", "state": "prepared",
                   "previous": start["gpu-cluster"]}, handle)
    run_tasks([{"name": "DRS/DPM off", "gpuops.vgpu.cluster_automation": {
        "cluster": "gpu-cluster", "drs_enabled": False, "dpm_enabled": False}}])
    play(lab, run_tasks, [include("restore", cluster_vgpu_state_file=state_file)])
    assert automation(lab) == start["gpu-cluster"] and not custom_value(lab)
    with open(state_file) as handle:
        assert json.load(handle)["state"] == "restored"
