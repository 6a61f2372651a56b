# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The built collection: what the tarball holds, that it installs, and that the execution environment builds on it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys
import tarfile

import yaml

from conftest import ROOT

BIN = os.path.dirname(sys.executable)


def build(tmp_path):
    out = tmp_path / "dist"
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--output-path", str(out), ROOT],
                   check=True, stdout=subprocess.PIPE)
    with open(os.path.join(ROOT, "galaxy.yml")) as handle:
        version = yaml.safe_load(handle)["version"]
    return out / ("gpuops-vgpu-%s.tar.gz" % version), version


def test_tarball_holds_the_collection_and_nothing_of_the_lab(tmp_path):
    tarball = build(tmp_path)[0]
    with tarfile.open(str(tarball)) as archive:
        names = archive.getnames()
    tops = set(name.split("/")[0] for name in names)
    assert {"plugins", "roles", "playbooks", "meta", "README.md", "MANIFEST.json"} <= tops
    # Tests, their recorded fixtures and the molecule scenarios need the lab and stay in the repository.
    for unwanted in ("lab", "bench", "tools", "tests", "extensions", ".venv", ".tmp", ".git", ".ci"):
        assert unwanted not in tops, unwanted
    assert not [name for name in names if name.startswith("playbooks/reports")]
    # The collection alone is about 520 KiB (2026-11-29); the lab's binary, a fixture tree or a virtual environment
    # slipping in would add megabytes.
    assert os.path.getsize(str(tarball)) < 768 * 1024, "the tarball grew to %d bytes" % os.path.getsize(str(tarball))
    assert "plugins/modules/vm_vgpu.py" in names and "roles/vgpu_assign/meta/argument_specs.yml" in names


def test_tarball_installs_and_its_modules_load(tmp_path):
    tarball = build(tmp_path)[0]
    collections = tmp_path / "installed"
    subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--force", "-p", str(collections),
                    str(tarball)], check=True, stdout=subprocess.PIPE)
    assert (collections / "ansible_collections" / "gpuops" / "vgpu" / "plugins" / "modules" / "gpu_info.py").exists()
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(collections))
    doc = subprocess.run([os.path.join(BIN, "ansible-doc"), "--json", "gpuops.vgpu.vm_vgpu"], env=env, check=True,
                         stdout=subprocess.PIPE, universal_newlines=True).stdout
    assert '"vm_vgpu"' in doc and "shutdown_guest" in doc


def test_execution_environment_context(tmp_path):
    """ansible-builder lays out a build context that installs this very tarball, from where tools/ee/build.sh puts it
    (the definition's own additional build files, pointed at a directory of this test's)."""
    tarball = build(tmp_path)[0]
    with open(os.path.join(ROOT, "execution-environment.yml")) as handle:
        definition = yaml.safe_load(handle)
    wanted = definition["dependencies"]["galaxy"]["collections"][0]["name"]
    files = definition["additional_build_files"]
    assert [(entry["src"], entry["dest"]) for entry in files] == [(".tmp/ee/dist", "dist")], files
    dist = tmp_path / "ee-dist"
    dist.mkdir()
    subprocess.run(["cp", str(tarball), str(dist / os.path.basename(wanted))], check=True)
    files[0]["src"] = str(dist)
    # Paths in a definition are relative to its own directory: the copy names the checkout's requirements.
    definition["dependencies"]["python"] = os.path.join(ROOT, definition["dependencies"]["python"])
    copy = tmp_path / "execution-environment.yml"
    copy.write_text(yaml.safe_dump(definition))
    context = tmp_path / "context"
    subprocess.run([os.path.join(BIN, "ansible-builder"), "create", "-f", str(copy), "-c", str(context)], cwd=ROOT,
                   check=True, stdout=subprocess.PIPE)
    assert (context / "_build" / wanted).exists()
    assert "ansible-galaxy collection install" in (context / "Containerfile").read_text()
