# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvidia_driver role's rules: the kernel module flavour by GPU generation, the refusals in the role's order,
what differs, and when the running kernel module must change."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.vgpu.plugins.filter import nvidia_driver
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia import _compatibility
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._nvidia_driver_plan import installed_driver
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._nvidia_kernel_module import gpu_architecture, kernel_module

H100_SXM = {"address": "18:00.0", "device_id": "10de:2330",
            "description": "18:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 80GB] [10de:2330] (rev a1)"}
V100 = {"address": "3b:00.0", "device_id": "10de:1db4", "description": None}
B200 = {"address": "1b:00.0", "device_id": "10de:2901",
        "description": "1b:00.0 3D controller [0302]: NVIDIA Corporation Device [10de:2901] (rev a1)"}
P40 = {"address": "af:00.0", "device_id": "10de:1b38", "description": None}
MYSTERY = {"address": "01:00.0", "device_id": "10de:ffff", "description": "01:00.0 3D controller [0302]: NVIDIA Corporation Device [10de:ffff]"}

BLACKLIST = "/etc/modprobe.d/blacklist-nouveau.conf"
CONTENT = "blacklist nouveau\n"
SERVER = {
    "os": {"family": "Debian", "name": "Debian GNU/Linux 12 (bookworm)", "package_manager": "apt"},
    "pci": {"source": "lspci", "gpus": [dict(H100_SXM, driver="nvidia")]},
    "packages": {"nvidia-open-580": "580.65.06-1"},
    "driver": {"packages": [], "gridd": False, "runfile": {"installed": False}, "secure_boot": False},
    "nvidia_smi": {"present": True, "driver_version": "580.65.06"},
    "services": {"nvidia-persistenced": {"enabled": True, "active": True}},
    "files": {
        BLACKLIST: {"exists": True, "type": "file", "mode": "0644", "owner": "root", "group": "root",
                    "checksum": hashlib.sha1(CONTENT.encode()).hexdigest()},
        "/etc/modprobe.d": {"exists": True, "type": "directory", "mode": "0755", "owner": "root", "group": "root"},
    },
    "errors": {},
}
PARAMS = {"source": "repository", "branch": "580", "kernel_module": "auto", "reboot": False,
          "blacklist_nouveau": True, "persistenced": True, "cuda_versions": []}


def plan(guest=None, check_mode=False, vgpu_guest=False, **params):
    return nvidia_driver.nvidia_driver_plan(guest or SERVER, dict(PARAMS, **params), check_mode=check_mode,
                                            hostname="hgx1", vgpu_guest=vgpu_guest, blacklist_file=BLACKLIST,
                                            blacklist_content=CONTENT)


def changed(**parts):
    guest = copy.deepcopy(SERVER)
    for key, value in parts.items():
        top, _sep, sub = key.partition("__")
        if sub:
            guest[top][sub] = value
        else:
            guest[top] = value
    return guest


@pytest.mark.parametrize("gpu, architecture", [
    (H100_SXM, "hopper"), (V100, "volta"), (B200, "blackwell"), (P40, "pascal"), (MYSTERY, None),
    ({"device_id": None, "description": "NVIDIA Corporation TU104GL [Tesla T4]"}, "turing"),
])
def test_generation_from_the_catalog_or_the_chip_name(gpu, architecture):
    assert gpu_architecture(gpu) == architecture


@pytest.mark.parametrize("gpus, branch, wanted, flavour, error", [
    ([H100_SXM], 580, "auto", "open", ""),
    ([H100_SXM], 535, "auto", "proprietary", ""),            # NVIDIA's default before 560
    ([H100_SXM], 535, "open", "open", ""),
    ([V100], 580, "auto", "proprietary", ""),
    ([B200], 580, "auto", "open", ""),
    ([V100], 580, "open", None, "cannot use the open kernel modules"),
    ([B200], 580, "proprietary", None, "runs only the open kernel modules"),
    ([B200], 550, "auto", None, "branch 550 does not support"),
    ([V100], 590, "proprietary", None, "R580 is the last branch for Volta"),
    ([H100_SXM], 510, "open", None, "branch 510 does not support"),
    ([B200, V100], 580, "auto", None, "no single driver runs both"),
    ([MYSTERY], 580, "auto", None, "is not known here"),
    ([MYSTERY], 580, "open", "open", ""),
])
def test_kernel_module_by_generation(gpus, branch, wanted, flavour, error):
    choice = kernel_module(gpus, branch, wanted)
    assert choice["flavour"] == flavour
    assert (error in choice["error"]) if error else choice["error"] == ""


def test_the_filter_takes_a_branch_name():
    assert nvidia_driver.nvidia_kernel_module([H100_SXM], "R580")["flavour"] == "open"
    with pytest.raises(AnsibleFilterError, match="not open, proprietary or auto"):
        nvidia_driver.nvidia_kernel_module([H100_SXM], 580, "closed")


def test_converged_server_needs_nothing():
    decided = plan()
    assert decided["error"] == "" and decided["converged"] is True and decided["install"] is False
    assert decided["result"]["version"] == "580.65.06" and decided["result"]["kernel_module"] == "open"


def test_fresh_server_installs_the_branch_package():
    guest = changed(packages={}, nvidia_smi={"present": False, "kind": "not_installed", "msg": "no nvidia-smi"},
                    pci__gpus=[dict(H100_SXM, driver=None)],
                    services={"nvidia-persistenced": {"enabled": None, "active": None}})
    decided = plan(guest)
    assert decided["error"] == "" and decided["install"] is True and decided["reboot_reasons"] == []
    assert decided["packages"] == ["nvidia-open-580"] and decided["persistenced"] is True
    assert plan(guest, kernel_module="proprietary")["packages"] == ["cuda-drivers-580"]
    rhel = changed(os={"family": "RedHat", "name": "Rocky Linux 9", "package_manager": "dnf"}, packages={})
    assert plan(rhel, reboot=True)["dnf_modules"] == ["@nvidia-driver:580-open"]


def test_branch_change_needs_the_running_module_replaced():
    guest = changed(packages={"cuda-drivers-535": "535.161.08-1"},
                    nvidia_smi={"present": True, "driver_version": "535.161.08"})
    refused = plan(guest)
    assert "needs a reboot" in refused["error"] and "535.161.08" in refused["error"]
    assert "nvidia_driver_reboot is false" in refused["error"]
    allowed = plan(guest, reboot=True)
    assert allowed["error"] == "" and allowed["install"] is True and allowed["remove"] == ["cuda-drivers-535"]
    downgrade = plan(changed(nvidia_smi={"present": True, "driver_version": "580.65.06"}), branch="535",
                     reboot=True)
    assert downgrade["packages"] == ["cuda-drivers-535"] and downgrade["remove"] == ["nvidia-open-580"]


def test_nouveau_holding_the_gpu_needs_a_reboot():
    guest = changed(packages={}, pci__gpus=[dict(H100_SXM, driver="nouveau")],
                    nvidia_smi={"present": False, "kind": "not_installed", "msg": ""})
    assert "nouveau holds the GPU" in plan(guest)["error"]
    assert plan(guest, reboot=True)["reboot_reasons"] == [
        "nouveau holds the GPU and lets go of it only at a reboot once it is blacklisted"]


@pytest.mark.parametrize("guest, params, vgpu_guest, message", [
    (SERVER, {}, True, "is a vGPU guest (in gpu_guests)"),
    (changed(driver__packages=[{"name": "nvidia-linux-grid-535", "version": "535.54.03"}]), {}, False,
     "A GRID guest driver is installed on hgx1 (nvidia-linux-grid-535)"),
    (SERVER, {"branch": "58"}, False, "nvidia_driver_branch '58' is not a driver branch"),
    (SERVER, {"source": "ppa"}, False, "nvidia_driver_source 'ppa' is not one of"),
    (SERVER, {"source": "packages", "package_files": []}, False, "nvidia_driver_package_files is empty"),
    (SERVER, {"source": "packages", "package_files": ["/srv/cuda-drivers-580_580.65.06-1_amd64.rpm"]}, False,
     "are not .deb files"),
    (SERVER, {"source": "runfile", "runfile": "/srv/NVIDIA-Linux-x86_64-580.65.06-grid.run"}, False,
     "is not NVIDIA's data center driver installer"),
    (SERVER, {"source": "runfile", "runfile": "/srv/NVIDIA-Linux-x86_64-570.124.06.run"}, False,
     "version 570.124.06, of branch 570, but nvidia_driver_branch is 580"),
    (SERVER, {"source": "runfile", "runfile": "/srv/NVIDIA-Linux-x86_64-580.65.06.run"}, False,
     "installed by the package manager (nvidia-open-580)"),
    (changed(pci__gpus=[]), {}, False, "No NVIDIA GPU is visible on the PCI bus of hgx1"),
    (changed(pci__gpus=[V100]), {"kernel_module": "open"}, False, "cannot use the open kernel modules"),
    (SERVER, {"branch": "535", "cuda_versions": ["13.0"]}, False, "no R535 driver runs it"),
    (changed(driver__secure_boot=True), {"branch": "570", "reboot": True}, False, "mokutil --import"),
    (changed(errors={"packages": {"msg": "rpm: database locked"}}), {}, False, "Could not read packages on hgx1"),
])
def test_refusals_name_the_value_and_what_to_do(guest, params, vgpu_guest, message):
    decided = plan(guest, vgpu_guest=vgpu_guest, **params)
    assert message in decided["error"]
    assert "Nothing" in decided["error"] or "rerun" in decided["error"] or "not a driver branch" in decided["error"]


def test_cuda_the_branch_cannot_run_fully_is_a_note():
    assert _compatibility.cuda_branch_ok("12.8", 570)["status"] == "ok"
    decided = plan(cuda_versions=["12.9"], branch="570", reboot=True)
    assert decided["error"] == "" and "minor-version compatibility" in decided["notes"][0]


def test_secure_boot_with_an_enrolled_key_or_a_signed_module_passes():
    guest = changed(driver__secure_boot=True, files=dict(SERVER["files"], **{"/var/lib/dkms/mok.pub": {"exists": True}}))
    assert plan(guest, branch="570", reboot=True, signing_cert="/var/lib/dkms/mok.pub",
                signing_key_enrolled=True)["error"] == ""
    signed = changed(driver__secure_boot=True, driver__kernel_module_signed=True)
    assert plan(signed)["error"] == ""


def test_runfile_install_is_known_by_its_log_not_a_grid_one():
    guest = changed(packages={}, driver={"packages": [], "gridd": False, "kernel_module_flavour": "open",
                                         "runfile": {"installed": True, "version": "580.65.06"}})
    assert installed_driver(guest) == {"source": "runfile", "packages": [], "branch": 580, "version": "580.65.06",
                                       "flavour": "open"}
    assert plan(guest, source="runfile", runfile="/srv/NVIDIA-Linux-x86_64-580.65.06.run")["converged"] is True
    guest["driver"]["gridd"] = True
    assert "A GRID guest driver is installed" in plan(guest)["error"]


def test_blacklist_and_persistence_differ():
    guest = changed(files={}, services={"nvidia-persistenced": {"enabled": False, "active": False}})
    decided = plan(guest)
    assert (decided["blacklist"], decided["modprobe_dir"], decided["persistenced"]) == (True, True, True)
    assert decided["install"] is False and decided["converged"] is False


def test_a_nouveau_blacklist_already_in_force_is_not_written_again():
    guest = changed(files={}, driver__nouveau={"loaded": False, "blacklisted": True,
                                               "blacklist_files": ["/etc/modprobe.d/nouveau-by-hand.conf"]})
    decided = plan(guest)
    assert (decided["blacklist"], decided["modprobe_dir"], decided["converged"]) == (False, False, True)
