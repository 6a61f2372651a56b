# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet_report role against the lab, rendered by a real headless browser and compared with the ground truth."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import shutil
import struct
import subprocess
import sys
from html.parser import HTMLParser

import pytest
import yaml

from conftest import ROOT
from redfish_direct import LabBmc
from vsphere_direct import Direct

sys.path.insert(0, os.path.join(ROOT, ".tmp", "collections"))
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia_smi import parse_query  # noqa: E402

# vGPUs per Tesla P40 for the profiles used here (NVIDIA's vGPU types, as in the reference notes).
P40_MAX = {"grid_p40-8q": 3, "grid_p40-3q": 8}
PLACED = (("gpu-vm-01", "grid_p40-8q"), ("gpu-vm-02", "grid_p40-8q"), ("gpu-vm-04", "grid_p40-3q"))
WINDOW = (1400, 2000)
GUEST_FIXTURE = "q_vgpu_guest_grid_a100-4c_licensed_expiry_driver510_TRUNCATED.txt"


def chromium():
    """Debian's chromium, or a skip that says how to get it (the test never installs packages)."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("Debian's chromium is not installed: the fleet report's browser test needs it (tools/bootstrap.sh "
                "installs it with the other Debian packages).")


def browser(html_file, *args):
    argv = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--window-size=%d,%d" % WINDOW] + list(args) + ["file://" + str(html_file)]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


class Dom(HTMLParser):
    """GPU figures (attributes and visible text), host cards, guest rows and every URL-bearing attribute."""

    def __init__(self, text):
        HTMLParser.__init__(self)
        self.figures, self.hosts, self.guests, self.urls, self.host_meta = [], [], {}, [], {}
        self._figure = self._h3 = self._guest = self._meta = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.urls += [(tag, k, v) for k, v in attrs.items() if k in ("src", "href", "xlink:href", "action")]
        if tag == "figure" and "gpu" in (attrs.get("class") or ""):
            self._figure = [attrs, []]
        elif tag == "h3":
            self._h3 = []
        elif tag == "tr" and attrs.get("data-guest"):
            self._guest = (attrs["data-guest"], [])
        elif tag == "p" and self.hosts and self._figure is None and attrs.get("class") == "meta" \
                and self.hosts[-1] not in self.host_meta:
            self._meta = []

    def handle_endtag(self, tag):
        if tag == "figure" and self._figure:
            self.figures.append((self._figure[0], " ".join("".join(self._figure[1]).split())))
            self._figure = None
        elif tag == "h3" and self._h3 is not None:
            self.hosts.append("".join(self._h3).split()[0])
            self._h3 = None
        elif tag == "tr" and self._guest:
            self.guests[self._guest[0]] = " ".join("".join(self._guest[1]).split())
            self._guest = None
        elif tag == "p" and self._meta is not None:
            self.host_meta[self.hosts[-1]] = "".join(self._meta)
            self._meta = None

    def handle_data(self, data):
        for part in (self._figure[1] if self._figure else None, self._h3, self._meta,
                     self._guest[1] if self._guest else None):
            if part is not None:
                part.append(data)


def png_size(path):
    with open(path, "rb") as handle:
        head = handle.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def guest_facts():
    """nvidia-smi facts parsed from a recorded output, as nvidia_smi_info would return them."""
    with open(os.path.join(ROOT, "tests", "fixtures", "nvidia-smi", GUEST_FIXTURE)) as handle:
        facts = parse_query(handle.read())
    facts["present"] = True
    return facts


@pytest.fixture
def carved(lab):
    """Shared Direct on esxi-01 and esxi-02, two 8Q vGPUs on the first and one 3Q on the second, all running."""
    direct = Direct(lab)
    try:
        for host in ("esxi-01.lab.local", "esxi-02.lab.local"):
            direct.shared_direct(host)
        for vm, profile in PLACED:
            direct.add_vgpu(vm, profile)
            direct.power_on(vm)
    finally:
        direct.close()
    return lab.state()


def site_inventory(lab, path):
    """The lab's BMCs where this lab runs them, and one guest on gpu-vm-01."""
    path.write_text(yaml.safe_dump({
        "esxi_hosts": {"hosts": dict((name, {"bmc_address": bmc["baseuri"]}) for name, bmc in lab.bmcs.items())},
        "gpu_guests": {"hosts": {"trainer.lab": {"vgpu_vm_name": "gpu-vm-01", "vgpu_profile": "grid_p40-8q"}}}}))
    return path


def test_report_renders_in_chromium_and_shows_the_lab_as_it_is(lab, run_tasks, tmp_path, carved):
    chromium()
    out = tmp_path / "out"
    tasks = [
        {"name": "doctor", "ansible.builtin.include_role": {"name": "gpuops.vgpu.doctor"}, "vars": {
            "doctor_verdict": False, "doctor_output_dir": str(out),
            "doctor_guest_facts": {"trainer.lab": {"nvidia_smi": guest_facts(), "cuda_version": "11.6.2"}}}},
        {"name": "fleet", "ansible.builtin.include_role": {"name": "gpuops.vgpu.fleet_report"}, "vars": {
            "fleet_report_output_dir": str(out)}},
    ]
    run = run_tasks(tasks, inventories=[site_inventory(lab, tmp_path / "site.yml")])
    assert lab.state() == carved
    html_file = out / "fleet-report.html"
    said = next(r["msg"] for r in run.results if r["_task"].endswith("Say where the report is"))
    assert said[0] == "Fleet report: %s" % html_file

    html = html_file.read_text()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    assert "<script" not in html and "<link" not in html

    dom = Dom(browser(html_file, "--dump-dom"))
    assert dom.urls == []
    truth_hosts = [host["name"] for host in carved["hosts"]]
    assert sorted(dom.hosts) == sorted(truth_hosts)
    figures = dict(((a["data-host"], a["data-pci"]), (a, text)) for a, text in dom.figures)
    assert len(figures) == sum(len(host["gpus"]) for host in carved["hosts"])
    for host in carved["hosts"]:
        for gpu in host["gpus"]:
            attrs, text = figures[(host["name"], gpu["pci_id"])]
            used = len(gpu["vms"])
            assert attrs["data-used"] == str(used)
            if gpu["profile"]:
                free = P40_MAX[gpu["profile"]] - used
                assert (attrs["data-profile"], attrs["data-free"]) == (gpu["profile"], str(free))
                assert "%s · %d used · %d free" % (gpu["profile"], used, free) in text
                assert "VMs: %s" % ", ".join(sorted(gpu["vms"])) in text
            else:
                assert attrs["data-profile"] == "" and "idle · no vGPU" in text
            assert gpu["device_name"] in text and gpu["pci_id"] in text
            assert ("not Shared Direct" in text) == (gpu["graphics_type"] != "sharedDirect")
    for name in ("esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local"):
        inlet = [t["reading"] for t in LabBmc(lab, name).state()["thermal"]["temperatures"]
                 if t["context"] == "Intake"][0]
        assert "inlet %s °C" % inlet in dom.host_meta[name]
    placed = dict((vm["name"], vm) for vm in carved["vms"])
    assert placed["gpu-vm-01"]["vgpus"][0]["profile"] == "grid_p40-8q"
    assert "Licensed" in dom.guests["trainer.lab"] and placed["gpu-vm-01"]["host"] in dom.guests["trainer.lab"]

    png = tmp_path / "fleet-report.png"
    browser(html_file, "--screenshot=%s" % png)
    assert png_size(png) == WINDOW and os.path.getsize(png) > 30000
    keep = os.environ.get("FLEET_REPORT_PNG")
    if keep:
        shutil.copyfile(str(png), keep)

    data = json.loads((out / "fleet-report.json").read_text())
    assert data["summary"]["vgpus"] == sum(len(g["vms"]) for h in carved["hosts"] for g in h["gpus"])
    assert data["summary"]["findings"]["FAIL"] == sum(1 for f in data["findings"] if f["status"] == "FAIL") > 0


def test_check_mode_report_from_the_doctor_file(lab, run_tasks, tmp_path, carved):
    out = tmp_path / "out"
    out.mkdir()
    doctor = {"generated_at": "2026-01-01T00:00:00Z", "findings": [{
        "layer": "host", "object": "esxi-03.lab.local 0000:3b:00.0", "check": "shared_direct", "status": "FAIL",
        "message": "Tesla P40 is basic, not Shared Direct: it takes no vGPU.", "remediation": "Set <Shared Direct>."}],
        "facts": {"hosts": [], "guests": [], "vms": []}}
    (out / "doctor.json").write_text(json.dumps(doctor))
    task = {"name": "fleet", "ansible.builtin.include_role": {"name": "gpuops.vgpu.fleet_report"}, "vars": {
        "fleet_report_output_dir": str(out), "fleet_report_clusters": ["gpu-cluster"]}}
    run_tasks([task], check=True)
    assert lab.state() == carved
    html = (out / "fleet-report.html").read_text()
    assert "doctor ran 2026-01-01T00:00:00Z" in html and "Set &lt;Shared Direct&gt;." in html
    assert 'data-cluster="mixed-cluster"' not in html and 'data-cluster="gpu-cluster"' in html


def test_the_playbooks_write_the_report_then_apply_the_doctors_verdict(lab, tmp_path):
    extra = {"vcenter_port": lab.port, "doctor_output_dir": str(tmp_path), "fleet_report_output_dir": str(tmp_path),
             "doctor_verdict": False}
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".tmp", "collections"), ANSIBLE_NOCOLOR="1")
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook")] + lab.inventory_args + [
        "-i", str(site_inventory(lab, tmp_path / "site.yml")), "-e", json.dumps(extra),
        os.path.join(ROOT, "playbooks", "doctor.yml"), os.path.join(ROOT, "playbooks", "report.yml")]
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    report = json.loads((tmp_path / "doctor.json").read_text())
    failing = report["summary"]["FAIL"]
    assert failing > 0 and proc.returncode == 2, proc.stdout[-3000:]
    assert "Fleet report: %s" % (tmp_path / "fleet-report.html") in proc.stdout
    assert "%d check(s) FAIL: " % failing in proc.stdout
    assert proc.stdout.index("Fleet report:") < proc.stdout.index("%d check(s) FAIL: " % failing)


def test_bad_input_fails_before_anything_is_read(lab, run_tasks, tmp_path):
    lab.reset_stats()
    task = {"name": "fleet", "ansible.builtin.include_role": {"name": "gpuops.vgpu.fleet_report"}, "vars": {
        "fleet_report_clusters": {"gpu-cluster": True},
        "fleet_report_output_dir": str(tmp_path)}}
    run = run_tasks([task], expect_failure=True)
    assert "fleet_report_clusters" in run.failed[0]["msg"]
    assert lab.stats()["soap_requests"] == 0 and not os.path.exists(str(tmp_path / "fleet-report.html"))


def test_a_truncated_doctor_file_is_refused_naming_the_file_and_the_fix(lab, run_tasks, tmp_path):
    doctor_file = tmp_path / "doctor.json"
    doctor_file.write_text('{"generated_at": "2026-01-01T00:00:00Z", "findings": [{"layer": "ho')
    task = {"name": "fleet", "ansible.builtin.include_role": {"name": "gpuops.vgpu.fleet_report"}, "vars": {
        "fleet_report_output_dir": str(tmp_path)}}
    run = run_tasks([task], expect_failure=True)
    message = run.failed[0]["msg"]
    assert message.startswith("The record %s is damaged: it is not complete JSON" % doctor_file)
    assert "Run playbooks/doctor.yml again to write %s anew" % doctor_file in message
    assert not (tmp_path / "fleet-report.html").exists()
