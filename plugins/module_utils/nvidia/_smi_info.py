# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``nvidia_smi_info`` module's work: find nvidia-smi on the host and ``collect`` its facts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import (
    MISSING_KINDS,
    SEARCH_DIRS,
    NvidiaSmiError,
    collect,
)


def nvidia_smi_info(client, params, check_mode):
    """``nvidia_smi`` (and the facts if asked); a missing nvidia-smi or driver fails only with ``fail_on_missing``."""
    path = params["path"]
    try:
        path = _binary(client, path)

        def nvidia_smi(args):
            return client.run_command([path] + args, environ_update={"LC_ALL": "C"})

        facts = collect(nvidia_smi, params["gather"], params["query_format"])
        facts.update(present=True, path=path)
    except NvidiaSmiError as err:
        if params["fail_on_missing"] or err.kind not in MISSING_KINDS:
            details = dict((k, v) for k, v in err.as_dict().items() if k != "msg")
            raise GpuopsError(err.message, hint=err.hint, path=path, **details)
        facts = {"present": False, "kind": err.kind, "msg": err.message, "path": path, "gpus": [], "errors": {}}
    result = {"nvidia_smi": facts}
    if params["set_facts"]:
        result["ansible_facts"] = {"nvidia_smi": facts}
    return result


def _binary(client, path):
    if path:
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise NvidiaSmiError("not_installed", "No executable nvidia-smi at %s." % path)
        return path
    found = client.get_bin_path("nvidia-smi", opt_dirs=SEARCH_DIRS)
    if found is None:
        raise NvidiaSmiError("not_installed", "nvidia-smi is not in PATH nor in %s." % ", ".join(SEARCH_DIRS))
    return found
