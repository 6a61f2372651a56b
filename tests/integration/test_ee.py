# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/site.yml inside the collection's execution environment (execution-environment.yml, `make ee`), started
the way users start it: ansible-navigator with podman, on the host network so the EE reaches the lab. The lab's
ground truth afterwards is what a run from the controller leaves."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import time

import pytest

from ee_image import build_image, containers_started, podman_env, tool
from site_run import ROOT, SITE, not_converged, site_command, site_inventory


@pytest.fixture(scope="module")
def ee_image():
    return build_image()


def navigator_command(lab, inventory, state_dir, image):
    """The site run of site_run.site_command (inventories, extra vars) as an ansible-navigator run in ``image``."""
    argv, _env = site_command(lab, inventory, state_dir)
    inventories = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-i"]
    extra_vars = argv[argv.index("-e") + 1]
    command = [tool("ansible-navigator"), "run", SITE, "--mode", "stdout", "--execution-environment-image", image,
               "--pull-policy", "never", "--container-engine", "podman", "--container-options=--net=host",
               "--playbook-artifact-enable", "false", "--log-file", str(state_dir / "navigator.log"),
               "--set-environment-variable", "ANSIBLE_NOCOLOR=1", "-e", extra_vars]
    for path in inventories:
        command.extend(["-i", path])
    return command


def test_site_run_in_the_execution_environment_converges_the_lab(lab, tmp_path, ee_image):
    # runner starts podman with --ipc=host; navigator refuses to start without the host's message queues.
    assert os.path.isdir("/dev/mqueue"), "/dev/mqueue is missing: tools/bootstrap.sh mounts it"
    start = lab.state()
    inventory = site_inventory(lab, tmp_path / "site.yml")
    since = time.time() - 1
    run = subprocess.run(navigator_command(lab, inventory, tmp_path, ee_image), cwd=ROOT, env=podman_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False,
                         timeout=1200)
    assert run.returncode == 0, run.stdout[-6000:]
    assert [name for name in containers_started(ee_image, since) if name.startswith("ansible_runner_")], \
        "no container of %s ran the playbook" % ee_image
    assert not_converged(lab, start, tmp_path) == []
    with open(str(tmp_path / "doctor.json")) as handle:
        assert json.load(handle)["summary"]["total"] > 0, "the doctor's report written inside the EE is empty"
