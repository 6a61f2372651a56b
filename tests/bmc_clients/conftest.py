# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Clients nobody here wrote against the lab BMCs: one BMC per vendor profile, started alone (no vCenter, no
guests), so the whole set runs in seconds inside `make test`'s redfish stage."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import ssl
import sys
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "lab"))
from labctl import ensure_certificate, start, stop_pid  # noqa: E402

VENDORS = sorted(name[:-4] for name in os.listdir(os.path.join(ROOT, "lab", "bmc", "vendors")) if name.endswith(".yml"))
BASE_PORT = 8491
USER, PASSWORD = "root", "clients-Pass1"


class Bmc:
    def __init__(self, vendor, baseuri, cert):
        self.vendor, self.baseuri, self.cert = vendor, baseuri, cert
        self.address = baseuri[len("https://"):]
        self.credentials = (USER, PASSWORD)

    def lab(self, method, path):
        context = ssl.create_default_context(cafile=self.cert)
        context.check_hostname = False  # the lab certificate names 127.0.0.1 only in its subject
        request = urllib.request.Request(self.baseuri + "/lab" + path, method=method)
        with urllib.request.urlopen(request, context=context, timeout=30) as answer:
            return json.loads(answer.read() or b"null")

    def state(self):
        return self.lab("GET", "/state")

    def reset(self):
        return self.lab("POST", "/reset")


@pytest.fixture(scope="session")
def bmcs(tmp_path_factory):
    work = str(tmp_path_factory.mktemp("bmcs"))
    offset = int(os.environ.get("LAB_PORT_OFFSET", "0"))
    hosts = [{"name": "clients-%s.lab.local" % vendor, "bmc": {"vendor": vendor, "port": BASE_PORT + i + offset}}
             for i, vendor in enumerate(VENDORS)]
    topology = os.path.join(work, "topology.json")
    with open(topology, "w") as handle:
        json.dump({"datacenters": [{"name": "clients", "hosts": hosts}]}, handle)
    cert, key = ensure_certificate(work)
    ready = os.path.join(work, "bmc.ready")
    pid = start("client-bmcs", [sys.executable, os.path.join(ROOT, "lab", "bmc", "bmc_lab.py"), "--topology",
                                topology, "--cert", cert, "--key", key, "--username", USER, "--password", PASSWORD,
                                "--state-dir", os.path.join(work, "state"), "--ready-file", ready, "--reset-seconds",
                                "0.3"], work, ready)
    try:
        yield dict((h["bmc"]["vendor"], Bmc(h["bmc"]["vendor"], "https://127.0.0.1:%d" % h["bmc"]["port"], cert))
                   for h in hosts)
    finally:
        stop_pid(pid)


@pytest.fixture
def fresh(bmcs):
    """The BMCs at their factory state."""
    for bmc in bmcs.values():
        bmc.reset()
    return bmcs
