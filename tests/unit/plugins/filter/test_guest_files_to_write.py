# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which of a guest role's files differ from what it writes, by guest_file_as's rule."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.vgpu.plugins.filter import guest_plans

CONTENT = "[Timer]\nOnUnitActiveSec=30s\n"
AS_ASKED = {"exists": True, "type": "file", "mode": "0644", "owner": "root", "group": "root",
            "checksum": hashlib.sha1(CONTENT.encode()).hexdigest(), "size": len(CONTENT)}
FILES = [{"path": "/etc/systemd/system/gpuops-gpu-metrics.timer", "content": CONTENT, "mode": "0644"},
         {"path": "/usr/local/lib/gpuops_gpu_metrics.py", "content": CONTENT, "mode": "0644"}]


def test_only_the_files_not_as_asked_are_left_to_write():
    states = {FILES[0]["path"]: AS_ASKED, FILES[1]["path"]: dict(AS_ASKED, mode="0600")}
    assert guest_plans.guest_files_to_write(FILES, states) == [FILES[1]]
    assert guest_plans.guest_files_to_write(FILES, {FILES[0]["path"]: AS_ASKED, FILES[1]["path"]: AS_ASKED}) == []


@pytest.mark.parametrize("state", [None, {"exists": False}, dict(AS_ASKED, checksum="0" * 40), dict(AS_ASKED, owner="nobody")])
def test_a_missing_unread_or_different_file_is_to_write(state):
    states = {FILES[0]["path"]: AS_ASKED}
    if state is not None:
        states[FILES[1]["path"]] = state
    assert guest_plans.guest_files_to_write(FILES, states) == [FILES[1]]


def test_an_entry_without_its_path_is_refused():
    with pytest.raises(AnsibleFilterError, match="dict with its path"):
        guest_plans.guest_files_to_write([{"content": CONTENT}], {})
