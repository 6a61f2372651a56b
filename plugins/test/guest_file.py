# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guest roles' test ``guest_file_as``; the docs are in ``guest_file_as.yml``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_bytes

_KEYS = ("type", "mode", "owner", "group", "target", "checksum", "content")


def guest_file_as(state, wanted):
    """Whether a path as ``gpu_guest_info`` described it (``files``) is already what a copy, file or link task
    asking for ``wanted`` would leave: same type, content (SHA-1 of its bytes), mode, owner and group, or link
    target. Owner and group default to root, as the guest roles ask."""
    if not isinstance(state, dict) or not isinstance(wanted, dict):
        raise AnsibleFilterError("guest_file_as: compare gpu_guest.files[path] with a dict of what the task asks for")
    unknown = sorted(set(wanted) - set(_KEYS))
    if unknown:
        raise AnsibleFilterError("guest_file_as: unknown keys %s; known are %s" % (", ".join(unknown), ", ".join(_KEYS)))
    if not state.get("exists"):
        return False
    asked = dict(owner="root", group="root", type="link" if "target" in wanted else "file")
    asked.update(wanted)
    content = asked.pop("content", None)
    if content is not None:
        asked["checksum"] = hashlib.sha1(to_bytes(content, errors="surrogate_or_strict")).hexdigest()
    if asked["type"] == "link":
        asked.pop("mode", None)
    return all(state.get(key) == value for key, value in asked.items())


class TestModule(object):
    """The guest roles' test."""

    def tests(self):
        return {"guest_file_as": guest_file_as}
