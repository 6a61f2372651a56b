# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""read_gpu_state on fake guests: bare, licensed with CUDA and cuDNN, runfile, unlicensed, RHEL, failing probes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os

import pytest

from ansible_collections.gpuops.vgpu.plugins.module_utils.guest import _system as guest_system
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest.gpu_state import (
    PROBES,
    Guest,
    GuestFiles,
    read_gpu_state,
)
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_utils.guest.guest_trees import (
    DRIVER_DOWN,
    ROCKY,
    SYSTEMCTL_SHOW,
    TOKEN,
    UNLICENSED_TEXT,
    WINDOWS_P4_XML,
    FakeGuest,
)
from ansible_collections.gpuops.vgpu.tests.unit.plugins.nvidia_smi_fixtures import read as read_fixture

GRID_PACKAGE = ("nvidia-linux-grid-510", "510.47.03")
TOKEN_NAME = "client_configuration_token_05-26-2022-00-08-28.tok"


def read(fake, probes=None, nvidia_smi_path=None):
    guest = Guest(GuestFiles(fake.root), fake.run, path_dirs=[], nvidia_smi_path=nvidia_smi_path)
    return read_gpu_state(guest, probes)


@pytest.fixture
def fake(tmp_path):
    return FakeGuest(tmp_path / "guest")


def test_bare_guest_has_nothing_installed_and_no_errors(fake):
    state = read(fake.debian())
    assert state["gathered"] == list(PROBES) and state["errors"] == {}
    assert state["os"] == {"family": "Debian", "distribution": "debian", "version": "12",
                           "name": "Debian GNU/Linux 12 (bookworm)", "kernel": "6.1.0-18-amd64",
                           "package_format": "deb", "package_manager": "apt"}
    assert [gpu["device_id"] for gpu in state["pci"]["gpus"]] == ["10de:20f1"] and state["pci"]["source"] == "lspci"
    assert state["packages"] == {}
    driver = state["driver"]
    assert (driver["installed"], driver["format"], driver["version"], driver["loaded"]) == (False, None, None, False)
    assert driver["kernel_module_version"] is None and driver["runfile"] == {"installed": False, "version": None}
    assert driver["nouveau"] == {"loaded": False, "blacklisted": False, "blacklist_files": [],
                                 "blacklisted_on_cmdline": False}
    lic = state["license"]
    assert (lic["gridd_conf"]["exists"], lic["gridd_template"]["exists"], lic["feature_type"]) == (False, False, None)
    assert lic["token_dir"]["exists"] is False and lic["tokens"] == []
    assert (lic["service"]["exists"], lic["service"]["active"], lic["service"]["systemd"]) == (False, False, True)
    assert (lic["licensed"], lic["clock_synchronized"]) == (None, True)
    smi = state["nvidia_smi"]
    assert (smi["present"], smi["kind"], smi["path"], smi["gpus"]) == (False, "not_installed", None, [])
    assert state["cuda"] == {"toolkits": [], "link": {"path": "/usr/local/cuda", "exists": False, "target": None,
                                                      "version": None},
                             "etc_environment_path": None, "on_path": None, "profile_d": [], "ld_so_conf": []}
    assert state["cudnn"] == {"version": None, "headers": [], "packages": {}}
    assert state["container_toolkit"] == {"installed": False, "path": None, "version": None, "packages": {}}
    assert "nvidia-smi -q -x" not in fake.calls


def test_licensed_grid_guest_with_cuda_and_cudnn(fake):
    fake.debian(packages=[GRID_PACKAGE, ("libcudnn8", "8.9.7.29-1+cuda11.8")]).grid_driver().licensed()
    fake.cuda("11.6.2", "11.6.124").cuda("12.1.1", "12.1.105").cuda_environment("11.6")
    fake.cudnn_header("/usr/local/cuda-11.6/include", "8.9.7.29").cudnn_header("/usr/include", "8.9.6.50")
    state = read(fake)
    assert state["errors"] == {}
    assert state["packages"] == {"nvidia-linux-grid-510": "510.47.03", "libcudnn8": "8.9.7.29-1+cuda11.8"}
    driver = state["driver"]
    assert (driver["installed"], driver["format"], driver["version"]) == (True, "deb", "510.47.03")
    assert driver["packages"] == [{"name": "nvidia-linux-grid-510", "version": "510.47.03"}]
    assert (driver["loaded"], driver["loaded_version"], driver["kernel_module_version"]) == (
        True, "510.47.03", "510.47.03")

    lic = state["license"]
    assert lic["gridd_conf"]["settings"] == {"FeatureType": "1", "EnableUI": "FALSE"} and lic["feature_type"] == 1
    assert lic["token_dir"]["path"] == "/etc/nvidia/ClientConfigToken" and lic["token_dir"]["exists"] is True
    assert [(t["name"], t["path"], t["size"], t["mode"]) for t in lic["tokens"]] == [
        (TOKEN_NAME, "/etc/nvidia/ClientConfigToken/" + TOKEN_NAME, len(TOKEN), "0744")]
    assert lic["service"]["unit_file"] == "/lib/systemd/system/nvidia-gridd.service"
    assert (lic["service"]["exists"], lic["service"]["active"], lic["service"]["enabled"]) == (True, True, True)
    assert (lic["licensed"], lic["product"], lic["expiry"], lic["statuses"]) == (
        True, "NVIDIA Virtual Compute Server", "2022-05-27T00:08:28Z", ["Licensed"])

    smi = state["nvidia_smi"]
    assert (smi["present"], smi["path"], smi["format"], smi["driver_version"], smi["cuda_version"]) == (
        True, "/usr/bin/nvidia-smi", "text", "510.47.03", "11.6")
    assert (smi["gpus"][0]["name"], smi["gpus"][0]["vgpu_profile"], smi["vgpu_profiles"]) == (
        "GRID A100-4C", "grid_a100-4c", ["grid_a100-4c"])
    assert "topology" not in smi and "gathered" not in smi

    cuda = state["cuda"]
    assert [(t["path"], t["series"], t["version"], t["nvcc_version"], t["nvcc"]) for t in cuda["toolkits"]] == [
        ("/usr/local/cuda-11.6", "11.6", "11.6.2", "11.6.124", True),
        ("/usr/local/cuda-12.1", "12.1", "12.1.1", "12.1.105", True)]
    assert cuda["link"] == {"path": "/usr/local/cuda", "exists": True, "target": "/usr/local/cuda-11.6",
                            "version": "11.6.2"}
    assert cuda["etc_environment_path"][-1] == "/usr/local/cuda/bin"
    assert cuda["on_path"] == {"nvcc": "/usr/local/cuda/bin/nvcc", "home": "/usr/local/cuda",
                               "toolkit": "/usr/local/cuda-11.6", "version": "11.6.2", "source": "/etc/environment"}
    assert cuda["profile_d"] == ["/etc/profile.d/cuda.sh"]
    assert cuda["ld_so_conf"] == [{"path": "/etc/ld.so.conf.d/cuda.conf", "dirs": ["/usr/local/cuda/lib64"]}]

    assert state["cudnn"] == {"version": "8.9.7", "packages": {"libcudnn8": "8.9.7.29-1+cuda11.8"}, "headers": [
        {"path": "/usr/local/cuda-11.6/include/cudnn_version.h", "version": "8.9.7"},
        {"path": "/usr/include/cudnn_version.h", "version": "8.9.6"}]}
    # The lab's nvidia-smi has no XML: the text query answers, and each command runs once for all probes.
    assert fake.calls.count("nvidia-smi -q -x") == 1 and fake.calls.count("nvidia-smi -q") == 1


def test_token_content_never_appears(fake):
    fake.debian(packages=[GRID_PACKAGE]).grid_driver().licensed()
    fake.file("/etc/nvidia/ClientConfigToken/old.tok", TOKEN.upper(), 0o600)
    fake.file("/etc/nvidia/ClientConfigToken/notes.txt", "not a token\n")
    state = read(fake)
    text = json.dumps(state)
    for secret in [TOKEN.strip(), TOKEN.upper().strip()] + TOKEN.strip().split("."):
        assert secret not in text
    tokens = state["license"]["tokens"]
    assert [(t["name"], t["mode"], t["size"]) for t in tokens] == [
        (TOKEN_NAME, "0744", len(TOKEN)), ("old.tok", "0600", len(TOKEN))]
    assert sorted(tokens[0]) == ["checksum", "group", "mode", "mtime", "name", "owner", "path", "size"]
    # The checksum tells tokens apart without their content.
    assert len(tokens[0]["checksum"]) == 40 and tokens[0]["checksum"] != tokens[1]["checksum"]


def test_token_dir_from_gridd_conf(fake):
    fake.debian(packages=[GRID_PACKAGE]).grid_driver()
    fake.file("/etc/nvidia/gridd.conf", "FeatureType=1\nClientConfigTokenPath=/opt/tokens/\n")
    fake.file("/opt/tokens/site.tok", TOKEN, 0o644).file("/etc/nvidia/ClientConfigToken/ignored.tok", TOKEN)
    lic = read(fake, ["license"])["license"]
    assert lic["token_dir"]["path"] == "/opt/tokens"
    assert [t["path"] for t in lic["tokens"]] == ["/opt/tokens/site.tok"]


def test_runfile_install_unlicensed_with_nouveau(fake):
    fake.debian().grid_driver(smi_text=UNLICENSED_TEXT, loaded=False)
    fake.program("/usr/bin/nvidia-uninstall")
    fake.file("/var/log/nvidia-installer.log", "nvidia-installer log file '/var/log/nvidia-installer.log'\n"
              "Installation of the NVIDIA Accelerated Graphics Driver for Linux-x86_64 (version: 510.47.03) is now "
              "complete.\n")
    fake.file("/proc/modules", "nouveau 2433024 1 - Live 0x0000000000000000\n")
    fake.file("/etc/nvidia/gridd.conf", "FeatureType=0\n")
    state = read(fake)
    driver = state["driver"]
    assert (driver["installed"], driver["format"], driver["version"]) == (True, "run", "510.47.03")
    assert driver["packages"] == [] and driver["runfile"] == {"installed": True, "version": "510.47.03"}
    assert (driver["loaded"], driver["loaded_version"], driver["kernel_module_version"]) == (False, None, None)
    assert driver["nouveau"]["loaded"] is True and driver["nouveau"]["blacklisted"] is False
    lic = state["license"]
    assert (lic["feature_type"], lic["tokens"], lic["licensed"], lic["expiry"]) == (0, [], False, None)
    assert lic["statuses"] == ["Unlicensed (Unrestricted)"]
    assert state["nvidia_smi"]["gpus"][0]["licensed"] is False and state["errors"] == {}


def test_nouveau_blacklisted_by_file_and_cmdline(fake):
    fake.debian().file("/etc/modprobe.d/blacklist-nouveau.conf", "blacklist nouveau\noptions nouveau modeset=0\n")
    fake.file("/etc/modprobe.d/other.conf", "# blacklist nouveau\nblacklist nouveaufb\n")
    nouveau = read(fake, ["driver"])["driver"]["nouveau"]
    assert (nouveau["blacklisted"], nouveau["blacklist_files"], nouveau["blacklisted_on_cmdline"]) == (
        True, ["/etc/modprobe.d/blacklist-nouveau.conf"], False)
    fake.file("/etc/modprobe.d/blacklist-nouveau.conf", "").file("/proc/cmdline", "ro modprobe.blacklist=nouveau\n")
    nouveau = read(fake, ["driver"])["driver"]["nouveau"]
    assert (nouveau["blacklisted"], nouveau["blacklist_files"], nouveau["blacklisted_on_cmdline"]) == (
        True, [], True)


def test_xml_query_and_driver_without_devices(fake):
    fake.debian().program("/usr/bin/nvidia-smi", {"-q -x": (0, read_fixture(WINDOWS_P4_XML), "")})
    smi = read(fake, ["nvidia_smi"])["nvidia_smi"]
    assert (smi["format"], smi["vgpu_profiles"], smi["gpus"][0]["licensed"]) == ("xml", ["grid_p4-1q"], True)
    assert fake.calls == ["nvidia-smi -q -x"]
    fake.answers["nvidia-smi -q -x"] = DRIVER_DOWN
    state = read(fake, ["license", "nvidia_smi"])
    # A driver that does not answer is a state the roles act on, not an error.
    assert state["errors"] == {} and state["license"]["licensed"] is None
    assert (state["nvidia_smi"]["present"], state["nvidia_smi"]["kind"]) == (False, "driver_unreachable")


def test_nvidia_smi_path_option(fake):
    fake.debian().program("/opt/grid/nvidia-smi", {"-q -x": (0, read_fixture(WINDOWS_P4_XML), "")})
    assert read(fake, ["nvidia_smi"])["nvidia_smi"]["kind"] == "not_installed"
    smi = read(fake, ["nvidia_smi"], nvidia_smi_path="/opt/grid/nvidia-smi")["nvidia_smi"]
    assert (smi["present"], smi["path"]) == (True, "/opt/grid/nvidia-smi")
    smi = read(fake, ["nvidia_smi"], nvidia_smi_path="/nowhere/nvidia-smi")["nvidia_smi"]
    assert (smi["present"], smi["kind"], smi["path"]) == (False, "not_installed", "/nowhere/nvidia-smi")


def test_rhel_guest_reads_rpm_and_dnf5(fake):
    fake.file("/etc/os-release", ROCKY).file("/proc/sys/kernel/osrelease", "5.14.0-362.8.1.el9_3.x86_64\n")
    fake.program("/usr/bin/dnf5").link("/usr/bin/dnf", "dnf5")
    fake.program("/usr/bin/rpm", {"--query --all --queryformat %{NAME}|%{VERSION}-%{RELEASE}\\n": (
        0, "bash|5.1.8-6.el9\nnvidia-linux-grid-535|535.129.03-1\ncuda-drivers|545.23.08-1\n"
           "nvidia-container-toolkit|1.14.3-1\n", "")})
    fake.program("/usr/bin/nvidia-ctk", {"--version": (0, "NVIDIA Container Toolkit CLI version 1.14.3\n"
                                                          "commit: 53b24618a542025b108239fe602e66e912b7d6e2\n", "")})
    state = read(fake, ["os", "packages", "driver", "container_toolkit"])
    assert state["errors"] == {}
    assert (state["os"]["family"], state["os"]["package_format"], state["os"]["package_manager"]) == (
        "RedHat", "rpm", "dnf5")
    assert state["packages"] == {"nvidia-linux-grid-535": "535.129.03-1", "cuda-drivers": "545.23.08-1",
                                 "nvidia-container-toolkit": "1.14.3-1"}
    assert (state["driver"]["format"], state["driver"]["version"]) == ("rpm", "535.129.03")
    assert state["container_toolkit"] == {"installed": True, "path": "/usr/bin/nvidia-ctk", "version": "1.14.3",
                                          "packages": {"nvidia-container-toolkit": "1.14.3-1"}}
    assert sum(call.startswith("rpm ") for call in fake.calls) == 1


def test_a_failing_probe_is_reported_and_the_others_answer(fake):
    fake.file("/etc/os-release", ROCKY).program("/usr/bin/dnf")
    fake.program("/usr/bin/rpm", {"--query --all --queryformat %{NAME}|%{VERSION}-%{RELEASE}\\n": (
        1, "", "error: rpmdb: BDB0113 Thread/process 1234 failed\nerror: cannot open Packages database\n")})
    fake.program("/usr/bin/lspci", {"-nnk -d 10de:": OSError(13, "Permission denied")})
    state = read(fake)
    assert sorted(state["errors"]) == ["container_toolkit", "cudnn", "driver", "packages", "pci"]
    assert state["errors"]["packages"]["msg"].startswith("/usr/bin/rpm --query --all")
    assert "exited with 1: error: rpmdb: BDB0113" in state["errors"]["packages"]["msg"]
    assert state["errors"]["driver"] == state["errors"]["packages"]
    assert "Permission denied" in state["errors"]["pci"]["msg"]
    assert all(state[name] is None for name in state["errors"])
    assert state["os"]["package_manager"] == "dnf" and state["cuda"]["toolkits"] == []
    assert state["license"]["gridd_conf"]["exists"] is False
    assert sum(call.startswith("rpm ") for call in fake.calls) == 1
    assert state["gathered"] == list(PROBES)


def test_failing_parts_of_the_license_probe(fake):
    fake.debian(packages=[GRID_PACKAGE]).grid_driver().licensed()
    fake.answers["timedatectl show --property=NTPSynchronized --value"] = (
        1, "", "Failed to connect to bus: No such file or directory\n")
    fake.answers[SYSTEMCTL_SHOW] = (1, "", "Failed to connect to bus\n")
    state = read(fake, ["license"])
    assert sorted(state["errors"]) == ["license.clock", "license.service"]
    lic = state["license"]
    assert (lic["clock_synchronized"], lic["service"], lic["licensed"]) == (None, None, True)


def test_unparsable_nvidia_smi_is_an_error(fake):
    fake.debian().program("/usr/bin/nvidia-smi", {"-q -x": (0, "<nvidia_smi_log><gpu id='1'>", ""),
                                                  "-q": (0, "garbage\n", "")})
    state = read(fake, ["nvidia_smi"])
    assert state["nvidia_smi"]["present"] is False and state["nvidia_smi"]["kind"] == "unparsable"
    assert state["errors"]["nvidia_smi"]["kind"] == "unparsable"


def test_gather_only_what_is_asked(fake):
    fake.debian(packages=[GRID_PACKAGE]).grid_driver()
    state = read(fake, ["cuda", "os"])
    assert state["gathered"] == ["os", "cuda"] and sorted(state) == ["cuda", "errors", "gathered", "os"]
    assert fake.calls == []


def test_the_topology_probe_runs_only_when_asked_and_only_with_a_working_driver(fake):
    fake.debian(packages=[GRID_PACKAGE]).grid_driver()
    assert "topology" not in read(fake) and not [call for call in fake.calls if "topo" in call]
    fake.answers["nvidia-smi topo -m"] = (0, read_fixture("topo_m_2xH100_pcie_NV12_driver555_TABS2SPACES.txt"), "")
    fake.answers["nvidia-smi nvlink -s"] = (0, read_fixture("nvlink_s_2xH100_pcie_inactive_links_driver555.txt"), "")
    fake.answers["nvidia-smi topo -p2p rw"] = (0, read_fixture("topo_p2p_r_2xL4_cns_TRUNCATED_TABS2SPACES.txt"), "")
    state = read(fake, ["topology"])
    assert state["gathered"] == ["topology"] and state["errors"] == {}
    assert state["topology"]["topology"]["nvlink_pairs"] == [{"a": "GPU0", "b": "GPU1", "links": 12}]
    assert state["topology"]["p2p"]["gpus"] == ["GPU0", "GPU1"]
    assert [link["active"] for link in state["topology"]["nvlink"]["gpus"][0]["links"]][4:6] == [False, False]
    # A command that fails leaves its part None with its error; the other part still answers.
    fake.answers["nvidia-smi topo -m"] = (3, "", "Failed to run topo\n")
    state = read(fake, ["topology"])
    assert state["topology"]["topology"] is None and state["topology"]["nvlink"] is not None
    assert "topology.topology" in state["errors"]
    fake.answers["nvidia-smi -q"] = DRIVER_DOWN
    assert read(fake, ["topology"])["topology"] is None


def test_no_systemd_and_no_lspci(fake):
    fake.file("/etc/os-release", DEBIAN_LIKE).file("/var/lib/dpkg/status", "")
    fake.file("/sys/bus/pci/devices/0000:02:01.0/vendor", "0x10de\n")
    fake.file("/sys/bus/pci/devices/0000:02:01.0/class", "0x030200\n")
    fake.file("/sys/bus/pci/devices/0000:02:01.0/device", "0x20f1\n")
    fake.file("/sys/bus/pci/devices/0000:00:0f.0/vendor", "0x15ad\n")
    fake.file("/sys/bus/pci/devices/0000:00:0f.0/class", "0x030000\n")
    fake.file("/sys/bus/pci/devices/0000:05:00.0/vendor", "0x10de\n")
    fake.file("/sys/bus/pci/devices/0000:05:00.0/class", "0x068000\n")
    fake.program("/usr/bin/systemctl").program("/usr/bin/timedatectl")
    fake.file("/lib/systemd/system/nvidia-gridd.service", "")
    state = read(fake, ["os", "pci", "license"])
    assert state["errors"] == {} and fake.calls == []
    assert state["os"]["family"] == "Debian" and state["os"]["distribution"] == "ubuntu"
    assert state["pci"] == {"source": "sysfs", "gpus": [{"address": "0000:02:01.0", "class": "0302",
                                                         "device_id": "10de:20f1", "description": None,
                                                         "driver": None}],
                            "nvswitches": ["0000:05:00.0"]}
    service = state["license"]["service"]
    assert (service["systemd"], service["exists"], service["active"]) == (False, True, None)
    assert state["license"]["clock_synchronized"] is None


# lspci 3.9's -nnk of an HGX H100 board (bridges first, the way it lists the bus): NVSwitches are class 0680.
LSPCI_HGX = """05:00.0 Bridge [0680]: NVIDIA Corporation Device [10de:22a3] (rev a1)
\tSubsystem: NVIDIA Corporation Device [10de:1796]
06:00.0 Bridge [0680]: NVIDIA Corporation Device [10de:22a3] (rev a1)
\tSubsystem: NVIDIA Corporation Device [10de:1796]
19:00.0 3D controller [0302]: NVIDIA Corporation GH100[H100 SXM5 80GB] [10de:2330] (rev a1)
\tSubsystem: NVIDIA Corporation Device [10de:16c1]
\tKernel driver in use: nvidia
"""


def test_nvswitches_are_listed_apart_from_the_gpus(fake):
    fake.debian().program("/usr/bin/lspci", {"-nnk -d 10de:": (0, LSPCI_HGX, "")})
    pci = read(fake, ["pci"])["pci"]
    assert pci["nvswitches"] == ["05:00.0", "06:00.0"]
    assert [(gpu["address"], gpu["device_id"], gpu["driver"]) for gpu in pci["gpus"]] == [
        ("19:00.0", "10de:2330", "nvidia")]


DEBIAN_LIKE = 'ID=ubuntu\nID_LIKE=debian\nVERSION_ID="22.04"\n'


def test_text_query_format_asks_only_for_text(fake):
    fake.debian().grid_driver()
    guest = Guest(GuestFiles(fake.root), fake.run, path_dirs=[], query_format="text")
    smi = read_gpu_state(guest, ["nvidia_smi"])["nvidia_smi"]
    assert smi["present"] and smi["format"] == "text"
    assert fake.calls == ["nvidia-smi -q"]


def test_files_are_described_for_the_tasks_that_manage_them(fake):
    fake.debian().licensed()
    fake.file("/etc/ld.so.conf.d/cuda.conf", "/usr/local/cuda/lib64\n")
    fake.directory("/usr/local/cuda-11.6")
    fake.link("/usr/local/cuda", "/usr/local/cuda-11.6")
    paths = ["/etc/ld.so.conf.d/cuda.conf", "/usr/local/cuda", "/etc/modprobe.d/blacklist-nouveau.conf",
             "/etc/nvidia/ClientConfigToken/" + TOKEN_NAME, "/usr/local/cuda-11.6"]
    guest = Guest(GuestFiles(fake.root), fake.run, path_dirs=[])
    files = read_gpu_state(guest, [], files=paths)["files"]
    conf = files["/etc/ld.so.conf.d/cuda.conf"]
    # The SHA-1 of the bytes, as ansible.builtin.copy compares it.
    assert (conf["type"], conf["mode"]) == ("file", "0644")
    assert conf["checksum"] == hashlib.sha1(b"/usr/local/cuda/lib64\n").hexdigest()
    assert files["/usr/local/cuda"]["type"] == "link" and files["/usr/local/cuda"]["target"] == "/usr/local/cuda-11.6"
    assert files["/usr/local/cuda-11.6"]["type"] == "directory" and "checksum" not in files["/usr/local/cuda-11.6"]
    missing = "/etc/modprobe.d/blacklist-nouveau.conf"
    assert files[missing] == {"path": missing, "exists": False}
    token = files["/etc/nvidia/ClientConfigToken/" + TOKEN_NAME]
    assert token["checksum"] == hashlib.sha1(TOKEN.encode()).hexdigest()
    assert TOKEN not in json.dumps(files)


def test_services_are_described_for_the_tasks_that_start_them(fake, monkeypatch):
    fake.debian()
    fake.file("/lib/systemd/system/prometheus-node-exporter.service", "")
    fake.file("/usr/bin/prometheus-node-exporter", "", mode=0o755)
    show = (" --no-pager --property=LoadState,ActiveState,SubState,UnitFileState,ActiveEnterTimestampMonotonic,"
            "NeedDaemonReload,ExecStart")
    fake.program("/usr/bin/systemctl", {
        "show prometheus-node-exporter.service" + show:
            (0, "LoadState=loaded\nActiveState=active\nSubState=running\nUnitFileState=enabled\n"
                "ActiveEnterTimestampMonotonic=7500000\nExecStart={ path=/usr/bin/prometheus-node-exporter ; "
                "argv[]=/usr/bin/prometheus-node-exporter $ARGS ; ignore_errors=no ; start_time=[n/a] ; "
                "stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }\n", ""),
        "show gpu-metrics.timer" + show:
            (0, "LoadState=loaded\nActiveState=inactive\nSubState=dead\nUnitFileState=disabled\n"
                "ActiveEnterTimestampMonotonic=0\nNeedDaemonReload=yes\n", "")})
    # Now: 1,800,000,000 s on the wall clock, 10 s on CLOCK_MONOTONIC; the exporter became active at 7.5 s.
    monkeypatch.setattr(guest_system, "clocks", lambda: (1800000000.0, 10.0))
    guest = Guest(GuestFiles(fake.root), fake.run, path_dirs=[])
    state = read_gpu_state(guest, [], services=["prometheus-node-exporter", "gpu-metrics.timer"])
    exporter, timer = state["services"]["prometheus-node-exporter"], state["services"]["gpu-metrics.timer"]
    assert (exporter["active"], exporter["enabled"], exporter["unit_file"]) == (
        True, True, "/lib/systemd/system/prometheus-node-exporter.service")
    assert exporter["active_since"] == 1799999997.5
    assert (timer["active"], timer["enabled"], timer["state"], timer["active_since"]) == (
        False, False, "inactive", None)
    assert (exporter["need_daemon_reload"], timer["need_daemon_reload"]) == (False, True)
    # The program the unit starts, and when it was put in place (the inode's change time).
    program = os.path.join(fake.root, "usr/bin/prometheus-node-exporter")
    assert exporter["executable"] == "/usr/bin/prometheus-node-exporter"
    assert exporter["executable_changed_at"] == os.stat(program).st_ctime
    assert (timer["executable"], timer["executable_changed_at"]) == (None, None)
    assert state["gathered"] == [] and state["errors"] == {}
