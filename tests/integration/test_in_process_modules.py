# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vCenter and BMC modules run in the task's worker where they would run in the controller's Python: the same
results, changes, failures and masking as in a module process of their own, and a module process where the task
asks for anything else (another interpreter, an environment, a timeout, or the switch turned off)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from redfish_direct import HOSTS, LabBmc

CLUSTER = "gpu-cluster"
OFF = {"GPUOPS_MODULES_IN_PROCESS": "false"}


def reads(lab, bmc):
    username, password = lab.bmc_credentials
    return [
        {"name": "inventory", "gpuops.vgpu.gpu_info": {"cluster": CLUSTER}},
        {"name": "automation", "gpuops.vgpu.cluster_automation": {"cluster": CLUSTER, "drs_enabled": False},
         "check_mode": True},
        {"name": "unknown cluster", "gpuops.vgpu.gpu_info": {"cluster": "no-such-cluster"}, "ignore_errors": True},
        {"name": "bad input", "gpuops.vgpu.cluster_lock": {"cluster": CLUSTER, "run_id": "r", "ttl": 5},
         "ignore_errors": True},
        {"name": "bmc", "gpuops.vgpu.bios_settings": {
            "baseuri": bmc.baseuri, "username": username, "password": password, "validate_certs": False,
            "profile": "gpu_virtualization"}, "check_mode": True},
    ]


def comparable(results):
    """What a module answered, without what differs from one call to the next (the BMC's task and time stamps)."""
    kept = []
    for result in results:
        result = dict((key, value) for key, value in result.items() if key not in ("_task", "invocation"))
        kept.append(json.loads(json.dumps(result, sort_keys=True)))
    return kept


def test_in_the_worker_and_in_a_module_process_every_answer_is_the_same(lab, run_tasks):
    bmc = LabBmc(lab, HOSTS["dell_idrac8"])
    bmc.wait_up()
    here = run_tasks(reads(lab, bmc), verbosity=3)
    apart = run_tasks(reads(lab, bmc), verbosity=3, env=OFF)
    assert comparable(here.results) == comparable(apart.results)
    assert here.result(2)["failed"] and "no-such-cluster" in here.result(2)["msg"]
    assert here.result(3)["failed"] and "ttl 5 is too short" in here.result(3)["msg"]
    # -vvv shows each module file a module process runs: none in the worker, every one apart.
    assert "AnsiballZ_gpu_info.py" not in here.stdout + here.stderr
    assert "AnsiballZ_gpu_info.py" in apart.stdout + apart.stderr
    # The BMC password is masked in the worker as in a module process, even at -vvv.
    password = lab.bmc_credentials[1]
    assert password not in here.stdout + here.stderr
    assert here.result(4)["invocation"]["module_args"]["password"] == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"


def test_a_change_in_the_worker_is_made_in_vcenter_and_undone(lab, run_tasks):
    take = {"name": "take", "gpuops.vgpu.cluster_lock": {"clusters": [CLUSTER, "mixed-cluster"], "run_id": "w-1"}}
    release = {"name": "release",
               "gpuops.vgpu.cluster_lock": dict(take["gpuops.vgpu.cluster_lock"], state="absent")}
    run = run_tasks([take, take, release])
    assert [result["changed"] for result in run.results] == [True, False, True]
    assert [lock["cluster"] for lock in run.result(0)["locks"]] == [CLUSTER, "mixed-cluster"]
    for cluster in lab.state()["clusters"]:
        assert not any(name.startswith("gpuops.vgpu.lock.") for name in cluster["custom_values"]), cluster["name"]


def test_a_warning_of_the_module_reaches_the_task_result(lab, run_tasks):
    # The first item's connection drops before vCenter reads its request: the module sends it again and warns.
    # (Ansible gathers the items' warnings on the task; that an item reports only its own is a unit test's.)
    lab.add_fault(kind="drop_connection", method="RetrievePropertiesEx", count=1)
    try:
        run = run_tasks([{"name": "read twice", "gpuops.vgpu.gpu_info": {"cluster": CLUSTER}, "loop": [1, 2]}])
    finally:
        lab.clear_faults()
    sent_again = [warning for warning in run.result(0)["warnings"] if "sent again" in warning]
    assert sent_again == ["1 request(s) to 127.0.0.1:%d were sent again after a lost connection or a busy answer "
                          "(503/429)." % lab.port]


def test_a_task_with_an_environment_a_timeout_or_another_python_runs_the_module_apart(lab, run_tasks):
    read = {"name": "read", "gpuops.vgpu.gpu_info": {"cluster": CLUSTER}}
    for keywords in ({"environment": {"LC_ALL": "C"}}, {"timeout": 120},
                     {"vars": {"ansible_python_interpreter": "/usr/bin/python3"}, "ignore_errors": True}):
        run = run_tasks([dict(read, **keywords)], verbosity=3)
        assert "AnsiballZ_gpu_info.py" in run.stdout + run.stderr, keywords
