# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""CUDA toolkits and the environment that finds them, cuDNN, and the NVIDIA Container Toolkit.

Standard library only and Python 3.8 syntax: it runs on the guest.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

CUDA_ROOT = "/usr/local"
CUDA_LINK = "/usr/local/cuda"
ETC_ENVIRONMENT = "/etc/environment"
LD_SO_CONF_DIR = "/etc/ld.so.conf.d"
PROFILE_D = "/etc/profile.d"
# Where cuDNN's packages put cudnn_version.h (the toolkits' include directories come first).
CUDNN_HEADER_DIRS = ("/usr/include", "/usr/include/x86_64-linux-gnu")
CUDNN_PACKAGE_RE = re.compile(r"^(lib)?cudnn")
CONTAINER_TOOLKIT_PACKAGE_RE = re.compile(r"^(lib)?nvidia-container")

_VERSION_TXT_RE = re.compile(r"CUDA Version (\d+(?:\.\d+)+)")
_CUDNN_DEFINE_RE = re.compile(r"^\s*#\s*define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+(\d+)", re.M)
_CTK_VERSION_RE = re.compile(r"version\s+v?(\d+(?:\.\d+)+)")


def read_cuda(guest):
    """Toolkits under /usr/local/cuda-*, the /usr/local/cuda link, and where PATH and the loader find CUDA.

    ``on_path`` is the first toolkit whose ``nvcc`` is on the PATH of /etc/environment (what login sessions get),
    else on the module's own PATH; ``source`` says which.
    """
    files = guest.files
    toolkits = [_toolkit(files, path) for path in files.glob(CUDA_ROOT + "/cuda-*") if files.is_dir(path)]
    env_path = etc_environment_path(files)
    return {
        "toolkits": toolkits,
        "link": _link(files, toolkits),
        "etc_environment_path": env_path,
        "on_path": _on_path(files, toolkits, env_path, guest.path_dirs),
        "profile_d": [path for path in files.glob(PROFILE_D + "/*.sh") if "/cuda" in (files.read(path) or "")],
        "ld_so_conf": _loader_paths(files),
    }


def _toolkit(files, path):
    version, nvcc_version = None, None
    text = files.read(path + "/version.json")
    if text is not None:
        try:
            data = json.loads(text)
            version = (data.get("cuda") or {}).get("version")
            nvcc_version = (data.get("cuda_nvcc") or {}).get("version")
        except (ValueError, AttributeError):
            pass
    else:
        match = _VERSION_TXT_RE.search(files.read(path + "/version.txt") or "")
        version = match.group(1) if match else None
    return {
        "path": path,
        "series": os.path.basename(path)[len("cuda-"):],
        "version": version,
        "nvcc_version": nvcc_version,
        "nvcc": files.is_executable(path + "/bin/nvcc"),
    }


def _find(toolkits, path):
    return next((toolkit for toolkit in toolkits if toolkit["path"] == path), None)


def _link(files, toolkits):
    if not files.exists(CUDA_LINK):
        return {"path": CUDA_LINK, "exists": False, "target": None, "version": None}
    target = files.resolve(CUDA_LINK)
    found = _find(toolkits, target)
    return {"path": CUDA_LINK, "exists": True, "target": target if target != CUDA_LINK else None,
            "version": found["version"] if found else None}


def etc_environment_path(files):
    """The directories of PATH in /etc/environment, or None when it sets no PATH."""
    value = None
    for line in files.lines(ETC_ENVIRONMENT):
        line = line.strip()
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        if line.startswith("PATH="):
            value = line[len("PATH="):].strip().strip("\"'")
    return None if value is None else [part for part in value.split(":") if part]


def _on_path(files, toolkits, env_path, process_path):
    for source, dirs in (("/etc/environment", env_path or []), ("PATH", process_path)):
        for directory in dirs:
            nvcc = directory.rstrip("/") + "/nvcc"
            if directory.startswith("/") and files.is_executable(nvcc):
                # A bin directory of links (/usr/local/bin/nvcc) names no toolkit; the toolkit its nvcc is in does.
                home = os.path.dirname(os.path.dirname(files.resolve(nvcc) if files.is_link(nvcc) else nvcc))
                found = _find(toolkits, files.resolve(home))
                return {"nvcc": nvcc, "home": home, "toolkit": found["path"] if found else None,
                        "version": found["version"] if found else None, "source": source}
    return None


def _loader_paths(files):
    """/etc/ld.so.conf.d files that add a CUDA directory, with those directories."""
    found = []
    for path in files.glob(LD_SO_CONF_DIR + "/*.conf"):
        dirs = [line.strip() for line in files.lines(path) if "cuda" in line and not line.strip().startswith("#")]
        if dirs:
            found.append({"path": path, "dirs": dirs})
    return found


def read_cudnn(guest, packages):
    """cuDNN's ``version`` (of the header in the toolkit /usr/local/cuda points to, else the first found), every
    cudnn_version.h with its version, and the cuDNN packages."""
    files = guest.files
    dirs = []
    if files.exists(CUDA_LINK):
        dirs.append(files.resolve(CUDA_LINK) + "/include")
    dirs.extend(path + "/include" for path in files.glob(CUDA_ROOT + "/cuda-*"))
    dirs.extend(CUDNN_HEADER_DIRS)
    headers = []
    for directory in _unique(dirs):
        path = directory + "/cudnn_version.h"
        text = files.read(path)
        if text is not None:
            headers.append({"path": path, "version": cudnn_header_version(text)})
    versions = [header["version"] for header in headers if header["version"]]
    return {
        "version": versions[0] if versions else None,
        "headers": headers,
        "packages": dict((name, packages[name]) for name in packages if CUDNN_PACKAGE_RE.match(name)),
    }


def cudnn_header_version(text):
    """``'8.9.7'`` from cudnn_version.h's CUDNN_MAJOR, CUDNN_MINOR and CUDNN_PATCHLEVEL; None when one is missing."""
    numbers = dict(_CUDNN_DEFINE_RE.findall(text))
    if len(numbers) != 3:
        return None
    return "%s.%s.%s" % (numbers["MAJOR"], numbers["MINOR"], numbers["PATCHLEVEL"])


def _unique(items):
    seen = set()
    return [item for item in items if not (item in seen or seen.add(item))]


def read_container_toolkit(guest, packages):
    """The NVIDIA Container Toolkit: ``nvidia-ctk`` and its version, and its packages."""
    ctk = guest.which("nvidia-ctk")
    version = None
    if ctk:
        match = _CTK_VERSION_RE.search(guest.output([ctk, "--version"]))
        version = match.group(1) if match else None
    owned = dict((name, packages[name]) for name in packages if CONTAINER_TOOLKIT_PACKAGE_RE.match(name))
    return {"installed": ctk is not None or bool(owned), "path": ctk, "version": version, "packages": owned}
