# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Licensing of a vGPU guest: gridd.conf, the client configuration tokens (never their content), nvidia-gridd and
what nvidia-smi says about the license.

Standard library only and Python 3.8 syntax: it runs on the guest.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

GRIDD_CONF = "/etc/nvidia/gridd.conf"
GRIDD_TEMPLATE = "/etc/nvidia/gridd.conf.template"
# Where nvidia-gridd looks for *.tok files unless gridd.conf's ClientConfigTokenPath says otherwise.
TOKEN_DIR = "/etc/nvidia/ClientConfigToken"
GRIDD_SERVICE = "nvidia-gridd"


def parse_gridd_conf(text):
    """``{key: value}`` of the settings in force: ``Key=Value`` lines, not commented out, the last one winning."""
    settings = {}
    for line in (text or "").splitlines():
        line = line.strip()
        key, sep, value = line.partition("=")
        if sep and key.strip() and not line.startswith("#"):
            settings[key.strip()] = value.strip()
    return settings


def read_license(guest, smi, service, clock_synchronized):
    """gridd.conf, the tokens nvidia-gridd would read, the service, the clock and the license state.

    ``smi`` is the nvidia_smi probe's answer, ``service`` ``read_service``'s for nvidia-gridd.
    Each token is described by name, path, size, mode, owner, group and the SHA-1 of its bytes (what
    ``ansible.builtin.copy`` compares); its content is never read into the result.
    """
    files = guest.files
    text = files.read(GRIDD_CONF)
    settings = parse_gridd_conf(text)
    feature_type = settings.get("FeatureType", "")
    token_dir = (settings.get("ClientConfigTokenPath") or TOKEN_DIR).rstrip("/") or "/"
    directory = {"path": token_dir, "exists": files.is_dir(token_dir), "mode": None, "owner": None, "group": None}
    tokens = []
    if directory["exists"]:
        described = files.describe(token_dir)
        directory.update((key, described[key]) for key in ("mode", "owner", "group"))
        tokens = [files.describe(path, checksum=True) for path in files.glob(token_dir + "/*.tok")
                  if files.is_file(path)]
    facts = {
        "gridd_conf": {"path": GRIDD_CONF, "exists": text is not None, "settings": settings},
        "gridd_template": {"path": GRIDD_TEMPLATE, "exists": files.exists(GRIDD_TEMPLATE)},
        "feature_type": int(feature_type) if feature_type.isdigit() else None,
        "token_dir": directory,
        "tokens": tokens,
        "service": service,
        "clock_synchronized": clock_synchronized,
    }
    facts.update(license_state(smi))
    return facts


def license_state(smi):
    """``licensed`` (every GPU Licensed; None without a working nvidia-smi), ``product``, the earliest ``expiry``
    and the ``statuses`` as printed, one per GPU."""
    if not smi.get("present"):
        return {"licensed": None, "product": None, "expiry": None, "statuses": []}
    gpus = smi.get("gpus") or []
    expiries = sorted(gpu["license_expiry"] for gpu in gpus if gpu.get("license_expiry"))
    return {
        "licensed": bool(gpus) and all(gpu.get("licensed") is True for gpu in gpus),
        "product": next((gpu["license_product"] for gpu in gpus if gpu.get("license_product")), None),
        "expiry": expiries[0] if expiries else None,
        "statuses": [gpu.get("license_status") for gpu in gpus],
    }


def acquiring(license_facts, gpus):
    """Whether nvidia-gridd is still to license a GPU of ``gpus`` (nvidia_smi's) on its own: one is not licensed while
    the daemon runs with a FeatureType that asks for a license and a token to ask with. It acquires the license
    seconds to minutes after it starts and leaves no trace but nvidia-smi's answer. Without ``license_facts`` (the
    license probe not read) it cannot be ruled out."""
    if not any(gpu.get("licensed") is False for gpu in gpus or []):
        return False
    if not license_facts:
        return True
    return bool((license_facts.get("service") or {}).get("active") and license_facts.get("feature_type")
                and license_facts.get("tokens"))
