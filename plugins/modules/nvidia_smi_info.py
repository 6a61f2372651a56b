#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nvidia_smi_info
short_description: Facts from nvidia-smi on an ESXi host, a Linux guest or a bare-metal GPU server
version_added: 0.1.0
description:
  - Runs C(nvidia-smi -q -x) on the target and returns the driver and CUDA versions and, per GPU, its identity,
    memory, temperature, power, ECC and MIG modes, virtualization mode and, in a vGPU guest, the license state.
  - Also runs, per O(gather), C(nvidia-smi topo -m), C(nvidia-smi nvlink -s), C(nvidia-smi -L),
    C(nvidia-smi vgpu -q) and C(nvidia-smi mig -lgip) / C(mig -lgi). A gather command the machine does not
    support (C(topo -m) on Windows, C(vgpu -q) on a host without vGPU) does not fail the module; its error is
    returned under RV(nvidia_smi.errors).
  - Uses only the Python standard library on the target, so it runs on ESXi's Python and on minimal guests.
  - Never changes anything.
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
    description: Use C(group/gpuops.vgpu.nvidia) in C(module_defaults) to set options such as O(path) once.
    support: full
    membership:
      - gpuops.vgpu.nvidia
options:
  path:
    description:
      - Path of the C(nvidia-smi) binary.
      - When not set, the module looks for it in C(/usr/bin), C(/opt/nvidia/bin), C(/usr/local/bin),
        C(/usr/local/nvidia/bin) and E(PATH). On ESXi the vGPU Manager puts it on E(PATH).
    type: path
  gather:
    description:
      - Commands to run besides the main query (O(query_format)), which always runs.
      - V(topology) runs C(topo -m), V(nvlink) runs C(nvlink -s), V(list) runs C(-L) (it carries the MIG device
        UUIDs), V(vgpu) runs C(vgpu -q), V(mig) runs C(mig -lgip) and C(mig -lgi), V(p2p) runs C(topo -p2p rw)
        (peer-to-peer read and write status between the GPUs; never gathered unless asked for).
      - When not set, what applies to the machine - V(topology), V(nvlink) and V(list), plus V(vgpu) when a GPU is
        in C(Host VGPU) mode and V(mig) when MIG is on for a GPU. An empty list runs only the query.
    type: list
    elements: str
    choices: [topology, nvlink, list, vgpu, mig, p2p]
  query_format:
    description:
      - Read the main query as XML (C(nvidia-smi -q -x)) or as text (C(nvidia-smi -q)). Both give the same facts;
        text is for tools or wrappers that only offer C(-q).
    type: str
    choices: [xml, text]
    default: xml
  fail_on_missing:
    description:
      - Fail when nvidia-smi is not installed or cannot reach a working driver with a GPU (error kinds
        C(not_installed), C(driver_unreachable), C(no_devices), C(driver_library_mismatch)).
      - When V(false), the module succeeds with RV(nvidia_smi.present=false) and the error's RV(nvidia_smi.kind)
        instead. Other errors always fail.
    type: bool
    default: true
  set_facts:
    description:
      - Also set the result as the host fact C(nvidia_smi) (C(ansible_facts.nvidia_smi)).
    type: bool
    default: false
notes:
  - Inside a vGPU guest the temperature and power read C(N/A) (or C(0)); read them on the host or from the BMC.
  - nvidia-smi can hang when a GPU is failing; bound the task with the C(timeout) task keyword.
seealso:
  - name: Parsers for nvidia-smi output
    description: The public parser module behind this module, usable from other plugins.
    link: https://github.com/gpuops/vgpu/blob/main/docs/nvidia-smi.md
"""

EXAMPLES = r"""
- name: Facts from the vGPU Manager on every ESXi host
  gpuops.vgpu.nvidia_smi_info:
  register: host_smi

- name: No GPU of the host has ECC off
  ansible.builtin.assert:
    that: host_smi.nvidia_smi.gpus | selectattr('ecc_mode_current', 'false') | list | length == 0
    fail_msg: "ECC is off on {{ host_smi.nvidia_smi.gpus | selectattr('ecc_mode_current', 'false') | map(attribute='pci_bus_id') | join(', ') }}"

- name: License state of a guest, without failing where no driver is installed yet
  gpuops.vgpu.nvidia_smi_info:
    gather: []
    fail_on_missing: false
    set_facts: true

- name: Report guests whose vGPU is not licensed
  ansible.builtin.debug:
    msg: "{{ inventory_hostname }}: {{ ansible_facts.nvidia_smi.gpus | map(attribute='license_status') | join(', ') }}"
  when:
    - ansible_facts.nvidia_smi.present
    - ansible_facts.nvidia_smi.gpus | selectattr('licensed', 'false') | list | length > 0

- name: NVLink pairs of a passthrough VM, with an explicit nvidia-smi
  gpuops.vgpu.nvidia_smi_info:
    path: /usr/bin/nvidia-smi
    gather: [topology]
  register: topo
"""

RETURN = r"""
nvidia_smi:
  description: What nvidia-smi reports. Also set as the fact C(nvidia_smi) with O(set_facts=true).
  returned: always
  type: dict
  contains:
    present:
      description: Whether nvidia-smi ran and reached a GPU. False only with O(fail_on_missing=false).
      type: bool
    kind:
      description: Why nvidia-smi is not usable, when RV(nvidia_smi.present) is false.
      type: str
      returned: when present is false
      sample: driver_unreachable
    msg:
      description: nvidia-smi's own words, when RV(nvidia_smi.present) is false.
      type: str
      returned: when present is false
    path:
      description: The nvidia-smi that ran (or O(path) when it is missing); null when none was found.
      type: str
      sample: /usr/bin/nvidia-smi
    driver_version:
      description: Driver version, without annotations such as C([Deprecated; ...]).
      type: str
      returned: when present
      sample: 535.161.08
    cuda_version:
      description: Highest CUDA version the driver runs; null on a vGPU host (C(Not Found)).
      type: str
      returned: when present
      sample: "12.2"
    kmd_version:
      description: Kernel mode driver version, printed from driver 610 on; else null.
      type: str
      returned: when present
    cuda_umd_version:
      description: CUDA user mode driver version, printed from driver 610 on; else null.
      type: str
      returned: when present
    attached_gpus:
      description: GPUs in the system (can be more than RV(nvidia_smi.gpus) when the output was limited).
      type: int
      returned: when present
    gpus:
      description: One entry per GPU, in nvidia-smi's order. Empty when RV(nvidia_smi.present) is false.
      type: list
      elements: dict
      contains:
        pci_bus_id: {description: PCI bus id as printed., type: str, sample: "00000000:3B:00.0"}
        name: {description: Product name., type: str, sample: NVIDIA A100-PCIE-40GB}
        uuid: {description: GPU UUID., type: str}
        memory_total_mib: {description: Framebuffer size., type: int}
        temperature_gpu_c: {description: GPU temperature., type: int}
        temperature_slowdown_c: {description: "Temperature at which the GPU slows itself down (C(GPU Slowdown Temp)).", type: int}
        temperature_shutdown_c: {description: "Temperature at which the GPU shuts down (C(GPU Shutdown Temp)).", type: int}
        power_draw_w: {description: Power draw (the average where the driver reports one)., type: float}
        power_limit_w: {description: Enforced power limit., type: float}
        ecc_mode_current: {description: ECC on now; null when the GPU has no ECC., type: bool}
        ecc_mode_pending: {description: ECC on after the next reset., type: bool}
        mig_mode_current: {description: MIG on now; null when the GPU has no MIG., type: bool}
        mig_devices: {description: "MIG devices: index, GPU and compute instance ids, SMs, memory.", type: list, elements: dict}
        virtualization_mode: {description: "As printed: C(None), C(Pass-Through), C(VGPU), C(Host VGPU)...", type: str}
        host_vgpu_mode: {description: "C(SR-IOV) or C(Non SR-IOV) on a vGPU host, else null.", type: str}
        fabric_state: {description: "The GPU's NVSwitch fabric, as printed (C(In Progress), C(Completed)...); null (N/A) without one.", type: str}
        fabric_status: {description: "The fabric's status once configured (C(Success) or the error); null (N/A) otherwise.", type: str}
        license_product: {description: Licensed product in a vGPU guest., type: str}
        license_status: {description: "License status without the expiry, e.g. C(Unlicensed (Unrestricted)).", type: str}
        licensed: {description: True only for C(Licensed); null outside a vGPU guest., type: bool}
        license_expiry: {description: "License expiry, ISO 8601 UTC (C(2022-05-27T00:08:28Z)).", type: str}
    topology:
      description: Parsed C(topo -m) (devices, matrix, nvlink_pairs, cpu_affinity, numa_affinity); null if not gathered.
      type: dict
      returned: when present
    nvlink:
      description: Parsed C(nvlink -s), per GPU its links and active link count; null if not gathered.
      type: dict
      returned: when present
    list:
      description: Parsed C(-L), per GPU its MIG devices with UUIDs; null if not gathered.
      type: dict
      returned: when present
    vgpu:
      description: Parsed C(vgpu -q), per GPU the vGPUs running on it; null if not gathered.
      type: dict
      returned: when present
    mig:
      description: Parsed C(mig -lgip) and C(mig -lgi) (gpu_instance_profiles, gpu_instances); null if not gathered.
      type: dict
      returned: when present
    p2p:
      description:
        - Parsed C(topo -p2p rw) (gpus, matrix, pairs with the status each way and C(ok)); null if not gathered.
      type: dict
      returned: when present
    gathered:
      description: The gather commands that were run.
      type: list
      elements: str
      returned: when present
      sample: [topology, nvlink, list, vgpu]
    errors:
      description: Per gather command that failed, its error (kind, msg, rc, command); the command's key is null.
      type: dict
      sample: {vgpu: {kind: not_supported, msg: No supported devices in vGPU mode, rc: 6, command: nvidia-smi vgpu -q}}
    warnings:
      description: Lines nvidia-smi printed besides the query output (e.g. an infoROM warning).
      type: list
      elements: str
      returned: when present
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import Host, run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia._smi_info import nvidia_smi_info


def argument_spec():
    return dict(
        path=dict(type="path"),
        gather=dict(type="list", elements="str", choices=["topology", "nvlink", "list", "vgpu", "mig", "p2p"]),
        query_format=dict(type="str", choices=["xml", "text"], default="xml"),
        fail_on_missing=dict(type="bool", default=True),
        set_facts=dict(type="bool", default=False),
    )


def main():
    run_module(argument_spec(), nvidia_smi_info, client=Host, supports_check_mode=True)


if __name__ == "__main__":
    main()
