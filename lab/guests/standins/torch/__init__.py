# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lab stand-in for PyTorch's CUDA probe (a CUDA 11.6 build).

`torch.cuda.is_available()` is true when the guest's driver answers with a GPU, as the real call is when the
CUDA driver initialises; the device name is the one the driver reports.
"""
import subprocess

__version__ = "1.13.1+cu116"


class version(object):
    cuda = "11.6"


def _query():
    try:
        query = subprocess.run(["nvidia-smi", "-q"], capture_output=True, text=True)
    except OSError:
        return None
    return query.stdout if query.returncode == 0 else None


class cuda(object):
    @staticmethod
    def is_available():
        return _query() is not None

    @staticmethod
    def device_count():
        return 1 if _query() is not None else 0

    @staticmethod
    def get_device_name(index=0):
        text = _query() or ""
        for line in text.splitlines():
            if line.strip().startswith("Product Name"):
                return line.split(" : ", 1)[1].strip()
        raise RuntimeError("No CUDA GPUs are available")
