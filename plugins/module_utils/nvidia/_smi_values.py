# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi's values: error kinds and their hints, N/A words, numbers, versions and license texts.

Standard library only and Python 3.8 syntax: it also runs on ESXi's Python and on minimal guests. The public names
are re-exported by ``module_utils/nvidia_smi.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

ERROR_KINDS = {
    "not_installed": "nvidia-smi or the NVML library it needs is not installed.",
    "driver_unreachable": "nvidia-smi could not talk to the NVIDIA kernel driver.",
    "no_devices": "The driver is loaded but sees no GPU.",
    "driver_library_mismatch": "The loaded kernel module and the NVML library are of different versions.",
    "gpu_lost": "A GPU fell off the bus or is otherwise inaccessible.",
    "not_supported": "This nvidia-smi, driver or GPU does not support the command (e.g. vgpu on a non-vGPU host).",
    "command_failed": "nvidia-smi exited with an error this parser does not recognise.",
    "unparsable": "The output is not in the format the parser expects.",
}

HINTS = {
    "not_installed": "Install the NVIDIA driver (the vGPU Manager VIB on ESXi, the GRID driver in a guest) or pass "
                     "the path of nvidia-smi.",
    "driver_unreachable": "Check that the nvidia kernel module is loaded (lsmod on Linux, 'esxcli software vib list' "
                          "and vmkload_mod -l on ESXi) and that the host was rebooted after the driver install.",
    "no_devices": "Check that the GPU is visible on the PCI bus (lspci), that the BIOS enables above-4G decoding and "
                  "SR-IOV, and that the GPU is not passed through to a VM.",
    "driver_library_mismatch": "Reboot (or reload the nvidia modules) after a driver upgrade so that the kernel "
                               "module and the libraries match.",
    "gpu_lost": "Reboot the host to recover the GPU and check the BMC's event log for hardware errors.",
    "not_supported": "Leave this command out of the gather list for this host.",
    "command_failed": "Run the same nvidia-smi command on the host to see the full error.",
    "unparsable": "Report the nvidia-smi version and its output to the collection's maintainers.",
}

# Kinds that mean "no usable NVIDIA stack here" rather than a fault of this code.
MISSING_KINDS = ("not_installed", "driver_unreachable", "no_devices", "driver_library_mismatch")

_ERROR_PATTERNS = (
    ("driver_library_mismatch", r"Driver/library version mismatch"),
    ("driver_unreachable", r"couldn't communicate with the NVIDIA driver"),
    ("no_devices", r"^No devices were found"),
    ("gpu_lost", r"GPU is lost|fallen off the bus"),
    ("not_installed", r"couldn't find libnvidia-ml|NVML Shared Library Not Found|command not found"
                      r"|No such file or directory"),
    ("driver_unreachable", r"Failed to initialize NVML"),
    ("not_supported", r"No supported devices in vGPU mode|Not supported devices in vGPU mode"
                      r"|No MIG-enabled devices found|Invalid combination of input arguments"
                      r"|^ERROR: Option .* is missing its value"),
)
_ERROR_RES = tuple((kind, re.compile(pattern, re.I | re.M)) for kind, pattern in _ERROR_PATTERNS)

# nvidia-smi exits with the NVML return code; used when the text is not recognised.
_RC_KINDS = {2: "not_supported", 3: "not_supported", 9: "driver_unreachable", 12: "not_installed",
             15: "gpu_lost", 18: "driver_library_mismatch", 127: "not_installed"}

_NA = frozenset(("", "n/a", "[n/a]", "not found", "not supported", "[not supported]", "unknown error",
                 "[unknown error]", "insufficient permissions", "[insufficient permissions]",
                 "requested functionality has been deprecated"))

_ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_BUS_ID = r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]"
_GPU_HEADER_RE = re.compile(r"^GPU (%s)$" % _BUS_ID)
_GPU_LINE_RE = re.compile(r"^GPU (\d+): (.*?) \(UUID: ([^)]+)\)$")
_MIG_LINE_RE = re.compile(r"^MIG (\S+)\s+Device\s+(\d+): \(UUID: ([^)]+)\)$")
_EXPIRY_RE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})\s+(\d{1,2}):(\d{1,2}):(\d{1,2})")
_NUMBER_RE = re.compile(r"^(-?\d+(?:\.\d+)?)(?:\s*[A-Za-z%/]+)?$")


class NvidiaSmiError(Exception):
    """nvidia-smi failed or printed something that cannot be parsed.

    ``kind`` is one of ``ERROR_KINDS``; ``message`` carries nvidia-smi's own words; ``rc`` and ``command`` are set
    when the error comes from running the command.
    """

    def __init__(self, kind, message, rc=None, command=None):
        super(NvidiaSmiError, self).__init__(message)
        self.kind = kind
        self.message = message
        self.rc = rc
        self.command = command

    @property
    def hint(self):
        return HINTS.get(self.kind)

    def as_dict(self):
        return {"kind": self.kind, "msg": self.message, "rc": self.rc, "command": self.command}


def detect_error(text, rc=None):
    """Return the ``NvidiaSmiError`` that ``text`` (and the exit code ``rc``) reports, or None.

    Only call it on output that did not parse: data such as ``Fan Speed : Not Supported`` would match otherwise.
    """
    text = (text or "").strip()
    for kind, regex in _ERROR_RES:
        if regex.search(text):
            return NvidiaSmiError(kind, _own_words(text), rc=rc)
    if rc:
        kind = _RC_KINDS.get(rc, "command_failed")
        return NvidiaSmiError(kind, _own_words(text) or "nvidia-smi exited with %d and printed nothing" % rc, rc=rc)
    return None


def _own_words(text, limit=600):
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " ".join(lines)[:limit]


def _fail(text, what):
    """The error ``text`` reports, else ``unparsable``: used when output lacks the structure ``what`` names."""
    found = detect_error(text)
    if found is not None:
        raise found
    sample = _own_words(text, 200) or "(empty output)"
    raise NvidiaSmiError("unparsable", "Not %s output: %s" % (what, sample))


# --- values -----------------------------------------------------------------------------------------------------

def _clean(value):
    if value is None:
        return None
    value = value.strip()
    return None if value.lower() in _NA else value


def _number(value, kind=int):
    """``'81559 MiB'`` -> 81559, ``'69.85 W'`` -> 69.85 (with kind=float), N/A -> None."""
    value = _clean(value)
    if value is None:
        return None
    match = _NUMBER_RE.match(value)
    if not match:
        return None
    number = float(match.group(1))
    return int(number) if kind is int else number


def _enabled(value):
    value = _clean(value)
    if value is None:
        return None
    return {"enabled": True, "disabled": False}.get(value.lower())


def _version(value):
    """The version without annotations: ``'610.57.04 [Deprecated; ...]'`` -> ``'610.57.04'``."""
    value = _clean(value)
    if value is None:
        return None
    return _clean(value.split("[", 1)[0]) if "[" in value else value


def _license(value):
    """``'Licensed (Expiry: 2022-5-27 0:8:28 GMT)'`` -> ``('Licensed', '2022-05-27T00:08:28Z')``."""
    value = _clean(value)
    if value is None:
        return None, None
    status, expiry = value, None
    match = re.match(r"^(.*?)\s*\(Expiry:\s*(.*)\)\s*$", value)
    if match:
        status = _clean(match.group(1))
        found = _EXPIRY_RE.search(match.group(2))
        if found:
            expiry = "%04d-%02d-%02dT%02d:%02d:%02dZ" % tuple(int(part) for part in found.groups())
    return status, expiry


def _license_fields(product, status_text, block_present):
    status, expiry = _license(status_text)
    return {
        "license_product": _clean(product),
        "license_status": status,
        "licensed": (status == "Licensed") if block_present and status is not None else None,
        "license_expiry": expiry,
    }


# --- one tree for the XML and the text forms --------------------------------------------------------------------

def _key(label):
    """``'ECC Mode'`` and ``'Ecc Mode'`` -> ``'ecc_mode'``, the same as the XML tag ``ecc_mode``."""
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")
