# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the probes reach a guest through: its files under one root directory (``/`` on the guest, a fake tree in
tests) and its commands through a runner (``module.run_command`` on the guest, a fake in tests).

Paths in and out are the guest's own (``/etc/nvidia/gridd.conf``), whatever the root. Standard library only and
Python 3.8 syntax: it runs on the guest.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import glob
import grp
import hashlib
import os
import pwd
import stat

_MISSING = (errno.ENOENT, errno.ENOTDIR)
# Where commands are looked for besides PATH: a module's PATH over SSH is often short.
SYSTEM_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


class CommandFailed(Exception):
    """A command a probe needs failed; the message names the command, its exit code and its own words."""

    def __init__(self, args, rc, output):
        words = " ".join(line.strip() for line in (output or "").splitlines() if line.strip())[:300]
        super(CommandFailed, self).__init__("%s exited with %s%s" % (" ".join(args), rc, (": " + words) if words else ""))
        self.rc = rc


class Guest(object):
    """A guest's ``files`` (a ``GuestFiles``), its commands (``run(args) -> (rc, stdout, stderr)``) and the reads
    several probes share, each done once.

    ``path_dirs`` is the PATH commands are looked for in (then ``SYSTEM_DIRS``); ``nvidia_smi_path`` an explicit
    nvidia-smi; ``query_format`` how nvidia-smi is asked first (``xml``, else ``text``).
    """

    def __init__(self, files, run, path_dirs=(), nvidia_smi_path=None, query_format="xml"):
        self.files = files
        self.run = run
        self.path_dirs = [d for d in path_dirs if d]
        self.nvidia_smi_path = nvidia_smi_path
        self.query_format = query_format
        self.errors = {}
        self._done = {}

    def which(self, name, extra_dirs=()):
        """The guest path of the executable ``name``, or None."""
        seen = set()
        for directory in list(self.path_dirs) + list(SYSTEM_DIRS) + list(extra_dirs):
            if directory in seen or not directory.startswith("/"):
                continue
            seen.add(directory)
            path = os.path.join(directory, name)
            if self.files.is_executable(path):
                return path
        return None

    def output(self, args):
        """stdout of ``args``; ``CommandFailed`` when it exits with an error."""
        rc, out, err = self.run(list(args))
        if rc != 0:
            raise CommandFailed(args, rc, err or out)
        return out or ""

    def once(self, key, read):
        """``read()``, called at most once per guest: its value or its error is kept for the next caller."""
        if key not in self._done:
            try:
                self._done[key] = (read(), None)
            except Exception as err:  # pylint: disable=broad-except  # kept, then raised again to each caller
                self._done[key] = (None, err)
        value, error = self._done[key]
        if error is not None:
            raise error
        return value


class GuestFiles(object):
    """The files of a guest whose ``/`` is ``root``. Reading a missing file gives None; other errors raise."""

    def __init__(self, root="/"):
        self.root = os.path.abspath(root)

    def real(self, path):
        """Where the guest path ``path`` is on this machine, its symbolic links followed inside the root."""
        if self.root == "/":
            return path
        return os.path.join(self.root, self.resolve(path).lstrip("/"))

    def resolve(self, path):
        """The guest path ``path`` names once every symbolic link in it is followed."""
        if self.root == "/":
            return os.path.realpath(path)
        pending = [part for part in path.split("/") if part]
        done = []
        hops = 0
        while pending:
            part = pending.pop(0)
            if part == "..":
                done = done[:-1]
            if part in (".", ".."):
                continue
            here = os.path.join(self.root, *(done + [part]))
            if not os.path.islink(here):
                done.append(part)
                continue
            hops += 1
            if hops > 40:
                raise OSError(errno.ELOOP, "Too many levels of symbolic links", path)
            target = os.readlink(here)
            if target.startswith("/"):
                done = []
            pending = [item for item in target.split("/") if item] + pending
        return "/" + "/".join(done)

    def _guest(self, real):
        relative = os.path.relpath(real, self.root)
        return "/" if relative == "." else "/" + relative

    def exists(self, path):
        return os.path.exists(self.real(path))

    def is_file(self, path):
        return os.path.isfile(self.real(path))

    def is_dir(self, path):
        return os.path.isdir(self.real(path))

    def is_link(self, path):
        """Whether the last component of ``path`` is a symbolic link."""
        return os.path.islink(os.path.join(self.real(os.path.dirname(path)), os.path.basename(path)))

    def is_executable(self, path):
        real = self.real(path)
        return os.path.isfile(real) and os.access(real, os.X_OK)

    def read(self, path):
        """The text of ``path``, or None when it does not exist."""
        try:
            with open(self.real(path), "rb") as handle:
                return handle.read().decode("utf-8", "replace")
        except (IOError, OSError) as err:
            if err.errno in _MISSING:
                return None
            raise

    def lines(self, path):
        return (self.read(path) or "").splitlines()

    def glob(self, pattern):
        """Guest paths matching ``pattern``, sorted."""
        return sorted(self._guest(real) for real in glob.glob(os.path.join(self.root, pattern.lstrip("/"))))

    def changed_at(self, path):
        """When the inode of ``path`` (its links followed) last changed (st_ctime: a package manager renaming a new
        file into place sets it, where it keeps the packaged mtime), or None when it does not exist."""
        try:
            return os.stat(self.real(path)).st_ctime
        except (IOError, OSError) as err:
            if err.errno in _MISSING:
                return None
            raise

    def describe(self, path, checksum=False):
        """Name, size, mode, owner and modification time of ``path`` (and the SHA-1 of its bytes with ``checksum``),
        never its content."""
        real = self.real(path)
        info = os.stat(real)
        described = {
            "name": os.path.basename(path),
            "path": path,
            "size": info.st_size,
            "mode": "%04o" % stat.S_IMODE(info.st_mode),
            "owner": _user(info.st_uid),
            "group": _group(info.st_gid),
            "mtime": info.st_mtime,
        }
        if checksum:
            digest = hashlib.sha1()
            with open(real, "rb") as handle:
                for block in iter(lambda: handle.read(65536), b""):
                    digest.update(block)
            described["checksum"] = digest.hexdigest()
        return described

    def state_of(self, path):
        """What a task that manages ``path`` compares: ``exists``, ``type`` (``file``, ``directory``, ``link``),
        mode and owner, a file's SHA-1 ``checksum`` and a link's ``target`` as written; never the content."""
        here = os.path.join(self.real(os.path.dirname(path)), os.path.basename(path))
        try:
            info = os.lstat(here)
        except OSError as err:
            if err.errno in (errno.ENOENT, errno.ENOTDIR):
                return {"path": path, "exists": False}
            raise
        if stat.S_ISLNK(info.st_mode):
            return {"path": path, "exists": True, "type": "link", "target": os.readlink(here),
                    "owner": _user(info.st_uid), "group": _group(info.st_gid)}
        described = self.describe(path, checksum=stat.S_ISREG(info.st_mode))
        described.update(exists=True, type="directory" if stat.S_ISDIR(info.st_mode) else
                         "file" if stat.S_ISREG(info.st_mode) else "other")
        return described


def _user(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _group(gid):
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)
