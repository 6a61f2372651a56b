# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a path as ``gpu_guest_info`` described it is already what a copy, file or link task would leave, which of
several are not, and which a running service has not read since they changed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib

from ansible.module_utils.common.text.converters import to_bytes

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

_KEYS = ("type", "mode", "owner", "group", "target", "checksum", "content")


def file_as(state, wanted):
    """Same type, content (SHA-1 of its bytes), mode, owner and group, or link target, as ``wanted`` asks. Owner and
    group default to root, as the guest roles ask."""
    if not isinstance(state, dict) or not isinstance(wanted, dict):
        raise InputError("compare gpu_guest.files[path] with a dict of what the task asks for")
    unknown = sorted(set(wanted) - set(_KEYS))
    if unknown:
        raise InputError("unknown keys %s; known are %s" % (", ".join(unknown), ", ".join(_KEYS)))
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


def files_to_write(wanted_files, states):
    """The entries of ``wanted_files`` (each ``path`` plus what ``file_as`` compares) whose path, as ``states``
    (``gpu_guest.files``) describes it, is not already as asked; a path not read counts as one to write."""
    stale = []
    for wanted in wanted_files:
        if not isinstance(wanted, dict) or "path" not in wanted:
            raise InputError("each file to compare is a dict with its path and what the task asks for")
        asked = dict((key, value) for key, value in wanted.items() if key != "path")
        if not file_as((states or {}).get(wanted["path"]) or {}, asked):
            stale.append(wanted)
    return stale


def changed_since_start(service, states):
    """The paths of ``states`` (``gpu_guest.files`` entries) modified after ``service`` (a ``gpu_guest_info``
    service) last became active, sorted: a change the service has not read, as a run stopped between a file's change
    and the restart leaves it. Empty where the service is not active or its start time is unknown."""
    since = _active_since(service)
    if since is None:
        return []
    return sorted(state["path"] for state in states
                  if (state or {}).get("exists") and isinstance(state.get("mtime"), (int, float))
                  and state["mtime"] > since)


def replaced_since_start(service):
    """Whether the program ``service`` (a ``gpu_guest_info`` service) starts was put in place after the service last
    became active: the daemon still runs the program a package upgrade replaced, as a run stopped between the upgrade
    and the restart leaves it (the inode's change time: package managers keep a packaged file's mtime). False where
    the service is not active or either time is unknown."""
    since, changed = _active_since(service), (service or {}).get("executable_changed_at")
    return since is not None and isinstance(changed, (int, float)) and changed > since


def _active_since(service):
    """When ``service`` (a ``gpu_guest_info`` service) last became active, or None where it is not active or the
    time is unknown."""
    since = (service or {}).get("active_since")
    return since if (service or {}).get("active") and isinstance(since, (int, float)) else None


def unapplied_files(gpu_guest, services, files):
    """Per name of ``services`` (``{name: systemd unit}``), the paths of ``files`` (``{name: path or paths}``) that
    ``gpu_guest`` (a ``gpu_guest_info`` read of those files and units) shows changed since the unit last became
    active (``changed_since_start``); only the names with some."""
    if not isinstance(gpu_guest, dict) or not isinstance(services, dict) or not isinstance(files, dict):
        raise InputError("give a gpu_guest_info read, {name: systemd unit} and {name: the paths it reads}")
    read_services, read_files = gpu_guest.get("services") or {}, gpu_guest.get("files") or {}
    unapplied = {}
    for name, unit in services.items():
        paths = files.get(name) or []
        paths = [paths] if isinstance(paths, str) else paths
        changed = changed_since_start(read_services.get(unit), [read_files.get(path) or {} for path in paths])
        if changed:
            unapplied[name] = changed
    return unapplied


def replaced_services(gpu_guest, units):
    """Of ``units`` (systemd units ``gpu_guest`` read), those that run a program replaced since they started
    (``replaced_since_start``), sorted."""
    if not isinstance(gpu_guest, dict) or not isinstance(units, (list, tuple)):
        raise InputError("give a gpu_guest_info read and the list of the units it read")
    read_services = gpu_guest.get("services") or {}
    return sorted(unit for unit in units if replaced_since_start(read_services.get(unit)))
