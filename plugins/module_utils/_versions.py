# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one version order of the collection: NVIDIA driver versions (``525.105.17``) and vLCM component versions
(``525.105.14-1OEM.800.1.0.20613240``) alike.

Standard library only and no collection imports: the catalog, which uses it, is also loaded by file path.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_RUNS = re.compile(r"[0-9]+|[^0-9]+")
_TRAILING_ZERO_FIELDS = re.compile(r"(?:\.0+)+\Z")


def version_key(version):
    """A sort key that orders versions as ``compare_versions`` does; ``version`` is a string (or an int)."""
    if isinstance(version, int) and not isinstance(version, bool):
        version = str(version)
    key = []
    for run in _RUNS.findall(_TRAILING_ZERO_FIELDS.sub("", version)):
        if "0" <= run[0] <= "9":
            key.append((1, int(run), ""))
        else:
            # Text sorts against numbers as its first character sorts against digits ("-" before, "O" after).
            key.append((0 if run < "0" else 2, 0, run))
    return tuple(key)


def compare_versions(a, b):
    """Order two versions: -1 when ``a`` is older than ``b``, 0 when they are the same version, 1 when newer.

    Each is read from the left as runs of digits and runs of other characters, compared run by run: digits as
    numbers (``82.01`` is ``82.1``; ``525.105.17`` is newer than ``525.85.12``), other characters as text. Trailing
    zero fields do not count (``570.26`` is ``570.26.0``). When one version is the start of the other, the longer
    is newer (``1.0`` is older than ``1.0.1``, ``525.105.14`` older than ``525.105.14-1OEM``).
    """
    left, right = version_key(a), version_key(b)
    return (left > right) - (left < right)


def newest(versions):
    """The newest of ``versions`` (the first one seen among equals), or None when there is none."""
    versions = list(versions)
    return max(versions, key=version_key) if versions else None
