# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A vCenter with vLCM behind the REST client's interface, and a runner for the vLCM modules' real ``main()``.

``FakeVlcm`` answers the ``/api/...`` calls the collection makes as the vSphere Automation API does (the shapes of
``ClusterCompliance``, ``ApplyResult``, ``CheckResult``, drafts and depots), keeps its state between calls so a
second run sees what the first did, and records every call.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

import pytest

from ansible.module_utils import basic
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import ApiError, NotFound, TaskFailed
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter_rest import VCenterRestClient
from ansible_collections.gpuops.vgpu.tests.unit.plugins.module_args import patch_module_args

DRIVER, DRIVER_VERSION = "NVD-VGPU-800", "525.105.14-1OEM.800.1.0.20613240"
DRIVER_535 = "535.54.06-1OEM.800.1.0.20613240"
DAEMON, DAEMON_VERSION = "nvd-gpu-mgmt-daemon", "525.105.14-0.0.0000"
BASE_IMAGE = "8.0.2-0.0.22380479"
HOSTS = ["esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local"]
CONNECTION = {"hostname": "vc.lab.local", "username": "administrator@vsphere.local", "password": "s3cret!",
              "validate_certs": False}
ESX = "/api/esx/settings"


class FakeVlcm:
    """vCenter with datacenter ``lab-dc``: ``gpu-cluster`` (image-managed, three hosts) and ``mixed-cluster``
    (baselines). ``bundles`` are the offline bundles vCenter can pull: location to ``[(name, version)]``."""

    endpoint = "vc.lab.local:443"

    def __init__(self, bundles=None):
        self.bundles = dict(bundles or {})
        self.calls = []
        self.warnings = []
        self.built_with = None
        self.closed = False
        self.depots = {}
        self.image = {"base_image": BASE_IMAGE, "components": {}}
        self.installed = dict(("host-%d" % i, {}) for i in range(1, len(HOSTS) + 1))
        self.host_names = dict(("host-%d" % i, name) for i, name in enumerate(HOSTS, 1))
        self.last_compliance = None
        self.drafts = {}  # id to components (name to version)
        self.draft_count = 0
        self.commits = 0
        self.validation_errors = []
        self.check_issues = []  # (host id or None for the cluster, "ERROR" or "WARNING", text)
        self.failing_hosts = {}  # host id to the reason its remediation fails
        self.policy = {}  # the cluster's configured remediation settings (policies/apply)
        self.policies_applied = []  # the configured settings each apply ran under
        self.running = {}  # CIS task id to (its info, the hosts it remediates when waited for)
        self.clusters = [{"cluster": "domain-c7", "name": "gpu-cluster", "managed": True},
                         {"cluster": "domain-c9", "name": "mixed-cluster", "managed": False}]

    # ---- the client's interface ---------------------------------------------------------------------------

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.closed = True

    def get(self, path, params=None):
        return self.request("GET", path, params=params)

    def request(self, method, path, params=None, body=None):
        self.calls.append((method, path))
        for pattern, handler in self._routes():
            match = re.match(pattern + r"\Z", "%s %s" % (method, path))
            if match:
                return handler(params, body, *match.groups())
        raise NotFound("vCenter %s: %s %s failed: no such path." % (self.endpoint, method, path), status=404)

    def run_task(self, method, path, body=None, params=None, timeout=3600, on_progress=None, what=None):
        operation = re.search(r"action=(\w+)", path)
        info = {"operation": operation.group(1) if operation else method.lower(), "status": "RUNNING",
                "progress": {"total": 1, "completed": 0, "message": {"default_message": what or path}}}
        if on_progress is not None:
            on_progress(info, 0.25)
        try:
            return self.request(method, path, params=params, body=body)
        except TaskFailed as err:
            raise TaskFailed("%s failed: %s" % (what, err.message), **err.details)

    def wait_task(self, task, timeout, on_progress=None, what=None):
        """A remediation an earlier run started (``running``) ends when waited for: its hosts get the image."""
        info, hosts = self.running.pop(task)
        self.calls.append(("WAIT", task))
        for host in hosts:
            self.installed[host] = dict(self.image["components"])
        if info.get("fails"):
            raise TaskFailed("%s failed: %s" % (what, info["fails"]), error_type="ERROR")

    # ---- answers ------------------------------------------------------------------------------------------

    def _routes(self):
        cluster = r"/api/esx/settings/clusters/(domain-c\d+)"
        return [
            (r"GET /api/vcenter/datacenter", self._datacenters),
            (r"GET /api/vcenter/cluster", self._clusters),
            (r"GET /api/vcenter/host", self._hosts),
            (r"GET %s/depots/offline" % ESX, lambda *a: dict((i, self._summary(i)) for i in self.depots)),
            (r"POST %s/depots/offline\?vmw-task=true" % ESX, self._import),
            (r"GET %s/depots/offline/([\w-]+)" % ESX, lambda params, body, depot: self._summary(depot)),
            (r"GET %s/depots/offline/([\w-]+)/content" % ESX, self._content),
            (r"DELETE %s/depots/offline/([\w-]+)\?vmw-task=true" % ESX, self._delete_depot),
            (r"GET %s/depot-content/components" % ESX, self._components),
            (r"GET %s/enablement/software" % cluster, lambda p, b, c: {"enabled": self._cluster(c)["managed"]}),
            (r"GET %s/software" % cluster, self._software),
            (r"POST %s/software/drafts" % cluster, self._new_draft),
            (r"GET %s/software/drafts/(\d+)" % cluster, self._draft),
            (r"PATCH %s/software/drafts/(\d+)/software/components" % cluster, self._edit_draft),
            (r"POST %s/software/drafts/(\d+)\?action=validate&vmw-task=true" % cluster, self._validate),
            (r"POST %s/software/drafts/(\d+)\?action=commit&vmw-task=true" % cluster, self._commit),
            (r"DELETE %s/software/drafts/(\d+)" % cluster, self._discard),
            (r"POST %s/software\?action=scan&vmw-task=true" % cluster, self._scan),
            (r"GET %s/software/compliance" % cluster, self._compliance),
            (r"POST %s/software\?action=check&vmw-task=true" % cluster, self._check),
            (r"POST %s/software\?action=apply&vmw-task=true" % cluster, self._apply),
            (r"POST /api/cis/tasks\?action=list", self._list_tasks),
            (r"GET /api/cis/tasks/([\w:.-]+)", lambda p, b, task: dict(self.running[task][0])),
            (r"GET %s/policies/apply" % cluster, lambda p, b, c: dict(self.policy)),
            (r"PUT %s/policies/apply" % cluster, self._set_policy),
        ]

    def _list_tasks(self, params, body):
        spec = body["filter_spec"]
        assert spec["services"] and spec["operations"] == ["apply"] and "RUNNING" in spec["status"]
        targets = [target["id"] for target in spec["targets"]]
        return dict((task, info) for task, (info, _hosts) in self.running.items() if info["target"]["id"] in targets)

    def _set_policy(self, params, body, cluster_id):
        self.policy = dict(body)

    def _datacenters(self, params, body):
        names = (params or {}).get("names")
        return [{"datacenter": "datacenter-1", "name": "lab-dc"}] if not names or "lab-dc" in names else []

    def _clusters(self, params, body):
        return [{"cluster": c["cluster"], "name": c["name"]} for c in self.clusters]

    def _cluster(self, cluster_id):
        return [c for c in self.clusters if c["cluster"] == cluster_id][0]

    def _hosts(self, params, body):
        if params["clusters"] != ["domain-c7"]:
            return []
        return [{"host": host, "name": name, "connection_state": "CONNECTED"}
                for host, name in sorted(self.host_names.items())]

    def _summary(self, depot_id):
        if depot_id not in self.depots:
            raise NotFound("There is no offline depot %s." % depot_id, status=404)
        depot = self.depots[depot_id]
        return {"source_type": "PULL", "location": depot["location"], "description": depot["description"],
                "owner": "administrator@vsphere.local"}

    def _import(self, params, body):
        components = self.bundles.get(body["location"])
        if components is None:
            raise TaskFailed("Cannot download %s." % body["location"], error_type="ERROR", data=None)
        for depot_id, depot in sorted(self.depots.items()):
            if sorted(depot["components"]) == sorted(components):
                raise TaskFailed("The content is already imported.", error_type="ALREADY_EXISTS",
                                 data={"depot": depot_id})
        depot_id = "offline-depot-%d" % (len(self.depots) + 1)
        self.depots[depot_id] = {"location": body["location"], "description": body.get("description", ""),
                                 "components": list(components)}
        return {"depot": depot_id}

    def _content(self, params, body, depot_id):
        independent = {}
        for name, version in self.depots[depot_id]["components"]:
            independent.setdefault(name, {"display_name": name, "versions": []})["versions"].append(
                {"version": version, "display_version": version.split("-")[0]})
        return {"metadata_bundles": {"NVIDIA": [{"independent_components": independent}]}}

    def _delete_depot(self, params, body, depot_id):
        del self.depots[depot_id]

    def _components(self, params, body):
        versions = {}
        for depot in self.depots.values():
            for name, version in depot["components"]:
                versions.setdefault(name, []).append(version)
        versions.setdefault("ESXi", []).append(BASE_IMAGE)
        names = (params or {}).get("names")
        return [{"name": name, "display_name": name, "vendor": "NVIDIA" if name != "ESXi" else "VMware",
                 "versions": [{"version": v, "display_version": v.split("-")[0]} for v in found]}
                for name, found in sorted(versions.items()) if not names or name in names]

    def _software(self, params, body, cluster_id):
        return {"base_image": {"version": self.image["base_image"]},
                "components": dict((n, {"version": v}) for n, v in self.image["components"].items())}

    def _new_draft(self, params, body, cluster_id):
        if self.drafts:
            raise ApiError("A draft exists.", error_type="ALREADY_EXISTS", data={"draft": sorted(self.drafts)[0]})
        self.draft_count += 1
        draft = str(self.draft_count)
        self.drafts[draft] = dict(self.image["components"])
        return draft

    def _draft(self, params, body, cluster_id, draft):
        if draft not in self.drafts:
            raise NotFound("There is no draft %s." % draft, status=404)
        return {"metadata": {"owner": "administrator@vsphere.local", "status": "VALID",
                             "creation_time": "2026-11-29T08:00:00.000Z"},
                "software": {"base_image": {"version": self.image["base_image"]},
                             "components": dict((n, {"version": v}) for n, v in self.drafts[draft].items())}}

    def _edit_draft(self, params, body, cluster_id, draft):
        self.drafts[draft].update(body.get("components_to_set") or {})
        for name in body.get("components_to_delete") or []:
            self.drafts[draft].pop(name, None)

    def _validate(self, params, body, cluster_id, draft):
        return {"notifications": {"errors": [{"message": {"default_message": text}}
                                             for text in self.validation_errors]}}

    def _commit(self, params, body, cluster_id, draft):
        self.image["components"] = self.drafts.pop(draft)
        self.commits += 1
        return str(self.commits)

    def _discard(self, params, body, cluster_id, draft):
        if self.drafts.pop(draft, None) is None:
            raise NotFound("There is no draft %s." % draft, status=404)

    def _host_compliance(self, host):
        components, status = {}, "COMPLIANT"
        for name, version in sorted(self.image["components"].items()):
            current = self.installed[host].get(name)
            entry = {"status": "COMPLIANT" if current == version else "NON_COMPLIANT",
                     "target": {"version": version}}
            if current is not None:
                entry["current"] = {"version": current}
            if entry["status"] != "COMPLIANT":
                status = "NON_COMPLIANT"
            components[name] = entry
        return {"status": status, "impact": "NO_IMPACT" if status == "COMPLIANT" else "REBOOT_REQUIRED",
                "components": components}

    def _scan(self, params, body, cluster_id):
        hosts = dict((host, self._host_compliance(host)) for host in self.installed)
        status = "COMPLIANT" if all(h["status"] == "COMPLIANT" for h in hosts.values()) else "NON_COMPLIANT"
        self.last_compliance = {"status": status, "impact": "NO_IMPACT", "scan_time": "2026-01-01T00:00:00Z",
                                "commit": str(self.commits), "hosts": hosts, "unavailable_hosts": [],
                                "host_info": dict((h, {"name": n}) for h, n in self.host_names.items())}
        return self.last_compliance

    def _compliance(self, params, body, cluster_id):
        if self.last_compliance is None:
            raise NotFound("The cluster was never scanned.", status=404)
        return self.last_compliance

    def _check(self, params, body, cluster_id):
        entities = [{"type": "HOST" if host else "CLUSTER", "host": host,
                     "check_statuses": [{"status": level, "issues": [{"default_message": text}]}]}
                    for host, level, text in self.check_issues]
        failed = any(level == "ERROR" for _host, level, _text in self.check_issues)
        return {"status": "ERROR" if failed else "OK", "entity_results": entities,
                "host_info": dict((h, {"name": n}) for h, n in self.host_names.items())}

    def _apply(self, params, body, cluster_id):
        assert body["accept_eula"] is True
        self.policies_applied.append(dict(self.policy))
        statuses, failed = {}, None
        for host in body.get("hosts") or sorted(self.installed):
            if failed is not None:
                statuses[host] = {"status": "SKIPPED", "progress": {"message": {"default_message": "Skipped."}}}
            elif host in self.failing_hosts:
                failed = host
                statuses[host] = {"status": "ERROR", "notifications": {"errors": [
                    {"message": {"default_message": self.failing_hosts[host]}}]}}
            else:
                self.installed[host] = dict(self.image["components"])
                statuses[host] = {"status": "OK", "notifications": {"info": [
                    {"message": {"default_message": "Host remediated."}}]}}
        self._scan(params, body, cluster_id)
        result = {"status": "ERROR" if failed else "OK", "host_status": statuses,
                  "host_info": dict((h, {"name": n}) for h, n in self.host_names.items())}
        if failed:
            raise TaskFailed("Remediation failed on %s." % self.host_names[failed], error_type="ERROR", data=result)
        return result

    # ---- what the tests set and look at -------------------------------------------------------------------

    def add_depot(self, location, components):
        """A depot as if imported from ``location`` (with ``[(name, version)]``)."""
        self.bundles[location] = list(components)
        return self._import(None, {"location": location})["depot"]

    def writes(self):
        """Calls other than reads, the scan, the pre-check and task lists (which change nothing)."""
        return [call for call in self.calls if call[0] not in ("GET", "WAIT") and "action=scan" not in call[1]
                and "action=check" not in call[1] and "action=list" not in call[1]]


def install(monkeypatch, fake=None):
    """Make every vLCM module connect to ``fake`` (a new ``FakeVlcm`` by default) and collect the module's
    warnings in ``fake.warnings`` (where ansible-core puts a warning depends on what the process loaded)."""
    fake = fake or FakeVlcm()

    def from_params(params):
        fake.built_with = dict(params)
        return fake

    monkeypatch.setattr(VCenterRestClient, "from_params", staticmethod(from_params))
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, warning: fake.warnings.append(warning))
    return fake


def run_module(module, args, capsys, check_mode=False, diff=False):
    """Run ``module.main()`` with ``args`` and the fake's connection options; returns (failed, result) without
    the ``invocation`` echo, after checking the password appears nowhere in it."""
    args = dict(CONNECTION, **args)
    if check_mode:
        args["_ansible_check_mode"] = True
    if diff:
        args["_ansible_diff"] = True
    with patch_module_args(args):
        with pytest.raises(SystemExit) as exited:
            module.main()
    result = json.loads(capsys.readouterr().out)
    assert "s3cret!" not in json.dumps(result)
    result.pop("invocation", None)
    return exited.value.code != 0, result
