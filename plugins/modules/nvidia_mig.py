#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nvidia_mig
short_description: MIG mode and the GPU/compute-instance layout of a node's GPUs, idempotent
version_added: 0.1.0
description:
  - Reads each GPU's MIG mode (current and pending) with C(nvidia-smi -q), its GPU instances with
    C(nvidia-smi mig -lgi) and their compute instances with C(nvidia-smi mig -lci), whatever the number of GPUs.
  - Turns MIG mode on or off and carves the GPU instances a layout asks for, each with one compute instance
    spanning it (C(nvidia-smi mig -cgi ... -C)), changing only what differs; instances that already match stay.
  - Refuses, before any change, a GPU without MIG, a profile the GPU does not offer, a layout that overfills the
    GPU (instance counts, compute slices, media engines, placements on the memory slices), and any change on a
    vGPU.
  - A GPU has one set of media engines (one OFA and, on A100 and A30, one JPEG decoder), which a C(+me) instance
    takes, so at most one C(+me) instance exists per GPU (NVIDIA MIG user guide, "Supported MIG Profiles"); on an
    A30, C(1g.6gb+me) and C(2g.12gb+me) together are refused.
  - A MIG mode change stays pending until the GPU is reset (O(gpu_reset)) or the VM reboots; the module says so
    in RV(reset_required) and carves no layout on a GPU whose mode is still pending.
author:
  - gpuops maintainers (@gpuops)
extends_documentation_fragment:
  - gpuops.vgpu.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: posix
options:
  gpus:
    description: GPU indexes to manage; all GPUs when unset.
    type: list
    elements: int
  mig_mode:
    description: MIG mode to set; unset keeps it (a O(layout) implies C(enabled)).
    type: str
    choices: [enabled, disabled]
  layout:
    description:
      - The GPU instances each selected GPU should hold. A named layout (C(all-1g.10gb), C(all-3g.40gb),
        C(all-balanced)) or a list of profile names (C(3g.40gb)) or ids (C(9)).
      - Unset leaves the instances as they are.
    type: raw
  gpu_reset:
    description: Reset a GPU whose MIG mode change is pending (no process may use it), so the change takes effect.
    type: bool
    default: false
  path:
    description: The nvidia-smi to run; found in PATH and the driver's usual places when unset.
    type: path
notes:
  - Profiles, instance counts and placements per GPU come from NVIDIA's MIG user guide; see docs/kubernetes.md.
"""

EXAMPLES = r"""
- name: Seven 1g.10gb instances on every H100 of the node
  gpuops.vgpu.nvidia_mig:
    layout: all-1g.10gb
    gpu_reset: true

- name: One 4g.40gb and one 3g.40gb on GPU 0
  gpuops.vgpu.nvidia_mig:
    gpus: [0]
    layout: [4g.40gb, 3g.40gb]

- name: MIG off again
  gpuops.vgpu.nvidia_mig:
    mig_mode: disabled
    gpu_reset: true
"""

RETURN = r"""
gpus:
  description: Every GPU after the run (in check mode, as it would be), with its MIG state and instances.
  returned: always
  type: list
  elements: dict
reset_required:
  description: A managed GPU's MIG mode change is pending until a GPU reset or a reboot.
  returned: always
  type: bool
commands:
  description: The nvidia-smi commands that changed something, in order.
  returned: always
  type: list
  elements: str
"""

from ansible_collections.gpuops.vgpu.plugins.module_utils._module_base import Host, run_module
from ansible_collections.gpuops.vgpu.plugins.module_utils.mig._mig import nvidia_mig


def argument_spec():
    return dict(
        gpus=dict(type="list", elements="int"),
        mig_mode=dict(type="str", choices=["enabled", "disabled"]),
        layout=dict(type="raw"),
        gpu_reset=dict(type="bool", default=False),
        path=dict(type="path"),
    )


def main():
    run_module(argument_spec(), nvidia_mig, client=Host, supports_check_mode=True)


if __name__ == "__main__":
    main()
