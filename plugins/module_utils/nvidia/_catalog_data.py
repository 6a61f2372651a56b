# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The data behind ``_catalog``: GPU models and their vGPU types, driver branches, CUDA driver minimums.

Plain literals only (stdlib, no imports) so the catalog also loads on ESXi and minimal guests. ``_catalog`` builds
the public dictionaries from these tables; nothing else should read them directly.

Sources, so each value can be checked again:

* P4, P40, T4 type lists and maxima: the virtual GPU type tables of NVIDIA's vGPU user guide.
* Q- and C-series maxima of the other GPUs, MIG-backed types, PCI device ids: NVIDIA's vGPU device manager
  configuration generated from the vGPU Manager's ``vgpuConfig.xml``; device ids also from the PCI ID database.
* A- and B-series type names: ``vgpuConfig.xml`` of the R510 vGPU Manager (V100, A10, A16, A40) and the types a
  recent vGPU Manager offers on an L40S; the L4's are assumed to mirror the A10's (same 24 GB layout). Their maxima
  are taken to be the Q maximum of the same framebuffer size, as on the GPUs where NVIDIA publishes both. Being
  inferred, they sit in ``types_unconfirmed``.
* Mixed-size mode (``mixed_size_placements``): the table "vGPU Placements for GPUs in Mixed-Size Mode" of NVIDIA's
  vGPU User Guide 19.0, as transcribed for the C-series types of the GPUs used with VMware Cloud Foundation in
  frankdenneman.ai's vgpu-catalog.json (repository frankdenneman/frankdenneman.github.io, 2026-02). Keys are a
  time-sliced type's framebuffer in GB, values the placement IDs: the GB offsets in the GPU's framebuffer where a vGPU
  of that size may start; it then occupies [offset, offset + size). The maximum per GPU in mixed-size mode is the
  number of placement IDs. Q, A and B types are taken to share the placements of the C type of the same size (not
  confirmed); sizes without an entry (1, 2 and 3 GB on L4 and L40S) have no known placement and are not offered in
  mixed-size mode here. A100 and H100 being listed confirms that they run mixed-size mode; other models' support is
  not confirmed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# One entry per physical GPU (an A16 board carries four of them, each its own entry in vSphere).
# ``types``: (type suffix, maximum per GPU) confirmed by a source above; ``types_unconfirmed``: not (yet) confirmed.
# ``mixed_size_placements``: framebuffer GB -> placement IDs in mixed-size mode (see the sources above).
# A type suffix is what follows ``grid_<profile_prefix>-``: ``8q``, ``2b4``, ``3-20c`` (MIG: slices-GB), ``1-5cme``.
GPUS = {
    "P4": {
        "device_name": "Tesla P4",
        "aliases": ("GP104GL [Tesla P4]",),
        "pci_device_id": 0x1BB3,
        "profile_prefix": "p4",
        "framebuffer_mib": 8192,
        "gpus_per_board": 1,
        "architecture": "pascal",
        "mig_capable": False,
        "mixed_size_capable": False,
        "mixed_size_confirmed": True,
        "last_vgpu_release": "16",
        "types": (
            ("8q", 1), ("4q", 2), ("2q", 4), ("1q", 8),
            ("8a", 1), ("4a", 2), ("2a", 4), ("1a", 8),
            ("2b", 4), ("2b4", 4), ("1b", 8), ("1b4", 8),
            ("8c", 1), ("4c", 2),
        ),
        "types_unconfirmed": (),
    },
    "P40": {
        "device_name": "Tesla P40",
        "aliases": ("GP102GL [Tesla P40]",),
        "pci_device_id": 0x1B38,
        "profile_prefix": "p40",
        "framebuffer_mib": 24576,
        "gpus_per_board": 1,
        "architecture": "pascal",
        "mig_capable": False,
        "mixed_size_capable": False,
        "mixed_size_confirmed": True,
        "last_vgpu_release": "16",
        "types": (
            ("24q", 1), ("12q", 2), ("8q", 3), ("6q", 4), ("4q", 6), ("3q", 8), ("2q", 12), ("1q", 24),
            ("24a", 1), ("12a", 2), ("8a", 3), ("6a", 4), ("4a", 6), ("3a", 8), ("2a", 12), ("1a", 24),
            ("2b", 12), ("2b4", 12), ("1b", 24), ("1b4", 24),
            ("24c", 1), ("12c", 2), ("8c", 3), ("6c", 4), ("4c", 6),
        ),
        "types_unconfirmed": (),
    },
    "T4": {
        "device_name": "Tesla T4",
        "aliases": ("TU104GL [Tesla T4]",),
        "pci_device_id": 0x1EB8,
        "profile_prefix": "t4",
        "framebuffer_mib": 16384,
        "gpus_per_board": 1,
        "architecture": "turing",
        "mig_capable": False,
        "mixed_size_capable": False,
        "mixed_size_confirmed": False,
        "last_vgpu_release": None,
        "types": (
            ("16q", 1), ("8q", 2), ("4q", 4), ("2q", 8), ("1q", 16),
            ("16a", 1), ("8a", 2), ("4a", 4), ("2a", 8), ("1a", 16),
            ("2b", 8), ("2b4", 8), ("1b", 16), ("1b4", 16),
            ("16c", 1), ("8c", 2), ("4c", 4),
        ),
        "types_unconfirmed": (),
    },
    "V100-16": {
        "device_name": "Tesla V100-PCIE-16GB",
        "aliases": ("GV100GL [Tesla V100 PCIe 16GB]",),
        "pci_device_id": 0x1DB4,
        "profile_prefix": "v100",
        "framebuffer_mib": 16384,
        "gpus_per_board": 1,
        "architecture": "volta",
        "mig_capable": False,
        "mixed_size_capable": False,
        "mixed_size_confirmed": False,
        "last_vgpu_release": "19",
        "types": (
            ("16q", 1), ("8q", 2), ("4q", 4), ("2q", 8), ("1q", 16),
            ("16c", 1), ("8c", 2), ("4c", 4),
        ),
        "types_unconfirmed": (
            ("16a", 1), ("8a", 2), ("4a", 4), ("2a", 8), ("1a", 16),
            ("2b", 8), ("2b4", 8), ("1b", 16), ("1b4", 16),
        ),
    },
    "V100-32": {
        "device_name": "Tesla V100-PCIE-32GB",
        "aliases": ("GV100GL [Tesla V100 PCIe 32GB]",),
        "pci_device_id": 0x1DB6,
        "profile_prefix": "v100d",
        "framebuffer_mib": 32768,
        "gpus_per_board": 1,
        "architecture": "volta",
        "mig_capable": False,
        "mixed_size_capable": False,
        "mixed_size_confirmed": False,
        "last_vgpu_release": "19",
        "types": (
            ("32q", 1), ("16q", 2), ("8q", 4), ("4q", 8), ("2q", 16), ("1q", 32),
            ("32c", 1), ("16c", 2), ("8c", 4), ("4c", 8),
        ),
        "types_unconfirmed": (
            ("32a", 1), ("16a", 2), ("8a", 4), ("4a", 8), ("2a", 16), ("1a", 32),
            ("2b", 16), ("2b4", 16), ("1b", 32), ("1b4", 32),
        ),
    },
    "A10": {
        "device_name": "NVIDIA A10",
        "aliases": ("GA102GL [A10]",),
        "pci_device_id": 0x2236,
        "profile_prefix": "a10",
        "framebuffer_mib": 24576,
        "gpus_per_board": 1,
        "architecture": "ampere",
        "mig_capable": False,
        "mixed_size_capable": False,
        "mixed_size_confirmed": False,
        "last_vgpu_release": None,
        "types": (
            ("24q", 1), ("12q", 2), ("8q", 3), ("6q", 4), ("4q", 6), ("3q", 8), ("2q", 12), ("1q", 24),
            ("24c", 1), ("12c", 2), ("8c", 3), ("6c", 4), ("4c", 6),
        ),
        "types_unconfirmed": (
            ("24a", 1), ("12a", 2), ("8a", 3), ("6a", 4), ("4a", 6), ("3a", 8), ("2a", 12), ("1a", 24),
            ("2b", 12), ("1b", 24),
        ),
    },
    "A16": {
        "device_name": "NVIDIA A16",
        "aliases": (),
        # The A2 has the same device id (lspci: "GA107GL [A2 / A16]"); only the name tells them apart.
        "pci_device_id": 0x25B6,
        "pci_device_id_shared": True,
        "profile_prefix": "a16",
        "framebuffer_mib": 16384,
        "gpus_per_board": 4,
        "architecture": "ampere",
        "mig_capable": False,
        "mixed_size_capable": False,
        "mixed_size_confirmed": False,
        "last_vgpu_release": None,
        "types": (
            ("16q", 1), ("8q", 2), ("4q", 4), ("2q", 8), ("1q", 16),
            ("16c", 1), ("8c", 2), ("4c", 4),
        ),
        "types_unconfirmed": (
            ("16a", 1), ("8a", 2), ("4a", 4), ("2a", 8), ("1a", 16),
            ("2b", 8), ("1b", 16),
        ),
    },
    "A40": {
        "device_name": "NVIDIA A40",
        "aliases": ("GA102GL [A40]",),
        "pci_device_id": 0x2235,
        "profile_prefix": "a40",
        "framebuffer_mib": 49152,
        "gpus_per_board": 1,
        "architecture": "ampere",
        "mig_capable": False,
        "mixed_size_capable": False,
        "mixed_size_confirmed": False,
        "last_vgpu_release": None,
        "types": (
            ("48q", 1), ("24q", 2), ("16q", 3), ("12q", 4), ("8q", 6), ("6q", 8), ("4q", 12), ("3q", 16),
            ("2q", 24), ("1q", 32),
            ("48c", 1), ("24c", 2), ("16c", 3), ("12c", 4), ("8c", 6), ("6c", 8), ("4c", 12),
        ),
        "types_unconfirmed": (
            ("48a", 1), ("24a", 2), ("16a", 3), ("12a", 4), ("8a", 6), ("6a", 8), ("4a", 12), ("3a", 16),
            ("2a", 24), ("1a", 32),
            ("2b", 24), ("1b", 32),
        ),
    },
    "A100-40": {
        "device_name": "NVIDIA A100-PCIE-40GB",
        "aliases": ("GA100 [A100 PCIe 40GB]", "NVIDIA A100 40GB PCIe"),
        "pci_device_id": 0x20F1,
        "profile_prefix": "a100",
        "framebuffer_mib": 40960,
        "gpus_per_board": 1,
        "architecture": "ampere",
        "mig_capable": True,
        "mixed_size_capable": True,
        "mixed_size_confirmed": True,
        "last_vgpu_release": None,
        "mixed_size_placements": {
            4: (0, 6, 10, 16, 20, 26, 30, 36), 5: (0, 5, 10, 15, 20, 25, 30, 35), 8: (0, 12, 20, 32),
            10: (0, 10, 20, 30), 20: (0, 20), 40: (0,),
        },
        "types": (
            ("40c", 1), ("20c", 2), ("10c", 4), ("8c", 5), ("5c", 8), ("4c", 10),
            ("7-40c", 1), ("4-20c", 1), ("3-20c", 2), ("2-10c", 3), ("1-10c", 4), ("1-5c", 7), ("1-5cme", 1),
        ),
        "types_unconfirmed": (),
    },
    "A100-80": {
        "device_name": "NVIDIA A100 80GB PCIe",
        "aliases": ("GA100 [A100 PCIe 80GB]", "NVIDIA A100-PCIE-80GB"),
        "pci_device_id": 0x20B5,
        "profile_prefix": "a100d",
        "framebuffer_mib": 81920,
        "gpus_per_board": 1,
        "architecture": "ampere",
        "mig_capable": True,
        "mixed_size_capable": True,
        "mixed_size_confirmed": True,
        "last_vgpu_release": None,
        "mixed_size_placements": {
            4: (0, 6, 10, 16, 20, 26, 30, 36, 40, 46, 50, 56, 60, 66, 70, 76),
            8: (0, 12, 20, 32, 40, 52, 60, 72), 10: (0, 10, 20, 30, 40, 50, 60, 70), 16: (0, 24, 40, 64),
            20: (0, 20, 40, 60), 40: (0, 40), 80: (0,),
        },
        "types": (
            ("80c", 1), ("40c", 2), ("20c", 4), ("16c", 5), ("10c", 8), ("8c", 10), ("4c", 20),
            ("7-80c", 1), ("4-40c", 1), ("3-40c", 2), ("2-20c", 3), ("1-20c", 4), ("1-10c", 7), ("1-10cme", 1),
        ),
        "types_unconfirmed": (),
    },
    "L4": {
        "device_name": "NVIDIA L4",
        "aliases": ("AD104GL [L4]",),
        "pci_device_id": 0x27B8,
        "profile_prefix": "l4",
        "framebuffer_mib": 24576,
        "gpus_per_board": 1,
        "architecture": "ada",
        "mig_capable": False,
        "mixed_size_capable": True,
        "mixed_size_confirmed": True,
        "last_vgpu_release": None,
        "mixed_size_placements": {
            4: (0, 8, 12, 20), 6: (0, 6, 12, 18), 8: (0, 16), 12: (0, 12), 24: (0,),
        },
        "types": (
            ("24q", 1), ("12q", 2), ("8q", 3), ("6q", 4), ("4q", 6), ("3q", 8), ("2q", 12), ("1q", 24),
            ("24c", 1), ("12c", 2), ("8c", 3), ("6c", 4), ("4c", 6),
        ),
        "types_unconfirmed": (
            ("24a", 1), ("12a", 2), ("8a", 3), ("6a", 4), ("4a", 6), ("3a", 8), ("2a", 12), ("1a", 24),
            ("2b", 12), ("1b", 24),
        ),
    },
    "L40S": {
        "device_name": "NVIDIA L40S",
        "aliases": ("AD102GL [L40S]",),
        "pci_device_id": 0x26B9,
        "profile_prefix": "l40s",
        "framebuffer_mib": 49152,
        "gpus_per_board": 1,
        "architecture": "ada",
        "mig_capable": False,
        "mixed_size_capable": True,
        "mixed_size_confirmed": True,
        "last_vgpu_release": None,
        "mixed_size_placements": {
            4: (0, 8, 12, 20, 24, 32, 36, 44), 6: (0, 6, 12, 18, 24, 30, 36, 42), 8: (0, 16, 24, 40),
            12: (0, 12, 24, 36), 16: (0, 32), 24: (0, 24), 48: (0,),
        },
        "types": (
            ("48q", 1), ("24q", 2), ("16q", 3), ("12q", 4), ("8q", 6), ("6q", 8), ("4q", 12), ("3q", 16),
            ("2q", 24), ("1q", 32),
            ("48c", 1), ("24c", 2), ("16c", 3), ("12c", 4), ("8c", 6), ("6c", 8), ("4c", 12),
        ),
        "types_unconfirmed": (
            ("48a", 1), ("24a", 2), ("16a", 3), ("12a", 4), ("8a", 6), ("6a", 8), ("4a", 12), ("3a", 16),
            ("2a", 24), ("1a", 32),
            ("3b", 16), ("2b", 24), ("1b", 32),
        ),
    },
    "H100-80": {
        "device_name": "NVIDIA H100 PCIe",
        "aliases": ("GH100 [H100 PCIe]",),
        "pci_device_id": 0x2331,
        "profile_prefix": "h100",
        "framebuffer_mib": 81920,
        "gpus_per_board": 1,
        "architecture": "hopper",
        "mig_capable": True,
        "mixed_size_capable": True,
        "mixed_size_confirmed": True,
        "last_vgpu_release": None,
        "mixed_size_placements": {
            4: (0, 6, 10, 16, 20, 26, 30, 36, 40, 46, 50, 56, 60, 66, 70, 76),
            5: (0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75),
            8: (0, 12, 20, 32, 40, 52, 60, 72), 10: (0, 10, 20, 30, 40, 50, 60, 70), 16: (0, 24, 40, 64),
            20: (0, 20, 40, 60), 40: (0, 40), 80: (0,),
        },
        "types": (
            ("80c", 1), ("40c", 2), ("20c", 4), ("16c", 5), ("10c", 8), ("8c", 10), ("5c", 16), ("4c", 20),
            ("7-80c", 1), ("4-40c", 1), ("3-40c", 2), ("2-20c", 3), ("1-20c", 4), ("1-10c", 7), ("1-10cme", 1),
        ),
        "types_unconfirmed": (),
    },
    # The GPU of HGX H100 8-GPU boards (NVSwitch): PCI id 0x2330, types H100XM-<n>C from the vGPU for Compute type
    # tables for "NVIDIA H100 SXM5 80GB" (MIG-backed and time-sliced). The copy read lists 16C with 6 per GPU, which
    # 80 GB cannot hold; 5 is used, as for the H100 PCIe. Mixed-size placements were not found: mixed-size mode off.
    "H100-SXM5-80": {
        "device_name": "NVIDIA H100 80GB HBM3",
        "aliases": ("GH100 [H100 SXM5 80GB]",),
        "pci_device_id": 0x2330,
        "profile_prefix": "h100xm",
        "framebuffer_mib": 81920,
        "gpus_per_board": 1,
        "architecture": "hopper",
        "mig_capable": True,
        "mixed_size_capable": False,
        "mixed_size_confirmed": False,
        "last_vgpu_release": None,
        "mixed_size_placements": {},
        "types": (
            ("80c", 1), ("40c", 2), ("20c", 4), ("16c", 5), ("10c", 8), ("8c", 10), ("5c", 16), ("4c", 20),
            ("7-80c", 1), ("4-40c", 1), ("3-40c", 2), ("2-20c", 3), ("1-20c", 4), ("1-10c", 7), ("1-10cme", 1),
        ),
        "types_unconfirmed": (),
    },
}

# Tesla M6, M10 and M60 run CUDA only on their 8Q type (all other Q types there are graphics only).
CUDA_ONLY_8Q_GPUS = ("m6", "m10", "m60")

# vGPU software release -> driver branch. Host (vGPU Manager) and guest versions of one release differ in the
# last digits; the examples are the first and last (or notable) versions of each branch.
DRIVER_BRANCHES = (
    {"branch": 525, "vgpu_release": "15", "lts": False, "max_cuda": "12.0", "max_cuda_confirmed": True,
     "host_examples": ("525.60.12", "525.85.07", "525.105.14"),
     "guest_examples": ("525.60.13", "525.85.05", "525.105.17")},
    {"branch": 535, "vgpu_release": "16", "lts": True, "max_cuda": "12.2", "max_cuda_confirmed": True,
     "host_examples": ("535.54.06", "535.309.01"),
     "guest_examples": ("535.54.03", "535.309.01")},
    {"branch": 550, "vgpu_release": "17", "lts": False, "max_cuda": "12.4", "max_cuda_confirmed": True,
     "host_examples": ("550.54.10", "550.163.02"),
     "guest_examples": ("550.54.14", "550.163.01")},
    {"branch": 570, "vgpu_release": "18", "lts": False, "max_cuda": "12.8", "max_cuda_confirmed": True,
     "host_examples": ("570.124.03", "570.172.07"),
     "guest_examples": ("570.124.06", "570.172.08")},
    {"branch": 580, "vgpu_release": "19", "lts": True, "max_cuda": "13.0", "max_cuda_confirmed": True,
     "host_examples": ("580.65.05", "580.159.01"),
     "guest_examples": ("580.65.06", "580.159.03")},
    # Runs a 13.x toolkit; which minor is the highest is not confirmed yet, 13.0 is the floor.
    {"branch": 595, "vgpu_release": "20", "lts": False, "max_cuda": "13.0", "max_cuda_confirmed": False,
     "host_examples": ("595.58.02", "595.71.03"),
     "guest_examples": ("595.58.03", "595.71.05")},
)

# vGPU branches before the catalog's range, known only as far as the host/guest rule needs them: a vGPU 15
# manager accepts vGPU 14 (R510) guests, the vGPU 16 LTS manager the vGPU 13 LTS (R470) ones.
OLDER_BRANCHES = (
    {"branch": 470, "vgpu_release": "13", "lts": True},
    {"branch": 510, "vgpu_release": "14", "lts": False},
)

# Releases whose host bundle and guest driver upgrades name exactly: the NVIDIA Virtual GPU Manager and Linux guest
# driver of each, from "Virtual GPU Software R525 for VMware vSphere Release Notes" (15.2) and "Virtual GPU Software
# R535 for VMware vSphere Release Notes" (16.0), section 1.1 "NVIDIA vGPU Software Driver Versions"
# (https://docs.nvidia.com/vgpu/16.0/grid-vgpu-release-notes-vmware-vsphere/index.html). The manager/guest rule of
# section 1.2 (same release, previous branch, previous LTS branch) is the one _compatibility applies. The ESXi 8.0
# component is NVD-VGPU-800 with the 15.2 bundle's build suffix; that the 16.0 bundle carries the same suffix is not
# confirmed.
VGPU_RELEASE_DRIVERS = (
    {"release": "15.2", "branch": 525, "host": "525.105.14", "linux_guest": "525.105.17",
     "esxi8_component": ("NVD-VGPU-800", "525.105.14-1OEM.800.1.0.20613240")},
    {"release": "16.0", "branch": 535, "host": "535.54.06", "linux_guest": "535.54.03",
     "esxi8_component": ("NVD-VGPU-800", "535.54.06-1OEM.800.1.0.20613240")},
)

# CUDA toolkit (major, minor, update) -> minimum Linux x86_64 driver for full support ("toolkit driver version").
# An entry covers its update and the later ones of the same minor up to the next entry: (12, 6, 1) is "12.6 U1/U2",
# (12, 1, 0) is "12.1 GA/U1", (11, 5, 0) every 11.5 update. Newest first.
CUDA_DRIVER_MINIMUMS = (
    ((13, 0, 0), "580.65.06"),
    ((12, 9, 1), "575.57.08"),
    ((12, 9, 0), "575.51.03"),
    ((12, 8, 1), "570.124.06"),
    ((12, 8, 0), "570.26"),
    ((12, 6, 3), "560.35.05"),
    ((12, 6, 1), "560.35.03"),
    ((12, 6, 0), "560.28.03"),
    ((12, 5, 1), "555.42.06"),
    ((12, 5, 0), "555.42.02"),
    ((12, 4, 1), "550.54.15"),
    ((12, 4, 0), "550.54.14"),
    ((12, 3, 1), "545.23.08"),
    ((12, 3, 0), "545.23.06"),
    ((12, 2, 2), "535.104.05"),
    ((12, 2, 1), "535.86.09"),
    ((12, 2, 0), "535.54.03"),
    ((12, 1, 0), "530.30.02"),
    ((12, 0, 1), "525.85.12"),
    ((12, 0, 0), "525.60.13"),
    ((11, 8, 0), "520.61.05"),
    ((11, 7, 1), "515.48.07"),
    ((11, 7, 0), "515.43.04"),
    ((11, 6, 1), "510.47.03"),
    ((11, 6, 0), "510.39.01"),
    ((11, 5, 0), "495.29.05"),
    ((11, 4, 3), "470.82.01"),
    ((11, 4, 1), "470.57.02"),
    ((11, 4, 0), "470.42.01"),
    ((11, 3, 0), "465.19.01"),
    ((11, 2, 1), "460.32.03"),
    ((11, 2, 0), "460.27.03"),
    ((11, 1, 0), "455.23"),
    ((11, 0, 0), "450.51.05"),
)

# CUDA minor-version compatibility: a toolkit of this major runs (with reduced features) on drivers from here on.
CUDA_MINOR_COMPAT_MINIMUMS = {
    11: "450",
    12: "525",
    13: "580",
}
