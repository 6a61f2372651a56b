# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster_vgpu role against the lab: prepare and restore across runs, checks that stop it before any change."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

HOTMIGRATE = "vgpu.hotmigrate.enabled"


def include(entry_point="prepare", **role_vars):
    return {"name": "cluster_vgpu role", "ansible.builtin.include_role": {
        "name": "gpuops.vgpu.cluster_vgpu", "tasks_from": entry_point}, "vars": role_vars}


def play(lab, run_tasks, tasks, check=False, expect_failure=False):
    """Tasks in a play that sets the vCenter connection once, for the role too."""
    return run_tasks(tasks, check=check, expect_failure=expect_failure)


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
    return str(tmp_path / "gpu-cluster.json")


@pytest.fixture
def prepared(lab, run_tasks, state_file):
    """gpu-cluster after a prepare, recorded in state_file."""
    play(lab, run_tasks, [include(cluster_vgpu_state_file=state_file)])


def test_prepare_in_check_mode_changes_nothing(lab, run_tasks, start, state_file):
    before = lab.state()
    run = play(lab, run_tasks, [include(cluster_vgpu_state_file=state_file)], check=True)
    assert any(result.get("changed") for result in run.results)
    assert lab.state() == before
    with pytest.raises(IOError):
        open(state_file)


def test_prepare_turns_drs_dpm_off_allows_vgpu_vmotion_and_records_the_start(lab, run_tasks, start, state_file):
    run = play(lab, run_tasks, [include(cluster_vgpu_state_file=state_file),
                                {"name": "fact", "ansible.builtin.debug": {"var": "cluster_vgpu_previous"}}])
    assert automation(lab) == dict(start["gpu-cluster"], drs_enabled=False, dpm_enabled=False)
    assert lab.state()["settings"][HOTMIGRATE] is True
    assert automation(lab, "mixed-cluster") == start["mixed-cluster"]
    with open(state_file) as handle:
        record = json.load(handle)
    assert record == {"vcenter": "127.0.0.1", "cluster": "gpu-cluster", "state": "prepared",
                      "previous": start["gpu-cluster"]}
    assert run.result(-1)["cluster_vgpu_previous"] == start["gpu-cluster"]
    assert not any("WARNING" in str(result.get("msg", "")) for result in run.results), "gpu-cluster is symmetric"


def test_a_second_prepare_changes_nothing_and_keeps_the_first_record(lab, run_tasks, start, state_file, prepared):
    before = lab.state()
    run = play(lab, run_tasks, [include(cluster_vgpu_state_file=state_file)])
    assert [result["_task"] for result in run.results if result.get("changed")] == []
    assert lab.state() == before
    with open(state_file) as handle:
        assert json.load(handle)["previous"] == start["gpu-cluster"]


def test_restore_in_a_later_run_puts_drs_dpm_back_exactly(lab, run_tasks, start, state_file, prepared):
    play(lab, run_tasks, [include("restore", cluster_vgpu_state_file=state_file)])
    assert automation(lab) == start["gpu-cluster"]
    assert lab.state()["settings"][HOTMIGRATE] is True, "restore leaves vGPU vMotion on"
    with open(state_file) as handle:
        assert json.load(handle)["state"] == "restored"

    before = lab.state()
    again = play(lab, run_tasks, [include("restore", cluster_vgpu_state_file=state_file)])
    assert [result["_task"] for result in again.results if result.get("changed")] == []
    assert lab.state() == before


def test_prepare_and_restore_in_one_run_with_the_default_state_file(lab, run_tasks, start, tmp_path):
    # The play runs from tmp_path, so the default file lands in tmp_path/.cluster_vgpu/.
    default_file = tmp_path / ".cluster_vgpu" / "127.0.0.1_gpu-cluster.json"
    run = play(lab, run_tasks, [
        include(),
        {"name": "state after prepare", "ansible.builtin.debug": {"msg": "{{ lookup('file', '%s') }}" % default_file}},
        {"name": "drop the file, so restore uses the fact", "ansible.builtin.file": {
            "path": str(default_file), "state": "absent"}},
        include("restore"),
    ])
    assert json.loads(next(r["msg"] for r in run.results if r["_task"] == "state after prepare"))["state"] == "prepared"
    assert not default_file.exists()
    assert automation(lab) == start["gpu-cluster"]


def test_restore_without_a_record_fails_clearly(lab, run_tasks, tmp_path):
    before = lab.state()
    missing = str(tmp_path / "nothing.json")
    run = play(lab, run_tasks, [include("restore", cluster_vgpu_state_file=missing)],
               expect_failure=True)
    assert "Nothing to restore" in run.failed[0]["msg"] and missing in run.failed[0]["msg"]
    assert lab.state() == before


def test_an_asymmetric_cluster_fails_before_any_change_or_warns(lab, run_tasks, start, tmp_path):
    state_file = str(tmp_path / "mixed.json")
    before = lab.state()
    run = play(lab, run_tasks, [include(cluster_vgpu_cluster="mixed-cluster", cluster_vgpu_symmetry="fail",
                                        cluster_vgpu_state_file=state_file)], expect_failure=True)
    message = run.failed[0]["msg"]
    assert "esxi-11.lab.local: Tesla T4 + Tesla T4" in message
    assert "esxi-12.lab.local: NVIDIA A100-PCIE-40GB" in message
    assert lab.state() == before

    run = play(lab, run_tasks, [include(cluster_vgpu_cluster="mixed-cluster", cluster_vgpu_state_file=state_file)])
    assert any("WARNING" in str(result.get("msg", "")) and "esxi-11.lab.local" in str(result.get("msg", ""))
               for result in run.results)
    assert automation(lab, "mixed-cluster")["drs_enabled"] is False
    play(lab, run_tasks, [include("restore", cluster_vgpu_cluster="mixed-cluster",
                                  cluster_vgpu_state_file=state_file)])
    assert automation(lab, "mixed-cluster") == start["mixed-cluster"]


def test_ecc_that_differs_fails_before_any_change_naming_the_gpus(lab, run_tasks, start, tmp_path):
    before = lab.state()
    facts = {"esxi-01.lab.local": smi(True), "esxi-02.lab.local": {"nvidia_smi": smi(False)},
             "esxi-03.lab.local": smi(True)}
    run = play(lab, run_tasks, [include(cluster_vgpu_nvidia_smi_facts=facts,
                                        cluster_vgpu_state_file=str(tmp_path / "s.json"))], expect_failure=True)
    message = run.failed[0]["msg"]
    assert "esxi-02.lab.local %s: ECC off" % gpu(lab, "esxi-02.lab.local") in message
    assert "esxi-01.lab.local %s: ECC on" % gpu(lab, "esxi-01.lab.local") in message
    assert lab.state() == before


def test_ecc_alike_passes(lab, run_tasks, start, tmp_path):
    state_file = str(tmp_path / "s.json")
    facts = {"esxi-01.lab.local": smi(True), "esxi-02.lab.local": smi(True), "esxi-03.lab.local": smi(True)}
    play(lab, run_tasks, [include(cluster_vgpu_nvidia_smi_facts=facts, cluster_vgpu_state_file=state_file),
                          include("restore", cluster_vgpu_state_file=state_file)])
    assert automation(lab) == start["gpu-cluster"]


def test_arguments_are_validated_before_anything_runs(lab, run_tasks):
    before = lab.state()
    run = play(lab, run_tasks, [include(cluster_vgpu_symmetry="maybe")], expect_failure=True)
    assert "cluster_vgpu_symmetry" in run.failed[0]["msg"] and "fail, warn, ignore" in run.failed[0]["msg"]
    assert lab.state() == before


TRUNCATED = '{\n    "cluster": "gpu-cluster",\n    "previous": {\n        "dpm_behavior": "autom'


@pytest.mark.parametrize("entry_point", ["restore", "prepare"])
def test_a_truncated_record_is_refused_before_any_change_naming_the_file_and_the_fix(
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


def test_a_run_killed_right_after_turning_drs_dpm_off_still_restores_the_state_from_before(lab, run_tasks, start,
                                                                                           state_file):
    # prepare records DRS/DPM before it turns them off; a run killed between the two leaves this behind.
    with open(state_file, "w") as handle:
        json.dump({"vcenter": "127.0.0.1", "cluster": "gpu-cluster", "state": "prepared",
                   "previous": start["gpu-cluster"]}, handle)
    run_tasks([{"name": "DRS/DPM off", "gpuops.vgpu.cluster_automation": {
        "cluster": "gpu-cluster", "drs_enabled": False, "dpm_enabled": False}}])
    play(lab, run_tasks, [include(cluster_vgpu_state_file=state_file),
                          include("restore", cluster_vgpu_state_file=state_file)])
    assert automation(lab) == start["gpu-cluster"]
