# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A driver branch upgrade on the lab's bare-metal GPU servers, with the reboot it needs: R535 installed by the
servers layer's driver and Fabric Manager steps, then R580 asked for with reboots allowed. The new packages replace
the old ones, each server restarts once (its init's start time changes; the lab kernel then runs the new module, as a
boot does), Fabric Manager of R580 replaces R535's on the HGX board and completes the fabric for the new module, and
a run after it changes nothing and reboots nothing.

The servers are containers of the test's own that come back from a reboot (lab/servers); the end state is read from
them: dpkg, systemd, the lab kernel's state and their own nvidia-smi -q."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from conftest import PORT_OFFSET, ROOT, lab_servers
from test_servers_converge import HGX, PCIE, on, query, run_layer

STATE_DIR = os.path.join(ROOT, ".tmp", "servers-upgrade-%d" % PORT_OFFSET)
STEPS = ("--tags", "nvidia_driver,fabric_manager")
UPGRADE = ("-e", "nvidia_driver_branch=580", "-e", "nvidia_driver_reboot=true",
           "-e", "fabric_manager_remote_src=/srv/lab-artifacts/nvidia-fabricmanager_580.65.06-1_amd64.deb")
REBOOT_TASK = "gpuops.vgpu.nvidia_driver : Reboot to run the new kernel module"


@pytest.fixture
def servers(lab):
    with lab_servers(lab, STATE_DIR, 150) as started:
        yield started


def boot(server):
    """The start time of the server's init: a new one after every reboot."""
    return on(server, "awk", "{print $22}", "/proc/1/stat").strip()


def nvidia_packages(server):
    """The installed NVIDIA driver and Fabric Manager packages with their versions."""
    listed = on(server, "sh", "-c", "dpkg-query -W -f '${db:Status-Abbrev} ${Package} ${Version}\\n' "
                                    "'cuda-drivers*' 'nvidia-open*' 'nvidia-fabricmanager*' 2>/dev/null; true")
    return sorted(tuple(line.split()[1:]) for line in listed.splitlines() if line.startswith("ii"))


def running(server):
    """What the lab kernel runs and what the server's nvidia-smi reports."""
    kernel = json.loads(on(server, "cat", "/var/lib/gpuops-lab/kernel.json"))
    report = query(server)
    return kernel, report["driver_version"] if isinstance(report, dict) else report


def test_a_branch_upgrade_reboots_each_server_once_and_fabric_manager_follows_the_driver(servers, tmp_path):
    rc, stats, _changed, _checks, output = run_layer(tmp_path, None, *STEPS, state_dir=STATE_DIR)
    assert rc == 0, output[-8000:]
    for server in servers.values():
        assert running(server)[1] == "535.161.08", running(server)
    assert ("nvidia-fabricmanager-535", "535.161.08-1") in nvidia_packages(servers[HGX])
    before = dict((name, boot(server)) for name, server in servers.items())

    rc, stats, changed, _checks, output = run_layer(tmp_path, None, *(STEPS + UPGRADE), state_dir=STATE_DIR)
    assert rc == 0, output[-8000:]
    assert all(stats[name]["failures"] == 0 for name in (HGX, PCIE)), stats
    for name, server in servers.items():
        assert REBOOT_TASK in changed[name], (name, changed.get(name))
        assert boot(server) != before[name], "%s did not restart" % name
        kernel, version = running(server)
        assert kernel == {"bound": "nvidia", "nvidia": {"version": "580.65.06", "flavour": "open"}}, (name, kernel)
        assert version == "580.65.06", (name, version)
        packages = nvidia_packages(server)
        assert not [package for package in packages if "535" in package[1]], (name, packages)
        assert ("nvidia-open-580", "580.65.06-1") in packages, (name, packages)
        assert on(server, "systemctl", "is-active", "nvidia-persistenced").strip() == "active", name
    assert ("nvidia-fabricmanager", "580.65.06-1") in nvidia_packages(servers[HGX])
    assert on(servers[HGX], "systemctl", "is-active", "nvidia-fabricmanager").strip() == "active"
    fabric = [(gpu["fabric_state"], gpu["fabric_status"]) for gpu in query(servers[HGX])["gpus"]]
    assert fabric == [("Completed", "Success")] * 8
    assert not [package for package in nvidia_packages(servers[PCIE]) if "fabricmanager" in package[0]]

    after = dict((name, boot(server)) for name, server in servers.items())
    rc, stats, changed, _checks, output = run_layer(tmp_path, None, *(STEPS + UPGRADE), state_dir=STATE_DIR)
    assert rc == 0 and changed == {}, (changed, output[-4000:])
    assert dict((name, boot(server)) for name, server in servers.items()) == after


def server_state(server):
    """What nvidia_driver manages on a server, as the server has it."""
    return on(server, "sh", "-c", "dpkg-query -W -f '${db:Status-Abbrev} ${Package} ${Version}\\n' 2>/dev/null "
                                  "| grep -i nvidia; ls -l --time-style=+%s /etc/modprobe.d; "
                                  "cat /var/lib/gpuops-lab/kernel.json 2>/dev/null; true")


def test_nvidias_installer_with_dkms_on_a_fresh_server_and_a_grid_driver_refused(servers, tmp_path):
    # pcie-01 from its installer to a working nvidia-smi through NVIDIA's .run with DKMS, no package involved.
    runfile = ("-e", "nvidia_driver_source=runfile",
               "-e", "nvidia_driver_runfile=/srv/lab-artifacts/NVIDIA-Linux-x86_64-535.161.08.run")
    rc, stats, changed, _checks, output = run_layer(tmp_path, None, "--tags", "nvidia_driver", "-l", PCIE,
                                                    *runfile, state_dir=STATE_DIR)
    assert rc == 0, output[-8000:]
    pcie = servers[PCIE]
    kernel, version = running(pcie)
    assert version == "535.161.08" and kernel["nvidia"]["version"] == "535.161.08", (kernel, version)
    assert nvidia_packages(pcie) == [], "the .run installed packages"
    assert "registered with DKMS" in on(pcie, "cat", "/var/log/nvidia-installer.log")
    assert "blacklist nouveau" in on(pcie, "cat", "/etc/modprobe.d/blacklist-nouveau.conf")
    rc, stats, changed, _checks, output = run_layer(tmp_path, None, "--tags", "nvidia_driver", "-l", PCIE,
                                                    *runfile, state_dir=STATE_DIR)
    assert rc == 0 and changed == {}, (changed, output[-4000:])

    # hgx-01 with a vGPU guest's GRID driver put on by hand: refused, the server left as it was.
    hgx = servers[HGX]
    on(hgx, "dpkg", "-i", "/srv/lab-artifacts/nvidia-linux-grid-535_535.54.03_amd64.deb")
    before = server_state(hgx)
    assert "nvidia-linux-grid-535" in before
    rc, stats, changed, _checks, output = run_layer(tmp_path, None, "--tags", "nvidia_driver", "-l", HGX,
                                                    state_dir=STATE_DIR)
    assert rc != 0 and stats[HGX]["failures"] == 1, output[-4000:]
    assert "gpuops.vgpu.grid_driver" in output and "Nothing was changed." in output, output[-4000:]
    assert changed == {} and server_state(hgx) == before
