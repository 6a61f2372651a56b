# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``nvidia-smi -q`` in XML or text, and ``nvidia-smi vgpu -q``: one shape of facts from every format.

Standard library only and Python 3.8 syntax: it also runs on ESXi's Python and on minimal guests. The public names
are re-exported by ``module_utils/nvidia_smi.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import xml.etree.ElementTree as ET

from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia._smi_values import (
    NvidiaSmiError,
    _GPU_HEADER_RE,
    _clean,
    _enabled,
    _fail,
    _key,
    _license,
    _license_fields,
    _number,
    _version,
)


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
        return _query_facts(root, "xml", leading_lines(text[:start]))
    marker = text.find("NVSMI LOG")
    lines = text.splitlines()
    if marker >= 0:
        head = text.rfind("\n", 0, marker) + 1
        lines = text[head:].splitlines()
        warnings = leading_lines(text[:head])
    else:
        warnings = []
    root = _text_tree(lines)
    if root.child("driver_version") is None:
        _fail(text, "nvidia-smi -q")
    return _query_facts(root, "text", warnings)


def leading_lines(text):
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
        "temperature_slowdown_c": _number(gpu.get("temperature", "gpu_temp_slow_threshold|gpu_slowdown_temp")),
        "temperature_shutdown_c": _number(gpu.get("temperature", "gpu_temp_max_threshold|gpu_shutdown_temp")),
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
        # The GPU's place in an NVSwitch fabric (Hopper and later; N/A where the GPU has none): "In Progress" until
        # Fabric Manager has configured it, then "Completed" with the status "Success" or the error it ended with.
        "fabric_state": _clean(gpu.get("fabric", "state")),
        "fabric_status": _clean(gpu.get("fabric", "status")),
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
