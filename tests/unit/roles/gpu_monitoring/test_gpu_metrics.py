# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_monitoring collector (roles/gpu_monitoring/files/gpu_metrics.py) on recorded nvidia-smi outputs and on
the lab guest's nvidia-smi stand-in: the metrics, their DCGM names and labels, and the textfile it writes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import contextlib
import importlib.machinery
import importlib.util
import io
import json
import os
import re
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "unit", "plugins"))
from nvidia_smi_fixtures import read  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from promtool_findings import dcgm_exporter_counters, dcgm_exporter_types, promtool_findings, unexplained  # noqa: E402


def _load(name, path):
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


COLLECTOR = _load("gpuops_gpu_metrics", os.path.join(REPO, "roles", "gpu_monitoring", "files", "gpu_metrics.py"))
GUEST_SMI = os.path.join(REPO, "lab", "guests", "standins", "driver", "nvidia-smi")
NOW = calendar.timegm((2022, 5, 20, 0, 8, 28, 0, 0, 0))


def rows_from_csv(name):
    """A recorded ``--format=csv`` capture as the collector's rows (field names without their unit)."""
    header, *lines = read(name).splitlines()
    fields = [re.sub(r"\s*\[[^\]]+\]$", "", cell.strip()) for cell in header.split(",")]
    return COLLECTOR.parse_rows("\n".join(lines), fields)


def samples(metrics):
    """{(name, frozenset(labels)): value} from the rendered textfile, parsed back."""
    out = {}
    for line in metrics.render().splitlines():
        if line.startswith("#"):
            continue
        match = re.match(r"^(\w+)\{(.*)\} (\S+)$", line)
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(2)))
        out[(match.group(1), frozenset(labels.items()))] = float(match.group(3))
    return out


def value(metrics, name, **labels):
    found = [v for (n, lab), v in samples(metrics).items() if n == name and set(labels.items()) <= set(lab)]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def test_every_name_shared_with_dcgm_exporter_has_its_type():
    """dcgm-exporter declares the ECC totals, retired pages and remapped rows counter; a dashboard or recording rule
    written for dcgm-exporter (increase(), rate()) expects the same type from this collector."""
    with open(os.path.join(REPO, "roles", "gpu_monitoring", "files", "gpu_metrics.py")) as handle:
        shared = sorted(set(re.findall(r'"(DCGM_\w+)"', handle.read())))
    types = dcgm_exporter_types()
    assert "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL" in shared and len(shared) >= 20
    metrics = COLLECTOR.Metrics()
    for name in shared:
        metrics.add(name, "help", {"gpu": "0"}, 0)
    rendered = dict(re.findall(r"^# TYPE (\w+) (\w+)$", metrics.render(), re.M))
    for name in shared:
        assert name in types, "%s is not a dcgm-exporter metric" % name
        assert rendered[name] == types[name], (name, rendered[name], types[name])


def test_h100_csv_gives_dcgm_named_metrics_with_dcgm_labels():
    rows = rows_from_csv("csv_query_gpu_allfields_h100_mig_driver590.csv")
    metrics = COLLECTOR.collect(rows, {}, "gpu-node-1", now=NOW)
    labels = dict(next(iter(samples(metrics)))[1])
    assert {"gpu", "UUID", "device", "modelName", "Hostname"} <= set(labels)
    row = rows[0]
    assert value(metrics, "DCGM_FI_DEV_FB_USED") == float(row["memory.used"].split()[0])
    # The collection's own families in base units: bytes and hertz where nvidia-smi answers MiB and MHz.
    assert value(metrics, "gpuops_gpu_fb_total_bytes") == int(row["memory.total"].split()[0]) * 1024 * 1024
    assert value(metrics, "gpuops_gpu_graphics_clock_hertz") == int(row["clocks.current.graphics"].split()[0]) * 10 ** 6
    assert value(metrics, "gpuops_gpus") == len(rows)
    assert value(metrics, "DCGM_FI_DEV_GPU_TEMP") == float(row["temperature.gpu"])
    assert value(metrics, "DCGM_FI_DEV_POWER_USAGE") == float(row["power.draw"].split()[0])
    assert value(metrics, "DCGM_FI_DEV_SM_CLOCK") == float(row["clocks.current.sm"].split()[0])
    assert value(metrics, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL") == float(row["ecc.errors.uncorrected.volatile.total"])
    # The 590 capture's clocks_event_reasons.active is 0x...01: the GPU is idle, nothing else holds it down.
    assert value(metrics, "gpuops_gpu_clocks_event_reason", reason="gpu_idle") == 1
    assert value(metrics, "gpuops_gpu_clocks_event_reason", reason="hw_thermal_slowdown") == 0
    assert value(metrics, "gpuops_gpu_driver_branch") == 590
    # The GPU is MIG-enabled: utilisation is [N/A] there and is left out rather than reported as 0.
    assert not [key for key in samples(metrics) if key[0] == "DCGM_FI_DEV_GPU_UTIL"]


def test_old_driver_csv_reads_the_throttle_reason_names():
    rows = rows_from_csv("csv_query_gpu_allfields_rtx2080super_windows_driver471.csv")
    metrics = COLLECTOR.collect(rows, {}, "desk", now=NOW)
    mask = int(rows[0]["clocks_throttle_reasons.active"], 16)
    assert value(metrics, "gpuops_gpu_clocks_event_reasons") == mask
    assert value(metrics, "gpuops_gpu_driver_branch") == 471
    assert value(metrics, "DCGM_FI_DEV_GPU_UTIL") == float(rows[0]["utilization.gpu"].split()[0])


@pytest.mark.parametrize("fixture, bus_id, margin", [
    # Absolute thresholds (A10, R535): slowdown 98 C, current 33 C.
    ("q_a10_passthrough_ecc_on_driver535.129.txt", "00000000:07:00.0", 98 - 33),
    # T.Limit form (H100, R535): T.Limit 56 C, slowdown at T.Limit -2 C.
    ("q_8xH100_80gb_hbm3_baremetal_ecc_on_driver535.161.txt", "00000000:19:00.0", 56 + 2),
])
def test_slowdown_margin_from_either_form_of_q(fixture, bus_id, margin):
    q = COLLECTOR.parse_q(read(fixture))
    row = {"index": "0", "uuid": "GPU-x", "name": q[bus_id]["product_name"], "pci.bus_id": bus_id,
           "driver_version": "535.129.03"}
    metrics = COLLECTOR.collect([row], q, "node", now=NOW)
    assert value(metrics, "gpuops_gpu_slowdown_margin_celsius") == margin


def test_vgpu_guest_licence_profile_and_time_left():
    q = COLLECTOR.parse_q(read("q_vgpu_guest_grid_a100-4c_licensed_expiry_driver510_TRUNCATED.txt"))
    row = {"index": "0", "uuid": "GPU-62f13b27-1eda-11b2-a8b5-0869ebe25264", "name": "GRID A100-4C",
           "pci.bus_id": "00000000:02:01.0", "driver_version": "510.47.03"}
    metrics = COLLECTOR.collect([row], q, "ml-vm-01", host_driver_version="525.105.14", now=NOW)
    assert value(metrics, "DCGM_FI_DEV_VGPU_LICENSE_STATUS") == 1
    assert value(metrics, "gpuops_vgpu_info", vgpu_type="GRID A100-4C",
                 license_product="NVIDIA Virtual Compute Server") == 1
    assert value(metrics, "gpuops_vgpu_license_expiry_timestamp_seconds") == calendar.timegm(
        (2022, 5, 27, 0, 8, 28, 0, 0, 0))
    assert value(metrics, "gpuops_vgpu_license_remaining_seconds") == 7 * 86400
    assert value(metrics, "gpuops_gpu_driver_branch") == 510
    assert value(metrics, "gpuops_vgpu_host_driver_branch") == 525

    unlicensed = COLLECTOR.parse_q(read("q_vgpu_guest_grid_a100-4c_unlicensed_unrestricted_driver510_TRUNCATED.txt"))
    metrics = COLLECTOR.collect([row], unlicensed, "ml-vm-01", now=NOW)
    assert value(metrics, "DCGM_FI_DEV_VGPU_LICENSE_STATUS") == 0
    assert not [key for key in samples(metrics) if key[0] == "gpuops_vgpu_license_remaining_seconds"]


@pytest.fixture
def guest_smi(tmp_path, monkeypatch):
    """The lab guest's nvidia-smi stand-in, reading the recordings and load file from tmp_path."""
    standin = _load("gpuops_lab_guest_smi", GUEST_SMI)
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    (recordings / "q-unlicensed.txt").write_text(read(
        "q_vgpu_guest_grid_a100-4c_unlicensed_unrestricted_driver510_TRUNCATED.txt"))
    (recordings / "q-licensed.txt").write_text(read("q_vgpu_guest_grid_a100-4c_licensed_expiry_driver510_TRUNCATED.txt"))
    (tmp_path / "license.json").write_text(json.dumps({"licensed": True}))
    monkeypatch.setattr(standin, "RECORDINGS", str(recordings))
    monkeypatch.setattr(standin, "LICENSE_STATE", str(tmp_path / "license.json"))
    monkeypatch.setattr(standin, "LOAD", str(tmp_path / "load.json"))
    calls = []

    def run_smi(_smi, args):
        calls.append(args)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = standin.main(args)
        return rc, out.getvalue()

    monkeypatch.setattr(COLLECTOR, "run_smi", run_smi)
    return {"dir": tmp_path, "calls": calls}


def test_collector_on_the_guest_standin_drops_fields_the_driver_does_not_know(guest_smi):
    (guest_smi["dir"] / "load.json").write_text(json.dumps({"utilization_gpu": 37, "memory_used_mib": 1024}))
    rows = COLLECTOR.query_gpus("nvidia-smi")
    # The 510 driver does not know clocks_event_reasons.active: asked once, refused, asked again without it.
    assert len(guest_smi["calls"]) == 2
    assert "clocks_event_reasons.active" not in rows[0]
    rc, q_text = COLLECTOR.run_smi("nvidia-smi", ["-q"])
    metrics = COLLECTOR.collect(rows, COLLECTOR.parse_q(q_text), "lab-guest-01", now=NOW)
    assert value(metrics, "DCGM_FI_DEV_GPU_UTIL", modelName="GRID A100-4C") == 37
    assert value(metrics, "DCGM_FI_DEV_FB_USED") == 1024
    assert value(metrics, "DCGM_FI_DEV_FB_FREE") == 4096 - 1024
    assert value(metrics, "DCGM_FI_DEV_VGPU_LICENSE_STATUS") == 1
    # What a vGPU guest cannot read is absent, not zero.
    assert not [key for key in samples(metrics) if key[0] in ("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE")]


def test_main_writes_the_textfile_atomically_and_reports_a_failing_nvidia_smi(guest_smi, monkeypatch):
    out_dir = guest_smi["dir"] / "textfile"
    out_dir.mkdir()
    assert COLLECTOR.main(["--textfile-dir", str(out_dir), "--host-driver-version", "525.105.14"]) == 0
    assert sorted(os.listdir(str(out_dir))) == ["gpuops_gpu.prom"]
    text = (out_dir / "gpuops_gpu.prom").read_text()
    assert re.search(r'^gpuops_gpu_collector_up\{Hostname="[^"]+"\} 1$', text, re.M)
    assert re.search(r'^gpuops_vgpu_host_driver_branch\{.*\} 525$', text, re.M)
    assert "# TYPE DCGM_FI_DEV_FB_USED gauge" in text

    failure = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
    monkeypatch.setattr(COLLECTOR, "run_smi", lambda smi, args: (9, failure))
    assert COLLECTOR.main(["--textfile-dir", str(out_dir)]) == 1
    text = (out_dir / "gpuops_gpu.prom").read_text()
    assert re.search(r"^gpuops_gpu_collector_up\{.*\} 0$", text, re.M)
    assert "DCGM_FI_DEV_FB_USED" not in text


def test_guest_standin_answers_in_nvidia_smis_csv_format(guest_smi):
    rc, text = COLLECTOR.run_smi("nvidia-smi", ["--query-gpu=name,memory.total,temperature.gpu", "--format=csv"])
    assert rc == 0
    assert text == "name, memory.total [MiB], temperature.gpu\nGRID A100-4C, 4096 MiB, [N/A]\n"
    rc, text = COLLECTOR.run_smi("nvidia-smi", ["--query-gpu=bogus", "--format=csv"])
    assert rc == 2 and 'Field "bogus" is not a valid field to query.' in text


def test_promtool_check_metrics_finds_nothing_beyond_dcgm_exporters_own_names_and_labels(guest_smi):
    """Prometheus' naming rules (promtool check metrics) on the collector's output for recorded bare-metal and vGPU
    guest outputs and for the lab guest: every finding is one that dcgm-exporter's names or labels bring."""
    bare_metal = COLLECTOR.collect(rows_from_csv("csv_query_gpu_allfields_h100_mig_driver590.csv"),
                                   COLLECTOR.parse_q(read("q_h100_80gb_mig_enabled_driver590.txt")), "node", now=NOW)
    vgpu_q = COLLECTOR.parse_q(read("q_vgpu_guest_grid_a100-4c_licensed_expiry_driver510_TRUNCATED.txt"))
    vgpu = COLLECTOR.collect([{"index": "0", "uuid": "GPU-62f13b27-1eda-11b2-a8b5-0869ebe25264", "name": "GRID A100-4C",
                               "pci.bus_id": "00000000:02:01.0", "driver_version": "510.47.03"}], vgpu_q, "vm",
                             host_driver_version="525.105.14", now=NOW)
    COLLECTOR.main(["--textfile-dir", str(guest_smi["dir"])])
    lab_guest = (guest_smi["dir"] / COLLECTOR.TEXTFILE).read_text()
    counters = dcgm_exporter_counters()
    for text in (bare_metal.render(), vgpu.render(), lab_guest):
        assert unexplained(text, counters) == [], text
        # promtool knows the long unit names only; the collection's own families use no abbreviated unit either.
        own = set(re.findall(r"^# TYPE (gpuops_\w+) ", text, re.M))
        assert own and not [n for n in own if re.search(r"_(mib|mb|kib|kb|mhz|khz|ms|us|days?|hours?|c)$", n)], own
    # The check can fail: a gauge ending in _count and a unit that is not a base unit are findings.
    assert promtool_findings('# HELP gpuops_gpu_count GPUs.\n# TYPE gpuops_gpu_count gauge\ngpuops_gpu_count 1\n')
    assert unexplained('# HELP x_days_left Days.\n# TYPE x_days_left gauge\nx_days_left{UUID="a"} 1\n', counters)
