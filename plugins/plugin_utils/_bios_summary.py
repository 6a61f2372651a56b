# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bios role's summary: the hosts of a batch sorted by what their BIOS needs once the profile is stored."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

UNMET = ("not_exposed", "read_only")
TRUE_WORDS = ("true", "yes", "on", "1")


def _allowed(value):
    return value if isinstance(value, bool) else str(value).strip().lower() in TRUE_WORDS


def summarize(batch, hostvars, failed=None):
    """``ready``, ``waiting``, ``reboot``, ``pending``, ``unmet`` and ``failed`` over the hosts of ``batch``.

    Each host's ``bios_result`` is its ``bios_settings`` result and ``bios_reboot_allowed`` whether it may be
    rebooted. A host waits when its values are pending a reboot; ``reboot`` keeps those that may be rebooted.
    """
    summary = {"ready": [], "waiting": [], "reboot": [], "pending": {}, "unmet": {}, "failed": list(failed or [])}
    for host in batch:
        variables = hostvars[host]
        result = variables.get("bios_result") or {}
        if result.get("pending_reboot"):
            summary["waiting"].append(host)
            summary["pending"][host] = result["pending"]
            if _allowed(variables.get("bios_reboot_allowed", False)):
                summary["reboot"].append(host)
        else:
            summary["ready"].append(host)
        unmet = ["%s (%s)" % (name, intent.get("note") or intent["status"].replace("_", " "))
                 for name, intent in (result.get("intents") or {}).items() if intent.get("status") in UNMET]
        if unmet:
            summary["unmet"][host] = unmet
    return summary
