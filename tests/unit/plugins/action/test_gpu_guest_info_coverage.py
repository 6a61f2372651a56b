# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reuse fingerprint covers every file the probes read and every command they run.

A kept read is reused while the fingerprint is as it was; a probe that reads a file the fingerprint does not stat, or
runs a command whose answer depends on a place it does not stat, would serve a stale read after a change there. The
probes run here on fake guests through a ``GuestFiles`` that records each path it is asked about, so a probe that
starts reading a new place fails this test until the fingerprint covers it (``BASE_PATHS``) or the place is said to
change only with a boot or a module load."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest

from ansible_collections.gpuops.vgpu.plugins.action.gpu_guest_info import BASE_PATHS, fingerprint_command
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest.gpu_state import (
    ALL_PROBES,
    Guest,
    GuestFiles,
    read_gpu_state,
)
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.guest.guest_trees import (
    ROCKY,
    UNLICENSED_TEXT,
    FakeGuest,
)

# The kernel's own files: they change with a boot (the fingerprint's boot_id) or a module load or unload (its NVIDIA
# and nouveau lines of /proc/modules, the stat of /sys/module/nvidia and /sys/module/nouveau), not with a file a
# task writes.
KERNEL_PLACES = ("/proc/", "/sys/")

# What each program the probes run answers from, and what of it the fingerprint holds. nvidia-smi's and the clock's
# live answers are as fresh as the read by design (the action's docstring); the rest follow files it stats.
COMMANDS = {
    "nvidia-smi": "the driver's live answer; its program under /usr/bin, the module's lines of /proc/modules",
    "lspci": "the PCI bus, fixed for a boot (boot_id)",
    "mokutil": "Secure Boot's state, which changes only at a boot (boot_id)",
    "systemctl": "nvidia-gridd's InvocationID, ActiveState and UnitFileState; the services asked for",
    "rpm": "the rpm databases under /var/lib/rpm and /usr/lib/sysimage/rpm",
    "modinfo": "/lib/modules/<release> and its modules.dep",
    "nvidia-ctk": "its program under /usr/bin (a package replaces it by a rename there)",
    "timedatectl": "the clock's synchronisation, live by design",
}


# What the roles ask a read for besides the probes (their files and services have sections of their own).
ASKED_FILES = ("/etc/gpuops/asked.conf",)
ASKED_SERVICES = ("nvidia-gridd", "gpuops-gpu-metrics.timer")


class RecordingFiles(GuestFiles):
    """``GuestFiles`` that notes each guest path asked about: ``(kind, path)``, kind ``content`` where the answer
    depends on the file's bytes or metadata, ``presence`` where only on whether it is there, ``listing`` for the
    directory a glob lists."""

    def __init__(self, root):
        super(RecordingFiles, self).__init__(root)
        self.asked = set()

    def _note(self, kind, path):
        self.asked.add((kind, path))

    def exists(self, path):
        self._note("presence", path)
        return super(RecordingFiles, self).exists(path)

    def is_file(self, path):
        self._note("presence", path)
        return super(RecordingFiles, self).is_file(path)

    def is_dir(self, path):
        self._note("presence", path)
        return super(RecordingFiles, self).is_dir(path)

    def is_link(self, path):
        # Which kind of entry a name is, and where a link points, change only by a change of its directory.
        self._note("presence", path)
        return super(RecordingFiles, self).is_link(path)

    def is_executable(self, path):
        self._note("presence", path)
        return super(RecordingFiles, self).is_executable(path)

    def read(self, path):
        self._note("content", path)
        return super(RecordingFiles, self).read(path)

    def glob(self, pattern):
        self._note("listing", pattern.split("*")[0].rsplit("/", 1)[0] or "/")
        return super(RecordingFiles, self).glob(pattern)

    def changed_at(self, path):
        self._note("content", path)
        return super(RecordingFiles, self).changed_at(path)

    def describe(self, path, checksum=False):
        self._note("content", path)
        return super(RecordingFiles, self).describe(path, checksum)


def _shell_glob(pattern):
    """A regular expression matching what the shell's expansion of ``pattern`` names (``*`` within one component)."""
    return re.compile("^" + "".join("[^/]*" if char == "*" else re.escape(char) for char in pattern) + "$")


STATTED = [_shell_glob(path) for path in BASE_PATHS]


def statted(path):
    return any(pattern.match(path) for pattern in STATTED)


def uncovered(asked):
    """The ``(kind, path)`` of ``asked`` whose change the fingerprint would not see."""
    missing = []
    for kind, path in sorted(asked):
        if path.startswith(KERNEL_PLACES):
            continue
        # A file's bytes or metadata: its own stat. Whether it is there: its own stat or its directory's (adding or
        # removing an entry changes the directory). A listing: the directory's stat.
        if statted(path) or (kind == "presence" and statted(os.path.dirname(path))):
            continue
        missing.append((kind, path))
    return missing


def debian_stack(fake):
    fake.debian(packages=[("nvidia-linux-grid-510", "510.47.03"), ("libcudnn8", "8.9.7.29-1+cuda11.8")])
    fake.grid_driver().licensed()
    fake.cuda("11.6.2", "11.6.124").cuda("12.1.1", "12.1.105").cuda_environment("11.6")
    fake.cudnn_header("/usr/local/cuda-11.6/include", "8.9.7.29").cudnn_header("/usr/include", "8.9.6.50")
    fake.file("/etc/modprobe.d/blacklist-nouveau.conf", "blacklist nouveau\n")
    fake.file("/run/modprobe.d/nouveau.conf", "options nouveau modeset=0\n")
    fake.program("/usr/bin/nvidia-ctk", {"--version": (0, "NVIDIA Container Toolkit CLI version 1.17.8\n", "")})
    fake.program("/usr/bin/mokutil", {"--sb-state": (0, "SecureBoot disabled\n", "")})
    # A toolkit from before CUDA 11.1 says its version in version.txt, not version.json.
    fake.program("/usr/local/cuda-10.2/bin/nvcc").file("/usr/local/cuda-10.2/version.txt", "CUDA Version 10.2.89\n")


def runfile_driver(fake):
    fake.debian().grid_driver(smi_text=UNLICENSED_TEXT, loaded=False)
    fake.program("/usr/bin/nvidia-uninstall")
    fake.file("/var/log/nvidia-installer.log", "Installation of the NVIDIA Accelerated Graphics Driver for "
              "Linux-x86_64 (version: 510.47.03) is now complete.\n")
    fake.file("/etc/nvidia/gridd.conf", "FeatureType=0\n")


def rhel(fake):
    fake.file("/etc/os-release", ROCKY).file("/proc/sys/kernel/osrelease", "5.14.0-362.8.1.el9_3.x86_64\n")
    fake.program("/usr/bin/dnf5").link("/usr/bin/dnf", "dnf5")
    fake.program("/usr/bin/rpm", {"--query --all --queryformat %{NAME}|%{VERSION}-%{RELEASE}\\n": (
        0, "nvidia-linux-grid-535|535.129.03-1\nnvidia-container-toolkit|1.14.3-1\n", "")})


@pytest.mark.parametrize("lay_out", [debian_stack, runfile_driver, rhel], ids=["debian", "runfile", "rhel"])
def test_every_file_the_probes_read_is_in_the_fingerprint(tmp_path, lay_out):
    fake = FakeGuest(tmp_path / "guest")
    lay_out(fake)
    files = RecordingFiles(fake.root)
    state = read_gpu_state(Guest(files, fake.run), ALL_PROBES, files=ASKED_FILES, services=ASKED_SERVICES)
    assert state["gathered"] == list(ALL_PROBES)
    # The probes did read the guest: the test sees their paths, not an empty record.
    assert ("content", "/etc/os-release") in files.asked and len(files.asked) > 40, sorted(files.asked)
    # The files a read asks for have a section of their own in the fingerprint.
    assert uncovered(asked for asked in files.asked if asked[1] not in ASKED_FILES) == []


def test_every_command_the_probes_run_answers_from_what_the_fingerprint_holds(tmp_path):
    programs = set()
    for lay_out in (debian_stack, runfile_driver, rhel):
        fake = FakeGuest(tmp_path / lay_out.__name__)
        lay_out(fake)
        read_gpu_state(Guest(GuestFiles(fake.root), fake.run), ALL_PROBES)
        programs.update(os.path.basename(call.split()[0]) for call in fake.calls)
    assert programs == set(COMMANDS)


def test_the_coverage_check_finds_a_file_the_fingerprint_does_not_stat(tmp_path):
    """The check itself: a read of a place outside BASE_PATHS is reported, one inside is not."""
    files = RecordingFiles(str(tmp_path))
    files.read("/etc/nvidia/gridd.conf")
    files.read("/opt/elsewhere/gridd.conf")
    files.exists("/etc/nvidia/ClientConfigToken/new.tok")
    files.exists("/var/lib/elsewhere/flag")
    files.read("/proc/driver/nvidia/version")
    assert uncovered(files.asked) == [("content", "/opt/elsewhere/gridd.conf"), ("presence", "/var/lib/elsewhere/flag")]


def test_every_statted_place_is_in_the_fingerprint_command():
    command = fingerprint_command([], [])
    assert all(path in command for path in BASE_PATHS)
