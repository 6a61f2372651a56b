# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compatibility rules: driver branches, which guest drivers a host's vGPU manager accepts, CUDA against drivers.

Pure logic over the tables in ``_catalog_data``, stdlib only. Every public function raises ``InputError`` for input
it cannot read.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils._versions import compare_versions
from ansible_collections.gpuops.vgpu.plugins.module_utils.nvidia._catalog_data import (
    CUDA_DRIVER_MINIMUMS,
    CUDA_MINOR_COMPAT_MINIMUMS,
    DRIVER_BRANCHES,
    OLDER_BRANCHES,
    VGPU_RELEASE_DRIVERS,
)

_VERSION_RE = re.compile(r"^\d+(?:\.\d+)*$")
_CUDA_RE = re.compile(
    r"^(?:cuda\s*)?v?(?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<third>\d+))?"
    r"(?:\s*(?:u|update\s*)(?P<update>\d+)|\s*ga)?$",
    re.IGNORECASE,
)
# A third CUDA version field this large is a build number (nvcc: "V12.1.105"), not an update.
_CUDA_MAX_UPDATE = 9


def _version_tuple(value, what):
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, float):
        raise InputError(
            "%s %r was read as a number, which loses digits (570.20 becomes 570.2)." % (what.capitalize(), value),
            hint="Quote it in YAML, e.g. '525.105.17'.",
            value=value,
        )
    if isinstance(value, str) and _VERSION_RE.match(value.strip()):
        return tuple(int(part) for part in value.strip().split("."))
    raise InputError(
        "%s %r cannot be read." % (what.capitalize(), value),
        hint="Give dotted numbers such as 525.105.17.",
        value=value,
    )


def _at_least(driver_parts, minimum):
    """Whether a driver (its version as numbers, from ``_driver``) is ``minimum`` or newer."""
    return compare_versions(".".join(str(part) for part in driver_parts), minimum) >= 0


def _driver(value):
    """Return (display text, version tuple) of an NVIDIA driver version; ``R535`` and ``535`` name a branch."""
    if isinstance(value, str) and value.strip()[:1] in ("R", "r"):
        value = value.strip()[1:]
    parts = _version_tuple(value, "driver version")
    if not 100 <= parts[0] <= 9999 or len(parts) > 3:
        raise InputError(
            "%r is not an NVIDIA driver version." % (value,),
            hint="Driver versions look like 525.105.17 (host 525.105.14); branches like R535.",
            value=value,
        )
    return (str(value).strip() if len(parts) > 1 else "R%d" % parts[0]), parts


_BRANCH_ROWS = dict((row["branch"], row) for row in DRIVER_BRANCHES)
_RELEASE_BRANCHES = sorted(
    [(int(row["vgpu_release"]), row["branch"], row["lts"]) for row in DRIVER_BRANCHES + OLDER_BRANCHES]
)
_BRANCH_RELEASE = dict((branch, (release, lts)) for release, branch, lts in _RELEASE_BRANCHES)


def driver_branch(version):
    """Return the driver branch of a host or guest driver version (``525.105.17``, ``R535`` or ``535``).

    Returns ``branch`` (``R525``), ``vgpu_release`` (``15``; None when the branch is no vGPU branch), ``lts``,
    ``max_cuda`` (highest CUDA the branch's guest driver runs, None when not in the catalog),
    ``max_cuda_confirmed`` and ``known`` (the branch is in the catalog's table, vGPU 15 and later).
    """
    major = _driver(version)[1][0]
    row = _BRANCH_ROWS.get(major)
    release, lts = _BRANCH_RELEASE.get(major, (None, False))
    return {
        "branch": "R%d" % major,
        "vgpu_release": str(release) if release is not None else None,
        "lts": lts,
        "max_cuda": row["max_cuda"] if row else None,
        "max_cuda_confirmed": row["max_cuda_confirmed"] if row else False,
        "known": row is not None,
    }


def _older_accepted_branches(host_major):
    """The previous branch and, for an LTS manager, the previous LTS branch whose guests the manager accepts."""
    if host_major not in _BRANCH_RELEASE:
        return None, None
    release, lts = _BRANCH_RELEASE[host_major]
    previous = [branch for rel, branch, _lts in _RELEASE_BRANCHES if rel == release - 1]
    older_lts = [branch for rel, branch, is_lts in _RELEASE_BRANCHES if is_lts and rel < release] if lts else []
    return (previous[0] if previous else None), (older_lts[-1] if older_lts else None)


def _or_list(items):
    return items[0] if len(items) == 1 else "%s or %s" % (", ".join(items[:-1]), items[-1])


def _branch_label(info):
    if info["vgpu_release"] is None:
        return "%s, not a vGPU branch" % info["branch"]
    return "%s, vGPU %s%s" % (info["branch"], info["vgpu_release"], " LTS" if info["lts"] else "")


def vgpu_guest_compat(host_driver, guest_driver):
    """Tell whether a guest driver works with a host vGPU Manager driver.

    Rule (vGPU release notes): same branch works; a manager also accepts guests of the previous branch, and an LTS
    manager guests of the previous LTS branch (R535 on R580). Anything else fails to initialise the vGPU.
    Returns ``status`` (``ok``, ``ok-previous-branch`` or ``incompatible``), ``host_branch``, ``guest_branch``,
    ``accepted_guest_branches`` and ``message``.
    """
    host_version, host_parts = _driver(host_driver)
    guest_version, guest_parts = _driver(guest_driver)
    host, guest = driver_branch(host_version), driver_branch(guest_version)
    previous, previous_lts = _older_accepted_branches(host_parts[0])
    accepted = [host_parts[0]] + [b for b in (previous, previous_lts) if b is not None and b != host_parts[0]]
    accepted_names = ["R%d" % branch for branch in sorted(set(accepted), reverse=True)]
    if guest_parts[0] == host_parts[0]:
        status = "ok"
        message = "Guest driver %s and vGPU Manager %s are on the same branch (%s): compatible." % (
            guest_version, host_version, _branch_label(host))
    elif guest_parts[0] in accepted:
        status = "ok-previous-branch"
        reason = "the previous branch" if guest_parts[0] == previous else "the previous LTS branch"
        message = (
            "vGPU Manager %s (%s) accepts guest driver %s from %s (%s); move the guest to %s when convenient."
            % (host_version, _branch_label(host), guest_version, reason, _branch_label(guest), host["branch"])
        )
    else:
        status = "incompatible"
        message = (
            "Guest driver %s (%s) does not work with vGPU Manager %s (%s): the vGPU fails to initialise in the "
            "guest; install a GRID guest driver from %s."
            % (guest_version, _branch_label(guest), host_version, _branch_label(host), _or_list(accepted_names))
        )
    return {
        "status": status,
        "host_branch": host["branch"],
        "guest_branch": guest["branch"],
        "accepted_guest_branches": accepted_names,
        "message": message,
    }


def release_drivers(host_driver):
    """The vGPU release whose vGPU Manager is ``host_driver`` (a driver version or an ESXi component version such as
    ``535.54.06-1OEM.800.1.0.20613240``): ``release``, ``branch`` (``R535``), ``host``, ``linux_guest`` and
    ``esxi8_component`` (name, version); None when the catalog does not list that exact manager version."""
    version = host_driver.split("-")[0] if isinstance(host_driver, str) else host_driver
    host = _driver(version)[0]
    for row in VGPU_RELEASE_DRIVERS:
        if row["host"] == host:
            return dict(row, branch="R%d" % row["branch"], esxi8_component=list(row["esxi8_component"]))
    return None


def _cuda(value):
    """Return (major, minor, update) of a CUDA version; update None when only a build number was given."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = repr(value) if isinstance(value, float) else "%d.0" % value
    match = _CUDA_RE.match(value.strip()) if isinstance(value, str) else None
    if match and not (match.group("third") and match.group("update")):
        major, minor = int(match.group("major")), int(match.group("minor"))
        third, update = match.group("third"), match.group("update")
        if update is not None:
            update = int(update)
        elif third is not None:
            update = int(third) if int(third) <= _CUDA_MAX_UPDATE else None
        else:
            update = 0
        if major in CUDA_MINOR_COMPAT_MINIMUMS:
            return major, minor, update
        raise InputError(
            "CUDA %s is outside the catalog's range." % value.strip(),
            hint="The catalog covers CUDA %s.x to %s.x." % (min(CUDA_MINOR_COMPAT_MINIMUMS),
                                                            max(CUDA_MINOR_COMPAT_MINIMUMS)),
            value=value,
        )
    raise InputError(
        "CUDA version %r cannot be read." % (value,),
        hint="Give it as 12.1, 12.1.1 (update 1) or '12.2 U2'.",
        value=value,
    )


def _cuda_label(major, minor, update):
    if update is None:
        return "%d.%d (update unknown)" % (major, minor)
    return "%d.%d Update %d" % (major, minor, update) if update else "%d.%d" % (major, minor)


def _cuda_minimum(major, minor, update):
    """Full-feature minimum driver, or None when the minor is not in the table. Unknown update: the strictest."""
    rows = [(row_update, driver) for (row_major, row_minor, row_update), driver in CUDA_DRIVER_MINIMUMS
            if (row_major, row_minor) == (major, minor)]
    if not rows:
        return None
    usable = [row for row in rows if update is None or row[0] <= update]
    return max(usable)[1]


def _newest_cuda(driver_parts):
    for (major, minor, update), minimum in CUDA_DRIVER_MINIMUMS:
        if _at_least(driver_parts, minimum):
            return _cuda_label(major, minor, update)
    return None


def _remedy(newest, minimum):
    """What a user can do about a driver too old for a toolkit: an older toolkit or a newer vGPU release."""
    steps = ["CUDA %s or older" % newest if newest else "an older CUDA toolkit"]
    if minimum:
        branch = [row for row in DRIVER_BRANCHES if compare_versions(row["guest_examples"][-1], minimum) >= 0]
        steps.append("a vGPU release whose guest driver is %s or newer%s" % (
            minimum, " (R%d, vGPU %s)" % (branch[0]["branch"], branch[0]["vgpu_release"]) if branch else ""))
    return ", or ".join(steps)


def cuda_driver_ok(cuda_version, driver_version):
    """Check a CUDA toolkit version against an installed Linux driver (in a vGPU guest: the GRID driver).

    ``cuda_version`` is ``12.1``, ``12.1.1`` (= 12.1 Update 1) or ``12.2 U2``; a build number (``12.1.105``) counts
    as the strictest update of that minor. Returns ``status``: ``ok`` (driver at least the toolkit's full-feature
    minimum), ``minor-compat-only`` (below it, or the minimum is not in the catalog, but at least the major's
    minor-version compatibility floor) or ``unsupported``; ``minimum`` (None when the catalog's table does not
    list that minor), ``minor_compat_minimum``, ``cuda`` (normalised), ``driver``, ``newest_full_cuda`` (newest
    toolkit the driver fully supports) and ``message``.
    """
    major, minor, update = _cuda(cuda_version)
    driver, driver_parts = _driver(driver_version)
    label = _cuda_label(major, minor, update)
    minimum = _cuda_minimum(major, minor, update)
    floor = CUDA_MINOR_COMPAT_MINIMUMS[major]
    floor_met = _at_least(driver_parts, floor)
    newest = _newest_cuda(driver_parts)
    if minimum is None:
        status = "minor-compat-only" if floor_met else "unsupported"
        message = (
            "CUDA %s is newer than the catalog's table, so its full-feature minimum driver is not known; driver %s "
            "%s the CUDA %d.x minor-version compatibility floor (%s): %s."
            % (label, driver, "meets" if floor_met else "is below", major, floor,
               "check NVIDIA's CUDA release notes before relying on newer features" if floor_met
               else "use " + _remedy(newest, None))
        )
    elif _at_least(driver_parts, minimum):
        status = "ok"
        message = "CUDA %s is fully supported by driver %s (it needs %s or newer)." % (label, driver, minimum)
    elif floor_met:
        status = "minor-compat-only"
        message = (
            "CUDA %s needs driver %s or newer for full support; driver %s runs it only under CUDA minor-version "
            "compatibility (PTX JIT and features newer than the driver fail): use %s."
            % (label, minimum, driver, _remedy(newest, minimum))
        )
    else:
        status = "unsupported"
        message = (
            "CUDA %s needs driver %s or newer (%s under minor-version compatibility); driver %s cannot run it: "
            "use %s." % (label, minimum, floor, driver, _remedy(newest, minimum))
        )
    return {
        "status": status,
        "minimum": minimum,
        "minor_compat_minimum": floor,
        "cuda": label,
        "driver": driver,
        "newest_full_cuda": newest,
        "message": message,
    }


def cuda_branch_ok(cuda_version, branch):
    """Check a CUDA toolkit version against a driver branch (``580``, ``R580``) before its exact version is known:
    the branch's newest release is what counts (later releases of a branch only add support).

    Returns what ``cuda_driver_ok`` returns, its ``driver`` and ``message`` naming the branch.
    """
    major = _driver(branch)[1][0]
    verdict = cuda_driver_ok(cuda_version, "%d.9999.99" % major)
    label, minimum = verdict["cuda"], verdict["minimum"]
    if verdict["status"] == "ok":
        message = "CUDA %s runs on branch R%d (it needs %s or newer)." % (label, major, minimum)
    elif verdict["status"] == "minor-compat-only":
        message = ("CUDA %s runs on branch R%d only under CUDA minor-version compatibility (it needs %s for full "
                   "support): choose a newer branch or an older toolkit." % (label, major, minimum or "a newer driver"))
    else:
        message = ("CUDA %s needs driver %s or newer (%s under minor-version compatibility); no R%d driver runs it: "
                   "choose branch %s or newer, or CUDA %s or older."
                   % (label, minimum or "?", verdict["minor_compat_minimum"], major,
                      (minimum or verdict["minor_compat_minimum"]).split(".")[0], verdict["newest_full_cuda"]))
    return dict(verdict, driver="R%d" % major, message=message)
