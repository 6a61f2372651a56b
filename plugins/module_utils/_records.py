# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Records the collection keeps on the controller between runs (the DRS/DPM snapshot, reports): the one place that
reads them, refusing a damaged one with its file name and the fix, and writes them atomically.

A write goes to a temporary file in the same directory, is flushed to disk (fsync), then renamed over the record and
the directory is synced: a reader sees the old record or the new one, never a part of either, even if the controller
dies or loses power half way.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import json
import os
import tempfile

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

DEFAULT_FIX = "Move it aside (for example to %s.damaged) and run again: the run writes it anew."


class DamagedRecord(InputError):
    """A record on disk is not what the collection wrote: cut short, not JSON, or without its keys."""


def read_record(path, required_keys=(), fix=None):
    """The record at ``path`` as a dict, or None when there is no file.

    Refuses (``DamagedRecord``) an empty or truncated file, text that is not a JSON object, and an object without
    every key of ``required_keys``; the message names the file and ``fix`` (what to do), whose ``%s`` is the path.
    """
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except (IOError, OSError) as err:
        if err.errno == errno.ENOENT:
            return None
        raise InputError("Cannot read the record %s: %s." % (path, err.strerror),
                         hint="Check the file's permissions and that the path is a file.", path=path)
    reason = _damage(raw, required_keys)
    if reason:
        raise DamagedRecord("The record %s is damaged: %s." % (path, reason),
                            hint=_fix_text(fix or DEFAULT_FIX, path), path=path)
    return json.loads(raw.decode("utf-8"))


def _damage(raw, required_keys):
    if not raw.strip():
        return "the file is empty"
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return "the file is not UTF-8 text"
    except ValueError as err:
        return "it is not complete JSON (%s; %d bytes), probably cut short" % (err, len(raw))
    if not isinstance(data, dict):
        return "it holds a JSON %s where a JSON object was written" % type(data).__name__
    missing = [key for key in required_keys if key not in data]
    if missing:
        return "it lacks the key%s %s" % ("s" if len(missing) > 1 else "", ", ".join(missing))
    return None


def _fix_text(fix, path):
    return fix.replace("%s", path) if "%s" in fix else fix


def render_json(data):
    """The text a record is written as: the same form as Ansible's to_nice_json, and a final newline."""
    return json.dumps(data, indent=4, sort_keys=True, separators=(",", ": ")) + "\n"


def directory_mode(file_mode):
    """The mode of a directory made for a file of ``file_mode``: the owner's rights, and search where read is given."""
    return 0o700 | (file_mode & 0o044) | ((file_mode & 0o044) >> 2)


def write_atomically(path, text, mode=0o600):
    """Replace the file at ``path`` with ``text`` so that a crash at any point leaves the old file or the new one.

    Creates a missing parent directory open to those who may read the file (0700 for a file of mode 0600: records
    may name the datacenter's hosts and clusters; 0755 for a report of mode 0644).
    """
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        os.makedirs(directory, directory_mode(mode))
    handle, temporary = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(text.encode("utf-8"))
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.rename(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    _sync_directory(directory)


def _sync_directory(directory):
    """Make the rename itself durable (POSIX: the new name lives in the directory's own data)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:  # Some file systems refuse fsync on a directory; the rename is still atomic there.
        pass
    finally:
        os.close(descriptor)


def _mode(text):
    try:
        mode = int(text, 8)
    except ValueError:
        mode = -1
    if not 0 <= mode <= 0o777:
        raise InputError("mode %r is not an octal file mode." % text, hint="Give it as a string such as '0600'.")
    return mode


def current_text(path):
    """The file's text, or None when it does not exist or cannot be decoded (a damaged record is replaced)."""
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8")
    except (IOError, OSError, UnicodeDecodeError):
        return None


def reconcile(client, params, check_mode):
    """The record_file module: read ``path``, or write ``data`` (a JSON object) or ``content`` (text) to it, on the
    machine this runs on (``client`` is unused: files are read and written directly)."""
    path, fix, required = params["path"], params["fix"], params["required_keys"] or []
    if params["data"] is None and params["content"] is None:
        data = read_record(path, required, fix)
        if data is None and params["missing"] == "fail":
            raise InputError("There is no record %s." % path, hint=_fix_text(fix or "Check the path.", path),
                             path=path)
        return {"changed": False, "exists": data is not None, "data": data or {}, "path": path}
    text = render_json(params["data"]) if params["data"] is not None else params["content"]
    before = current_text(path)
    mode = _mode(params["mode"])
    changed = before != text or (before is not None and (os.stat(path).st_mode & 0o7777) != mode)
    if changed and not check_mode:
        write_atomically(path, text, mode)
    return {"changed": changed, "exists": True, "data": params["data"] or {}, "path": path,
            "diff": {"before": before or "", "after": text, "before_header": path, "after_header": path}}
