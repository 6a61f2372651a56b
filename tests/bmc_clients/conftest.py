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
sys.path.insert(0, os.path.join(ROOT, "lab", "bmc"))
from validate import PASSWORD, USER, start_bmcs, stop_pid  # noqa: E402

VENDORS = sorted(name[:-4] for name in os.listdir(os.path.join(ROOT, "lab", "bmc", "vendors")) if name.endswith(".yml"))
PORTS_AFTER_VALIDATORS = 20


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
    # Ports above the validators' own, so both can run at once.
    offset = int(os.environ.get("LAB_PORT_OFFSET", "0")) + PORTS_AFTER_VALIDATORS
    pid, cert, uris = start_bmcs(work, offset, ["--reset-seconds", "0.3"])
    try:
        yield dict((vendor, Bmc(vendor, uri, cert)) for vendor, uri in uris.items())
    finally:
        stop_pid(pid)


@pytest.fixture
def fresh(bmcs):
    """The BMCs at their factory state."""
    for bmc in bmcs.values():
        bmc.reset()
    return bmcs
