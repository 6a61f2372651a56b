# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-GPU metrics from nvidia-smi for the node exporter's textfile collector.

    python3 gpu_metrics.py --textfile-dir DIR [--nvidia-smi PATH] [--host-driver-version X.Y.Z]

Runs ``nvidia-smi --query-gpu=... --format=csv,noheader,nounits`` once and ``nvidia-smi -q`` once, and replaces
DIR/gpuops_gpu.prom atomically (written beside it, then renamed), so the exporter never reads half a file.
Metric names follow NVIDIA's dcgm-exporter where it has the same metric (etc/default-counters.csv of
github.com/NVIDIA/dcgm-exporter), with its labels gpu, UUID, device, modelName and Hostname; the others start with
gpuops_ (docs/monitoring.md lists both); a shared name has dcgm-exporter's type too (counter or gauge). Python
standard library only: it runs on any guest or GPU server.
"""

import argparse
import calendar
import os
import re
import socket
import subprocess
import sys
import time

TEXTFILE = "gpuops_gpu.prom"
# (nvidia-smi field, metric, help). A field the driver does not know is dropped and the query repeated, so one
# list serves old and new drivers (R535 renamed clocks_throttle_reasons to clocks_event_reasons).
FIELDS = (
    ("utilization.gpu", "DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."),
    ("utilization.memory", "DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %)."),
    ("utilization.encoder", "DCGM_FI_DEV_ENC_UTIL", "Encoder utilization (in %)."),
    ("utilization.decoder", "DCGM_FI_DEV_DEC_UTIL", "Decoder utilization (in %)."),
    ("memory.used", "DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB)."),
    ("memory.free", "DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB)."),
    ("memory.total", "gpuops_gpu_fb_total_bytes", "Framebuffer memory total (in bytes)."),
    ("temperature.gpu", "DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C)."),
    ("temperature.memory", "DCGM_FI_DEV_MEMORY_TEMP", "Memory temperature (in C)."),
    ("power.draw", "DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."),
    ("power.limit", "gpuops_gpu_power_limit_watts", "Power limit (in W)."),
    ("clocks.current.sm", "DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz)."),
    ("clocks.current.memory", "DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz)."),
    ("clocks.current.graphics", "gpuops_gpu_graphics_clock_hertz", "Graphics clock frequency (in Hz)."),
    ("clocks_event_reasons.active", "gpuops_gpu_clocks_event_reasons",
     "Active clock event (throttle) reasons, NVML bit mask."),
    ("clocks_throttle_reasons.active", "gpuops_gpu_clocks_event_reasons", None),
    ("ecc.errors.corrected.volatile.total", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
     "Corrected (single-bit) ECC errors since the driver loaded."),
    ("ecc.errors.uncorrected.volatile.total", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
     "Uncorrected (double-bit) ECC errors since the driver loaded."),
    ("ecc.errors.corrected.aggregate.total", "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
     "Corrected (single-bit) ECC errors over the GPU's life."),
    ("ecc.errors.uncorrected.aggregate.total", "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
     "Uncorrected (double-bit) ECC errors over the GPU's life."),
    ("retired_pages.single_bit_ecc.count", "DCGM_FI_DEV_RETIRED_SBE", "Pages retired for single-bit errors."),
    ("retired_pages.double_bit.count", "DCGM_FI_DEV_RETIRED_DBE", "Pages retired for double-bit errors."),
    ("retired_pages.pending", "DCGM_FI_DEV_RETIRED_PENDING", "1 when pages wait for retirement (at reboot)."),
    ("remapped_rows.uncorrectable", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
     "Rows remapped for uncorrectable errors."),
    ("remapped_rows.correctable", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "Rows remapped for correctable errors."),
    ("pcie.link.gen.current", "gpuops_gpu_pcie_link_gen", "Current PCIe link generation."),
    ("pcie.link.width.current", "gpuops_gpu_pcie_link_width", "Current PCIe link width (lanes)."),
)
# The metrics dcgm-exporter declares counter (its etc/default-counters.csv); every other one here is a gauge.
COUNTERS = frozenset(("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
                      "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "DCGM_FI_DEV_RETIRED_SBE", "DCGM_FI_DEV_RETIRED_DBE",
                      "DCGM_FI_DEV_RETIRED_PENDING", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
                      "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"))
# The collection's own families are in Prometheus' base units (prometheus.io/docs/practices/naming); nvidia-smi
# answers in MiB and MHz. dcgm-exporter's families keep its units (MiB, MHz), as dashboards built on it expect.
BASE_UNITS = {"gpuops_gpu_fb_total_bytes": 1024 * 1024, "gpuops_gpu_graphics_clock_hertz": 1000 * 1000}
IDENTITY = ("index", "uuid", "name", "pci.bus_id", "driver_version")
# NVML's clock event reason bits (nvmlClocksEventReason*), the same in the throttle and the event names.
REASONS = (("gpu_idle", 0x1), ("applications_clocks_setting", 0x2), ("sw_power_cap", 0x4), ("hw_slowdown", 0x8),
           ("sync_boost", 0x10), ("sw_thermal_slowdown", 0x20), ("hw_thermal_slowdown", 0x40),
           ("hw_power_brake_slowdown", 0x80), ("display_clock_setting", 0x100))
# -q temperatures: absolute thresholds on older drivers; R535 and later on Hopper and Ada give the current margin
# (T.Limit) and the margins at which the GPU slows down and shuts down instead (q_8xH100_80gb_hbm3_baremetal_ecc_on_
# driver535.161.txt, q_a10_passthrough_ecc_on_driver535.129.txt in tests/fixtures/nvidia-smi).
Q_TEMPERATURES = {"GPU Current Temp": "temp", "GPU Slowdown Temp": "slowdown_temp", "GPU Shutdown Temp": "shutdown_temp",
                  "GPU T.Limit Temp": "tlimit", "GPU Slowdown T.Limit Temp": "slowdown_tlimit"}
INVALID_FIELD = re.compile(r'Field "([^"]+)" is not a valid field to query')
EXPIRY = re.compile(r"Expiry:\s*(\d{4})-(\d{1,2})-(\d{1,2})\s+(\d{1,2}):(\d{1,2}):(\d{1,2})\s*GMT")


class SmiFailed(Exception):
    pass


def run_smi(smi, args):
    try:
        proc = subprocess.run([smi] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SmiFailed("%s %s: %s" % (smi, " ".join(args), error))
    return proc.returncode, proc.stdout


def query_gpus(smi):
    """Rows of ``--query-gpu`` as dicts of the fields this driver knows."""
    fields = list(IDENTITY) + [field for field, _metric, _help in FIELDS]
    while True:
        rc, out = run_smi(smi, ["--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"])
        invalid = INVALID_FIELD.search(out)
        if rc != 0 and invalid and invalid.group(1) in fields and invalid.group(1) not in IDENTITY:
            fields.remove(invalid.group(1))
            continue
        if rc != 0:
            raise SmiFailed(out.strip() or "nvidia-smi exited with %d" % rc)
        return parse_rows(out, fields)


def parse_rows(text, fields):
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != len(fields):
            raise SmiFailed("nvidia-smi answered %d values for %d fields: %s" % (len(cells), len(fields), line))
        rows.append(dict(zip(fields, cells)))
    return rows


def number(value):
    """A number from nvidia-smi's value, None for [N/A], [Not Supported] and the like. Bit masks are hex,
    yes/no flags become 1/0; a unit left in the value (``81559 MiB``) is ignored."""
    if value is None:
        return None
    value = value.strip()
    if value.lower() in ("yes", "enabled", "active"):
        return 1
    if value.lower() in ("no", "disabled", "not active"):
        return 0
    if re.match(r"^0x[0-9a-fA-F]+$", value):
        return int(value, 16)
    match = re.match(r"^(-?\d+(?:\.\d+)?)(?:\s*\S+)?$", value)
    if not match:
        return None
    return float(match.group(1)) if "." in match.group(1) else int(match.group(1))


def parse_q(text):
    """Per PCI bus id, what only ``nvidia-smi -q`` says: slowdown temperature, virtualization mode, the vGPU
    licence (product, status, expiry) and the vGPU type (the product name inside a vGPU guest)."""
    gpus, current, section = {}, None, None
    for line in text.splitlines():
        header = re.match(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$", line)
        if header:
            current = gpus.setdefault(header.group(1).upper(), {})
            section = None
            continue
        if current is None or ":" not in line:
            if current is not None and line.strip():
                section = line.strip()
            continue
        key, _sep, value = line.partition(":")
        top_level = len(key) - len(key.lstrip()) <= 4
        key, value = key.strip(), value.strip()
        if key == "Product Name" and top_level:
            current["product_name"] = value
        elif key == "Product Name" and section == "vGPU Software Licensed Product":
            current["license_product"] = value
        elif key == "License Status":
            current["license_status"] = value
        elif key == "Virtualization Mode":
            current["virtualization_mode"] = value
        elif key in Q_TEMPERATURES:
            current[Q_TEMPERATURES[key]] = number(value)
    return gpus


def slowdown_margin(temperature, q):
    if q.get("slowdown_temp") is not None and (temperature if temperature is not None else q.get("temp")) is not None:
        return q["slowdown_temp"] - (temperature if temperature is not None else q["temp"])
    if q.get("tlimit") is not None and q.get("slowdown_tlimit") is not None:
        return q["tlimit"] - q["slowdown_tlimit"]
    return None


def license_expiry(status):
    match = EXPIRY.search(status or "")
    if not match:
        return None
    return calendar.timegm(tuple(int(part) for part in match.groups()) + (0, 0, 0))


def bus_key(bus_id):
    """``00000000:02:01.0`` (--query-gpu) and ``00000000:02:01.0`` (-q) alike, whatever the domain width."""
    domain, _sep, rest = bus_id.upper().partition(":")
    return "%08X:%s" % (int(domain, 16), rest) if rest else bus_id.upper()


class Metrics(object):
    def __init__(self):
        self.series = {}
        self.helps = {}

    def add(self, name, help_text, labels, value):
        if value is None:
            return
        if help_text:
            self.helps.setdefault(name, help_text)
        self.series.setdefault(name, []).append((labels, value))

    def render(self):
        lines = []
        for name in sorted(self.series):
            lines.append("# HELP %s %s" % (name, self.helps.get(name, name)))
            lines.append("# TYPE %s %s" % (name, "counter" if name in COUNTERS else "gauge"))
            for labels, value in self.series[name]:
                text = ",".join('%s="%s"' % (key, escape(labels[key])) for key in sorted(labels))
                lines.append("%s{%s} %s" % (name, text, value))
        return "\n".join(lines) + "\n"


def in_base_units(metric, value):
    scale = BASE_UNITS.get(metric)
    return value * scale if scale and value is not None else value


def escape(value):
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def driver_branch(version):
    match = re.match(r"^(\d+)\.", version or "")
    return int(match.group(1)) if match else None


def collect(rows, q_gpus, hostname, host_driver_version=None, now=None):
    """The metrics of the GPUs in ``rows`` (``--query-gpu``) and ``q_gpus`` (``parse_q``)."""
    now = time.time() if now is None else now
    metrics = Metrics()
    helps = dict((metric, text) for _field, metric, text in FIELDS if text)
    driver = None
    for row in rows:
        q = q_gpus.get(bus_key(row["pci.bus_id"]), {})
        labels = {"gpu": row["index"], "UUID": row["uuid"], "device": "nvidia%s" % row["index"],
                  "modelName": row["name"], "Hostname": hostname, "pci_bus_id": row["pci.bus_id"]}
        driver = row["driver_version"]
        for field, metric, _help in FIELDS:
            # Drivers that know both names answer the same mask twice.
            if field == "clocks_throttle_reasons.active" and "clocks_event_reasons.active" in row:
                continue
            if field in row:
                metrics.add(metric, helps[metric], labels, in_base_units(metric, number(row[field])))
        mask = number(row.get("clocks_event_reasons.active", row.get("clocks_throttle_reasons.active")))
        for reason, bit in REASONS if mask is not None else ():
            metrics.add("gpuops_gpu_clocks_event_reason", "1 while this reason holds the clocks down.",
                        dict(labels, reason=reason), 1 if mask & bit else 0)
        metrics.add("gpuops_gpu_slowdown_temp_celsius", "Temperature at which the GPU slows down (in C).",
                    labels, q.get("slowdown_temp"))
        metrics.add("gpuops_gpu_slowdown_margin_celsius", "Degrees C left before the GPU slows down for heat.",
                    labels, slowdown_margin(number(row.get("temperature.gpu")), q))
        metrics.add("gpuops_gpu_shutdown_temp_celsius", "Temperature at which the GPU shuts down (in C).",
                    labels, q.get("shutdown_temp"))
        metrics.add("gpuops_gpu_info", "1 per GPU; the driver and virtualization mode as labels.",
                    dict(labels, driver_version=driver, virtualization_mode=q.get("virtualization_mode", "")), 1)
        if q.get("virtualization_mode") == "VGPU":
            add_vgpu(metrics, labels, q, now)
    if driver:
        metrics.add("gpuops_gpu_driver_branch", "Major version (branch) of the NVIDIA driver.",
                    {"Hostname": hostname, "driver_version": driver}, driver_branch(driver))
    if host_driver_version:
        metrics.add("gpuops_vgpu_host_driver_branch", "Branch of the vGPU manager on the host this guest runs on.",
                    {"Hostname": hostname, "driver_version": host_driver_version}, driver_branch(host_driver_version))
    metrics.add("gpuops_gpus", "GPUs nvidia-smi lists.", {"Hostname": hostname}, len(rows))
    return metrics


def add_vgpu(metrics, labels, q, now):
    status = q.get("license_status", "")
    licensed = 1 if status.startswith("Licensed") else 0
    metrics.add("gpuops_vgpu_info", "1 per vGPU; its type (profile) and licensed product as labels.",
                dict(labels, vgpu_type=q.get("product_name", ""), license_product=q.get("license_product", "")), 1)
    metrics.add("DCGM_FI_DEV_VGPU_LICENSE_STATUS", "vGPU license status (1 licensed, 0 not).", labels, licensed)
    expiry = license_expiry(status)
    if licensed and expiry is not None:
        metrics.add("gpuops_vgpu_license_expiry_timestamp_seconds", "When the vGPU license expires (Unix time).",
                    labels, expiry)
        metrics.add("gpuops_vgpu_license_remaining_seconds", "Seconds until the vGPU license expires, at collection "
                    "time.", labels, round(expiry - now, 3))


def write_atomically(directory, text):
    path = os.path.join(directory, TEXTFILE)
    # The node exporter reads only *.prom files, so the file being written is never scraped.
    partial = "%s.%d.tmp" % (path, os.getpid())
    with open(partial, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(partial, 0o644)
    os.rename(partial, path)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--textfile-dir", required=True)
    parser.add_argument("--nvidia-smi", default="nvidia-smi")
    parser.add_argument("--host-driver-version", default="")
    args = parser.parse_args(argv)
    hostname = socket.gethostname()
    started = time.time()
    try:
        rows = query_gpus(args.nvidia_smi)
        rc, q_text = run_smi(args.nvidia_smi, ["-q"])
        metrics = collect(rows, parse_q(q_text) if rc == 0 else {}, hostname, args.host_driver_version)
        up, error = 1, None
    except SmiFailed as failure:
        metrics, up, error = Metrics(), 0, str(failure)
    metrics.add("gpuops_gpu_collector_up", "1 when nvidia-smi answered at the last collection.",
                {"Hostname": hostname}, up)
    metrics.add("gpuops_gpu_collector_last_run_timestamp_seconds", "When the collector last ran (Unix time).",
                {"Hostname": hostname}, round(started, 3))
    write_atomically(args.textfile_dir, metrics.render())
    if error:
        sys.stderr.write("gpu_metrics: %s\n" % error)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
