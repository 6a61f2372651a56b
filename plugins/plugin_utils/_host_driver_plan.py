# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host_driver role's plan: which of its steps (import, image, remediation, verification) a cluster needs,
decided from one vlcm_info read before anything changes; and the check of the hosts after a remediation.

A cluster needs none when the depots hold every bundle's components, its image holds them at the bundles'
versions, and every host in scope complied in vLCM's last scan and ran each component of the image as it is now.
The last scan is vLCM's (vCenter's own, or the one that ended the last remediation): a host changed outside vLCM
since then shows at the next scan, or at once with ``rescan``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._image import BASE_IMAGE_COMPONENT
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._remediation import components_off


def host_driver_plan(read, locations, esxi_hostnames=None, remediate=True, rescan=False, check_mode=False,
                     imported=None):
    """The steps one cluster needs, with the components the image is to hold and the reasons.

    ``read`` is vlcm_info's result: ``bundles`` (read on the controller, in the order of ``locations``) with
    ``components`` (what the depots hold), or, for bundles given only as URLs, ``depots``; and the cluster's
    ``cluster``, ``hosts``, ``image`` and ``compliance``. ``locations`` are the URLs vCenter imports the bundles
    from. ``imported`` are the results of the import step (each with ``item``, a bundle of an earlier plan, and
    ``components``, what vCenter then held for it), which stand for what the read said of those bundles.
    """
    bundles = _bundles(read, list(locations or []), imported)
    components = {}
    for bundle in bundles:
        for component in bundle["components"] or []:
            components[component["name"]] = component["version"]
    reasons = ["import %s: %s" % (bundle["file_name"], bundle["why"]) for bundle in bundles if bundle["import"]]
    image_reasons = _image_reasons(read, components)
    reasons += image_reasons
    unknown = [bundle["file_name"] for bundle in bundles if bundle["components"] is None]
    remediation_reasons = []
    if remediate:
        remediation_reasons = _remediation_reasons(read, esxi_hostnames, rescan, bool(image_reasons), unknown)
        reasons += remediation_reasons
    imports = [_public(bundle) for bundle in bundles if bundle["import"]]
    return {
        "bundles": [_public(bundle) for bundle in bundles],
        "imports": imports,
        "components": components,
        "image": bool(image_reasons),
        "remediate": bool(remediation_reasons),
        "verify": bool(remediation_reasons) and not check_mode,
        "converged": not (imports or image_reasons or remediation_reasons),
        "reasons": reasons,
    }


def host_checks(compliance, components, esxi_hostnames=None):
    """Per host of a compliance summary (those in ``esxi_hostnames``, else all): ``name``, ``ok`` (it complies and
    runs each of ``components`` at its version) and ``message``."""
    expected = ", ".join("%s %s" % (name, version) for name, version in (components or {}).items())
    checks = []
    for host in (compliance or {}).get("hosts") or []:
        if esxi_hostnames and host["name"] not in esxi_hostnames:
            continue
        missing = components_off(host, components)
        ok = host["status"] == "COMPLIANT" and not missing
        if ok:
            message = "Host %s runs %s." % (host["name"], expected or "its image")
        else:
            message = "Host %s is %s%s." % (host["name"], host["status"],
                                            "; it does not run %s" % ", ".join(missing) if missing else "")
        checks.append({"name": host["name"], "ok": ok, "message": message})
    return checks


def _bundles(read, locations, imported):
    """Per bundle: location, file name, components (None while unknown) and whether to import it, and why."""
    read_bundles = read.get("bundles")
    if read_bundles is not None and len(read_bundles) != len(locations):
        raise InputError("%d bundles were read for %d locations." % (len(read_bundles), len(locations)))
    held = set((c["name"], c["version"]) for c in read.get("components") or [])
    depots = dict((depot["location"], depot) for depot in read.get("depots") or [])
    answers = dict((result["item"]["location"], result.get("components")) for result in imported or [])
    bundles = []
    for index, location in enumerate(locations):
        bundle = {"location": location, "file_name": posixpath.basename(location), "src": None, "import": False,
                  "why": ""}
        if read_bundles is not None:
            bundle.update({"src": read_bundles[index]["path"], "components": read_bundles[index]["components"]})
            missing = ["%s %s" % (c["name"], c["version"]) for c in bundle["components"]
                       if (c["name"], c["version"]) not in held]
            if missing:
                bundle.update({"import": True, "why": "no depot holds %s" % ", ".join(missing)})
        elif location in depots:
            bundle["components"] = depots[location]["components"]
        else:
            bundle.update({"components": None, "import": True, "why": "no depot was imported from it"})
        if answers.get(location):
            bundle["components"] = answers[location]
        bundles.append(bundle)
    return bundles


def _public(bundle):
    components = bundle["components"]
    carries = (", ".join("%s %s" % (c["name"], c["version"]) for c in components) if components is not None
               else "components known once vCenter has imported it")
    return {"location": bundle["location"], "src": bundle["src"], "file_name": bundle["file_name"],
            "components": components, "import": bundle["import"], "summary": "%s: %s" % (bundle["file_name"], carries)}


def _image_reasons(read, components):
    if not (read.get("cluster") or {}).get("image_managed") or read.get("image") is None:
        return ["image: the cluster has no single vLCM image to compare with"]
    image = read["image"]["components"]
    return ["image: %s %s (it holds %s)" % (name, version, image.get(name) or "none")
            for name, version in components.items() if image.get(name) != version]


def _remediation_reasons(read, esxi_hostnames, rescan, image_changes, unknown):
    if rescan:
        return ["remediation: a fresh scan is asked for"]
    if image_changes:
        return ["remediation: the image changes"]
    if unknown:
        return ["remediation: the components of %s are not known yet" % ", ".join(unknown)]
    compliance = read.get("compliance")
    if compliance is None:
        return ["remediation: vLCM has not scanned the cluster yet"]
    image = dict(read["image"]["components"])
    scanned = dict((host["name"], host) for host in compliance.get("hosts") or [])
    cluster_hosts = read["hosts"] if "hosts" in read else compliance.get("hosts") or []
    scope = esxi_hostnames or [host["name"] for host in cluster_hosts]
    reasons = []
    for name in scope:
        host = scanned.get(name)
        if host is None:
            reasons.append("remediation: %s is not in vLCM's last scan" % name)
            continue
        if host["status"] != "COMPLIANT":
            reasons.append("remediation: %s is %s in vLCM's last scan" % (name, host["status"]))
            continue
        expected = dict(image)
        if BASE_IMAGE_COMPONENT in (host.get("components") or {}):
            expected[BASE_IMAGE_COMPONENT] = read["image"]["base_image"]
        off = components_off(host, expected)
        if off:
            reasons.append("remediation: %s does not run %s" % (name, ", ".join(off)))
    return reasons
