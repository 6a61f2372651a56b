# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.vgpu.gpu_monitoring after a run killed the moment it wrote the collector's timer with a new interval, before
systemd's daemon-reload: systemd still runs the old timer (NeedDaemonReload=yes) while the file says converged. The
next run reloads systemd, the timer runs the new interval, and the run after changes nothing. On a lab guest of its
own, through playbooks/guests.yml."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest

from guest_run import guests_command, lab_guest, on_guest, run_guests, wait_idle
from site_run import kill_at_task

GUEST = "monitor-reload"
TIMER = "gpuops-gpu-metrics.timer"
KILL_ATTEMPTS = 3


@pytest.fixture
def guest():
    with lab_guest(GUEST, 140) as started:
        yield started


def run(guest, *args):
    done = run_guests(guest, *args)
    assert done.returncode == 0, done.stdout[-6000:]
    return done.stdout


def timer_state(guest):
    """systemd's view of the timer: whether it waits for a daemon-reload, and the interval it runs."""
    out = on_guest(guest, "systemctl", "show", TIMER, "-p", "NeedDaemonReload", "-p", "TimersMonotonic").stdout
    interval = re.search(r"OnUnitActiveUSec=(\S+)", out)
    return "NeedDaemonReload=yes" in out, interval.group(1) if interval else None


def test_a_timer_written_by_a_run_killed_before_the_reload_is_loaded_by_the_next_run(guest):
    run(guest)
    for _attempt in range(KILL_ATTEMPTS):
        _stale, before = timer_state(guest)
        interval = "7s" if before != "7s" else "9s"
        argv, env = guests_command(guest, "-e", "gpu_monitoring_interval=%s" % interval)
        # The run may have passed the daemon-reload on to the guest before the kill, while this test read the line:
        # then the reload takes place and the kill is tried again, with another interval.
        killed = kill_at_task(argv, env, "Install the collector, its service and its timer", 0, when_done=True)
        assert killed, "the run ended before it wrote the timer"
        wait_idle(guest)
        assert "OnUnitActiveSec=%s" % interval in on_guest(guest, "cat", "/etc/systemd/system/" + TIMER).stdout
        if timer_state(guest) == (True, before):
            break
    else:
        pytest.fail("each of %d kills came after the daemon-reload had reached the guest" % KILL_ATTEMPTS)

    run(guest, "-e", "gpu_monitoring_interval=%s" % interval)
    assert timer_state(guest) == (False, interval)
    again = run(guest, "-e", "gpu_monitoring_interval=%s" % interval)
    recap = [line for line in again.splitlines() if line.startswith(GUEST + " ")]
    assert recap and "changed=0" in recap[-1], again[-4000:]
