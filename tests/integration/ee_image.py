# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's execution environment for the tests that run playbooks inside it: built from the checkout
(tools/ee/build.sh, which reuses podman's cache), the tools that start it, and podman's own record of the
containers it ran."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys

from site_run import ROOT

IMAGE = "localhost/gpuops-vgpu-ee:test"
CONTAINERS_CONF = os.path.join(ROOT, ".tmp", "molecule", "containers.conf")


def tool(name):
    """A command of the test environment (next to this Python first), or an AssertionError that says so."""
    found = shutil.which(name, path=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
    assert found, "%s is not installed: it is in tests/requirements.txt (make deps)" % name
    return found


def podman_env():
    return dict(os.environ, CONTAINERS_CONF=CONTAINERS_CONF)


def build_image():
    """Builds the image from the checkout (tools/ee/build.sh); returns its name."""
    env = dict(podman_env(), EE_IMAGE=IMAGE, PATH=os.path.dirname(tool("ansible-builder")) + os.pathsep
               + os.environ.get("PATH", ""))
    proc = subprocess.run([os.path.join(ROOT, "tools", "ee", "build.sh")], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False, timeout=1200)
    assert proc.returncode == 0, "tools/ee/build.sh failed:\n%s" % proc.stdout[-4000:]
    return IMAGE


def containers_started(image, since):
    """Names of the containers podman started from ``image`` since the time ``since`` (seconds since the epoch)."""
    proc = subprocess.run(["podman", "events", "--stream=false", "--since", str(int(since)), "--filter",
                           "event=start", "--format", "json"],
                          env=podman_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=True, timeout=60)
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return [event["Name"] for event in events if event["Image"] == image]
