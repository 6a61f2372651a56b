# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ground truth and fault control of the lab BMCs, read without going through the collection's modules."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import ssl
import time
import urllib.error
import urllib.request

# One host per vendor profile of the default topology.
HOSTS = {
    "dell_idrac8": "esxi-01.lab.local",
    "dell_idrac9": "esxi-11.lab.local",
    "hpe_ilo5": "esxi-12.lab.local",
    "supermicro": "esxi-sa-01.lab.local",
}
VENDORS = sorted(HOSTS)


def _context():
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class LabBmc:
    """One lab BMC: its /lab endpoints and plain Redfish requests for cross-checks."""

    def __init__(self, lab, host):
        self.host = host
        self.baseuri = lab.bmcs[host]["baseuri"]
        self.vendor = lab.bmcs[host]["vendor"]
        self.credentials = lab.bmc_credentials

    def request(self, method, path, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.baseuri + path, data=data, method=method,
                                         headers=dict({"Content-Type": "application/json"}, **(headers or {})))
        try:
            with urllib.request.urlopen(request, context=_context(), timeout=30) as answer:
                text = answer.read()
                status = answer.status
        except urllib.error.HTTPError as err:
            text, status = err.read(), err.code
        return status, (json.loads(text) if text else None)

    def lab(self, method, path, body=None):
        status, answer = self.request(method, "/lab" + path, body)
        assert status < 300, (status, answer)
        return answer

    def state(self):
        return self.lab("GET", "/state")

    def stats(self):
        return self.lab("GET", "/stats")

    def writes(self):
        """Requests that change something on the BMC, other than opening and closing sessions."""
        return dict((key, count) for key, count in self.stats().get("by_path", {}).items()
                    if key.split()[0] in ("PATCH", "POST", "DELETE", "PUT") and "/Sessions" not in key)

    def factory_reset(self):
        self.lab("POST", "/reset")

    def fault(self, **fault):
        self.lab("POST", "/faults", fault)

    def configure(self, **config):
        self.lab("POST", "/config", config)

    def wait_up(self, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.state()
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def wait_settled(self, timeout=30):
        """Until no power operation is in flight and the system is on."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.state()
            if state["power_state"] == "On":
                return state
            assert time.monotonic() < deadline, state
            time.sleep(0.2)

    def redfish(self, method, path, body=None, headers=None):
        """A Redfish request with basic auth, as an independent client would send it."""
        token = base64.b64encode(("%s:%s" % self.credentials).encode()).decode()
        return self.request(method, path, body, dict({"Authorization": "Basic " + token}, **(headers or {})))
