# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probes of a guest read, apart from the probes themselves: gpu_guest_info's action plugin needs only the names
and is loaded in a worker process of its own for every task that reads a guest."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# In the order they run and are returned.
PROBES = ("os", "pci", "packages", "driver", "license", "nvidia_smi", "cuda", "cudnn", "container_toolkit")
# Read only when asked for by name, never by a read of every probe: nvidia-smi's topo -m and nvlink -s, which only a
# machine that owns several GPUs needs (the doctor's read of a bare-metal server).
ON_REQUEST = ("topology",)
ALL_PROBES = PROBES + ON_REQUEST
