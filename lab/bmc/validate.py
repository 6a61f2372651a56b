#!/usr/bin/env python3
"""Run DMTF's Redfish-Service-Validator and Redfish-Protocol-Validator against one lab BMC of each vendor profile.

    validate.py [--port-offset N] [--report-dir DIR]

Starts its own BMCs (``bmc_lab.py``, one per profile in ``vendors/``), validates them in parallel (the two validators
of one BMC one after the other), prints pass/warn/fail counts per profile and validator, and exits non-zero when a validator reports a failure that
``expected_failures.yml`` does not list for that profile (each entry there says why a real BMC of that vendor fails
the same way), or when a listed failure no longer happens.
"""

import argparse
import csv
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from labctl import ensure_certificate, start, stop_pid  # noqa: E402

BIN = os.path.dirname(sys.executable)
SCHEMAS = os.path.join(HERE, "schemas")
EXPECTED = os.path.join(HERE, "expected_failures.yml")
BASE_PORT = 8471
USER, PASSWORD = "root", "validator-Pass1"
# Service validator log lines: "ERROR - FAIL - /Prop (value): message" under "Validating <uri>...".
SERVICE_FAIL = re.compile(r"ERROR - FAIL - (?P<message>.*)")
SERVICE_COUNTS = re.compile(r"- Pass: (\d+), Warn: (\d+), Fail: (\d+)")
SERVICE_URI = re.compile(r"Validating (?P<uri>\S+?)\.\.\.$")


def start_bmcs(work, offset, extra=()):
    """Starts one BMC per vendor profile on BASE_PORT + offset and up; ``extra``: more bmc_lab.py options."""
    vendors = sorted(name[:-4] for name in os.listdir(os.path.join(HERE, "vendors")) if name.endswith(".yml"))
    hosts = [{"name": "validate-%s.lab.local" % vendor, "bmc": {"vendor": vendor, "port": BASE_PORT + i + offset}}
             for i, vendor in enumerate(vendors)]
    topology = os.path.join(work, "topology.json")
    with open(topology, "w") as handle:
        json.dump({"datacenters": [{"name": "validate", "hosts": hosts}]}, handle)
    cert, key = ensure_certificate(work)
    ready = os.path.join(work, "bmc.ready")
    pid = start("validator-bmcs", [sys.executable, os.path.join(HERE, "bmc_lab.py"), "--topology", topology,
                                   "--cert", cert, "--key", key, "--username", USER, "--password", PASSWORD,
                                   "--state-dir", os.path.join(work, "state"), "--ready-file", ready] + list(extra),
                  work, ready)
    return pid, cert, dict((h["bmc"]["vendor"], "https://127.0.0.1:%d" % h["bmc"]["port"]) for h in hosts)


def validator(command, out, cert):
    # requests prefers REQUESTS_CA_BUNDLE from the environment over a session's own CA bundle.
    env = dict(os.environ, REQUESTS_CA_BUNDLE=cert, SSL_CERT_FILE=cert, CURL_CA_BUNDLE=cert)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "output.txt"), "w") as log:
        subprocess.run(command, env=env, stdout=log, stderr=subprocess.STDOUT, check=False)


def service_validator(vendor, uri, cert, out):
    validator([os.path.join(BIN, "rf_service_validator"), "-u", USER, "-p", PASSWORD, "-r", uri,
               "--schema_directory", SCHEMAS, "--skipschema", "--logdir", out], out, cert)
    counts, failures, current = {"pass": 0, "warn": 0, "fail": 0}, [], ""
    for path in glob.glob(os.path.join(out, "*", "RedfishServiceValidatorDebug_*.log")):
        with open(path) as handle:
            for line in handle:
                match = SERVICE_URI.search(line.strip())
                if match:
                    current = match.group("uri")
                    continue
                found = SERVICE_COUNTS.search(line)
                if found:
                    for key, value in zip(("pass", "warn", "fail"), found.groups()):
                        counts[key] += int(value)
                match = SERVICE_FAIL.search(line)
                if match:
                    failures.append("%s %s" % (current, match.group("message")))
    return counts, failures


def protocol_validator(vendor, uri, cert, out):
    validator([os.path.join(BIN, "rf_protocol_validator"), "-u", USER, "-p", PASSWORD, "-r", uri,
               "--ca-bundle", cert, "--report-dir", out, "--report-type", "tsv", "--avoid-http-redirect",
               "--log-level", "ERROR"], out, cert)
    counts, failures = {"pass": 0, "warn": 0, "fail": 0}, []
    for path in glob.glob(os.path.join(out, "*.tsv")):
        with open(path) as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                result = row["Result"].lower()
                if result in counts:
                    counts[result] += 1
                if result == "fail":
                    failures.append("%s %s %s: %s" % (row["Assertion"], row["Method"], row["URI"], row["Message"]))
    return counts, failures


def unexpected(failures, patterns):
    return [failure for failure in failures if not any(re.search(pattern, failure) for pattern in patterns)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port-offset", type=int, default=int(os.environ.get("LAB_PORT_OFFSET", "0")))
    parser.add_argument("--report-dir", default=None)
    args = parser.parse_args()
    work = args.report_dir or tempfile.mkdtemp(prefix="bmc-validate-")
    for vendor_reports in glob.glob(os.path.join(work, "*", "")):
        shutil.rmtree(vendor_reports)  # reports of an earlier run
    os.makedirs(work, exist_ok=True)
    with open(EXPECTED) as handle:
        expected = yaml.safe_load(handle) or {}
    pid, cert, bmcs = start_bmcs(work, args.port_offset)
    validators = {"service": service_validator, "protocol": protocol_validator}
    try:
        # The BMCs in parallel, one validator at a time on each: the protocol validator opens and deletes sessions,
        # which the service validator, walking the Sessions collection at the same time, would find listed and gone.
        def validate(vendor, uri):
            return dict(((vendor, name), run(vendor, uri, cert, os.path.join(work, vendor, name)))
                        for name, run in validators.items())

        with ThreadPoolExecutor(max_workers=len(bmcs)) as pool:
            futures = [pool.submit(validate, vendor, uri) for vendor, uri in bmcs.items()]
            results = {}
            for future in futures:
                results.update(future.result())
    finally:
        stop_pid(pid)
    ok = True
    print("%-12s %-9s %5s %5s %5s" % ("profile", "validator", "pass", "warn", "fail"))
    for (vendor, name), (counts, failures) in sorted(results.items()):
        print("%-12s %-9s %5d %5d %5d" % (vendor, name, counts["pass"], counts["warn"], counts["fail"]))
        if not counts["pass"]:
            ok = False
            print("  the validator reported nothing; see %s" % os.path.join(work, vendor, name, "output.txt"))
        listed = [entry["match"] for entry in expected.get(vendor, {}).get(name, [])]
        for failure in unexpected(failures, listed):
            ok = False
            print("  unexpected failure: %s" % failure[:300])
        for pattern in listed:
            if not any(re.search(pattern, failure) for failure in failures):
                ok = False
                print("  listed failure did not happen (remove it from expected_failures.yml): %s" % pattern)
    print("reports: %s" % work)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
