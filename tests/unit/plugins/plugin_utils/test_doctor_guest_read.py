# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doctor's guest facts from one gpu_guest_info read (nvidia-smi and the CUDA toolkits) are those of the
nvidia_smi_info read and the version.json file they stand for."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

import pytest

from ansible_collections.gpuops.vgpu.plugins.filter.doctor import doctor_cuda_as_file
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _doctor_facts
from ansible_collections.gpuops.vgpu.tests.unit.plugins.plugin_utils.doctor_data import healthy

TOOLKITS = {
    "toolkits": [{"path": "/usr/local/cuda-11.8", "series": "11.8", "version": "11.8.0"},
                 {"path": "/usr/local/cuda-12.0", "series": "12.0", "version": "12.0.1"}],
    "link": {"path": "/usr/local/cuda", "exists": True, "target": "/usr/local/cuda-12.0", "version": "12.0.1"},
}


def guest_info_read(smi, cuda=None):
    """A registered gpu_guest_info result with the nvidia_smi and cuda probes."""
    return {"changed": False, "gpu_guest": {"gathered": ["nvidia_smi", "cuda"], "nvidia_smi": smi,
                                            "cuda": TOOLKITS if cuda is None else cuda}}


def with_guest_read(raw, cuda=None, home=None):
    raw = copy.deepcopy(raw)
    guest = raw["guests"][0]
    read = guest_info_read(guest["nvidia_smi"]["nvidia_smi"], cuda)
    guest["nvidia_smi"], guest["cuda"] = read, read
    if home is not None:
        raw["guest_cuda_home"] = home
    return raw


def guest_facts(raw):
    return _doctor_facts.collect(raw)["guests"][0]


def test_one_guest_read_gives_the_facts_of_the_separate_reads():
    raw = healthy()
    assert guest_facts(with_guest_read(raw)) == guest_facts(raw)


@pytest.mark.parametrize("home, version", [
    ("/usr/local/cuda", "12.0.1"), ("/usr/local/cuda/", "12.0.1"), ("/usr/local/cuda-11.8", "11.8.0"),
    ("/usr/local/cuda-12.4", None),
])
def test_the_toolkit_at_the_doctors_cuda_home(home, version):
    assert guest_facts(with_guest_read(healthy(), home=home))["cuda_toolkit"] == version


def test_a_guest_without_the_cuda_link_has_no_toolkit_at_the_link():
    cuda = dict(TOOLKITS, link={"path": "/usr/local/cuda", "exists": False, "target": None, "version": None})
    assert guest_facts(with_guest_read(healthy(), cuda=cuda))["cuda_toolkit"] is None


def test_a_guest_read_that_failed_is_an_error_next_to_the_guest():
    raw = healthy()
    failed = {"failed": True, "msg": "Timeout (12s) waiting for privilege escalation prompt"}
    raw["guests"][0]["nvidia_smi"] = raw["guests"][0]["cuda"] = failed
    facts = guest_facts(raw)
    assert facts["error"] == failed["msg"] and facts["cuda_toolkit"] is None


@pytest.mark.parametrize("home, as_file", [
    ("/usr/local/cuda", False), ("/usr/local/cuda/", False), ("/usr/local/cuda-12.4", False),
    ("/opt/cuda", True), ("/usr/local/cuda-12.4/targets", True), ("/usr/local/cudax", True),
])
def test_version_json_is_read_as_a_file_only_outside_what_the_toolkit_read_covers(home, as_file):
    assert doctor_cuda_as_file(home) is as_file
