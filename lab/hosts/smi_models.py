# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the host's nvidia-smi says about each GPU model, and the sections of ``-q`` and the ``--query-gpu`` fields.

Temperature thresholds and power limits: recorded values where tests/fixtures/nvidia-smi has the model (A10, A16,
T4; A100 from the SXM4 recording), the others are the lab's choice (``confirmed: False``). VBIOS versions: from
the recordings of the same model (A10, A16, L40S, T4; A100 and H100 from other boards of the model), N/A where
the lab has no recording (real output always shows one). NVLink: A100 and
A40 PCIe boards take NVLink bridges (12 links x 25 GB/s as in nvlink_status_8xA100_sxm4_80gb_12links.txt; A40: 4
links, unconfirmed), H100 PCIe lists 18 links of which a bridged pair uses 12
(nvlink_s_2xH100_pcie_inactive_links_driver555.txt); the other models have no NVLink.
"""

ARCHITECTURES = {"pascal": "Pascal", "volta": "Volta", "turing": "Turing", "ampere": "Ampere",
                 "ada": "Ada Lovelace", "hopper": "Hopper"}
DEFAULT = {"vbios": "N/A", "shutdown": 95, "slowdown": 92, "max_operating": 85, "power_limit": 250.0, "nvlink_slots": 0,
           "nvlink_active": (), "nvlink_gbps": None, "confirmed": False}
MODELS = {
    "A10": {"vbios": "94.02.5C.00.04", "shutdown": 101, "slowdown": 98, "max_operating": 91, "power_limit": 150.0, "confirmed": True},
    "A16": {"vbios": "94.07.54.00.01", "shutdown": 98, "slowdown": 95, "max_operating": 88, "power_limit": 62.5, "confirmed": True},
    "T4": {"vbios": "90.04.84.00.06", "shutdown": 96, "slowdown": 93, "max_operating": 85, "power_limit": 70.0, "confirmed": True},
    "A100-40": {"vbios": "92.00.36.00.02", "shutdown": 92, "slowdown": 89, "max_operating": 85, "nvlink_slots": 12,
                "nvlink_active": tuple(range(12)), "nvlink_gbps": "25"},
    "A100-80": {"vbios": "92.00.36.00.02", "shutdown": 92, "slowdown": 89, "max_operating": 85, "power_limit": 300.0, "nvlink_slots": 12,
                "nvlink_active": tuple(range(12)), "nvlink_gbps": "25"},
    "A40": {"power_limit": 300.0, "nvlink_slots": 4, "nvlink_active": tuple(range(4)), "nvlink_gbps": "14.062"},
    "H100-80": {"vbios": "96.00.A5.00.01", "power_limit": 350.0, "nvlink_slots": 18, "nvlink_gbps": "26.562",
                "nvlink_active": (0, 1, 2, 3, 6, 7, 8, 9, 12, 13, 14, 15)},
    # HGX H100 (SXM5): VBIOS and power limit from q_8xH100_80gb_hbm3_baremetal_ecc_on_driver535.161.txt, 18 NVLinks
    # at 26.562 GB/s all active from nvlink_s_h100_18links_driver590.txt; temperature limits are the lab's choice.
    "H100-SXM5-80": {"vbios": "96.00.74.00.0D", "power_limit": 700.0, "nvlink_slots": 18, "nvlink_gbps": "26.562",
                     "nvlink_active": tuple(range(18))},
    "L4": {"power_limit": 72.0},
    "L40S": {"vbios": "95.02.66.00.02", "power_limit": 350.0},
    "P4": {"power_limit": 75.0},
    "P40": {"power_limit": 250.0},
}
IDLE_POWER_W = 0.12  # of the limit, for an idle board


def model_facts(model):
    facts = dict(DEFAULT)
    facts.update(MODELS.get(model, {}))
    facts["nvlink_links"] = len(facts["nvlink_active"])
    return facts


def _on(flag):
    return "Enabled" if flag else "Disabled"


def _mib(value):
    return "%d MiB" % value


def gpu_sections(g, displays=None):
    """The sections of one GPU in ``-q``; ``displays`` (from ``-d``) keeps only those named."""
    f = g["facts"]
    used = sum(v["fb_mib"] for v in g["vgpus"])
    total = g["memory_mib"]
    ecc = _on(g["ecc_mode"] == "enabled")
    bus = g["pci_id"][5:7].upper()
    sections = {
        "identity": [
            ("Product Name", "product_name", g["device_name"]),
            ("Product Brand", "product_brand", "NVIDIA"),
            ("Product Architecture", "product_architecture", ARCHITECTURES.get(g.get("architecture"), "N/A")),
            ("Display Mode", "display_mode", "Disabled"),
            ("Persistence Mode", "persistence_mode", "Enabled"),
            ("MIG Mode", "mig_mode", [("Current", "current_mig", "N/A"), ("Pending", "pending_mig", "N/A")]),
            ("Accounting Mode", "accounting_mode", "Disabled"),
            ("Serial Number", "serial", g["serial"]),
            ("GPU UUID", "uuid", g["uuid"]),
            ("Minor Number", "minor_number", str(g["index"])),
            ("VBIOS Version", "vbios_version", f["vbios"]),
            # A GPU in a VM (the guests' DirectPath stand-in) reads like q_a10_passthrough_ecc_on_driver535.129.txt.
            ("GPU Virtualization Mode", "gpu_virtualization_mode", [
                ("Virtualization Mode", "virtualization_mode", g.get("virtualization_mode", "Host VGPU")),
                ("Host VGPU Mode", "host_vgpu_mode", "N/A" if g.get("virtualization_mode") else "Non SR-IOV"
                 if g.get("architecture") in ("pascal", "volta", "turing") else "SR-IOV")]),
            ("PCI", "pci", [
                ("Bus", "pci_bus", "0x" + bus), ("Device", "pci_device", "0x00"),
                ("Domain", "pci_domain", "0x0000"),
                ("Device Id", "pci_device_id", "0x%s10DE" % g["device_id"][2:].upper()),
                ("Bus Id", "pci_bus_id", g["bus_id"])]),
            ("Performance State", "performance_state", "P0" if g["vgpus"] else "P8"),
            ("Compute Mode", "compute_mode", "Default"),
        ],
        "memory": [("FB Memory Usage", "fb_memory_usage", [
            ("Total", "total", _mib(total)), ("Used", "used", _mib(used)), ("Free", "free", _mib(total - used))])],
        "utilization": [("Utilization", "utilization", [
            ("Gpu", "gpu_util", "%d %%" % min(99, 4 * len(g["vgpus"]))), ("Memory", "memory_util", "0 %"),
            ("Encoder", "encoder_util", "0 %"), ("Decoder", "decoder_util", "0 %")])],
        "ecc": [("ECC Mode", "ecc_mode", [("Current", "current_ecc", ecc), ("Pending", "pending_ecc", ecc)])],
        "temperature": [("Temperature", "temperature", [
            ("GPU Current Temp", "gpu_temp", "%d C" % g["temperature_c"]),
            ("GPU Shutdown Temp", "gpu_temp_max_threshold", "%d C" % f["shutdown"]),
            ("GPU Slowdown Temp", "gpu_temp_slow_threshold", "%d C" % f["slowdown"]),
            ("GPU Max Operating Temp", "gpu_temp_max_gpu_threshold", "%d C" % f["max_operating"]),
            ("GPU Target Temperature", "gpu_target_temperature", "N/A"),
            ("Memory Current Temp", "memory_temp", "N/A"),
            ("Memory Max Operating Temp", "gpu_temp_max_mem_threshold", "N/A")])],
        "power": [("GPU Power Readings", "gpu_power_readings", [
            ("Power Draw", "power_draw", "%.2f W" % (f["power_limit"] * IDLE_POWER_W)),
            ("Current Power Limit", "current_power_limit", "%.2f W" % f["power_limit"]),
            ("Default Power Limit", "default_power_limit", "%.2f W" % f["power_limit"])])],
    }
    order = ("identity", "memory", "utilization", "ecc", "temperature", "power")
    if displays:
        order = [name for name in order if name in displays]
    nodes = []
    for name in order:
        nodes.extend(sections[name])
    if not displays:
        nodes.append(("Processes", "processes", "None"))
    return nodes


CSV_FIELDS = {
    "index": ("", lambda g, d: str(g["index"])),
    "name": ("", lambda g, d: g["device_name"]),
    "uuid": ("", lambda g, d: g["uuid"]),
    "serial": ("", lambda g, d: g["serial"]),
    "pci.bus_id": ("", lambda g, d: g["bus_id"]),
    "driver_version": ("", lambda g, d: d),
    "virtualization_mode": ("", lambda g, d: g.get("virtualization_mode", "Host VGPU")),
    "temperature.gpu": ("", lambda g, d: str(g["temperature_c"])),
    "temperature.memory": ("", lambda g, d: "[N/A]"),
    "ecc.mode.current": ("", lambda g, d: _on(g["ecc_mode"] == "enabled")),
    "ecc.mode.pending": ("", lambda g, d: _on(g["ecc_mode"] == "enabled")),
    "memory.total": ("MiB", lambda g, d: str(g["memory_mib"])),
    "memory.used": ("MiB", lambda g, d: str(sum(v["fb_mib"] for v in g["vgpus"]))),
    "memory.free": ("MiB", lambda g, d: str(g["memory_mib"] - sum(v["fb_mib"] for v in g["vgpus"]))),
    "utilization.gpu": ("%", lambda g, d: str(min(99, 4 * len(g["vgpus"])))),
    "power.draw": ("W", lambda g, d: "%.2f" % (g["facts"]["power_limit"] * IDLE_POWER_W)),
    "power.limit": ("W", lambda g, d: "%.2f" % g["facts"]["power_limit"]),
    "pstate": ("", lambda g, d: "P0" if g["vgpus"] else "P8"),
}
CSV_ALIASES = {"gpu_name": "name", "gpu_uuid": "uuid", "gpu_serial": "serial", "gpu_bus_id": "pci.bus_id"}


class Fail(Exception):
    """What nvidia-smi prints and its exit code, when it fails."""

    def __init__(self, message, rc):
        Exception.__init__(self, message)
        self.rc = rc


def csv_fields(gpus, names, driver, fmt):
    """``--query-gpu`` output; an unknown field fails as nvidia-smi does (its message, exit code 2)."""
    if not names:
        raise Fail('Field "--query-gpu" must be specified.', 2)
    keys = []
    for name in names:
        key = CSV_ALIASES.get(name, name)
        if key not in CSV_FIELDS:
            raise Fail('Field "%s" is not a valid field to query.' % name, 2)
        keys.append((name, key))
    units = "nounits" not in fmt
    lines = []
    if "noheader" not in fmt:
        lines.append(", ".join(name + (" [%s]" % CSV_FIELDS[key][0] if CSV_FIELDS[key][0] else "")
                               for name, key in keys))
    for g in gpus:
        cells = []
        for _name, key in keys:
            unit, read = CSV_FIELDS[key]
            value = read(g, driver)
            cells.append(value + (" " + unit if units and unit and not value.startswith("[") else ""))
        lines.append(", ".join(cells))
    return "\n".join(lines) + "\n"
