# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Chaos for one BMC: for a while, a seeded share of Redfish requests fails as a busy BMC or a bad network fails
them. The same seed and the same requests give the same faults, so a failing run replays.

- ``reset_before``: the connection is reset before the BMC acts on the request; nothing was done.
- ``reset_after``: the BMC acts on the request (a PATCH is applied), then resets the connection before answering.
- ``unavailable``: HTTP 503 with a Redfish error of ``Base.1.8.ServiceTemporarilyUnavailable`` and ``Retry-After``,
  as DSP0266 has a service answer when it cannot serve for a while.
"""

from __future__ import absolute_import, division, print_function

import random
import socket
import struct
import threading
import time

KINDS = ("reset_before", "reset_after", "unavailable")


class Chaos:
    def __init__(self):
        self.lock = threading.Lock()
        self.config = None
        self.until = 0.0
        self.rng = None
        self.requests = 0
        self.faults = {}

    def start(self, config):
        """``config``: ``seed``, ``rate`` (0 to 1), ``seconds``, optional ``kinds``; raises ValueError when wrong."""
        rate, seconds = float(config.get("rate", -1)), float(config.get("seconds", 0))
        kinds = list(config.get("kinds") or KINDS)
        if not 0 <= rate <= 1:
            raise ValueError("rate %r is not a share between 0 and 1" % config.get("rate"))
        if seconds <= 0:
            raise ValueError("seconds %r: give how long the chaos lasts, more than 0" % config.get("seconds"))
        unknown = [kind for kind in kinds if kind not in KINDS]
        if unknown:
            raise ValueError("kinds %s are not among %s" % (unknown, list(KINDS)))
        with self.lock:
            self.config = {"seed": int(config.get("seed", 0)), "rate": rate, "seconds": seconds, "kinds": kinds}
            self.until = time.monotonic() + seconds
            self.rng = random.Random(self.config["seed"])
            self.requests, self.faults = 0, {}

    def stop(self):
        with self.lock:
            self.until = 0.0
            return self._report()

    def report(self):
        with self.lock:
            return self._report()

    def _report(self):
        return {"active": time.monotonic() < self.until, "config": self.config, "requests": self.requests,
                "faults": dict(self.faults)}

    def pick(self):
        """The fault for one request, or None."""
        with self.lock:
            if self.rng is None or time.monotonic() >= self.until:
                return None
            self.requests += 1
            draw, which = self.rng.random(), self.rng.randrange(len(self.config["kinds"]))
            if draw >= self.config["rate"]:
                return None
            kind = self.config["kinds"][which]
            self.faults[kind] = self.faults.get(kind, 0) + 1
            return kind


def reset_connection(environ):
    """Reset the request's TCP connection (RST, as a dropped network path looks to the client)."""
    conn = environ.get("werkzeug.socket")
    if conn is None:
        return
    try:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
