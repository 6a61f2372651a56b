# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.gpuops.vgpu.plugins.test.guest_file import TestModule as GuestFileTests
from ansible_collections.gpuops.vgpu.plugins.test.guest_file import guest_file_as

CONTENT = "/usr/local/cuda/lib64\n"
FILE = {"path": "/etc/ld.so.conf.d/cuda.conf", "exists": True, "type": "file", "mode": "0644", "owner": "root",
        "group": "root", "size": len(CONTENT), "checksum": hashlib.sha1(CONTENT.encode()).hexdigest()}
LINK = {"path": "/usr/local/cuda", "exists": True, "type": "link", "target": "/usr/local/cuda-11.6", "owner": "root",
        "group": "root"}


def test_a_file_as_asked():
    assert guest_file_as(FILE, {"content": CONTENT, "mode": "0644"})
    assert guest_file_as(FILE, {"checksum": FILE["checksum"]})


@pytest.mark.parametrize("wanted", [
    {"content": CONTENT + "# more\n", "mode": "0644"},
    {"content": CONTENT, "mode": "0600"},
    {"content": CONTENT, "owner": "nobody"},
    {"type": "directory"},
])
def test_a_file_that_differs(wanted):
    assert not guest_file_as(FILE, wanted)


def test_a_missing_path_is_never_as_asked():
    assert not guest_file_as({"path": "/etc/environment", "exists": False}, {"content": ""})


def test_links_compare_their_target_not_a_mode():
    assert guest_file_as(LINK, {"target": "/usr/local/cuda-11.6", "mode": "0777"})
    assert not guest_file_as(LINK, {"target": "/usr/local/cuda-12.1"})
    assert not guest_file_as(FILE, {"target": "/usr/local/cuda-11.6"})


def test_wrong_use_is_refused():
    with pytest.raises(AnsibleFilterError, match="unknown keys permissions"):
        guest_file_as(FILE, {"permissions": "0644"})
    with pytest.raises(AnsibleFilterError, match="gpu_guest.files"):
        guest_file_as(None, {})
    assert GuestFileTests().tests()["guest_file_as"] is guest_file_as
