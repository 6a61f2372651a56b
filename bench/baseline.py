"""The collection as it was at an earlier commit, for the benchmarks that compare this checkout with it."""

import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def baseline_collection(commit, workdir):
    """The collection at ``commit`` (``git archive``), extracted under ``workdir``; returns its collections path."""
    path = os.path.join(workdir, "baseline")
    tree = os.path.join(path, "ansible_collections", "gpuops", "vgpu")
    os.makedirs(tree)
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, stdout=subprocess.PIPE).stdout
    subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
    return path
