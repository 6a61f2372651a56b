# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probes' parts on their own: the reader under a root, package records, gridd.conf, CUDA paths, cuDNN."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._access import Guest, GuestFiles
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._cuda import (
    cudnn_header_version,
    etc_environment_path,
    read_cuda,
)
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._license import parse_gridd_conf
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest._system import read_packages
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.guest.guest_trees import FakeGuest, dpkg_stanza


@pytest.fixture
def fake(tmp_path):
    return FakeGuest(tmp_path / "guest")


def guest_of(fake, path_dirs=()):
    return Guest(GuestFiles(fake.root), fake.run, path_dirs=list(path_dirs))


def test_links_are_followed_inside_the_root(fake):
    fake.file("/usr/local/cuda-12.1/version.json", "{}").link("/etc/alternatives/cuda", "/usr/local/cuda-12.1")
    fake.link("/usr/local/cuda", "../../etc/alternatives/cuda").link("/loop", "/loop")
    files = GuestFiles(fake.root)
    assert files.resolve("/usr/local/cuda") == "/usr/local/cuda-12.1"
    assert files.resolve("/usr/local/cuda/bin/../version.json") == "/usr/local/cuda-12.1/version.json"
    assert files.read("/usr/local/cuda/version.json") == "{}" and files.is_dir("/usr/local/cuda")
    assert files.is_link("/usr/local/cuda") and not files.is_link("/usr/local/cuda-12.1")
    assert files.read("/usr/local/cuda/missing") is None and files.read("/usr/local/cuda-12.1/version.json/x") is None
    with pytest.raises(OSError) as raised:
        files.read("/loop")
    assert raised.value.errno == errno.ELOOP


def test_describe_gives_no_content(fake):
    fake.file("/etc/nvidia/ClientConfigToken/a.tok", "secret-bytes\n", 0o600)
    described = GuestFiles(fake.root).describe("/etc/nvidia/ClientConfigToken/a.tok", checksum=True)
    assert described["mode"] == "0600" and described["size"] == 13 and described["name"] == "a.tok"
    # sha1sum of the same bytes
    assert described["checksum"] == "2e4a76da509a83f05dad3e51599f0e80e42d780a"
    assert "secret" not in repr(described)


def test_dpkg_records_count_only_installed_packages(fake):
    fake.file("/var/lib/dpkg/status", "\n".join([
        dpkg_stanza("nvidia-linux-grid-510", "510.47.03"),
        dpkg_stanza("nvidia-cuda-toolkit", "11.8.89~11.8.0-5~deb12u1", "deinstall ok config-files"),
        dpkg_stanza("cuda-drivers", "545.23.08-1", "install ok half-installed"),
        dpkg_stanza("libcudnn9-cuda-12", "9.1.0.70-1", "hold ok installed"),
        dpkg_stanza("cudatext", "1.0", "install ok installed").replace("Package: cudatext", "Package: vim"),
    ]))
    assert read_packages(guest_of(fake)) == {"nvidia-linux-grid-510": "510.47.03", "libcudnn9-cuda-12": "9.1.0.70-1"}
    assert fake.calls == []


def test_no_package_database_means_no_packages(fake):
    assert read_packages(guest_of(fake)) == {}


@pytest.mark.parametrize("text, settings", [
    ("FeatureType=1\n", {"FeatureType": "1"}),
    ("# FeatureType=4\n  FeatureType = 2 \nFeatureType=4\n", {"FeatureType": "4"}),
    ("#ClientConfigTokenPath=/x/\nServerPort=7070\nEnableUI=FALSE\n\n[junk]\n",
     {"ServerPort": "7070", "EnableUI": "FALSE"}),
    ("", {}),
])
def test_gridd_conf_settings_in_force(text, settings):
    assert parse_gridd_conf(text) == settings


@pytest.mark.parametrize("text, version", [
    ("#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n", "9.1.0"),
    ("#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n", None),
    ("#  define CUDNN_PATCHLEVEL 7\n#define CUDNN_MINOR 9\n#define CUDNN_MAJOR 8\n", "8.9.7"),
])
def test_cudnn_header_version(text, version):
    assert cudnn_header_version(text) == version


@pytest.mark.parametrize("text, path", [
    ('PATH="/usr/bin:/usr/local/cuda/bin"\n', ["/usr/bin", "/usr/local/cuda/bin"]),
    ("export PATH=/usr/bin::/bin\nLANG=C\n", ["/usr/bin", "/bin"]),
    ("LANG=C.UTF-8\n", None),
])
def test_etc_environment_path(fake, text, path):
    fake.file("/etc/environment", text)
    assert etc_environment_path(GuestFiles(fake.root)) == path


def test_toolkit_found_through_a_linked_nvcc_on_the_module_path(fake):
    fake.cuda("12.1.1", "12.1.105").link("/usr/local/bin/nvcc", "/usr/local/cuda-12.1/bin/nvcc")
    fake.file("/usr/local/cuda-10.2/version.txt", "CUDA Version 10.2.89\n")
    fake.file("/usr/local/cuda-11.0/version.json", "{not json")
    cuda = read_cuda(guest_of(fake, ["/opt/none", "/usr/local/bin"]))
    assert [(t["series"], t["version"], t["nvcc"]) for t in cuda["toolkits"]] == [
        ("10.2", "10.2.89", False), ("11.0", None, False), ("12.1", "12.1.1", True)]
    assert cuda["on_path"] == {"nvcc": "/usr/local/bin/nvcc", "home": "/usr/local/cuda-12.1",
                               "toolkit": "/usr/local/cuda-12.1", "version": "12.1.1", "source": "PATH"}
    assert cuda["link"]["exists"] is False and cuda["etc_environment_path"] is None
