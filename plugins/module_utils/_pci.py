# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCI bus addresses in one spelling, so that vSphere's, nvidia-smi's and the user's name for a GPU compare equal."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError

_ADDRESS = re.compile(r"^(?:(?P<domain>[0-9a-f]{1,8}):)?(?P<bus>[0-9a-f]{1,2}):(?P<slot>[0-9a-f]{1,2})\.(?P<fn>[0-7])$")
_REQUIRED = object()


def pci_bus_address(value, default=_REQUIRED):
    """``value`` as a PCI bus address in the canonical form, vSphere's: ``0000:3b:00.0``.

    The canonical form is ``domain:bus:slot.function`` in lower-case hex, the domain with four digits (more only
    for a domain above ``ffff``), bus and slot with two, the function one digit 0-7. Accepted: that form,
    nvidia-smi's ``00000000:3B:00.0`` (eight-digit domain, upper case), an address without domain (``3b:00.0``,
    domain 0), any case, surrounding blanks. Anything else raises ``InputError``, or returns ``default`` when one
    is given.
    """
    match = _ADDRESS.match(str(value).strip().lower()) if value is not None else None
    if not match:
        if default is not _REQUIRED:
            return default
        raise InputError("'%s' is not a PCI id." % value, hint="Write it as vSphere shows it, e.g. 0000:3b:00.0.")
    return "%04x:%02x:%02x.%s" % (int(match.group("domain") or "0", 16), int(match.group("bus"), 16),
                                  int(match.group("slot"), 16), match.group("fn"))
