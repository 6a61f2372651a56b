# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AWX definitions (extensions/awx/definitions.yml) run the way AWX runs a job (tests/integration/awx_job.py):
credentials injected as their types say, a private data directory as AWX writes it, ansible-runner in the
collection's execution environment. The lab's ground truth shows the work done; runner's artifacts show the job's
end; no secret of a credential shows in the artifacts or the output."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import secrets
import subprocess

import pytest
import yaml

from awx_job import (CONTAINER_ROOT, artifacts, definitions, files_holding, inject, job_template, run_job,
                     script_inventory, write_private_data_dir)
from ee_image import build_image, tool
from site_run import ROOT, not_converged, site_inventory

APPLY = os.path.join(ROOT, "extensions", "awx", "apply.yml")
VCENTER, BMC, TOKEN = "gpuops.vgpu vCenter", "gpuops.vgpu BMC", "gpuops.vgpu NVIDIA license token"
VCENTER_INVENTORY = "gpuops.vgpu vCenter inventory"
# What the credentials carry, so the AWX inventory does not.
CREDENTIAL_VARS = ("vcenter_username", "vcenter_password", "bmc_username", "bmc_password")


@pytest.fixture(scope="module")
def ee_image():
    return build_image()


def credentials(lab):
    """The credentials an admin creates with the collection's types, for this lab."""
    return {
        VCENTER: {"host": "127.0.0.1", "port": str(lab.port), "username": lab.connection["username"],
                  "password": lab.connection["password"], "validate_certs": False},
        BMC: {"username": lab.bmc_credentials[0], "password": lab.bmc_credentials[1], "validate_certs": False},
        TOKEN: {"token": "gpuops-test-token-" + secrets.token_hex(16), "filename": "client_configuration_token.tok"},
    }


def awx_setup(lab, tmp_path):
    """The folder AWX exposes to the jobs, the definitions, the credentials and the AWX inventory for this lab."""
    state_dir = tmp_path / "state"
    state_dir.mkdir()
    inventory = script_inventory([lab.inventory, lab.shell_inventory, str(site_inventory(lab, tmp_path / "site.yml"))], CREDENTIAL_VARS)
    return state_dir, definitions(state_dir), credentials(lab), inventory


def secret_values(defs, creds):
    kinds = dict((kind["name"], kind) for kind in defs["gpuops_awx_credential_types"])
    return [creds[name][field["id"]] for name in creds for field in kinds[name]["inputs"]["fields"]
            if field.get("secret") and field["id"] in creds[name]]


def assert_clean_end(private_data_dir, job_id, run, secrets_used):
    status, rc, events = artifacts(private_data_dir, job_id)
    # AWX has runner keep the output to the events.
    output = "\n".join(event.get("stdout", "") for event in events)
    assert (status, rc) == ("successful", 0), (run.stdout + output)[-6000:]
    stats = [event for event in events if event["event"] == "playbook_on_stats"]
    assert stats and not stats[-1]["event_data"]["failures"], stats
    assert files_holding(os.path.join(private_data_dir, "artifacts"), secrets_used) == []
    assert not [secret for secret in secrets_used if secret in run.stdout]


def test_every_password_and_token_input_is_secret(tmp_path):
    for kind in definitions(tmp_path)["gpuops_awx_credential_types"]:
        for field in kind["inputs"]["fields"]:
            if field["id"] in ("password", "token"):
                assert field.get("secret") is True, (kind["name"], field["id"])


def test_site_job_template_run_as_awx_runs_it(lab, tmp_path, ee_image):
    start = lab.state()
    state_dir, defs, creds, inventory = awx_setup(lab, tmp_path)
    template = job_template(defs, "gpuops site")
    job = write_private_data_dir(tmp_path / "job", defs, template, 4201, inventory, creds,
                                 {"cluster_lock_wait": 300, "doctor_fail_on": "fail"})
    run = run_job(job, template, 4201, ee_image, mounts=[str(state_dir)])

    assert_clean_end(job, 4201, run, secret_values(defs, creds))
    assert not_converged(lab, start, state_dir) == []
    assert (state_dir / "reports" / "doctor.json").is_file()
    assert (state_dir / "reports" / "fleet-report.html").is_file()


def test_site_workflow_runs_its_layers_as_awx_jobs(lab, tmp_path, ee_image):
    """The workflow's success path, one job (and one private data directory) per node, as AWX runs it: the layers
    share the workflow's lock and the records the state directory keeps between jobs."""
    start = lab.state()
    state_dir, defs, creds, inventory = awx_setup(lab, tmp_path)
    nodes = dict((node["identifier"], node) for node in defs["gpuops_awx_workflow"]["nodes"])
    node, ran = defs["gpuops_awx_workflow"]["nodes"][0], []
    while node:
        job_id = 5000 + len(ran)
        template = job_template(defs, node["unified_job_template"]["name"])
        survey = dict((question["variable"], question["default"]) for question in
                      (defs["gpuops_awx_survey_questions"][name] for name in template.get("survey", [])))
        job = write_private_data_dir(tmp_path / node["identifier"], defs, template, job_id, inventory, creds,
                                     survey, workflow_job_id=4999)
        run = run_job(job, template, job_id, ee_image, mounts=[str(state_dir)])
        assert_clean_end(job, job_id, run, secret_values(defs, creds))
        ran.append(node["identifier"])
        following = node["related"]["success_nodes"] + node["related"]["always_nodes"]
        node = nodes[following[0]["identifier"]] if following else None

    assert ran == ["bios", "hosts", "cluster", "vms", "cluster-restore", "unlock", "guests", "gpu-inventory",
                   "doctor", "report"]
    assert not_converged(lab, start, state_dir) == []
    assert (state_dir / "reports" / "fleet-report.html").is_file()


def test_apply_playbook_passes_the_awx_modules_argument_checks(tmp_path):
    """No AWX server runs here: each task of extensions/awx/apply.yml runs against a closed port, so the awx.awx
    module checks its arguments and then fails to connect; an unknown or ill-typed argument fails before that."""
    play = yaml.safe_load(open(APPLY))[0]
    answers = tmp_path / "my-awx.yml"
    answers.write_text(yaml.safe_dump({
        "gpuops_awx_inventory": "gpu datacenter", "gpuops_awx_ee_image": "registry.example.com/gpuops-vgpu-ee:0.1.0",
        "gpuops_awx_project_scm_url": "https://git.example.com/gpuops/vgpu.git",
        "gpuops_awx_credentials": {VCENTER: "vcenter", BMC: "bmc", TOKEN: "license token",
                                   VCENTER_INVENTORY: "vcenter inventory"}}))
    env = dict(os.environ, CONTROLLER_HOST="https://127.0.0.1:9", CONTROLLER_USERNAME="admin",
               CONTROLLER_PASSWORD="unused", ANSIBLE_NOCOLOR="1")
    for task in play["tasks"]:
        run = subprocess.run([tool("ansible-playbook"), APPLY, "-e", "@%s" % answers, "--start-at-task",
                              task["name"]], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True, check=False, timeout=300)
        first = [line for line in run.stdout.splitlines() if line.startswith(("fatal:", "failed:"))][:1]
        assert first and "Failed to get token" in first[0], "%s:\n%s" % (task["name"], run.stdout[-3000:])


def test_the_inventory_source_reads_vcenter_with_its_credential_as_awx_injects_it(lab, tmp_path):
    """The inventory source's file of the project, read by ansible-inventory with the environment and the password
    file its credential type injects: the lab's GPU hosts, and no secret in the output."""
    defs = definitions(tmp_path)
    source = defs["gpuops_awx_inventory_sources"][0]
    kind = next(kind for kind in defs["gpuops_awx_credential_types"] if kind["name"] == source["credential"])
    private_data_dir = tmp_path / "update"
    (private_data_dir / "env").mkdir(parents=True)
    inputs = {"host": "127.0.0.1", "port": str(lab.port), "username": lab.connection["username"],
              "password": lab.connection["password"], "validate_certs": False}
    injected = inject(kind, inputs, str(private_data_dir), [])
    assert lab.connection["password"] not in yaml.safe_dump(injected)
    # AWX mounts the private data directory at CONTAINER_ROOT; here the update runs on this machine.
    injected["GPUOPS_VCENTER_PASSWORD_FILE"] = str(private_data_dir) + injected[
        "GPUOPS_VCENTER_PASSWORD_FILE"][len(CONTAINER_ROOT):]
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED="1", **injected)
    run = subprocess.run([tool("ansible-inventory"), "-i", os.path.join(ROOT, source["source_path"]), "--list"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                         check=False, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert lab.connection["password"] not in run.stdout + run.stderr
    found = yaml.safe_load(run.stdout)
    assert sorted(found["esxi_hosts"]["hosts"]) == sorted(h["name"] for h in lab.state()["hosts"] if h["gpus"])
    assert found["_meta"]["hostvars"]["localhost"]["vcenter_port"] == lab.port
