# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""`promtool check metrics` on the collector's textfile, less the findings that dcgm-exporter's own names and labels
bring: the DCGM_FI_* families keep dcgm-exporter's names (its counters do not end in _total) and every family carries
its labels UUID, modelName and Hostname (camelCase), so that the collector's metrics join with dcgm-exporter's and its
dashboards (docs/monitoring.md). Used by the unit tests (recorded outputs) and the integration test (a guest)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import shutil
import subprocess

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))

# dcgm-exporter's label names (github.com/NVIDIA/dcgm-exporter, its internal/pkg/counters and the metrics it serves).
DCGM_EXPORTER_LABELS = frozenset(("gpu", "UUID", "device", "modelName", "Hostname"))
SAMPLE = re.compile(r"^(\w+)\{(.*)\} \S+$")
DCGM_COUNTERS = os.path.join(REPO, "tests", "fixtures", "dcgm-exporter", "default-counters.csv")


def dcgm_exporter_types():
    """{metric: type} from dcgm-exporter's etc/default-counters.csv, its commented-out (off by default) lines too."""
    if not os.path.isfile(DCGM_COUNTERS):
        raise AssertionError("%s is missing; restore tests/fixtures/dcgm-exporter from git" % DCGM_COUNTERS)
    types = {}
    with open(DCGM_COUNTERS) as handle:
        for line in handle:
            cells = [cell.strip() for cell in line.lstrip("#").split(",")]
            if len(cells) >= 3 and re.match(r"^DCGM_\w+$", cells[0]):
                types[cells[0]] = cells[1]
    return types


def dcgm_exporter_counters():
    return set(name for name, kind in dcgm_exporter_types().items() if kind == "counter")


def promtool_findings(text):
    """promtool's findings on ``text``, one (family, message) per line."""
    promtool = shutil.which("promtool")
    if promtool is None:
        raise AssertionError("promtool is missing: make deps installs Debian's prometheus package, which ships it")
    proc = subprocess.run([promtool, "check", "metrics"], input=text, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    findings = []
    for line in proc.stdout.splitlines():
        family, _space, message = line.partition(" ")
        if message:
            findings.append((family, message))
    if proc.returncode not in (0, 3) or (proc.returncode == 3) != bool(findings):
        raise AssertionError("promtool check metrics failed (%d):\n%s" % (proc.returncode, proc.stdout))
    return findings


def camel_case_labels(text):
    """{family: camelCase label names its samples carry}."""
    found = {}
    for line in text.splitlines():
        match = SAMPLE.match(line)
        if match:
            names = re.findall(r'(\w+)="', match.group(2))
            found.setdefault(match.group(1), set()).update(n for n in names if re.search(r"[A-Z]", n))
    return found


def unexplained(text, dcgm_counters):
    """The findings that neither dcgm-exporter's counter names nor its label names account for."""
    labels = camel_case_labels(text)
    left = []
    for family, message in promtool_findings(text):
        if message == 'counter metrics should have "_total" suffix' and family in dcgm_counters:
            continue
        if "snake_case" in message and labels.get(family) and labels[family] <= DCGM_EXPORTER_LABELS:
            continue
        left.append((family, message))
    return left
