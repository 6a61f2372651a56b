# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The grid_driver role's plan: the first broken rule in the role's order, the steps that differ, the result."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.vgpu.plugins.filter import guest_plans
from ansible_collections.gpuops.vgpu.plugins.plugin_utils._grid_driver_plan import grid_driver_plan

BLACKLIST = "/etc/modprobe.d/blacklist-nouveau.conf"
CONTENT = "blacklist nouveau\n"
DEB = "/mnt/nvidia-linux-grid-510_510.47.03_amd64.deb"
GUEST = {
    "os": {"family": "Debian", "name": "Debian", "package_manager": "apt"},
    "pci": {"source": "lspci", "gpus": [{"address": "0000:02:00.0", "description": "NVIDIA GRID A100-4C"}]},
    "driver": {"format": "deb", "version": "510.47.03", "nouveau": {"loaded": False}},
    "nvidia_smi": {"present": True, "driver_version": "510.47.03"},
    "files": {
        BLACKLIST: {"exists": True, "type": "file", "mode": "0644", "owner": "root", "group": "root",
                    "checksum": hashlib.sha1(CONTENT.encode()).hexdigest()},
        "/etc/modprobe.d": {"exists": True, "type": "directory", "mode": "0755", "owner": "root", "group": "root"},
    },
    "errors": {},
}
PARAMS = {"grid_driver_src": "", "grid_driver_url": "", "grid_driver_remote_src": DEB, "grid_driver_version": "",
          "grid_driver_staging_dir": "/var/tmp/stage", "grid_driver_require_gpu": True,
          "grid_driver_host_manager_from": "", "grid_driver_require_host_check": False,
          "grid_driver_blacklist_nouveau": True, "grid_driver_verify": True}


def plan(guest=None, check_mode=False, **params):
    given = dict(PARAMS, **params)
    return grid_driver_plan(guest or GUEST, given, params.pop("host", ""), check_mode, "vm1", None, BLACKLIST, CONTENT)


def changed_guest(**paths):
    guest = copy.deepcopy(GUEST)
    for path, value in paths.items():
        section, key = path.split("__")
        guest[section][key] = value
    return guest


def test_a_converged_guest_needs_no_step_and_reports_as_read():
    decided = plan()
    assert decided["error"] == "" and decided["converged"]
    assert decided["result"] == {
        "version": "510.47.03", "previous_version": "510.47.03", "installed": False, "format": "deb",
        "gpus": ["NVIDIA GRID A100-4C"], "host_manager_version": None, "host_compat": None,
        "nouveau_blacklisted": True, "initramfs_rebuilt": False, "reboot_required": False, "rebooted": False,
        "nvidia_smi": GUEST["nvidia_smi"], "changed": False}
    assert plan(check_mode=True)["result"]["nvidia_smi"] is None


def test_each_difference_is_a_step():
    assert plan(grid_driver_remote_src="/mnt/nvidia-linux-grid-525_525.105.17_amd64.deb")["install"]
    missing = {"exists": False}
    decided = grid_driver_plan(dict(GUEST, files={BLACKLIST: missing, "/etc/modprobe.d": missing}), PARAMS, "",
                               False, "vm1", None, BLACKLIST, CONTENT)
    assert decided["blacklist"] and decided["modprobe_dir"] and not decided["converged"]
    loaded = plan(changed_guest(driver__nouveau={"loaded": True}))
    assert loaded["reboot_reasons"] == ["nouveau is loaded"] and not loaded["converged"]
    broken = plan(changed_guest(nvidia_smi__present=False, nvidia_smi__msg="no module"))
    assert broken["reboot_reasons"] == ["nvidia-smi: no module"]
    assert plan(changed_guest(nvidia_smi__present=False), check_mode=True)["reboot_reasons"] == []
    assert plan(grid_driver_blacklist_nouveau=False, guest=dict(GUEST, files={}))["converged"]


@pytest.mark.parametrize("params, guest, message", [
    ({"grid_driver_src": "/x.deb"}, None, "grid_driver_src and grid_driver_remote_src are set."),
    ({"grid_driver_remote_src": ""}, None, "; none is set."),
    ({"grid_driver_remote_src": "/mnt/driver.zip"}, None, "driver.zip is not a GRID driver package"),
    ({"grid_driver_remote_src": "/mnt/NVIDIA-Linux-x86_64-510.47.03.run"}, None, "the standard driver does not run"),
    ({"grid_driver_remote_src": "/mnt/driver.deb"}, None, "No driver version in the file name driver.deb"),
    ({"grid_driver_remote_src": "/mnt/nvidia-linux-grid-510-510.47.03.rpm"}, None,
     "does not install on Debian (Debian family): use the deb or the runfile."),
    ({}, changed_guest(pci__gpus=[]), "No NVIDIA GPU is visible on the PCI bus of vm1: 'lspci -nnk -d 10de:' lists"),
    ({"grid_driver_host_manager_from": "esxi1"}, None, "set_facts (esxi1 has no nvidia_smi facts)."),
    ({"host": "470.82.02"}, None, "does not work with vGPU Manager 470.82.02"),
    ({}, changed_guest(nvidia_smi__driver_version="470.1"), "nvidia-smi reports driver 470.1 after installing 510"),
    ({}, changed_guest(errors__os={"msg": "no os-release"}), "Could not read os on vm1: no os-release."),
])
def test_the_first_broken_rule_names_the_value_and_the_fix(params, guest, message):
    assert message in plan(guest, **params)["error"]


def test_a_previous_branch_is_a_note_and_a_compat_record():
    decided = plan(host="525.105.14")
    assert decided["error"] == ""
    assert decided["compat"]["status"] == "ok-previous-branch"
    assert decided["notes"] == [decided["compat"]["message"]]
    assert decided["result"]["host_manager_version"] == "525.105.14"


def test_the_url_and_runfile_names():
    decided = plan(grid_driver_remote_src="", grid_driver_url="https://dl.example/a/NVIDIA-Linux-x86_64-510.47.03-grid.run?x=1",
                   guest=changed_guest(driver__format="run", driver__kernel_module_version="510.47.03"))
    assert (decided["file"], decided["format"], decided["path"]) == (
        "NVIDIA-Linux-x86_64-510.47.03-grid.run", "run", "/var/tmp/stage/NVIDIA-Linux-x86_64-510.47.03-grid.run")
    assert not decided["install"]


def test_the_filter_names_itself_in_errors():
    assert guest_plans.FilterModule().filters()["grid_driver_plan"] is guest_plans.grid_driver_plan
    with pytest.raises(AnsibleFilterError, match="^grid_driver_plan: "):
        guest_plans.grid_driver_plan(GUEST, dict(PARAMS, grid_driver_version="banana"), host_version="525.105.14")


def test_a_nouveau_blacklist_already_in_force_is_kept_as_it_is():
    # NVIDIA's guide's file written by hand: the same directives as the role's, without its comments.
    by_hand = "blacklist nouveau\noptions nouveau modeset=0\n"
    guest = changed_guest(driver__nouveau={"loaded": False, "blacklisted": True, "blacklist_files": [BLACKLIST]})
    guest["files"][BLACKLIST] = dict(guest["files"][BLACKLIST], checksum=hashlib.sha1(by_hand.encode()).hexdigest())
    decided = plan(guest)
    assert (decided["blacklist"], decided["modprobe_dir"], decided["converged"]) == (False, False, True)
    # Elsewhere (another file, the kernel command line): the role's file is not added either.
    elsewhere = changed_guest(driver__nouveau={"loaded": False, "blacklisted": True,
                                               "blacklist_files": ["/usr/lib/modprobe.d/nvidia-graphics.conf"]})
    elsewhere["files"] = {BLACKLIST: {"exists": False}, "/etc/modprobe.d": {"exists": False}}
    assert plan(elsewhere)["converged"]
    # Where the read finds no blacklist in force, the role's file is written.
    guest["driver"]["nouveau"] = {"loaded": False, "blacklisted": False, "blacklist_files": []}
    assert plan(guest)["blacklist"]


def test_a_package_over_a_runfile_install_and_the_runfile_over_a_package_are_refused():
    runfile_guest = changed_guest(driver__format="run", driver__version="510.47.03",
                                  driver__runfile={"installed": True, "version": "510.47.03"},
                                  driver__kernel_module_version="510.47.03")
    refused = plan(runfile_guest)
    assert refused["error"].startswith("The GRID driver 510.47.03 was installed on vm1 with NVIDIA's runfile; the deb")
    assert "nvidia-uninstall" in refused["error"] and "Nothing was changed." in refused["error"]
    runfile = "/mnt/NVIDIA-Linux-x86_64-510.47.03-grid.run"
    assert plan(runfile_guest, grid_driver_remote_src=runfile)["converged"]
    packaged = changed_guest(driver__kernel_module_version="510.47.03")
    assert plan(packaged, grid_driver_remote_src=runfile)["converged"]
    newer = plan(packaged, grid_driver_remote_src="/mnt/NVIDIA-Linux-x86_64-510.85.02-grid.run")
    assert newer["error"].startswith("The GRID driver 510.47.03 is installed on vm1 as a deb package; NVIDIA's runfile")
