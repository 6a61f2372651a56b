# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write the collection's vGPU catalog as JSON for the lab's vCenter simulator.

    export_catalog.py <out.json>        (- writes to stdout)

Loads plugins/module_utils/nvidia/_catalog.py by its file path, so it runs from a checkout without the collection being
installed. The output has one entry per GPU model:

    {"gpus": {"P40": {"device_name": "Tesla P40", "pci_device_id": "0x1b38", "framebuffer_mib": 24576,
                      "architecture": "pascal", "mig_capable": false, "mixed_size_capable": false,
                      "gpus_per_board": 1, "last_vgpu_release": "16",
                      "profiles": [{"name": "grid_p40-8q", "framebuffer_mib": 8192, "series": "Q",
                                    "max_per_gpu": 3, "sharing": "timeSliced", "profile_class": "quadro",
                                    "mixed_size_placements": null}, ...]}}}
"""

import importlib.util
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CATALOG = os.path.join(ROOT, "plugins", "module_utils", "nvidia", "_catalog.py")

GPU_KEYS = ("device_name", "pci_device_id", "framebuffer_mib", "architecture", "mig_capable", "mixed_size_capable",
            "gpus_per_board", "last_vgpu_release")
PROFILE_KEYS = ("name", "framebuffer_mib", "series", "max_per_gpu", "sharing", "profile_class",
                "mixed_size_placements")


def load_catalog(path=CATALOG):
    spec = importlib.util.spec_from_file_location("gpuops_vgpu_catalog", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def export(catalog):
    gpus = {}
    for model_id, model in sorted(catalog.gpu_models().items()):
        entry = dict((key, model[key]) for key in GPU_KEYS)
        entry["profiles"] = [dict((key, profile[key]) for key in PROFILE_KEYS) for profile in model["profiles"]]
        gpus[model_id] = entry
    return {"gpus": gpus}


def write(document, target):
    text = json.dumps(document, indent=1, sort_keys=True) + "\n"
    if target == "-":
        sys.stdout.write(text)
        return
    directory = os.path.dirname(os.path.abspath(target))
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".catalog-", suffix=".json")
    try:
        with os.fdopen(handle, "w") as stream:
            stream.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp creates 0600; give the file the usual mode
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] in ("-h", "--help"):
        sys.stderr.write(__doc__)
        return 2
    write(export(load_catalog()), args[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
