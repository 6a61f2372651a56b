# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fake guests for the gpu_guest_info tests: a root filesystem laid out in a temporary directory, and the answers
of the commands the probes run, from the recorded nvidia-smi outputs where nvidia-smi is asked."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.vgpu.tests.unit.plugins.nvidia_smi_fixtures import read as read_fixture

LICENSED_TEXT = "q_vgpu_guest_grid_a100-4c_licensed_expiry_driver510_TRUNCATED.txt"
UNLICENSED_TEXT = "q_vgpu_guest_grid_a100-4c_unlicensed_unrestricted_driver510_TRUNCATED.txt"
WINDOWS_P4_XML = "xml_v11_grid_p4-1q_vgpu_guest_licensed_windows_driver513.xml"
# What the lab's stand-in, which has only the text recordings, prints for -q -x.
NO_XML = (2, "", "nvidia-smi (gpuops lab stand-in): only '-q' was recorded on this guest; not available: -q -x\n")
DRIVER_DOWN = (9, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
                  "latest NVIDIA driver is installed and running.\n\n", "")
LSPCI_A100 = "02:01.0 3D controller [0302]: NVIDIA Corporation GA100 [A100 PCIe 40GB] [10de:20f1] (rev a1)\n"
GRIDD_ACTIVE = "LoadState=loaded\nActiveState=active\nSubState=running\nUnitFileState=enabled\n"
# A token's bytes: JWT-shaped, so that a test can look for any part of it in the result.
TOKEN = ("eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJOTFMiLCJsYWJfbGljZW5zZV9zZXJ2ZXIiOiJkbHMifQ"
         ".c2VjcmV0LXNpZ25hdHVyZS1vZi10aGUtdG9rZW4\n")
DEBIAN = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nID=debian\n'
ROCKY = 'NAME="Rocky Linux"\nVERSION_ID="9.3"\nID="rocky"\nID_LIKE="rhel centos fedora"\nPRETTY_NAME="Rocky Linux 9.3"\n'
SYSTEMCTL_SHOW = ("systemctl show nvidia-gridd.service --no-pager "
                  "--property=LoadState,ActiveState,SubState,UnitFileState,ActiveEnterTimestampMonotonic,NeedDaemonReload,ExecStart")


def dpkg_stanza(name, version, status="install ok installed"):
    return "Package: %s\nStatus: %s\nArchitecture: amd64\nVersion: %s\nDescription: %s\n  more text\n" % (
        name, status, version, name)


class FakeGuest(object):
    """A guest root under ``root`` and the answers of its commands.

    Commands are answered by their program's base name and arguments (``"lspci -nnk -d 10de:"``); an answer is
    ``(rc, stdout, stderr)`` or an exception to raise. Every call is logged in ``calls``; unknown commands exit 127.
    """

    def __init__(self, root):
        self.root = str(root)
        self.answers = {}
        self.calls = []
        os.makedirs(self.root, exist_ok=True)

    def file(self, path, text="", mode=0o644):
        real = os.path.join(self.root, path.lstrip("/"))
        os.makedirs(os.path.dirname(real), exist_ok=True)
        with open(real, "w") as handle:
            handle.write(text)
        os.chmod(real, mode)
        return self

    def program(self, path, answers=None):
        """An executable at ``path`` and, per argument string, its answer."""
        self.file(path, "#!/bin/sh\nexit 99\n", 0o755)
        for args, answer in (answers or {}).items():
            self.answers[(os.path.basename(path) + " " + args).strip()] = answer
        return self

    def directory(self, path):
        os.makedirs(os.path.join(self.root, path.lstrip("/")), exist_ok=True)
        return self

    def link(self, path, target):
        real = os.path.join(self.root, path.lstrip("/"))
        os.makedirs(os.path.dirname(real), exist_ok=True)
        os.symlink(target, real)
        return self

    def run(self, args):
        key = " ".join([os.path.basename(args[0])] + list(args[1:]))
        self.calls.append(key)
        answer = self.answers.get(key, (127, "", "fake guest: no answer for %s\n" % key))
        if isinstance(answer, Exception):
            raise answer
        return answer

    # --- layouts --------------------------------------------------------------------------------------------

    def debian(self, packages=()):
        """A bare Debian 12 VM: no NVIDIA software, nouveau not loaded, systemd running, clock synchronised."""
        status = "".join(dpkg_stanza(name, version) + "\n" for name, version in
                         [("bash", "5.2.15-2+b2"), ("pciutils", "1:3.9.0-4")] + list(packages))
        self.file("/etc/os-release", DEBIAN).file("/proc/sys/kernel/osrelease", "6.1.0-18-amd64\n")
        self.file("/var/lib/dpkg/status", status).program("/usr/bin/apt-get")
        self.file("/proc/modules", "virtio_net 61440 0 - Live 0x0000000000000000\n")
        self.file("/proc/cmdline", "BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=/dev/sda1 ro quiet\n")
        self.directory("/run/systemd/system")
        self.program("/usr/bin/lspci", {"-nnk -d 10de:": (0, LSPCI_A100, "")})
        self.program("/usr/bin/systemctl", {
            SYSTEMCTL_SHOW.split(" ", 1)[1]: (0, "LoadState=not-found\nActiveState=inactive\nSubState=dead\n"
                                                 "UnitFileState=\n", "")})
        self.program("/usr/bin/timedatectl", {"show --property=NTPSynchronized --value": (0, "yes\n", "")})
        self.program("/usr/sbin/modinfo", {"nvidia": (1, "", "modinfo: ERROR: Module nvidia not found.\n")})
        return self

    def grid_driver(self, smi_text=LICENSED_TEXT, loaded=True):
        """The GRID 510.47.03 driver's files (the package or runfile adds its own record), nvidia-smi answering
        ``-q`` with ``smi_text`` and ``-q -x`` like the lab's stand-in."""
        self.program("/usr/bin/nvidia-smi", {"-q -x": NO_XML, "-q": (0, read_fixture(smi_text), "")})
        self.file("/etc/nvidia/gridd.conf.template", "FeatureType=0\n#ClientConfigTokenPath=\n")
        self.file("/lib/systemd/system/nvidia-gridd.service", "[Service]\nExecStart=/usr/bin/nvidia-gridd\n")
        self.answers[SYSTEMCTL_SHOW] = (0, GRIDD_ACTIVE, "")
        if loaded:
            self.file("/proc/modules", "nvidia 56393728 0 - Live 0x0000000000000000 (POE)\n"
                                       "virtio_net 61440 0 - Live 0x0000000000000000\n")
            self.file("/sys/module/nvidia/version", "510.47.03\n")
            self.answers["modinfo nvidia"] = (0, "filename:       /lib/modules/nvidia.ko\nversion:        510.47.03\n"
                                                 "license:        NVIDIA\n", "")
        return self

    def licensed(self, token_name="client_configuration_token_05-26-2022-00-08-28.tok"):
        self.file("/etc/nvidia/gridd.conf", "# gridd.conf\nFeatureType=1\n#FeatureType=0\nEnableUI=FALSE\n")
        self.file("/etc/nvidia/ClientConfigToken/" + token_name, TOKEN, 0o744)
        return self

    def cuda(self, version="11.6.2", nvcc="11.6.124"):
        series = ".".join(version.split(".")[:2])
        home = "/usr/local/cuda-" + series
        self.file(home + "/version.json", '{"cuda": {"name": "CUDA SDK", "version": "%s"}, '
                                          '"cuda_nvcc": {"name": "CUDA NVCC", "version": "%s"}}\n' % (version, nvcc))
        self.program(home + "/bin/nvcc")
        return self

    def cuda_environment(self, series="11.6"):
        self.link("/usr/local/cuda", "/usr/local/cuda-" + series)
        self.file("/etc/environment", 'PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:'
                                      '/usr/local/cuda/bin"\n')
        self.file("/etc/ld.so.conf.d/cuda.conf", "# managed\n/usr/local/cuda/lib64\n")
        self.file("/etc/profile.d/cuda.sh", 'case ":${PATH}:" in *":/usr/local/cuda/bin:"*) ;; '
                                            '*) PATH="/usr/local/cuda/bin:$PATH" ;; esac\n')
        return self

    def cudnn_header(self, directory, version):
        major, minor, patch = version.split(".")[:3]
        self.file(directory + "/cudnn_version.h", "#ifndef CUDNN_VERSION_H_\n#define CUDNN_MAJOR %s\n#define "
                  "CUDNN_MINOR %s\n#define CUDNN_PATCHLEVEL %s\n#define CUDNN_VERSION (CUDNN_MAJOR * 1000)\n"
                  "#endif\n" % (major, minor, patch))
        return self
