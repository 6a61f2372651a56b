# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Chaos: playbooks/site.yml while the lab's vCenter (SOAP and vLCM REST) and BMCs reset or refuse (503) a seeded
10 % of the requests. The run succeeds or fails with clear errors, leaves nothing half done, and once the chaos
ends the next run converges.

GPUOPS_CHAOS_SEEDS chooses the seeds (default: one; make soak runs many); GPUOPS_CHAOS_SEEDS=<seed> replays one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest

from conftest import LAB_CONTROL
from site_run import half_done, log_trial, not_converged, run_site, seeds, site_inventory

RATE = 0.1
MAX_RUNS = 3
# What a failure must never look like: a crash instead of an error that says what happened to which object.
UNCLEAR = re.compile(r"Traceback|Unexpected error|MODULE FAILURE|template error")
# The modules' warning when their client sent requests again after a transient failure.
SENT_AGAIN = re.compile(r"(\d+) request\(s\) to \S+ were sent again")


def sent_again(stdout):
    return sum(int(count) for count in SENT_AGAIN.findall(stdout))


def failures(stdout):
    return [line for line in stdout.splitlines() if line.startswith(("fatal:", "failed:"))]


@pytest.mark.parametrize("seed", seeds("GPUOPS_CHAOS_SEEDS", "3"))
def test_site_run_under_ten_percent_failures_then_converges(lab, tmp_path, seed):
    start = lab.state()
    inventory = site_inventory(lab, tmp_path / "site.yml")
    LAB_CONTROL.chaos_lab(lab.services, {"seed": seed, "rate": RATE, "seconds": 900})
    try:
        stormy = run_site(lab, inventory, tmp_path)
    finally:
        report = LAB_CONTROL.chaos_lab(lab.services)
    dropped = sum(sum(service["faults"].values()) for service in report.values())
    requests = sum(service["requests"] for service in report.values())
    unclear = [line for line in failures(stormy.stdout) if UNCLEAR.search(line)]
    stopped_at = half_done(lab.state())

    runs = [stormy]
    while runs[-1].returncode != 0 and len(runs) <= MAX_RUNS:
        runs.append(run_site(lab, inventory, tmp_path))
    log_trial("chaos", seed=seed, requests=requests, dropped=dropped, retried=sent_again(stormy.stdout), faults=dict(
        (name, service["faults"]) for name, service in report.items() if service["faults"]),
        stormy_run_ok=stormy.returncode == 0, runs=len(runs), converged=runs[-1].returncode == 0,
        stormy_failures=[line[:400] for line in failures(stormy.stdout)[:3]])

    assert dropped > 0, "seed %d: the chaos failed no request" % seed
    assert unclear == [], "seed %d: unclear failures under chaos:\n%s" % (seed, "\n".join(unclear)[:4000])
    assert stopped_at == [], "seed %d: half done where the run stopped: %s" % (seed, stopped_at)
    assert runs[-1].returncode == 0, "seed %d: no convergence in %d runs:\n%s" % (
        seed, len(runs), runs[-1].stdout[-4000:])
    assert not_converged(lab, start, tmp_path) == [], "seed %d" % seed
