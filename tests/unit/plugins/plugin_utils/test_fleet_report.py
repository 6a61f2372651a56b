# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's data and HTML: what it draws per GPU, what it escapes, and that it loads nothing."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import re
from html.parser import HTMLParser

from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _doctor
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _doctor_facts
from ansible_collections.gpuops.vgpu.plugins.plugin_utils import _fleet_report

from ansible_collections.gpuops.vgpu.tests.unit.plugins.plugin_utils.doctor_data import NOW, healthy


class Page(HTMLParser):
    """Tags with their attributes, and the text inside every element that has a class or data attribute."""

    def __init__(self, html):
        HTMLParser.__init__(self)
        self.tags = []
        self.stack = []
        self.texts = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag not in ("br", "meta", "rect"):
            self.stack.append((tag, attrs, []))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if self.stack and self.stack[-1][0] == tag:
            _tag, attrs, text = self.stack.pop()
            self.texts.append((tag, attrs, "".join(text)))
            if self.stack:
                self.stack[-1][2].extend(text)

    def handle_data(self, data):
        if self.stack:
            self.stack[-1][2].append(data)

    def elements(self, tag, cls=None):
        return [(attrs, text) for t, attrs, text in self.texts
                if t == tag and (cls is None or cls in (attrs.get("class") or "").split())]


def report(raw=None, doctor=True):
    raw = raw or healthy()
    facts = _doctor_facts.collect(raw)
    findings = _doctor.run_checks(facts, {"now": NOW})
    doctor_report = {"generated_at": NOW, "findings": findings, "facts": facts} if doctor else None
    return _fleet_report.build(raw["gpu_info"], doctor_report, generated_at="2026-03-01T12:05:00Z"), raw


def gpu_host_name(raw, index):
    return raw["gpu_info"]["hosts"][index]["name"]


def carved_raw():
    raw = healthy()
    gpu = raw["gpu_info"]["hosts"][2]["gpus"][0]
    gpu.update(profile="grid_p40-3q", profiles=["grid_p40-3q"], vms=["render-01", "render-02"], used=2, max=8,
               free=6)
    raw["host_nvidia_smi"][gpu_host_name(raw, 2)]["nvidia_smi"]["vgpu"]["gpus"][0]["vgpus"] = [
        {"vm_name": "render-01"}, {"vm_name": "render-02"}]
    raw["gpu_info"]["hosts"][1]["gpus"][0].update(graphics_type="basic", configured_graphics_type="shared")
    return raw


def test_data_per_cluster_host_and_gpu_with_what_the_doctor_measured():
    data, raw = report(carved_raw())
    assert json.loads(json.dumps(data)) == data
    assert [c["name"] for c in data["clusters"]] == ["gpu-cluster"]
    hosts = data["clusters"][0]["hosts"]
    assert [h["name"] for h in hosts] == [h["name"] for h in raw["gpu_info"]["hosts"]]
    first = hosts[0]
    assert (first["inlet_celsius"], first["driver"], first["server"]) == (23, "525.105.14", "dell PowerEdge R730")
    gpu = first["gpus"][0]
    assert (gpu["profile"], gpu["used"], gpu["max"], gpu["free"], gpu["vms"]) == ("grid_p40-8q", 1, 3, 2,
                                                                                  ["gpu-vm-01"])
    assert (gpu["temperature_celsius"], gpu["ecc"]) == (41, True)
    assert hosts[1]["findings"] == {"FAIL": 1, "WARN": 0}
    passed = len(data["findings"]) - 5
    assert data["summary"] == {"hosts": 3, "gpus": 3, "vgpus": 3, "carved_slots": 11, "idle_gpus": 1, "guests": 1,
                               "passthrough_gpus": 0, "licensed": 1, "servers": 0, "server_gpus": 0,
                               "findings": {"FAIL": 1, "WARN": 1, "SKIP": 3, "PASS": passed}}
    assert data["clusters"][0]["drs"] == "on (fullyAutomated)"
    guest = data["guests"][0]
    assert (guest["vm"], guest["host"], guest["gpu"], guest["profile"], guest["licensed"]) == (
        "gpu-vm-01", "esxi-01.lab.local", "0000:3b:00.0", "grid_p40-8q", True)


def test_without_the_doctor_the_inventory_is_still_drawn():
    data, _raw = report(doctor=False)
    assert data["guests"] == [] and data["findings"] == []
    assert data["clusters"][0]["drs"] is None
    assert data["clusters"][0]["hosts"][0]["gpus"][0]["temperature_celsius"] is None
    html = _fleet_report.render_html(data)
    assert "The doctor has not run" in html and "No guest read by the doctor" in html


def test_clusters_and_standalone_hosts():
    raw = healthy()
    standalone = copy.deepcopy(raw["gpu_info"]["hosts"][0])
    standalone.update(name="esxi-sa-01.lab.local", cluster=None)
    raw["gpu_info"]["hosts"].append(standalone)
    data = _fleet_report.build(raw["gpu_info"])
    assert [c["name"] for c in data["clusters"]] == ["gpu-cluster", None]
    assert [c["name"] for c in _fleet_report.build(raw["gpu_info"], clusters=["gpu-cluster"])["clusters"]] == [
        "gpu-cluster"]
    page = Page(_fleet_report.render_html(data))
    assert [text for _attrs, text in page.elements("h2")][:2] == ["gpu-cluster", "Standalone hosts"]


def test_each_gpu_is_drawn_with_one_box_per_slot():
    data, _raw = report(carved_raw())
    page = Page(_fleet_report.render_html(data))
    figures = page.elements("figure", "gpu")
    assert [(a["data-host"], a["data-profile"], a["data-used"], a["data-free"], a["data-max"]) for a, _t in figures] == [
        ("esxi-01.lab.local", "grid_p40-8q", "1", "2", "3"),
        ("esxi-02.lab.local", "", "0", "", ""),
        ("esxi-03.lab.local", "grid_p40-3q", "2", "6", "8")]
    texts = [t for _a, t in figures]
    assert "grid_p40-8q · 1 used · 2 free" in texts[0] and "VMs: gpu-vm-01" in texts[0]
    assert "idle · no vGPU · needs Shared Direct" in texts[1] and "basic (not Shared Direct)" in texts[1]
    assert "41 °C" in texts[2] and "ECC on" in texts[2]
    html = _fleet_report.render_html(data)
    svgs = re.findall(r"<svg.*?</svg>", html, re.S)
    assert [len(re.findall("<rect", svg)) for svg in svgs] == [3, 1, 8]
    assert [svg.count('fill="#2b6cb0"') for svg in svgs] == [1, 0, 2]
    assert [svg.count('stroke-dasharray') for svg in svgs] == [2, 1, 6]
    assert "<title>render-01</title>" in svgs[2]


def test_every_text_is_escaped_and_nothing_is_loaded():
    raw = carved_raw()
    raw["gpu_info"]["hosts"][2]["gpus"][0]["vms"] = ['<script>alert("x")</script>', "a&b"]
    raw["gpu_info"]["hosts"][0]["name"] = 'esxi-"01"<b>'
    data, _raw = report(raw)
    html = _fleet_report.render_html(data)
    assert "<script" not in html and 'esxi-"01"<b>' not in html and "a&b" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html and "a&amp;b" in html
    page = Page(html)
    assert [a["data-host"] for a, _t in page.elements("article", "host")][0] == 'esxi-"01"<b>'
    for tag, attrs in page.tags:
        assert tag not in ("script", "link", "img", "iframe", "object", "embed")
        for name in ("src", "href", "xlink:href", "action"):
            assert name not in attrs, (tag, attrs)
    assert not re.search(r"(?:https?:)?//[a-z0-9]", html, re.I)
    assert "@import" not in html and "url(" not in html


def test_findings_problems_first_passes_folded():
    data, _raw = report(carved_raw())
    html = _fleet_report.render_html(data)
    rows = re.findall(r'<tr class="finding"><td><span class="badge (\w+)">.*?</tr>', html)
    assert rows[:5] == ["FAIL", "WARN", "SKIP", "SKIP", "SKIP"]
    assert rows[5:] == ["PASS"] * (len(data["findings"]) - 5)
    assert [t for _a, t in Page(html).elements("summary")] == ["%d checks passed" % (len(rows) - 5)]
    first = html[html.index('<tr class="finding">'):]
    first = first[:first.index("</tr>")]
    assert "esxi-02.lab.local 0000:3b:00.0" in first and "Set the GPU to Shared Direct" in first


def test_each_guest_links_its_metrics():
    raw = healthy()
    facts = _doctor_facts.collect(raw)
    name = facts["guests"][0]["name"]
    doctor_report = {"generated_at": NOW, "findings": _doctor.run_checks(facts, {"now": NOW}), "facts": facts}
    data = _fleet_report.build(raw["gpu_info"], doctor_report, metrics={name: "http://10.0.0.5:9100/metrics"})
    assert data["guests"][0]["metrics_url"] == "http://10.0.0.5:9100/metrics"
    page = Page(_fleet_report.render_html(data))
    assert ("a", {"href": "http://10.0.0.5:9100/metrics"}) in page.tags
    # A guest without one, or a value that is not a web address, gets no link.
    for metrics in ({}, {name: "javascript:alert(1)"}):
        data = _fleet_report.build(raw["gpu_info"], doctor_report, metrics=metrics)
        assert not [attrs for tag, attrs in Page(_fleet_report.render_html(data)).tags if tag == "a"]


def test_driver_branches_and_where_an_upgrade_stands():
    data, raw = report(carved_raw())
    assert [h["driver_branch"] for h in data["clusters"][0]["hosts"]] == ["R525"] * 3
    assert data["guests"][0]["driver_branch"] == "R525"
    assert data["drivers"] == {"hosts": {"R525": 3}, "guests": {"R525": 1}, "newest_branch": "R525",
                               "hosts_on_newest": 3, "guests_on_newest": 1, "in_progress": False}
    assert "R525driver branch everywhere" in _fleet_report.render_html(data).replace("</b><span>", "")

    raw = carved_raw()
    raw["host_nvidia_smi"][gpu_host_name(raw, 2)]["nvidia_smi"]["driver_version"] = "535.54.06"
    data, raw = report(raw)
    assert data["drivers"]["in_progress"] is True and data["drivers"]["hosts"] == {"R525": 2, "R535": 1}
    page = Page(_fleet_report.render_html(data))
    cards = [text for _attrs, text in page.elements("div", "card")]
    assert "R535: 1 / 3 hosts, 0 / 1 guestsdriver upgrade under way" in cards
    host = [text for attrs, text in page.elements("article", "host") if "535" in text][0]
    assert "vGPU Manager 535.54.06 (R535)" in host
    assert "525.105.17 (R525)" in [text for _attrs, text in page.elements("tr") if "gpu-vm-01" in text][0]


def test_passthrough_gpus_show_their_vm_and_nvlink_set():
    raw = healthy()
    pairs = [["0000:3b:00.0", "0000:5e:00.0"]]
    raw["passthrough_nvlink_sets"] = {"esxi-31.lab.local": pairs}
    raw["clusters"].append("hpc-cluster")
    gpus = []
    for pci, vm in zip(pairs[0] + ["0000:86:00.0"], ["pt-vm-01", "pt-vm-01", None]):
        gpus.append({"pci_id": pci, "device_name": "NVIDIA A100-PCIE-40GB", "model": "A100-40", "memory_mib": 40960,
                     "graphics_type": "basic", "configured_graphics_type": "basic", "xorg_restart_pending": False,
                     "vgpu_mode": None, "profile": None, "profiles": [], "vms": [], "used": 0, "max": None,
                     "free": None, "passthrough": {"enabled": True, "active": True, "vm": vm,
                                                   "vm_power_state": vm and "poweredOn"}})
    raw["gpu_info"]["hosts"].append({"name": "esxi-31.lab.local", "cluster": "hpc-cluster",
                                     "connection_state": "connected", "maintenance_mode": False, "gpus": gpus,
                                     "supported_profiles": []})
    data, _raw = report(raw)
    assert data["summary"]["passthrough_gpus"] == 3
    host = [h for c in data["clusters"] for h in c["hosts"] if h["name"] == "esxi-31.lab.local"][0]
    assert [g["nvlink_set"] for g in host["gpus"]] == [pairs[0], pairs[0], None]
    page = Page(_fleet_report.render_html(data))
    figures = [(attrs["data-pci"], attrs["data-vm"], text) for attrs, text in page.elements("figure", "passthrough")]
    assert [(pci, vm) for pci, vm, _text in figures] == [
        ("0000:3b:00.0", "pt-vm-01"), ("0000:5e:00.0", "pt-vm-01"), ("0000:86:00.0", "")]
    assert "NVLink set 0000:3b:00.0 + 0000:5e:00.0" in figures[0][2] and "free" in figures[2][2]
