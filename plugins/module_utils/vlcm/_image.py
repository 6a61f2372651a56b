# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A cluster's desired vLCM image: which components to set and delete, and the change through a draft."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import InputError
from ansible_collections.gpuops.vgpu.plugins.module_utils._versions import newest, version_key
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._operations import ProgressLog, Vlcm

BASE_IMAGE_COMPONENT = "ESXi"


def image_changes(current, wanted, remove, available, missing_ok=False):
    """What to change in an image's components.

    ``current`` maps name to version (the image's components), ``wanted`` name to a version or None (any version:
    keep the current one, else the newest the depots hold), ``remove`` lists names, ``available`` maps name to the
    versions the depots hold. Returns ``{"set": {name: version}, "delete": [names], "after": {name: version},
    "missing": [problems]}``. A component or version no depot holds raises ``InputError`` listing every one, before
    anything changes; with ``missing_ok`` (check mode, where an earlier task may not have imported it yet) it is
    set as asked and listed in ``missing`` instead.
    """
    both = sorted(set(wanted) & set(remove))
    if both:
        raise InputError("Components %s are both in components and in remove_components." % ", ".join(both),
                         hint="Name each component in one of the two.")
    if BASE_IMAGE_COMPONENT in wanted or BASE_IMAGE_COMPONENT in remove:
        raise InputError("Component %s is the image's base image, not a component to add or remove."
                         % BASE_IMAGE_COMPONENT, hint="Leave it out; the base image is kept as it is.")
    problems, to_set = [], {}
    for name in sorted(wanted):
        version = wanted[name]
        versions = available.get(name) or []
        if name in current and version in (None, current[name]):
            continue
        if not versions:
            problems.append("component %s is in no depot" % name)
        elif version is None:
            version = newest(versions)
        elif version not in versions:
            problems.append("component %s has no version %s in the depots (they hold %s)"
                            % (name, version, ", ".join(sorted(versions, key=version_key))))
        if current.get(name) != version or version is None:
            to_set[name] = version
    if problems and not missing_ok:
        known = sorted(available)
        raise InputError("The cluster image cannot be changed: %s." % "; ".join(problems),
                         hint="Import the offline bundle that carries it first (gpuops.vgpu.vlcm_depot). "
                              "Components in the depots: %s." % (", ".join(known) or "none"))
    to_delete = sorted(name for name in set(remove) if name in current)
    after = dict((name, version) for name, version in current.items() if name not in to_delete)
    after.update(to_set)
    return {"set": to_set, "delete": to_delete, "after": after, "missing": problems}


def change_cluster_image(client, params, check_mode):
    """The ``vlcm_cluster_image`` module: bring the components of a cluster's desired image to ``components`` (name
    to version or None) less ``remove_components``, changing only the difference.

    In check mode nothing changes, and a component or version no depot holds yet goes to ``warnings`` rather than
    failing. ``progress`` holds the progress of the vLCM tasks.
    """
    wanted = dict((str(name), None if version is None else str(version))
                  for name, version in params["components"].items())
    progress = ProgressLog()
    api = Vlcm(client, timeout=params["timeout"], on_progress=progress)
    cluster = api.cluster(params["cluster"], params["datacenter"])
    api.require_image(cluster)
    image = api.image(cluster)
    available = api.available() if wanted else {}
    changes = image_changes(image["components"], wanted, params["remove_components"], available,
                            missing_ok=check_mode)
    result = {
        "changed": bool(changes["set"] or changes["delete"]),
        "cluster": cluster,
        "changes": {"set": changes["set"], "delete": changes["delete"]},
        "image": {"base_image": image["base_image"], "components": changes["after"]},
        "diff": {"before": {"components": image["components"]}, "after": {"components": changes["after"]}},
        "warnings": ["Check mode: %s yet. The real run fails unless an earlier task imports it." % problem
                     for problem in changes["missing"]],
    }
    if result["changed"] and not check_mode:
        result["commit"] = api.change_image(cluster, changes["set"], changes["delete"], params["commit_message"])
        result["warnings"].extend(api.notes)
        result["image"] = api.image(cluster)
    if progress.lines:
        result["progress"] = progress.lines
    return result
