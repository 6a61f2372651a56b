# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vSphere Lifecycle Manager calls: offline depots, a cluster's image, compliance and remediation.

``Vlcm`` wraps the REST calls (``_vcenter_rest``); ``compliance_summary`` and ``ProgressLog`` shape what they
return. Images change only through a draft (create, set/delete components, validate, commit); a draft that
fails is deleted, so the desired image is either as it was or as asked.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import (
    ApiError,
    GpuopsError,
    InputError,
    NotFound,
    TaskFailed,
)

ESX = "/api/esx/settings"
SOFTWARE_SERVICE = "com.vmware.esx.settings.clusters.software"


def host_names(*results):
    """Host id to name from the ``host_info`` of vLCM results."""
    names = {}
    for result in results:
        for host, info in ((result or {}).get("host_info") or {}).items():
            names[host] = info.get("name") or host
    return names


def compliance_summary(compliance):
    """A cluster compliance result (``ClusterCompliance``) as the modules return it, hosts by name."""
    if not compliance:
        return None
    names = host_names(compliance)
    hosts = []
    for host, result in sorted((compliance.get("hosts") or {}).items(), key=lambda item: names.get(item[0], item[0])):
        components = {}
        for name, c in sorted((result.get("components") or {}).items()):
            components[name] = {"status": c.get("status"),
                                "current": (c.get("current") or {}).get("version"),
                                "target": (c.get("target") or {}).get("version")}
        hosts.append({"name": names.get(host, host), "id": host, "status": result.get("status"),
                      "impact": result.get("impact"), "components": components})
    for host in compliance.get("unavailable_hosts") or []:
        hosts.append({"name": names.get(host, host), "id": host, "status": "UNAVAILABLE", "impact": None,
                      "components": {}})
    return {"status": compliance.get("status"), "impact": compliance.get("impact"),
            "scan_time": compliance.get("scan_time"), "commit": compliance.get("commit"), "hosts": hosts}


class Vlcm:
    """vLCM operations over one REST client."""

    def __init__(self, client, timeout=3600, on_progress=None):
        self.client = client
        self.timeout = timeout
        self.on_progress = on_progress
        self.notes = []

    def _task(self, method, path, body=None, what=None):
        return self.client.run_task(method, path, body=body, timeout=self.timeout, on_progress=self.on_progress,
                                    what=what)

    # ---- inventory --------------------------------------------------------------------------------------------

    def cluster(self, name, datacenter=None):
        """The cluster named ``name`` as ``{"id", "name"}``; NotFound lists the clusters there are."""
        params = {}
        if datacenter:
            found = self.client.get("/api/vcenter/datacenter", params={"names": [datacenter]}) or []
            if not found:
                known = sorted(dc["name"] for dc in self.client.get("/api/vcenter/datacenter") or [])
                raise NotFound("Datacenter '%s' was not found in vCenter %s." % (datacenter, self.client.endpoint),
                               hint="Known datacenters: %s." % (", ".join(known) or "none"))
            params["datacenters"] = [found[0]["datacenter"]]
        clusters = self.client.get("/api/vcenter/cluster", params=params) or []
        matches = [c for c in clusters if c.get("name") == name]
        if len(matches) == 1:
            return {"id": matches[0]["cluster"], "name": name}
        if matches:
            raise NotFound("Cluster name '%s' is ambiguous: %d clusters carry it." % (name, len(matches)),
                           hint="Set the datacenter option to choose one.")
        raise NotFound("Cluster '%s' was not found%s." % (name, " in datacenter '%s'" % datacenter if datacenter else ""),
                       hint="Known clusters: %s." % (", ".join(sorted(c["name"] for c in clusters)) or "none"))

    def hosts(self, cluster):
        """The hosts of a cluster as ``{"id", "name", "connection_state"}``, by name."""
        found = self.client.get("/api/vcenter/host", params={"clusters": [cluster["id"]]}) or []
        return sorted(({"id": h["host"], "name": h["name"], "connection_state": h.get("connection_state")}
                       for h in found), key=lambda h: h["name"])

    def host_ids(self, cluster, names):
        """Host ids of ``names`` in the cluster, in the given order; NotFound names those outside it."""
        by_name = dict((h["name"], h["id"]) for h in self.hosts(cluster))
        missing = [name for name in names if name not in by_name]
        if missing:
            raise NotFound("Hosts not in cluster '%s': %s." % (cluster["name"], ", ".join(missing)),
                           hint="Hosts of the cluster: %s." % (", ".join(sorted(by_name)) or "none"))
        return [by_name[name] for name in dict.fromkeys(names)]

    # ---- depots -----------------------------------------------------------------------------------------------

    def depots(self):
        """Offline depots by id (``source_type``, ``location``, ``description``, ``owner``)."""
        return self.client.get(ESX + "/depots/offline") or {}

    def depot(self, depot_id):
        return self.client.get(ESX + "/depots/offline/%s" % depot_id)

    def depot_at(self, location):
        """The id of the depot imported from ``location``, or None."""
        for depot_id, depot in sorted(self.depots().items()):
            if depot.get("location") == location:
                return depot_id
        return None

    def depot_components(self, depot_id):
        """Components of one depot: ``name``, ``version``, ``display_name``, ``display_version``, ``vendor``."""
        content = self.client.get(ESX + "/depots/offline/%s/content" % depot_id) or {}
        components = []
        for vendor, bundles in sorted((content.get("metadata_bundles") or {}).items()):
            for bundle in bundles:
                for name, summary in sorted((bundle.get("independent_components") or {}).items()):
                    for version in summary.get("versions") or []:
                        components.append({"name": name, "version": version["version"],
                                           "display_name": summary.get("display_name"),
                                           "display_version": version.get("display_version"), "vendor": vendor})
        return components

    def import_depot(self, location, description=None):
        """Import the offline bundle at ``location`` (PULL). Returns ``(depot id, True)``, or the id of the depot
        that already holds the same content and False."""
        body = {"source_type": "PULL", "location": location}
        if description:
            body["description"] = description
        try:
            result = self._task("POST", ESX + "/depots/offline?vmw-task=true", body,
                                what="Importing the offline bundle %s" % location)
        except (TaskFailed, ApiError) as err:
            existing = (err.details.get("data") or {}).get("depot") if isinstance(err.details.get("data"), dict) else None
            if err.details.get("error_type") == "ALREADY_EXISTS" and existing:
                return existing, False
            raise
        return (result or {}).get("depot"), True

    def delete_depot(self, depot_id):
        self._task("DELETE", ESX + "/depots/offline/%s?vmw-task=true" % depot_id,
                   what="Deleting offline depot %s" % depot_id)

    def available(self, names=None):
        """Versions the depots hold: name to list of versions (optionally only ``names``)."""
        params = {"names": sorted(names)} if names else None
        found = self.client.get(ESX + "/depot-content/components", params=params) or []
        return dict((c["name"], [v["version"] for v in c.get("versions") or []]) for c in found)

    def depot_content(self):
        """Every component version the depots hold, with vendor, display names, summary and release date."""
        out = []
        for c in self.client.get(ESX + "/depot-content/components") or []:
            for v in c.get("versions") or []:
                out.append({"name": c["name"], "display_name": c.get("display_name"), "vendor": c.get("vendor"),
                            "version": v["version"], "display_version": v.get("display_version"),
                            "summary": v.get("summary"), "release_date": v.get("release_date"),
                            "category": v.get("category"), "urgency": v.get("urgency")})
        return out

    # ---- image ------------------------------------------------------------------------------------------------

    def _cluster_path(self, cluster, suffix=""):
        return ESX + "/clusters/%s%s" % (cluster["id"], suffix)

    def image_managed(self, cluster):
        return bool((self.client.get(self._cluster_path(cluster, "/enablement/software")) or {}).get("enabled"))

    def require_image(self, cluster):
        if not self.image_managed(cluster):
            raise InputError("Cluster '%s' is not managed with a single vLCM image (it uses baselines), so it has "
                             "no image to change or remediate against." % cluster["name"],
                             hint="Convert it to image management in the vSphere Client (Updates > Image) first.")

    def image(self, cluster):
        """The desired image: ``base_image`` (version) and ``components`` (name to version)."""
        return software_image(self.client.get(self._cluster_path(cluster, "/software")))

    def change_image(self, cluster, to_set, to_delete, message):
        """Set and delete components through a draft; returns the commit id. A failing draft is deleted."""
        drafts = self._cluster_path(cluster, "/software/drafts")
        draft = self._new_draft(cluster, drafts, to_set, to_delete)
        try:
            body = {}
            if to_set:
                body["components_to_set"] = to_set
            if to_delete:
                body["components_to_delete"] = list(to_delete)
            self.client.request("PATCH", "%s/%s/software/components" % (drafts, draft), body=body)
            validation = self._task("POST", "%s/%s?action=validate&vmw-task=true" % (drafts, draft),
                                    what="Validating the image draft of cluster %s" % cluster["name"]) or {}
            errors = [n.get("message", {}).get("default_message")
                      for n in (validation.get("notifications") or {}).get("errors") or []]
            if errors:
                raise InputError("vLCM refused the new image of cluster '%s': %s" % (cluster["name"], " ".join(errors)),
                                 hint="Nothing was changed.")
            return self._task("POST", "%s/%s?action=commit&vmw-task=true" % (drafts, draft), {"message": message},
                              what="Committing the image of cluster %s" % cluster["name"])
        except GpuopsError:
            self._discard(drafts, draft)
            raise

    def _new_draft(self, cluster, drafts, to_set, to_delete):
        """A new draft. vLCM keeps one draft per user and cluster; a draft of this user that an interrupted change
        left (killed between creating and committing it) holds nothing beyond the image or beyond this very change,
        so it is discarded, named in ``notes``, and the change made anew. Any other draft is someone's work: refused,
        left as it is."""
        try:
            return self.client.request("POST", drafts)
        except ApiError as err:
            if err.details.get("error_type") != "ALREADY_EXISTS":
                raise
            left = self._own_draft(drafts, err)
        found = self.client.get("%s/%s" % (drafts, left)) if left else None
        metadata = (found or {}).get("metadata") or {}
        extra = left_draft_changes(self.image(cluster), software_image((found or {}).get("software")), to_set,
                                   to_delete) if found else None
        if extra is None or extra:
            raise ApiError("Cluster '%s' has an uncommitted image draft of this user (%s)%s."
                           % (cluster["name"], "draft %s" % left if left else "a draft",
                              ", with changes of its own: %s" % "; ".join(extra) if extra else ""),
                           hint="Finish or discard it in the vSphere Client (Updates > Image > Edit), then "
                                "run again.", error_type="ALREADY_EXISTS")
        self._discard(drafts, left)
        self.notes.append("Discarded image draft %s of cluster %s (created %s by %s): an interrupted change left it, "
                          "holding no change beyond this one." % (left, cluster["name"],
                                                                  metadata.get("creation_time") or "at an unknown time",
                                                                  metadata.get("owner") or "this user"))
        return self.client.request("POST", drafts)

    def _own_draft(self, drafts, err):
        """The id of this user's draft: from the ALREADY_EXISTS error where vCenter names it, else the one draft
        listed for the session's user (``GET /api/session`` names the user as vCenter writes owners)."""
        data = err.details.get("data")
        if isinstance(data, dict) and data.get("draft"):
            return data["draft"]
        user = (self.client.get("/api/session") or {}).get("user")
        mine = sorted(self.client.get(drafts, params={"owners": [user]}) or {}) if user else []
        return mine[0] if len(mine) == 1 else None

    def _discard(self, drafts, draft):
        try:
            self.client.request("DELETE", "%s/%s" % (drafts, draft))
        except NotFound:
            pass  # committed or gone already

    # ---- compliance and remediation ---------------------------------------------------------------------------

    def scan(self, cluster):
        return self._task("POST", self._cluster_path(cluster, "/software?action=scan&vmw-task=true"),
                          what="Compliance scan of cluster %s" % cluster["name"])

    def compliance(self, cluster):
        """The last compliance result, or None when the cluster was never scanned."""
        try:
            return self.client.get(self._cluster_path(cluster, "/software/compliance"))
        except NotFound:
            return None

    def check(self, cluster, host_ids):
        body = {"hosts": host_ids} if host_ids else {}
        return self._task("POST", self._cluster_path(cluster, "/software?action=check&vmw-task=true"), body,
                          what="Remediation pre-check of cluster %s" % cluster["name"])

    def apply_policy(self, cluster):
        """The remediation settings configured on the cluster (``policies/apply``; unset fields absent)."""
        return self.client.get(self._cluster_path(cluster, "/policies/apply")) or {}

    def set_apply_policy(self, cluster, policy):
        self.client.request("PUT", self._cluster_path(cluster, "/policies/apply"), body=policy)

    def running_remediations(self, cluster):
        """``{task id: task info}`` of the remediations (software ``apply``) of the cluster that vCenter still runs:
        one an earlier run started and did not see to the end (a controller killed while vLCM works goes on in
        vCenter). CIS Tasks list, POST /api/cis/tasks?action=list with a filter_spec of services, operations, status
        and targets (vSphere Automation API: developer.broadcom.com/xapis/vsphere-automation-api/latest/api/cis/
        tasks__action=list/post). The service and operation names are those of the remediation's own task
        (``com.vmware.esx.settings.clusters.software``, ``apply``; not confirmed against a vCenter)."""
        body = {"filter_spec": {"services": [SOFTWARE_SERVICE], "operations": ["apply"],
                                "status": ["PENDING", "RUNNING"],
                                "targets": [{"type": "ClusterComputeResource", "id": cluster["id"]}]}}
        return self.client.request("POST", "/api/cis/tasks?action=list", body=body) or {}

    def wait_remediation(self, task, cluster):
        """Wait for a remediation task of the cluster that another run started; its outcome as ``{"task", "user",
        "started", "status", "message"}`` (a failed one does not raise: the scan after it says what it left)."""
        info = self.client.get("/api/cis/tasks/%s" % task) or {}
        entry = {"task": task, "user": info.get("user"), "started": info.get("start_time")}
        try:
            self.client.wait_task(task, self.timeout, on_progress=self.on_progress,
                                  what="The remediation of cluster %s that an earlier run started" % cluster["name"])
            entry.update(status="SUCCEEDED", message=None)
        except TaskFailed as err:
            entry.update(status="FAILED", message=err.message)
        return entry

    def apply(self, cluster, host_ids, accept_eula):
        body = {"accept_eula": bool(accept_eula)}
        if host_ids:
            body["hosts"] = host_ids
        return self._task("POST", self._cluster_path(cluster, "/software?action=apply&vmw-task=true"), body,
                          what="Remediation of cluster %s" % cluster["name"])


def software_image(software):
    """A ``SoftwareInfo`` (an image or a draft's software) as ``base_image`` (version) and ``components`` (name to
    version)."""
    software = software or {}
    components = dict((name, (info or {}).get("version")) for name, info in (software.get("components") or {}).items())
    return {"base_image": (software.get("base_image") or {}).get("version"), "components": components}


def left_draft_changes(image, draft, to_set, to_delete):
    """What a left draft changes that is neither in the image nor in this change (``to_set``, ``to_delete``), as
    phrases; empty when each of its components is as the image has it or as this change makes it, so that
    discarding it loses nothing."""
    after = dict((name, version) for name, version in image["components"].items() if name not in to_delete)
    after.update(to_set)
    changes = []
    if draft["base_image"] != image["base_image"]:
        changes.append("base image %s instead of %s" % (draft["base_image"], image["base_image"]))
    for name in sorted(set(draft["components"]) | set(image["components"]) | set(after)):
        version = draft["components"].get(name)
        if version not in (image["components"].get(name), after.get(name)):
            changes.append("component %s %s" % (name, "at %s" % version if version else "removed"))
    return changes


class ProgressLog:
    """Progress of vCenter tasks while a module waits: each change (a host done, a new step) and a heartbeat every
    ``heartbeat`` seconds go into ``lines``, which the module returns."""

    def __init__(self, heartbeat=30):
        self.heartbeat = heartbeat
        self.lines = []
        self._last = None
        self._logged_at = None

    def __call__(self, info, elapsed):
        progress = info.get("progress") or {}
        message = (progress.get("message") or {}).get("default_message") or ""
        state = (info.get("operation"), info.get("status"), progress.get("completed"), message)
        if state == self._last and self._logged_at is not None and elapsed - self._logged_at < self.heartbeat:
            return
        self._last, self._logged_at = state, elapsed
        line = "[%5.1fs] %s %s" % (elapsed, info.get("operation") or "task", (info.get("status") or "").lower())
        if progress.get("total"):
            line += " %s/%s" % (progress.get("completed", 0), progress["total"])
        if message:
            line += ": %s" % message
        self.lines.append(line)
