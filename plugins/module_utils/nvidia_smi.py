# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers for every output of ``nvidia-smi`` the collection reads, and the collector behind ``nvidia_smi_info``.

Public API (see docs/nvidia-smi.md): ``parse_query``, ``parse_vgpu_query``, ``parse_topology``,
``parse_nvlink_status``, ``parse_nvlink_remote``, ``parse_mig``, ``parse_list``, ``parse_csv``, ``detect_error``,
``collect`` and ``NvidiaSmiError``. Standard library only and Python 3.8 syntax: this file also runs on ESXi's
Python and on minimal guests.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import re
import xml.etree.ElementTree as ET

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


class _Node(object):
    """A key, its value as printed (or None) and child nodes; keys are normalised with ``_key``."""

    __slots__ = ("key", "value", "children")

    def __init__(self, key, value=None):
        self.key = key
        self.value = value
        self.children = []

    def child(self, names):
        """First direct child named by ``names`` (``'a|b'``: a preferred over b)."""
        for name in names.split("|"):
            for node in self.children:
                if node.key == name:
                    return node
        return None

    def all(self, name):
        return [node for node in self.children if node.key == name]

    def find(self, names):
        """First descendant named by ``names``, depth first, ``'a|b'``: a preferred over b."""
        for name in names.split("|"):
            stack = list(reversed(self.children))
            while stack:
                node = stack.pop()
                if node.key == name:
                    return node
                stack.extend(reversed(node.children))
        return None

    def get(self, *path):
        node = self
        for names in path:
            node = node.child(names) if node is not None else None
        return node.value if node is not None else None


def _xml_tree(element):
    value = element.get("id") if element.tag == "gpu" else (element.text or "").strip()
    node = _Node(_key(element.tag), value or None)
    node.children = [_xml_tree(child) for child in element]
    return node


def _text_tree(lines):
    """Indentation tree of ``Key : value`` lines. Keys are split on the first `` : ``, never on a column."""
    root = _Node("")
    stack = [(-1, root)]
    for raw in lines:
        line = raw.rstrip()
        body = line.strip()
        if not body or body.startswith("====="):
            continue
        indent = len(line) - len(line.lstrip())
        key, sep, value = body.partition(" : ")
        if not sep:
            if body.endswith(" :"):
                key, value = body[:-2], ""
            else:
                value = None
        header = _GPU_HEADER_RE.match(key.strip()) if value is None else None
        node = _Node("gpu", header.group(1)) if header else _Node(_key(key), value.strip() if value else value)
        while stack[-1][0] >= indent:
            stack.pop()
        stack[-1][1].children.append(node)
        stack.append((indent, node))
    return root


# --- nvidia-smi -q / -q -x --------------------------------------------------------------------------------------

def parse_query(text):
    """Parse ``nvidia-smi -q -x`` (any DTD version, or none) or ``nvidia-smi -q``; both give the same shape."""
    text = (text or "").replace("\r\n", "\n")
    start = text.find("<nvidia_smi_log")
    if start >= 0:
        prolog = text.find("<?xml")
        start = prolog if 0 <= prolog < start else start
        try:
            root = _xml_tree(ET.fromstring(text[start:].strip()))
        except ET.ParseError as err:
            raise NvidiaSmiError("unparsable", "nvidia-smi -q -x printed invalid XML: %s" % err)
        return _query_facts(root, "xml", _leading_lines(text[:start]))
    marker = text.find("NVSMI LOG")
    lines = text.splitlines()
    if marker >= 0:
        head = text.rfind("\n", 0, marker) + 1
        lines = text[head:].splitlines()
        warnings = _leading_lines(text[:head])
    else:
        warnings = []
    root = _text_tree(lines)
    if root.child("driver_version") is None:
        _fail(text, "nvidia-smi -q")
    return _query_facts(root, "text", warnings)


def _leading_lines(text):
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("====")]


def _query_facts(root, fmt, warnings):
    gpus = [_gpu_facts(node, index) for index, node in enumerate(root.all("gpu"))]
    attached = _number(root.get("attached_gpus"))
    return {
        "format": fmt,
        "timestamp": _clean(root.get("timestamp")),
        "driver_version": _version(root.get("driver_version")) or _version(root.get("kmd_version")),
        "cuda_version": _version(root.get("cuda_version")) or _version(root.get("cuda_umd_version")),
        "kmd_version": _version(root.get("kmd_version")),
        "cuda_umd_version": _version(root.get("cuda_umd_version")),
        "attached_gpus": attached if attached is not None else len(gpus),
        "gpus": gpus,
        "warnings": warnings,
    }


def _gpu_facts(gpu, index):
    license_block = gpu.child("vgpu_software_licensed_product")
    facts = {
        "index": index,
        "pci_bus_id": _clean(gpu.get("pci", "pci_bus_id|bus_id")) or _clean(gpu.value),
        "name": _clean(gpu.get("product_name")),
        "uuid": _clean(gpu.get("uuid|gpu_uuid")),
        "serial": _clean(gpu.get("serial|serial_number")),
        "product_brand": _clean(gpu.get("product_brand")),
        "product_architecture": _clean(gpu.get("product_architecture")),
        "vbios_version": _clean(gpu.get("vbios_version")),
        "persistence_mode": _enabled(gpu.get("persistence_mode")),
        "driver_model_current": _clean(gpu.get("driver_model", "current_dm|current")),
        "compute_mode": _clean(gpu.get("compute_mode")),
        "performance_state": _clean(gpu.get("performance_state")),
        "memory_total_mib": _number(gpu.get("fb_memory_usage", "total")),
        "memory_used_mib": _number(gpu.get("fb_memory_usage", "used")),
        "temperature_gpu_c": _number(gpu.get("temperature", "gpu_temp|gpu_current_temp")),
        "temperature_memory_c": _number(gpu.get("temperature", "memory_temp|memory_current_temp")),
        "utilization_gpu_pct": _number(gpu.get("utilization", "gpu_util|gpu")),
        "utilization_memory_pct": _number(gpu.get("utilization", "memory_util|memory")),
        "ecc_mode_current": _enabled(gpu.get("ecc_mode", "current_ecc|current")),
        "ecc_mode_pending": _enabled(gpu.get("ecc_mode", "pending_ecc|pending")),
        "mig_mode_current": _enabled(gpu.get("mig_mode", "current_mig|current")),
        "mig_mode_pending": _enabled(gpu.get("mig_mode", "pending_mig|pending")),
        "mig_devices": _mig_devices(gpu),
        "virtualization_mode": _clean(gpu.get("gpu_virtualization_mode", "virtualization_mode")),
        "host_vgpu_mode": _clean(gpu.get("gpu_virtualization_mode", "host_vgpu_mode")),
        "processes": _processes(gpu.child("processes")),
    }
    facts.update(_power(gpu.child("gpu_power_readings|power_readings")))
    facts.update(_license_fields(
        license_block.get("licensed_product_name|product_name") if license_block else None,
        license_block.get("license_status") if license_block else None,
        license_block is not None))
    return facts


def _power(section):
    if section is None:
        return {"power_draw_w": None, "power_limit_w": None}
    # Same preference as --query-gpu power.draw: the average where the driver splits average and instant.
    draw = None
    for name in ("power_draw", "average_power_draw", "instant_power_draw", "instantaneous_power_draw"):
        node = section.child(name)
        draw = _number(node.value, float) if node is not None else None
        if draw is not None:
            break
    limit = section.find("current_power_limit|enforced_power_limit|power_limit")
    return {"power_draw_w": draw, "power_limit_w": _number(limit.value, float) if limit is not None else None}


def _mig_devices(gpu):
    holder = gpu.child("mig_devices") or gpu
    devices = []
    for node in holder.all("mig_device"):
        devices.append({
            "index": _number(node.get("index")),
            "gpu_instance_id": _number(node.get("gpu_instance_id")),
            "compute_instance_id": _number(node.get("compute_instance_id")),
            "multiprocessor_count": _number(node.get("device_attributes", "shared", "multiprocessor_count")),
            "memory_total_mib": _number(node.get("fb_memory_usage|shared_fb_memory_usage", "total")),
        })
    return devices


def _processes(section):
    """XML ``<process_info>`` blocks, or text runs of ``GPU instance ID``/``Compute instance ID``/``Process ID``."""
    if section is None:
        return []
    processes = [_process(node.get("pid"), node.get("type"), node.get("process_name"), node.get("used_memory"),
                          node.get("gpu_instance_id"), node.get("compute_instance_id"))
                 for node in section.all("process_info")]
    instance_ids = {}
    for node in section.children:
        if node.key in ("gpu_instance_id", "compute_instance_id"):
            instance_ids[node.key] = node.value
        elif node.key == "process_id":
            processes.append(_process(node.value, node.get("type"), node.get("name"), node.get("used_gpu_memory"),
                                      instance_ids.get("gpu_instance_id"), instance_ids.get("compute_instance_id")))
    return processes


def _process(pid, kind, name, memory, gpu_instance_id, compute_instance_id):
    return {"pid": _number(pid), "type": _clean(kind), "name": _clean(name), "used_memory_mib": _number(memory),
            "gpu_instance_id": _number(gpu_instance_id), "compute_instance_id": _number(compute_instance_id)}


# --- nvidia-smi vgpu -q -----------------------------------------------------------------------------------------

def parse_vgpu_query(text):
    """Parse ``nvidia-smi vgpu -q`` on a vGPU host: the vGPUs running on each physical GPU."""
    root = _text_tree((text or "").splitlines())
    gpus = root.all("gpu")
    if not gpus or any(gpu.child("active_vgpus|vgpu_id") is None for gpu in gpus):
        _fail(text, "nvidia-smi vgpu -q")
    result = []
    for gpu in gpus:
        vgpus = [_vgpu_facts(node) for node in gpu.all("vgpu_id")]
        active = _number(gpu.get("active_vgpus"))
        result.append({"pci_bus_id": gpu.value, "active_vgpus": len(vgpus) if active is None else active,
                       "vgpus": vgpus})
    return {"gpus": result}


def _vgpu_facts(node):
    facts = {
        "vgpu_id": _number(node.value),
        "vm_name": _clean(node.get("vm_name")),
        "vm_uuid": _clean(node.get("vm_uuid")),
        "vgpu_name": _clean(node.get("vgpu_name")),
        "vgpu_type": _number(node.get("vgpu_type")),
        "vgpu_uuid": _clean(node.get("vgpu_uuid")),
        "mdev_uuid": _clean(node.get("mdev_uuid")),
        "guest_driver_version": _version(node.get("guest_driver_version")),
        "gpu_instance_id": _number(node.get("gpu_instance_id")),
        "placement_id": _number(node.get("placement_id")),
        "pci_bus_id": _clean(node.get("pci", "bus_id")),
        "fb_total_mib": _number(node.get("fb_memory_usage", "total")),
        "fb_used_mib": _number(node.get("fb_memory_usage", "used")),
        "utilization_gpu_pct": _number(node.get("utilization", "gpu")),
    }
    status, expiry = _license(node.get("license_status"))
    facts.update(license_status=status, license_expiry=expiry,
                 licensed=(status == "Licensed") if status is not None else None)
    return facts


# --- nvidia-smi topo -m -----------------------------------------------------------------------------------------

def _cells(line):
    if "\t" in line:
        return [cell.strip() for cell in line.split("\t")]
    return [cell.strip() for cell in re.split(r"\s{2,}", line.strip())]


def parse_topology(text):
    """Parse ``nvidia-smi topo -m``: tabs or spaces, ANSI escapes, NIC rows and empty cells."""
    lines = _ANSI_RE.sub("", text or "").splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    header = [cell for cell in _cells(lines[0]) if cell] if lines else []
    devices = []
    for cell in header:
        if "Affinity" in cell or "NUMA ID" in cell:
            break
        devices.append(cell)
    if not devices or not re.match(r"^(GPU|NIC)\d+$", devices[0]):
        _fail(text, "nvidia-smi topo -m")
    extra_columns = header[len(devices):]
    matrix, affinity = {}, {}
    for line in lines[1:]:
        if not line.strip() or line.strip().startswith("Legend"):
            break
        cells = _cells(line)
        row = cells[0]
        links = cells[1:1 + len(devices)]
        matrix[row] = dict((col, (links[i] or None) if i < len(links) else None) for i, col in enumerate(devices))
        rest = [cell for cell in cells[1 + len(devices):] if cell]
        affinity[row] = dict((col, _clean(rest[i]) if i < len(rest) else None) for i, col in enumerate(extra_columns))
    gpus = [name for name in devices if name.startswith("GPU")]
    pairs = []
    for i, left in enumerate(gpus):
        for right in gpus[i + 1:]:
            match = re.match(r"^NV(\d+)$", matrix.get(left, {}).get(right) or "")
            if match:
                pairs.append({"a": left, "b": right, "links": int(match.group(1))})

    def column(name):
        return dict((gpu, affinity.get(gpu, {}).get(name)) for gpu in gpus)

    return {
        "devices": devices,
        "matrix": matrix,
        "nvlink_pairs": pairs,
        "cpu_affinity": column("CPU Affinity"),
        "numa_affinity": column("NUMA Affinity"),
        "gpu_numa_id": column("GPU NUMA ID"),
        "nics": dict(re.findall(r"^\s*(NIC\d+):\s*(\S+)\s*$", text or "", re.M)),
    }


# --- nvidia-smi nvlink -s / -R, -L ------------------------------------------------------------------------------

def _per_gpu(text, what, on_line):
    """Walk ``GPU n: name (UUID: ...)`` headers; ``on_line(gpu, stripped_line)`` handles the lines under each."""
    gpus, current = [], None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        header = _GPU_LINE_RE.match(line)
        if header:
            current = {"index": int(header.group(1)), "name": header.group(2), "uuid": header.group(3)}
            gpus.append(current)
            on_line(current, None)
        elif current is None or not on_line(current, line):
            _fail(text, what)
    return gpus


def parse_nvlink_status(text):
    """Parse ``nvidia-smi nvlink -s`` / ``--status``. Empty output (a GPU without NVLink) gives no GPUs."""
    def on_line(gpu, line):
        if line is None:
            gpu.update(links=[], active_links=0, error=None)
            return True
        match = re.match(r"^Link (\d+): (.*)$", line)
        if match:
            status = match.group(2).strip()
            speed = re.match(r"^([\d.]+)\s*([KMG])B/s$", status)
            gbps = float(speed.group(1)) * {"K": 1e-6, "M": 1e-3, "G": 1.0}[speed.group(2)] if speed else None
            gpu["links"].append({"link": int(match.group(1)), "active": gbps is not None, "speed_gbps": gbps,
                                 "status": status})
            gpu["active_links"] += 1 if gbps is not None else 0
            return True
        gpu["error"] = line if gpu["error"] is None else gpu["error"] + " " + line
        return True

    return {"gpus": _per_gpu(text, "nvidia-smi nvlink -s", on_line)}


def parse_nvlink_remote(text):
    """Parse ``nvidia-smi nvlink -R``: for each link, the PCI bus id and link number at the other end."""
    def on_line(gpu, line):
        if line is None:
            gpu["links"] = []
            return True
        match = re.match(r"^Link (\d+): Remote Device (%s): Link (\d+)$" % _BUS_ID, line)
        if match:
            gpu["links"].append({"link": int(match.group(1)), "remote_pci_bus_id": match.group(2),
                                 "remote_link": int(match.group(3))})
        return match is not None

    return {"gpus": _per_gpu(text, "nvidia-smi nvlink -R", on_line)}


def parse_list(text):
    """Parse ``nvidia-smi -L``, MIG devices included."""
    def on_line(gpu, line):
        if line is None:
            gpu["mig_devices"] = []
            return True
        match = _MIG_LINE_RE.match(line)
        if match:
            gpu["mig_devices"].append({"profile": match.group(1), "index": int(match.group(2)),
                                       "uuid": match.group(3)})
        return match is not None

    gpus = _per_gpu(text, "nvidia-smi -L", on_line)
    if not gpus:
        _fail(text, "nvidia-smi -L")
    return {"gpus": gpus}


# --- nvidia-smi mig -lgip / -lgi --------------------------------------------------------------------------------

_LGIP_RE = re.compile(r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)/(\d+)\s+([\d.]+)\s+(\S+)"
                      r"\s+(\d+)\s+(\d+)\s+(\d+)\s*\|$")
_LGIP_MORE_RE = re.compile(r"^\|\s+(\d+)\s+(\d+)\s+(\d+)\s*\|$")
_LGI_RE = re.compile(r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+):(\d+)\s*\|$")


def parse_mig(text):
    """Parse ``nvidia-smi mig -lgip`` and/or ``mig -lgi`` tables.

    Returns ``gpu_instance_profiles`` and/or ``gpu_instances`` for the tables found; ``No GPU instances found``
    (MIG on, nothing carved yet) gives an empty ``gpu_instances``.
    """
    text = text or ""
    result = {}
    if "GPU instance profiles:" in text:
        profiles = []
        for line in text.splitlines():
            line = line.strip()
            row, more = _LGIP_RE.match(line), _LGIP_MORE_RE.match(line)
            if row:
                gpu, name, pid, free, total, mem, p2p, sm, dec, enc = row.groups()
                profiles.append({"gpu": int(gpu), "name": name, "profile_id": int(pid),
                                 "instances_free": int(free), "instances_total": int(total),
                                 "memory_gib": float(mem), "p2p": p2p.lower() == "yes", "sm": int(sm),
                                 "dec": int(dec), "enc": int(enc), "ce": None, "jpeg": None, "ofa": None})
            elif more and profiles:
                profiles[-1].update(zip(("ce", "jpeg", "ofa"), (int(part) for part in more.groups())))
        if not profiles:
            _fail(text, "nvidia-smi mig -lgip")
        result["gpu_instance_profiles"] = profiles
    if "GPU instances:" in text:
        instances = []
        for line in text.splitlines():
            row = _LGI_RE.match(line.strip())
            if row:
                gpu, name, pid, gid, start, size = row.groups()
                instances.append({"gpu": int(gpu), "name": name, "profile_id": int(pid), "instance_id": int(gid),
                                  "placement_start": int(start), "placement_size": int(size)})
        if not instances:  # without instances nvidia-smi prints "No GPU instances found", not an empty table
            _fail(text, "nvidia-smi mig -lgi")
        result["gpu_instances"] = instances
    elif re.search(r"^No GPU instances found", text, re.M):
        result["gpu_instances"] = []
    if not result:
        _fail(text, "nvidia-smi mig -lgip/-lgi")
    return result


# --- nvidia-smi --query-gpu=... --format=csv --------------------------------------------------------------------

def parse_csv(text, fields=None):
    """Parse ``--query-gpu=... --format=csv`` (with or without ``noheader``/``nounits``).

    Field names lose their unit (``memory.total [MiB]`` -> ``memory.total``); values of fields with a unit become
    numbers, ``[N/A]`` and similar become None, everything else stays the string nvidia-smi printed. Pass
    ``fields`` for ``noheader`` output.
    """
    rows = [row for row in csv.reader((text or "").splitlines(), skipinitialspace=True) if row]
    if fields is None:
        # Field names have no spaces except before a unit; an error message is never a valid header.
        if not rows or not all(re.match(r"^[A-Za-z0-9_.]+(?: \[[^\]]+\])?$", cell.strip()) for cell in rows[0]):
            _fail(text, "nvidia-smi --format=csv")
        fields, rows = rows[0], rows[1:]
    elif len(fields) == 1 and detect_error(text) is not None:
        raise detect_error(text)
    names, units = [], {}
    for field in fields:
        match = re.match(r"^(.*?)\s*\[([^\]]+)\]$", field.strip())
        name = match.group(1) if match else field.strip()
        names.append(name)
        if match:
            units[name] = match.group(2)
    parsed = []
    for row in rows:
        if len(row) != len(names):
            _fail(text, "nvidia-smi --format=csv with %d fields" % len(names))
        parsed.append(dict((name, _csv_value(value, units.get(name))) for name, value in zip(names, row)))
    return {"fields": names, "units": units, "rows": parsed}


def _csv_value(value, unit):
    value = _clean(value)
    if value is None or unit is None:
        return value
    number = value[:-len(unit)].strip() if value.endswith(unit) else value
    if re.match(r"^-?\d+$", number):
        return int(number)
    if re.match(r"^-?\d+\.\d+$", number):
        return float(number)
    return value


# --- running nvidia-smi -----------------------------------------------------------------------------------------

# In the order they run.
GATHER_COMMANDS = {
    "topology": ((("topo", "-m"), parse_topology),),
    "nvlink": ((("nvlink", "-s"), parse_nvlink_status),),
    "list": ((("-L",), parse_list),),
    "vgpu": ((("vgpu", "-q"), parse_vgpu_query),),
    "mig": ((("mig", "-lgip"), parse_mig), (("mig", "-lgi"), parse_mig)),
}


def default_gather(query):
    """What applies to a machine: topology, NVLink and the GPU list always; vGPUs on a vGPU host; MIG when on."""
    gather = ["topology", "nvlink", "list"]
    if any(gpu["virtualization_mode"] == "Host VGPU" for gpu in query["gpus"]):
        gather.append("vgpu")
    if any(gpu["mig_mode_current"] for gpu in query["gpus"]):
        gather.append("mig")
    return gather


def run_parsed(run, args, parser):
    """``run(args) -> (rc, stdout, stderr)``; returns ``parser``'s result or raises ``NvidiaSmiError``.

    nvidia-smi prints most errors on stdout: the text parsed is stdout, or stderr when stdout is empty. Lines on
    stderr next to output that parsed are added to the result's ``warnings`` where it has them.
    """
    rc, out, err = run(list(args))
    command = " ".join(("nvidia-smi",) + tuple(args))
    out, err = out or "", err or ""
    text = out if out.strip() else err
    try:
        if rc and not text.strip():
            raise detect_error(text, rc)
        result = parser(text)
    except NvidiaSmiError as error:
        if error.kind == "unparsable" and rc:
            error = detect_error(text, rc) or error
        error.rc, error.command = rc, command
        raise error
    if out.strip() and err.strip() and isinstance(result.get("warnings"), list):
        result["warnings"].extend(_leading_lines(err))
    return result


def collect(run, gather=None, query_format="xml"):
    """Everything ``nvidia_smi_info`` returns: ``-q -x`` (or ``-q`` when ``query_format`` is ``text``) plus the
    ``gather`` commands (None: what applies).

    A failing ``-q -x`` raises ``NvidiaSmiError``; a failing gather command is recorded under ``errors`` with
    its key (``topology``, ``vgpu``...), and its result is None.
    """
    facts = run_parsed(run, ("-q", "-x") if query_format == "xml" else ("-q",), parse_query)
    wanted = default_gather(facts) if gather is None else gather
    facts["gathered"] = [name for name in GATHER_COMMANDS if name in wanted]
    facts["errors"] = {}
    for name in GATHER_COMMANDS:
        facts[name] = None
        if name not in wanted:
            continue
        merged = {}
        try:
            for args, parser in GATHER_COMMANDS[name]:
                merged.update(run_parsed(run, args, parser))
        except NvidiaSmiError as error:
            facts["errors"][name] = error.as_dict()
            continue
        facts[name] = merged
    return facts
