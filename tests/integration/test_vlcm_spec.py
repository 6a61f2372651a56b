# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Both sides of the vLCM REST API against VMware's OpenAPI description (vsphere-8.0.2-esx.json).

Every request the collection's client sends and every answer the lab vCenter gives under /api/esx is checked
against the operation the spec describes: path and fixed query, declared query parameters and their enums, the
request body schema, a declared status code and the response schema. Objects may carry only the properties the
spec names. Task results and errors read from /api/cis/tasks are checked against the operation's result type.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import sys
from urllib.parse import parse_qs, urlsplit

import jsonschema
import pytest
import requests

from conftest import ROOT
from vlcm_lab import DAEMON, DRIVER, DRIVER_VERSION, Depot, vlcm_lab_at_start
from vsphere_direct import Direct

# The collection's own client, from the collection tree Ansible uses (make collection-link).
sys.path.insert(0, os.path.join(ROOT, ".tmp", "collections"))
from ansible_collections.gpuops.vgpu.plugins.module_utils._errors import GpuopsError  # noqa: E402
from ansible_collections.gpuops.vgpu.plugins.module_utils.clients._vcenter_rest import VCenterRestClient  # noqa: E402
from ansible_collections.gpuops.vgpu.plugins.module_utils.vlcm._operations import Vlcm  # noqa: E402

SPEC = os.path.join(ROOT, "tests", "fixtures", "specs", "vsphere-8.0.2-esx.json")

# What the task of an operation returns as its result (the spec types a task operation's answer as the task id).
TASK_RESULTS = {
    "/api/esx/settings/depots/offline?vmw-task=true": {
        "type": "object", "properties": {"depot": {"type": "string"}}, "required": ["depot"],
        "additionalProperties": False},
    "/api/esx/settings/clusters/{cluster}/software?action=scan&vmw-task=true": {
        "$ref": "#/definitions/EsxSettingsClusterCompliance"},
    "/api/esx/settings/clusters/{cluster}/software?action=check&vmw-task=true": {
        "$ref": "#/definitions/EsxSettingsClustersSoftwareReportsLastCheckResultCheckResult"},
    "/api/esx/settings/clusters/{cluster}/software?action=apply&vmw-task=true": {
        "$ref": "#/definitions/EsxSettingsClustersSoftwareReportsLastApplyResultApplyResult"},
    "/api/esx/settings/clusters/{cluster}/software/drafts/{draft}?action=validate&vmw-task=true": {
        "type": "object", "properties": {"notifications": {"$ref": "#/definitions/EsxSettingsNotifications"}},
        "required": ["notifications"], "additionalProperties": False},
    "/api/esx/settings/clusters/{cluster}/software/drafts/{draft}?action=commit&vmw-task=true": {"type": "string"},
}
# The error data of an apply that failed on hosts is its ApplyResult (which hosts failed, and why).
TASK_ERROR_DATA = {
    "/api/esx/settings/clusters/{cluster}/software?action=apply&vmw-task=true":
        TASK_RESULTS["/api/esx/settings/clusters/{cluster}/software?action=apply&vmw-task=true"],
}
# com.vmware.cis.task.Info, from the CIS spec; its progress and status types are in the esx spec too.
TASK_INFO = {
    "type": "object",
    "required": ["description", "service", "operation", "status", "cancelable", "user"],
    "additionalProperties": False,
    "properties": {
        "description": {"$ref": "#/definitions/VapiStdLocalizableMessage"},
        "service": {"type": "string"}, "operation": {"type": "string"}, "parent": {"type": "string"},
        "target": {"type": "object", "properties": {"type": {"type": "string"}, "id": {"type": "string"}},
                   "required": ["type", "id"], "additionalProperties": False},
        "status": {"$ref": "#/definitions/CisTaskStatus"}, "cancelable": {"type": "boolean"},
        "error": {"$ref": "#/definitions/VapiStdErrorsError"}, "start_time": {"type": "string"},
        "end_time": {"type": "string"}, "user": {"type": "string"},
        "progress": {"$ref": "#/definitions/CisTaskProgress"}, "result": {},
    },
}


def strict(definitions):
    """The spec's definitions with additionalProperties false wherever an object lists its properties."""
    definitions = copy.deepcopy(definitions)

    def close(schema):
        if isinstance(schema, dict):
            if "properties" in schema and "additionalProperties" not in schema:
                schema["additionalProperties"] = False
            for value in schema.values():
                close(value)
        elif isinstance(schema, list):
            for value in schema:
                close(value)

    close(definitions)
    return definitions


class Spec:
    def __init__(self, document):
        self.paths = document["paths"]
        self.definitions = strict(document["definitions"])

    def errors(self, schema, value):
        validator = jsonschema.Draft4Validator(dict(schema, definitions=self.definitions))
        return ["%s at %s" % (e.message, "/".join(str(p) for p in e.absolute_path) or "the top")
                for e in validator.iter_errors(value)]

    def operation(self, method, path, query):
        """The spec's path key and operation for a request, preferring the key with more fixed query."""
        found = None
        segments = path.strip("/").split("/")
        for key, item in self.paths.items():
            template, fixed = (key.split("?", 1) + [""])[:2]
            parts = template.strip("/").split("/")
            if len(parts) != len(segments) or not all(
                    p == s or (p.startswith("{") and p.endswith("}")) for p, s in zip(parts, segments)):
                continue
            fixed = dict((k, v[0]) for k, v in parse_qs(fixed).items())
            if any(query.get(k, [None])[0] != v for k, v in fixed.items()) or method.lower() not in item:
                continue
            if found is None or len(fixed) > len(found[2]):
                found = (key, item[method.lower()], fixed)
        return found


class Recorder(requests.Session):
    """A requests session that keeps every request and its answer."""

    def __init__(self):
        super(Recorder, self).__init__()
        self.exchanges = []

    def request(self, method, url, **kwargs):
        response = super(Recorder, self).request(method, url, **kwargs)
        sent = response.request
        body = sent.body.decode() if isinstance(sent.body, bytes) else sent.body
        self.exchanges.append({
            "method": sent.method, "url": sent.url, "request": json.loads(body) if body else None,
            "status": response.status_code, "response": response.json() if response.content else None})
        return response


def check_exchanges(spec, exchanges):
    """Every /api/esx exchange against its operation; task reads against the operation that started the task."""
    problems, tasks, checked = [], {}, set()
    for x in exchanges:
        parts = urlsplit(x["url"])
        query = parse_qs(parts.query)
        where = "%s %s" % (x["method"], parts.path + ("?" + parts.query if parts.query else ""))
        if parts.path.startswith("/api/cis/tasks/"):
            task = parts.path.rsplit("/", 1)[1]
            problems += ["%s: task info: %s" % (where, e) for e in spec.errors(TASK_INFO, x["response"])]
            key = tasks.get(task)
            info = x["response"] or {}
            if info.get("status") == "SUCCEEDED" and key in TASK_RESULTS:
                problems += ["%s: result of %s: %s" % (where, key, e)
                             for e in spec.errors(TASK_RESULTS[key], info.get("result"))]
            if info.get("status") == "FAILED" and key in TASK_ERROR_DATA and info["error"].get("data") is not None:
                problems += ["%s: error data of %s: %s" % (where, key, e)
                             for e in spec.errors(TASK_ERROR_DATA[key], info["error"].get("data"))]
            continue
        if not parts.path.startswith("/api/esx/"):
            continue
        found = spec.operation(x["method"], parts.path, query)
        if found is None:
            problems.append("%s: no such operation in the spec" % where)
            continue
        key, op, fixed = found
        checked.add("%s %s" % (x["method"], key))
        params = op.get("parameters") or []
        declared = dict((p["name"], p) for p in params if p["in"] == "query")
        for name, values in query.items():
            if name in fixed:
                continue
            if name not in declared:
                problems.append("%s: query parameter %s is not in the spec" % (where, name))
                continue
            items = declared[name].get("items") or {}
            for value in values:
                if "enum" in items and value not in items["enum"]:
                    problems.append("%s: %s=%s is not one of %s" % (where, name, value, items["enum"]))
        body = [p for p in params if p["in"] == "body"]
        if x["request"] is not None and not body:
            problems.append("%s: sends a body, the operation takes none" % where)
        if body and x["request"] is not None:
            problems += ["%s: request body: %s" % (where, e) for e in spec.errors(body[0]["schema"], x["request"])]
        answer = op["responses"].get(str(x["status"]))
        if answer is None:
            problems.append("%s: status %s is not one the spec declares (%s)"
                            % (where, x["status"], ", ".join(op["responses"])))
            continue
        if "schema" in answer:
            problems += ["%s: %s answer: %s" % (where, x["status"], e)
                         for e in spec.errors(answer["schema"], x["response"])]
        if x["status"] == 202:
            tasks[x["response"]] = key
    return problems, checked


@pytest.fixture(scope="module")
def spec():
    if not os.path.exists(SPEC):
        pytest.fail("VMware's OpenAPI description of /api/esx is missing at %s; restore tests/fixtures/specs from git."
                    % SPEC)
    with open(SPEC) as handle:
        return Spec(json.load(handle))


@pytest.fixture
def lab(labs, tmp_path_factory):
    return vlcm_lab_at_start(labs, tmp_path_factory, delay_ms=20)


def expect_error(call, *args, **kwargs):
    with pytest.raises(GpuopsError) as err:
        call(*args, **kwargs)
    return err.value


def test_client_and_lab_speak_the_spec(lab, spec):
    recorder = Recorder()
    conn = lab.connection
    client = VCenterRestClient(conn["hostname"], conn["username"], conn["password"], port=conn["port"],
                               validate_certs=False, session=recorder)
    api = Vlcm(client, timeout=60)
    depot = Depot(lab)
    driver, daemon = depot.driver(), depot.daemon()
    esx = "/api/esx/settings"

    # Depots: import, list, read, content; the errors vCenter answers for them.
    depot_id, created = api.import_depot(depot.url(driver), "host driver")
    assert created
    api.import_depot("file://" + daemon)
    assert api.depot_at(depot.url(driver)) == depot_id
    assert api.depot(depot_id)["source_type"] == "PULL"
    assert [c["name"] for c in api.depot_components(depot_id)] == [DRIVER]
    assert expect_error(api.import_depot, depot.url(depot.corrupt())).details["error_type"] == "ERROR"
    assert expect_error(client.request, "POST", esx + "/depots/offline?vmw-task=true",
                        body={"source_type": "PULL", "location": depot.url(driver)}).details["error_type"] == \
        "ALREADY_EXISTS"
    assert expect_error(client.request, "POST", esx + "/depots/offline?vmw-task=true",
                        body={"source_type": "PUSH", "file_id": "f-1"}).details["error_type"] == "INVALID_ARGUMENT"
    assert expect_error(client.get, esx + "/depots/offline/no-such-depot").details["status"] == 404

    # Depot content with every filter.
    assert DRIVER in api.available([DRIVER, DAEMON])
    client.get(esx + "/depot-content/components", params={
        "vendors": ["NVIDIA"], "versions": [DRIVER_VERSION], "min_version": "500", "bundle_types": ["INDEPENDENT"]})
    client.get(esx + "/depot-content/components/%s/versions/%s" % (DRIVER, DRIVER_VERSION))
    client.get(esx + "/depot-content/base-images")
    api.depot_content()

    # The image and its drafts, a refused draft included.
    cluster = api.cluster("gpu-cluster")
    base = esx + "/clusters/" + cluster["id"]
    assert api.image_managed(cluster)
    api.image(cluster)
    draft = client.request("POST", base + "/software/drafts")
    assert expect_error(client.request, "POST", base + "/software/drafts").details["error_type"] == "ALREADY_EXISTS"
    client.request("PATCH", "%s/software/drafts/%s/software/components" % (base, draft),
                   body={"components_to_set": {DRIVER: "1.0"}, "components_to_delete": ["absent"]})
    client.get(base + "/software/drafts")
    client.get("%s/software/drafts/%s" % (base, draft))
    client.get("%s/software/drafts/%s/software/components" % (base, draft))
    client.run_task("POST", "%s/software/drafts/%s?action=validate&vmw-task=true" % (base, draft))
    expect_error(client.run_task, "POST", "%s/software/drafts/%s?action=commit&vmw-task=true" % (base, draft),
                 body={"message": "invalid"})
    client.request("DELETE", "%s/software/drafts/%s" % (base, draft))
    api.change_image(cluster, {DRIVER: DRIVER_VERSION, DAEMON: "525.105.14-0.0.0000"}, [], "spec test")
    client.get(base + "/software/components")
    client.get(base + "/software/components/" + DRIVER)
    assert expect_error(client.get, esx + "/clusters/domain-c999/software").details["status"] == 404

    # Compliance, checks and remediation: one that fails on a host, then one that succeeds.
    assert api.compliance(cluster) is None
    api.scan(cluster)
    client.get(base + "/software/compliance")
    direct = Direct(lab)
    try:
        direct.shared_direct("esxi-03.lab.local")
        direct.add_vgpu("gpu-vm-07", "grid_p40-8q")
        direct.power_on("gpu-vm-07")
        api.check(cluster, [])
        assert expect_error(api.apply, cluster, [], accept_eula=True).details["error_type"] == "ERROR"
        direct.power_off("gpu-vm-07")
    finally:
        direct.close()
    client.get(base + "/software/reports/last-apply-result")
    assert expect_error(api.apply, cluster, [], accept_eula=False).details["error_type"] == \
        "NOT_ALLOWED_IN_CURRENT_STATE"
    api.apply(cluster, [h["id"] for h in api.hosts(cluster)], accept_eula=True)
    assert api.compliance(cluster)["status"] == "COMPLIANT"
    assert expect_error(api.delete_depot, depot_id).details["error_type"] == "RESOURCE_IN_USE"

    # Remediation settings and image commits.
    client.get(base + "/policies/apply")
    client.request("PUT", base + "/policies/apply", body={"pre_remediation_power_action": "SUSPEND_VMS",
                                                          "failure_action": {"action": "FAIL"}})
    client.get(base + "/policies/apply/effective")
    commit = lab.state()["clusters"][0]["image_commit"]
    assert client.get(base + "/software/commits/" + commit)["apply_status"] == "APPLIED"
    assert expect_error(client.get, base + "/software/commits/999").details["status"] == 404

    # Image management of a cluster that has none yet.
    mixed = api.cluster("mixed-cluster")
    assert not api.image_managed(mixed)
    assert expect_error(client.get, esx + "/clusters/%s/software" % mixed["id"]).details["status"] == 404
    client.run_task("PUT", esx + "/clusters/%s/enablement/software?vmw-task=true" % mixed["id"],
                    body={"skip_software_check": False})
    api.image(mixed)
    client.close()

    problems, checked = check_exchanges(spec, recorder.exchanges)
    assert problems == []
    assert len(checked) >= 25, sorted(checked)

    # The lab counts REST requests by the route that served them: every esx route it served is a spec operation.
    for route in lab.stats()["rest_by_route"]:
        method, key = route.split(" ", 1)
        if key.startswith("/api/esx/"):
            assert method.lower() in spec.paths.get(key, {}), "lab route %s is not in the spec" % route


def test_the_check_finds_what_breaks_the_spec(spec):
    """The checker itself: a wrong enum, an unknown property and an undeclared status are each caught."""
    url = "https://vc/api/esx/settings/depots/offline?vmw-task=true"
    exchanges = [
        {"method": "POST", "url": url, "request": {"source_type": "FETCH", "location": "x"}, "status": 202,
         "response": "t-1"},
        {"method": "POST", "url": url, "request": {"source_type": "PULL", "url": "x"}, "status": 202, "response": "t-2"},
        {"method": "GET", "url": "https://vc/api/esx/settings/depots/offline", "request": None, "status": 418,
         "response": None},
        {"method": "GET", "url": "https://vc/api/cis/tasks/t-1", "request": None, "status": 200, "response": {
            "description": {"id": "d", "default_message": "d", "args": []}, "service": "s", "operation": "create",
            "status": "SUCCEEDED", "cancelable": False, "user": "u", "result": {"depot_id": "d-1"}}},
    ]
    problems = check_exchanges(spec, exchanges)[0]
    assert any("'FETCH' is not one of ['PULL', 'PUSH']" in p for p in problems)
    assert any("'url' was unexpected" in p for p in problems)
    assert any("status 418 is not one the spec declares" in p for p in problems)
    assert any("result of /api/esx/settings/depots/offline?vmw-task=true" in p for p in problems)
