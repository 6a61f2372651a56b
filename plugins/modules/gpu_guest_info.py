#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_guest_info
short_description: The GPU state of a Linux vGPU guest in one read
version_added: 0.1.0
description:
  - Returns in one task everything the guest roles decide on - the OS family and kernel; the NVIDIA GPUs on the PCI
    bus; the GRID driver installed (Debian package, RHEL rpm or runfile) and loaded, and nouveau; C(gridd.conf), the
    client configuration tokens, C(nvidia-gridd) and the license; what C(nvidia-smi) says; the CUDA toolkits and the
    one on E(PATH); cuDNN; the NVIDIA Container Toolkit.
  - Reads files and runs a few read-only commands (C(nvidia-smi -q -x), C(lspci), C(systemctl show),
    C(timedatectl show), C(modinfo), C(rpm -qa) on RPM systems, C(nvidia-ctk --version)) that exist on the guest.
  - Token files are described by name, size, mode, owner and SHA-1 checksum; their content is never returned.
  - A probe that fails does not fail the module; its error is returned under RV(gpu_guest.errors).
  - Uses only the Python standard library on the target. Never changes anything.
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.vgpu.attributes.INFO_MODULE
attributes:
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: posix
  action_group:
    description: Use C(group/gpuops.vgpu.nvidia) in C(module_defaults) to set options once.
    support: full
    membership:
      - gpuops.vgpu.nvidia
options:
  gather:
    description:
      - The probes to run; all of them but V(topology) when not set. Each gives the return value of its name.
      - V(license) also runs nvidia-smi (for the license state), and V(driver), V(cudnn) and V(container_toolkit)
        read the installed packages, but only the probes named here are returned.
      - V(topology) (C(nvidia-smi topo -m), C(nvidia-smi nvlink -s) and C(nvidia-smi topo -p2p rw), for a machine
        that owns several GPUs) runs only when named here.
    type: list
    elements: str
    choices: [os, pci, packages, driver, license, nvidia_smi, cuda, cudnn, container_toolkit, topology]
  nvidia_smi_path:
    description:
      - Path of the C(nvidia-smi) binary. When not set, it is looked for in E(PATH), the system directories,
        C(/opt/nvidia/bin) and C(/usr/local/nvidia/bin).
    type: path
  query_format:
    description:
      - Ask C(nvidia-smi) for XML (C(-q -x)) first, falling back to text (C(-q)) where it has no XML output, or for
        text only. Both give the same facts.
    type: str
    choices: [xml, text]
    default: xml
  files:
    description:
      - Paths whose state to return under RV(gpu_guest.files) - whether each exists, its type, mode, owner and
        group, a file's SHA-1 checksum and a link's target - so that the tasks that manage them run only when they
        differ. Never their content.
    type: list
    elements: path
    default: []
  services:
    description:
      - systemd units whose state to return under RV(gpu_guest.services) - whether each is installed, active and
        enabled - so that the tasks that start them run only when they are not.
    type: list
    elements: str
    default: []
  set_facts:
    description:
      - Also set the result as the host fact C(gpu_guest) (C(ansible_facts.gpu_guest)).
    type: bool
    default: false
  reuse:
    description:
      - Answer from the guest's state already read in this ansible-playbook run, without running the module, when
        that read covers the probes, O(files) and O(services) asked for and the guest is as it found it.
      - Whether the guest is as it was read is told by a fingerprint taken with the read and again before each
        reuse, in one shell command (no module) - C(stat) of the files, unit files and places the probes read, the
        boot id, the NVIDIA and nouveau kernel modules loaded, and systemd's state of the services read and of
        nvidia-gridd. Any change to those, by any task (whether it reports a change or not) or anything else,
        makes the next read go to the guest. What changes without such a trace (nvidia-smi's live answers, the
        clock's synchronisation) is as fresh as the read, and so is the C(state) of a oneshot service that does not
        remain after it exits (a collector its timer starts), which each of its runs changes.
      - A kept read that caught nvidia-smi's answer on its way is not reused for it - a GPU not yet licensed while
        nvidia-gridd runs with a C(FeatureType) and a token to license it, or a GPU whose fabric waits for Fabric
        Manager. Both daemons settle these on their own, and grid_license and fabric_manager wait for them - a later
        read that asks for C(nvidia_smi) or C(license) reads those two probes again.
      - A read under the same conditions that asks for more reads only the missing probes, files and services and
        adds them to the kept read.
      - Otherwise (the first read, or the guest changed) the guest is read with every probe, the files and
        services of the earlier read, and those that the host variable C(gpu_guest_info_reads) lists (a list of
        C({files, services}), what the play's later reads will ask for) as well. The read is kept in the host fact
        C(gpu_guest_info_cache) for the next read with O(reuse). More probes, files and services than asked for
        may then be returned.
      - A read kept from an earlier run (through a fact cache) is never reused; a later play of the same run reuses
        it, as the doctor's read of a guest reuses the guest roles' read in C(playbooks/site.yml). Moving the host
        variable C(gpu_guest_info_changes) (an integer) still makes the next read go to the guest; no task needs to.
      - The gpuops.vgpu guest roles pass the variable C(gpu_guest_info_reuse) (default V(false)) here;
        C(playbooks/guests.yml) sets it.
      - Handled on the controller (the module's action plugin).
    type: bool
    default: false
notes:
  - nvidia-smi is read as XML, or as text where it has no XML output (the lab's stand-in driver).
seealso:
  - module: gpuops.vgpu.nvidia_smi_info
  - name: gpu_guest_info and its probes
    description: What each probe reads and returns, and the Python API behind the module.
    link: https://github.com/gpuops/vgpu/blob/main/docs/gpu_guest_info.md
"""

EXAMPLES = r"""
- name: Read the GPU state of every guest
  gpuops.vgpu.gpu_guest_info:
  register: guest

- name: Install the GRID driver only where another version (or none) is installed
  ansible.builtin.include_role:
    name: gpuops.vgpu.grid_driver
  when: guest.gpu_guest.driver.version != '510.47.03'

- name: Guests whose vGPU is not licensed
  ansible.builtin.debug:
    msg: "{{ inventory_hostname }}: {{ guest.gpu_guest.license.statuses | join(', ') }}"
  when: not guest.gpu_guest.license.licensed

- name: Only the license, as a fact
  gpuops.vgpu.gpu_guest_info:
    gather: [license]
    set_facts: true

- name: The CUDA toolkit that login shells get
  ansible.builtin.debug:
    msg: "{{ ansible_facts.gpu_guest.cuda.on_path | default('none', true) }}"
  when: ansible_facts.gpu_guest.cuda is defined
"""

RETURN = r"""
gpu_guest:
  description: The guest's GPU state, one key per probe run. Also set as the fact C(gpu_guest) with O(set_facts=true).
  returned: always
  type: dict
  contains:
    gathered:
      description: The probes that ran.
      type: list
      elements: str
      sample: [os, pci, packages, driver, license, nvidia_smi, cuda, cudnn, container_toolkit]
    errors:
      description:
        - Per probe (or part, such as C(license.clock)) that failed, its error (C(msg); nvidia-smi's also C(kind),
          C(rc), C(command)). A failed probe's key is null. Empty when everything answered.
      type: dict
      sample: {packages: {msg: "/usr/bin/rpm --query --all ... exited with 1: error: rpmdb open failed"}}
    files:
      description:
        - Per path of O(files), its state - C(exists), C(type) (C(file), C(directory), C(link), C(other)), C(mode),
          C(owner), C(group), C(mtime) (seconds since the epoch), a file's C(checksum) (SHA-1) and C(size), a link's
          C(target) as written.
      type: dict
      returned: when O(files) is given
      sample: {/etc/ld.so.conf.d/cuda.conf: {exists: true, type: file, mode: "0644", owner: root, group: root,
               mtime: 1795000000.5, checksum: 4a2ad9d7d1f3ab4d5f8f5b4e1c9d0e7f6a3b2c1d, size: 24}}
    services:
      description:
        - Per unit of O(services), its state - C(exists), C(active), C(enabled), C(state) (systemd's ActiveState),
          C(unit_file_state), C(unit_file), C(active_since) (when it last became active, in seconds since the epoch, from
          systemd's monotonic ActiveEnterTimestamp taken to the guest's wall clock; null when it never did),
          C(need_daemon_reload) (its unit file changed since systemd loaded it), C(executable) (the program of its
          first ExecStart) with C(executable_changed_at) (when that file was last put in place, its inode's change
          time in seconds since the epoch, which a package upgrade sets where it keeps the packaged modification
          time; null when absent) and C(systemd) (whether systemd runs; without it C(active), C(enabled),
          C(active_since), C(need_daemon_reload) and C(executable) are null).
      type: dict
      returned: when O(services) is given
      sample: {prometheus-node-exporter: {exists: true, active: true, enabled: true, state: active,
               unit_file_state: enabled, unit_file: /lib/systemd/system/prometheus-node-exporter.service,
               active_since: 1795000000.25, need_daemon_reload: false, systemd: true,
               executable: /usr/bin/prometheus-node-exporter, executable_changed_at: 1794990000.5,
               name: prometheus-node-exporter}}
    os:
      description: C(family) (C(Debian), C(RedHat), C(Suse)), C(distribution), C(version), C(name), C(kernel),
        C(package_format) (C(deb) or C(rpm)) and C(package_manager) (C(apt), C(dnf), C(dnf5), C(yum), C(zypper)).
      type: dict
      returned: when gathered
      sample: {family: Debian, distribution: debian, version: "12", kernel: 6.1.0-18-amd64, package_format: deb}
    pci:
      description: NVIDIA display and 3D controllers (C(gpus), each C(address), C(class), C(device_id),
        C(description), C(driver)), the addresses of NVIDIA NVSwitches (C(nvswitches), PCI class 0680, on HGX and
        DGX boards) and C(source) (C(lspci) or C(sysfs)).
      type: dict
      returned: when gathered
    packages:
      description: Installed NVIDIA, CUDA and cuDNN packages (names starting with nvidia, libnvidia, cuda, libcuda,
        cudnn, libcudnn, libnccl or kmod-nvidia), name to version.
      type: dict
      returned: when gathered
      sample: {nvidia-linux-grid-510: 510.47.03}
    driver:
      description:
        - The GRID driver. C(installed), C(format) (C(deb), C(rpm), C(run) or null), C(version) (installed),
          C(packages), C(runfile) (C(installed), C(version) from the installer log), C(kernel_module_version)
          (modinfo), C(loaded) and C(loaded_version) (the running kernel module).
        - C(nouveau) - C(loaded), C(blacklisted), C(blacklist_files), C(blacklisted_on_cmdline).
      type: dict
      returned: when gathered
    license:
      description:
        - C(gridd_conf) (C(path), C(exists), C(settings)), C(gridd_template), C(feature_type), C(token_dir) and
          C(tokens) (each C(name), C(path), C(size), C(mode), C(owner), C(group), C(checksum); never the content).
        - C(service) - nvidia-gridd's C(unit_file), C(exists), C(systemd), C(active), C(state), C(enabled).
        - C(clock_synchronized), and from nvidia-smi C(licensed) (every GPU licensed; null without a working
          driver), C(product), C(expiry) (the earliest, ISO 8601 UTC) and C(statuses).
      type: dict
      returned: when gathered
    nvidia_smi:
      description:
        - What nvidia-smi says, as M(gpuops.vgpu.nvidia_smi_info) returns it (C(present), C(kind),
          C(msg), C(path), C(driver_version), C(cuda_version), C(gpus)), plus per GPU C(vgpu_profile) (vSphere
          name, such as C(grid_a100-4c)) and C(vgpu_profiles).
      type: dict
      returned: when gathered
    cuda:
      description: C(toolkits) under /usr/local/cuda-* (C(path), C(series), C(version), C(nvcc_version), C(nvcc)),
        the /usr/local/cuda C(link), C(etc_environment_path), C(on_path) (the nvcc found first, C(source)
        /etc/environment or PATH), C(profile_d) scripts and C(ld_so_conf) loader paths that name CUDA.
      type: dict
      returned: when gathered
    cudnn:
      description: cuDNN C(version) (of the toolkit /usr/local/cuda points to, else the first found), C(headers)
        (each cudnn_version.h with its version) and C(packages).
      type: dict
      returned: when gathered
      sample: {version: 8.9.7, headers: [{path: /usr/local/cuda-11.6/include/cudnn_version.h, version: 8.9.7}]}
    container_toolkit:
      description: NVIDIA Container Toolkit - C(installed), C(path) of nvidia-ctk, C(version), C(packages).
      type: dict
      returned: when gathered
    topology:
      description:
        - The GPUs' links, as M(gpuops.vgpu.nvidia_smi_info) returns them - C(topology) (C(nvidia-smi topo -m)),
          C(nvlink) (C(nvidia-smi nvlink -s)) and C(p2p) (C(nvidia-smi topo -p2p rw)), each null where its command
          failed (its error under RV(gpu_guest.errors) as C(topology.topology), C(topology.nvlink) or
          C(topology.p2p)).
        - Null without a working nvidia-smi.
      type: dict
      returned: when asked for in O(gather)
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import Host, run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.guest.gpu_state import (
    ALL_PROBES,
    gpu_guest_info,
)


def argument_spec():
    return dict(
        gather=dict(type="list", elements="str", choices=list(ALL_PROBES)),
        nvidia_smi_path=dict(type="path"),
        query_format=dict(type="str", choices=["xml", "text"], default="xml"),
        files=dict(type="list", elements="path", default=[]),
        services=dict(type="list", elements="str", default=[]),
        set_facts=dict(type="bool", default=False),
        reuse=dict(type="bool", default=False),
    )


def main():
    run_module(argument_spec(), gpu_guest_info, client=Host, supports_check_mode=True)


if __name__ == "__main__":
    main()
