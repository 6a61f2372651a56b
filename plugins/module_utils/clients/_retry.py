# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""When a failed request may be sent again, and how long to wait before it, for the vCenter clients (SOAP and
REST). The Redfish client keeps its own rules (``_redfish``), which honour the BMC's Retry-After.

A request is sent again only when that cannot do anything twice:
- a 503 from vCenter's reverse proxy: the request never reached the service behind it;
- a connection lost on a read (or on a session-scoped helper such as a property collector or a view).
A change whose answer was lost (the connection dropped after it was sent) is never sent again: it may have been
applied. The caller gets ``ChangeInDoubt`` and a run that reads the state again sends only what is still needed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ChangeInDoubt

ATTEMPTS = 4
BACKOFF_FIRST = 0.5
BACKOFF_CAP = 4.0

# SOAP methods that change nothing in the inventory: reads, and helpers that live only in this session.
READ_PREFIXES = ("Retrieve", "Query", "Continue", "Fetch", "Wait", "Find", "Browse")
SESSION_HELPERS = frozenset(("CurrentTime", "CreateContainerView", "CreateListView", "CreatePropertyCollector",
                             "CreateFilter", "CancelWaitForUpdates", "DestroyView", "DestroyPropertyCollector",
                             "DestroyPropertyFilter"))
SAFE_HTTP_METHODS = frozenset(("GET", "HEAD", "OPTIONS"))


def soap_read(name):
    return name in SESSION_HELPERS or name.startswith(READ_PREFIXES)


def delay(attempt, rng=random):
    """Seconds to wait before attempt ``attempt + 1``: doubling from half a second up to four, with jitter."""
    return min(BACKOFF_CAP, BACKOFF_FIRST * (2 ** attempt)) * rng.uniform(0.8, 1.2)


def in_doubt(endpoint, what, err):
    return ChangeInDoubt(
        "Lost the connection to vCenter %s while waiting for the answer to %s (%s): the change may or may not have "
        "been applied, so it was not sent again." % (endpoint, what, err),
        hint="Run again: the run reads the current state and sends only what is still needed.")
