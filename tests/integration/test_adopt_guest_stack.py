# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Adopting a guest whose whole stack was set up by hand from NVIDIA's guides: the GRID driver (its package or its
runfile), nouveau blacklisted, gridd.conf and the client configuration token, the CUDA toolkit from its runfile
(toolkit only), cuDNN copied from its tar archive into the toolkit, and Debian's node exporter. The whole guest layer
(playbooks/guests.yml) in check mode changes nothing and names a change in each role the real run then changes; the
real run adds only what the collection's layout has and the hand set-up lacks (the /usr/local/cuda link, the toolkit
on PATH and in the loader's path, the GPU metrics collector) and leaves what was installed by hand as it was: the
driver, the toolkit's and cuDNN's files to the mtime, nvidia-gridd's and the node exporter's processes, the license.
A further run changes nothing."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import time

import pytest

from guest_run import lab_guest, on_guest, run_guests

GUEST = "adopt-stack"
ARTIFACTS = "/srv/lab-artifacts"
TOOLKIT = "/usr/local/cuda-11.6"

# As root, in the order of the guides: the vGPU guest driver and its licensing (NVIDIA Virtual GPU Software User
# Guide, "Installing the NVIDIA vGPU Software Graphics Driver on Linux"; Client Licensing User Guide, "Configuring a
# Licensed Client on Linux"), the toolkit from the runfile without its driver (CUDA Installation Guide for Linux,
# "Runfile Installation": --silent --toolkit), cuDNN from the tar file (cuDNN Installation Guide, "Tar File
# Installation": the headers and libraries copied into the toolkit, made readable), the node exporter from Debian.
# The driver from its package, or from its runfile (NVIDIA Virtual GPU Software User Guide, "Installing the NVIDIA
# vGPU Software Graphics Driver on Linux from a .run File"), with the job's driver source then the runfile.
DRIVERS = {
    "package": ("apt-get install -y --no-install-recommends {artifacts}/nvidia-linux-grid-510_510.47.03_amd64.deb "
                ">/dev/null", ()),
    "runfile": ("sh {artifacts}/NVIDIA-Linux-x86_64-510.47.03-grid.run --silent >/dev/null",
                ("-e", "grid_driver_src={{ lab_standins }}/NVIDIA-Linux-x86_64-510.47.03-grid.run")),
}
BY_HAND = """set -e
{driver}
mkdir -p /etc/modprobe.d
printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' >/etc/modprobe.d/blacklist-nouveau.conf
sed 's/^FeatureType=0$/FeatureType=1/' /etc/nvidia/gridd.conf.template >/etc/nvidia/gridd.conf
mkdir -p /etc/nvidia/ClientConfigToken
cp {artifacts}/client_configuration_token_05-26-2022-00-08-28.tok /etc/nvidia/ClientConfigToken/
chmod 744 /etc/nvidia/ClientConfigToken/client_configuration_token_05-26-2022-00-08-28.tok
systemctl restart nvidia-gridd
sh {artifacts}/cuda_11.6.2_510.47.03_linux.run --silent --toolkit --override >/dev/null
cd /tmp && tar -xf {artifacts}/cudnn-linux-x86_64-8.9.7.29_cuda11-archive.tar.xz
cp cudnn-*-archive/include/cudnn*.h {toolkit}/include/
cp -P cudnn-*-archive/lib/libcudnn* {toolkit}/lib64/
chmod a+r {toolkit}/include/cudnn*.h {toolkit}/lib64/libcudnn*
rm -rf /tmp/cudnn-*-archive
echo 'export PATH={toolkit}/bin${{PATH:+:${{PATH}}}}' >>/root/.bashrc
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus-node-exporter >/dev/null
"""

# What the hand set-up installed, read with podman exec: the packages, every file of the toolkit (with cuDNN) and of
# the driver's configuration and of a runfile's install (mode, size, mtime), the daemons' processes and the license
# nvidia-gridd holds. Nothing on standard error, which podman exec may interleave anywhere.
GROUND_TRUTH = r"""
dpkg-query -W -f '${Package} ${Version} ${Status}\n' 'nvidia-linux-grid-*' prometheus-node-exporter 2>/dev/null \
  | sed 's/^/package /'
find /usr/local/cuda-11.6 /etc/nvidia /etc/modprobe.d /usr/bin/nvidia-smi /usr/bin/nvidia-uninstall \
  /var/log/nvidia-installer.log -xdev -printf 'file %p %m %s %T@ %l\n' 2>/dev/null | sort
for unit in nvidia-gridd prometheus-node-exporter; do
  echo "$unit $(systemctl show $unit -p ActiveState -p MainPID -p ActiveEnterTimestampMonotonic --value | tr '\n' ' ')"
done
echo "license $(cat /run/nvidia-gridd/license.json 2>/dev/null | tr -d '\n')"
"""

# The tasks that add the collection's layout to the hand set-up, and nothing else.
ADDED = (
    "gpuops.vgpu.cuda_toolkit : Point the cuda link to this toolkit",
    "gpuops.vgpu.cuda_toolkit : Put the toolkit on PATH for login shells",
    "gpuops.vgpu.cuda_toolkit : Add the toolkit to PATH in /etc/environment",
    "gpuops.vgpu.cuda_toolkit : Add the toolkit's lib64 to the loader path",
    "gpuops.vgpu.cuda_toolkit : Refresh the loader cache",
    "gpuops.vgpu.gpu_monitoring : Install the collector, its service and its timer",
    "gpuops.vgpu.gpu_monitoring : Start the node exporter and the collector's timer",
    "gpuops.vgpu.gpu_monitoring : Collect the GPU metrics now",
)


@pytest.fixture
def guest():
    with lab_guest(GUEST, 130) as started:
        yield started


def run(guest, *args):
    return run_guests(guest, *args)


def changed_tasks(output):
    """The tasks (role : name) that reported a change on the guest, in order."""
    tasks, task = [], None
    for line in output.splitlines():
        banner = re.match(r"^(?:TASK|RUNNING HANDLER) \[(.*)\] \**$", line)
        if banner:
            task = banner.group(1)
        elif line.startswith("changed: [%s]" % GUEST) and task not in tasks:
            tasks.append(task)
    return tasks


def role_of(tasks):
    return sorted(set(task.split(" : ")[0] for task in tasks))


def truth(guest):
    return on_guest(guest, "sh", "-c", GROUND_TRUTH).stdout.splitlines()


def licensed(guest, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if "License Status                    : Licensed" in on_guest(guest, "nvidia-smi", "-q").stdout:
            return True
        time.sleep(1)
    return False


@pytest.mark.parametrize("driver_by", sorted(DRIVERS))
def test_a_guest_set_up_by_hand_keeps_what_it_has_and_gets_what_it_lacks(guest, driver_by):
    install_driver, job_vars = DRIVERS[driver_by]
    done = on_guest(guest, "sh", "-c", BY_HAND.format(driver=install_driver.format(artifacts=ARTIFACTS),
                                                      artifacts=ARTIFACTS, toolkit=TOOLKIT))
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert licensed(guest)
    before = truth(guest)
    assert any(line.startswith("package prometheus-node-exporter ") for line in before), before
    assert "file %s/include/cudnn_version.h 644" % TOOLKIT in "\n".join(before)

    checked = run(guest, "--check", "--diff", *job_vars)
    assert checked.returncode == 0, checked.stdout[-6000:]
    assert truth(guest) == before
    predicted = changed_tasks(checked.stdout)

    applied = run(guest, *job_vars)
    assert applied.returncode == 0, applied.stdout[-6000:]
    done_now = changed_tasks(applied.stdout)
    # The check run named a change in every role the real run changed, and the real run added the collection's
    # layout alone. What follows a write (the loader cache, starting a unit just written, the collector's first
    # run) is not predicted task for task: check mode writes nothing to follow.
    assert set(predicted) <= set(done_now) and role_of(predicted) == role_of(done_now), (predicted, done_now)
    assert set(done_now) <= set(ADDED), done_now
    assert truth(guest) == before
    assert on_guest(guest, "readlink", "/usr/local/cuda").stdout.strip() == TOOLKIT
    assert on_guest(guest, "sh", "-lc", "nvcc --version").stdout.count("release 11.6") == 1
    assert "gpuops_gpu_collector_up" in on_guest(guest, "cat", "/var/lib/prometheus/node-exporter/gpuops_gpu.prom").stdout

    again = run(guest, *job_vars)
    recap = [line for line in again.stdout.splitlines() if line.startswith(GUEST + " ")]
    assert again.returncode == 0 and recap and "changed=0" in recap[-1], again.stdout[-4000:]
