# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.vgpu.gpu_monitoring on two lab guests, read back through a real Prometheus server.

The guests are lab guest containers of their own (labctl.start_guests) with the stand-in GRID driver, licensed
by grid_license. The role runs in check mode (nothing installed), for real, and again (no change); the guests'
files, services and textfile are read on the guests. Then Debian's Prometheus server (started here, on a free
port, with its data under the test's tmp) scrapes both node exporters, and the GPU metrics it serves through its
HTTP API are compared with what each guest's nvidia-smi reports; the alert rules of extensions/prometheus load
and the driver branch alert is pending for the lab's 510 guest driver on a 525 host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest
import yaml

from conftest import LAB_CONTROL, PORT_OFFSET, ROOT

sys.path.insert(0, os.path.join(ROOT, "lab", "guests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "unit", "roles", "gpu_monitoring"))
import inventory as lab_inventory  # noqa: E402  pylint: disable=wrong-import-position
from promtool_findings import dcgm_exporter_counters, unexplained  # noqa: E402  pylint: disable=wrong-import-position

GUESTS = ("monitor-guest-1", "monitor-guest-2")
STATE_DIR = os.path.join(ROOT, ".tmp", "gpu-monitoring-%d" % PORT_OFFSET)
TEXTFILE = "/var/lib/prometheus/node-exporter/gpuops_gpu.prom"
RULES = os.path.join(ROOT, "extensions", "prometheus", "gpu-alerts.yml")
PLAY = """
- name: Guest driver and license, then monitoring
  hosts: gpu_guests
  gather_facts: false
  module_defaults:
    group/gpuops.vgpu.nvidia:
      query_format: "{{ nvidia_smi_query_format }}"
  roles:
    - role: gpuops.vgpu.grid_driver
      tags: [driver]
    - role: gpuops.vgpu.grid_license
      tags: [driver]
    - role: gpuops.vgpu.gpu_monitoring
      vars:
        gpu_monitoring_host_driver_version: "{{ grid_driver_host_manager_version }}"
        gpu_monitoring_interval: 5s
"""


@pytest.fixture(scope="module")
def guests():
    os.makedirs(STATE_DIR, exist_ok=True)
    # Their own port range: 200 above the lab's guests at the same offset.
    wanted = [{"name": name, "ssh_port": LAB_CONTROL.GUEST_SSH_PORT + 200 + index} for index, name in enumerate(GUESTS)]
    started = LAB_CONTROL.start_guests(wanted, STATE_DIR, PORT_OFFSET)
    inventory = lab_inventory.write_inventory(os.path.join(STATE_DIR, "inventory.yml"), started, STATE_DIR)
    playbook = os.path.join(STATE_DIR, "monitoring.yml")
    with open(playbook, "w") as handle:
        handle.write(PLAY)
    yield {"started": started, "inventory": inventory, "playbook": playbook}
    LAB_CONTROL.stop_guests([guest["container"] for guest in started.values()])


def on_guest(guests, name, *command):
    return LAB_CONTROL.podman("exec", guests["started"][name]["container"], *command, check=False)


def play(guests, *args):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"),
               ANSIBLE_ROLES_PATH=os.path.join(ROOT, "roles"), ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i",
                           guests["inventory"], guests["playbook"]] + list(args), cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert proc.returncode == 0, proc.stdout[-6000:]
    return dict((line.split()[0], line) for line in proc.stdout.splitlines() if line.split()[:1] and
                line.split()[0] in GUESTS and "ok=" in line)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def api(base, path, **params):
    url = "%s/api/v1/%s?%s" % (base, path, urllib.parse.urlencode(params))
    with urllib.request.urlopen(url, timeout=10) as response:
        answer = json.load(response)
    assert answer["status"] == "success", answer
    return answer["data"]


@contextlib.contextmanager
def prometheus_server(guests, tmp_path):
    targets = ["127.0.0.1:%d" % guest["metrics_port"] for guest in guests["started"].values()]
    config = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"}, "rule_files": [RULES],
              "scrape_configs": [{"job_name": "gpu_guests", "static_configs": [{"targets": targets}]}]}
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    port = free_port()
    log = open(str(tmp_path / "prometheus.log"), "w")
    server = subprocess.Popen([shutil.which("prometheus") or "/usr/bin/prometheus",
                               "--config.file=%s" % (tmp_path / "prometheus.yml"),
                               "--storage.tsdb.path=%s" % (tmp_path / "data"),
                               "--web.listen-address=127.0.0.1:%d" % port], stdout=log, stderr=subprocess.STDOUT)
    base = "http://127.0.0.1:%d" % port
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if all(t["health"] == "up" for t in api(base, "targets")["activeTargets"]) and \
                        len(api(base, "targets")["activeTargets"]) == len(targets):
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "prometheus.log").read_text()[-3000:]
            time.sleep(0.5)
        yield {"base": base, "targets": targets}
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()


def test_role_installs_idempotently_and_prometheus_reads_what_nvidia_smi_reports(guests, tmp_path):
    play(guests, "--tags", "driver")
    predicted = play(guests, "--check")
    for name in GUESTS:
        assert "changed=0" not in predicted[name], predicted[name]
        # Check mode installed nothing.
        assert "ii  prometheus-node-exporter" not in on_guest(guests, name, "dpkg", "-l", "prometheus-node-exporter").stdout
        assert on_guest(guests, name, "test", "-e", TEXTFILE).returncode == 1

    play(guests)
    for name in GUESTS:
        for unit in ("prometheus-node-exporter.service", "gpuops-gpu-metrics.timer"):
            assert on_guest(guests, name, "systemctl", "is-enabled", unit).stdout.strip() == "enabled", unit
            assert on_guest(guests, name, "systemctl", "is-active", unit).stdout.strip() == "active", unit
        text = on_guest(guests, name, "cat", TEXTFILE).stdout
        assert 'DCGM_FI_DEV_VGPU_LICENSE_STATUS{' in text and 'modelName="GRID A100-4C"' in text, text
        assert 'gpuops_gpu_collector_up{Hostname="%s"} 1' % name in text, text
        assert unexplained(text, dcgm_exporter_counters()) == [], text

    again = play(guests)
    for name in GUESTS:
        assert "changed=0" in again[name], again[name]

    with prometheus_server(guests, tmp_path) as prometheus:
        compare_with_nvidia_smi(guests, prometheus)


def compare_with_nvidia_smi(guests, prometheus):
    # A load on the first guest only, so the values cannot match by chance; the timer (5 s) carries it over.
    load = json.dumps({"utilization_gpu": 37, "utilization_memory": 12, "memory_used_mib": 1536})
    on_guest(guests, GUESTS[0], "sh", "-c", "echo '%s' >/var/lib/gpuops-lab/gpu-load.json" % load)
    fields = "utilization.gpu,utilization.memory,memory.used,memory.free,memory.total"
    metrics = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE",
               "gpuops_gpu_fb_total_bytes")
    expected = {}
    for name, guest in guests["started"].items():
        csv = on_guest(guests, name, "nvidia-smi", "--query-gpu=" + fields, "--format=csv,noheader,nounits").stdout
        values = [float(v) for v in csv.strip().split(", ")]
        expected["127.0.0.1:%d" % guest["metrics_port"]] = values[:-1] + [values[-1] * 1024 * 1024]  # MiB, bytes
    assert expected["127.0.0.1:%d" % guests["started"][GUESTS[0]]["metrics_port"]][0] == 37

    deadline = time.monotonic() + 60
    while True:
        seen = dict((target, []) for target in expected)
        for metric in metrics:
            for sample in api(prometheus["base"], "query", query=metric)["result"]:
                seen[sample["metric"]["instance"]].append(float(sample["value"][1]))
        if seen == expected or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert seen == expected

    licensed = api(prometheus["base"], "query", query="DCGM_FI_DEV_VGPU_LICENSE_STATUS")["result"]
    assert sorted((s["metric"]["Hostname"], s["value"][1]) for s in licensed) == [(n, "1") for n in GUESTS]
    for name in GUESTS:
        assert "Licensed" in on_guest(guests, name, "nvidia-smi", "-q").stdout

    # The rules load, and the lab's 510 guest driver on a 525 host is caught (pending for its 10 minutes).
    groups = api(prometheus["base"], "rules")["groups"]
    with open(RULES) as handle:
        written = [rule["alert"] for group in yaml.safe_load(handle)["groups"] for rule in group["rules"]]
    assert [(rule["name"], rule["health"]) for group in groups for rule in group["rules"]] == [
        (name, "ok") for name in written]
    deadline = time.monotonic() + 30
    while True:
        alerts = [a for a in api(prometheus["base"], "alerts")["alerts"] if a["labels"]["alertname"] ==
                  "GpuDriverBranchUnlikeHost"]
        if len(alerts) == 2 or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert sorted(a["labels"]["Hostname"] for a in alerts) == sorted(GUESTS)
