# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the vLCM tests share: a lab topology with vLCM settings, offline bundles in the lab's depot, REST reads."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import os
import shutil
import ssl
import sys
import time
import urllib.request

import yaml

from conftest import DEFAULT_TOPOLOGY, ROOT

sys.path.insert(0, os.path.join(ROOT, "lab", "tools"))
import make_bundle  # noqa: E402  pylint: disable=wrong-import-position

DRIVER, DRIVER_VERSION = "NVD-VGPU-800", "525.105.14-1OEM.800.1.0.20613240"
DAEMON, DAEMON_VERSION = "nvd-gpu-mgmt-daemon", "525.105.14-0.0.0000"
BASE_IMAGE = "8.0.2-0.0.22380479"
GPU_HOSTS = ["esxi-01.lab.local", "esxi-02.lab.local", "esxi-03.lab.local"]


def driver_topology(directory, host, name):
    """The default topology, without guests, with the vGPU manager installed on ``host`` (its shell's nvidia-smi
    then reports the GPUs); written as ``name`` in ``directory``."""
    with open(DEFAULT_TOPOLOGY) as handle:
        topology = yaml.safe_load(handle)
    for cluster in topology["datacenters"][0]["clusters"]:
        for entry in cluster["hosts"]:
            if entry["name"] == host:
                entry["components"] = {DRIVER: DRIVER_VERSION}
    topology.pop("guests", None)
    path = os.path.join(str(directory), name)
    with open(path, "w") as handle:
        json.dump(topology, handle)
    return path


def host_variant_topology(directory, name, host, **entry):
    """The default topology, without guests, with ``entry``'s keys set on ``host``; written as ``name`` in
    ``directory``."""
    with open(DEFAULT_TOPOLOGY) as handle:
        topology = yaml.safe_load(handle)
    for cluster in topology["datacenters"][0]["clusters"]:
        for spec in cluster["hosts"]:
            if spec["name"] == host:
                spec.update(entry)
    topology.pop("guests", None)
    path = os.path.join(str(directory), name)
    with open(path, "w") as handle:
        json.dump(topology, handle)
    return path


def vlcm_topology(directory, delay_ms=200):
    """The default datacenter with mixed-cluster not image-managed and the given remediation time per host."""
    with open(DEFAULT_TOPOLOGY) as handle:
        topology = yaml.safe_load(handle)
    for cluster in topology["datacenters"][0]["clusters"]:
        if cluster["name"] == "mixed-cluster":
            cluster["image_managed"] = False
    topology["vlcm"] = {"remediation_delay_ms": delay_ms}
    path = os.path.join(str(directory), "vlcm-topology-%dms.json" % delay_ms)
    with open(path, "w") as handle:
        json.dump(topology, handle)
    return path


def vlcm_lab_at_start(labs, tmp_path_factory, delay_ms=200):
    """The lab of vlcm_topology(), without BMCs, at its start; test files with the same delay share it."""
    return labs(vlcm_topology(tmp_path_factory.getbasetemp(), delay_ms), extra=("--no-bmc",))


def drafts_path(rest, cluster="gpu-cluster"):
    return "/api/esx/settings/clusters/%s/software/drafts" % rest.cluster_id(cluster)


def open_draft(rest, components=None):
    """A draft of gpu-cluster's image, created directly through vLCM, with ``components`` set in it when given;
    its id."""
    draft = rest.call("POST", drafts_path(rest))
    if components:
        rest.call("PATCH", "%s/%s/software/components" % (drafts_path(rest), draft), {"components_to_set": components})
    return draft


def set_image(rest, components):
    """Commit components to gpu-cluster's image directly through vLCM's drafts."""
    draft = open_draft(rest, components)
    info = rest.task("POST", "%s/%s?action=commit&vmw-task=true" % (drafts_path(rest), draft), {})
    assert info["status"] == "SUCCEEDED", info


class Depot:
    """Offline bundles in the lab's depot directory, which the lab vCenter serves at /lab/depot/."""

    def __init__(self, lab):
        self.lab = lab
        self.directory = lab.services["vcenter"]["depot_dir"]
        self.url_prefix = lab.base + "/lab/depot/"

    def url(self, path):
        return self.url_prefix + os.path.basename(path)

    def driver(self, driver="525.105.14"):
        return make_bundle.nvidia_host_driver(self.directory, driver=driver)

    def daemon(self, driver="525.105.14"):
        return make_bundle.nvidia_gpu_mgmt_daemon(self.directory, driver=driver)

    def copy(self, path, name):
        target = os.path.join(self.directory, name)
        shutil.copyfile(path, target)
        return target

    def corrupt(self, name="NVD-VGPU-800_corrupt.zip"):
        path = os.path.join(self.directory, name)
        with open(path, "wb") as handle:
            handle.write(b"PK\x03\x04 an interrupted download")
        return path


class Rest:
    """Direct REST reads of the lab vCenter for assertions, without the collection's client."""

    def __init__(self, lab):
        self.lab = lab
        self.context = ssl.create_default_context(cafile=lab.certificate)
        self.context.check_hostname = False
        user, password = lab.vcenter_vars["vcenter_username"], lab.vcenter_vars["vcenter_password"]
        token = base64.b64encode(("%s:%s" % (user, password)).encode()).decode()
        self.session = self._call("POST", "/api/session", headers={"Authorization": "Basic " + token})

    def _call(self, method, path, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.lab.base + path, data=data, method=method, headers=dict(
            headers or {}, **{"Content-Type": "application/json"}))
        with urllib.request.urlopen(request, context=self.context, timeout=30) as answer:
            text = answer.read()
        return json.loads(text) if text else None

    def call(self, method, path, body=None):
        return self._call(method, path, body, headers={"vmware-api-session-id": self.session})

    def task(self, method, path, body=None, timeout=30):
        """Run a task operation and return its final task info."""
        task = self.call(method, path, body)
        deadline = time.monotonic() + timeout
        while True:
            info = self.call("GET", "/api/cis/tasks/" + task)
            if info["status"] in ("SUCCEEDED", "FAILED") or time.monotonic() > deadline:
                return info
            time.sleep(0.05)

    def remove_depots(self):
        for depot in self.call("GET", "/api/esx/settings/depots/offline"):
            info = self.task("DELETE", "/api/esx/settings/depots/offline/%s?vmw-task=true" % depot)
            assert info["status"] == "SUCCEEDED", info

    def cluster_id(self, name):
        return next(c["cluster"] for c in self.call("GET", "/api/vcenter/cluster") if c["name"] == name)

    def drafts(self, cluster):
        return self.call("GET", "/api/esx/settings/clusters/%s/software/drafts" % self.cluster_id(cluster))


def cluster_state(lab, name="gpu-cluster"):
    return next(cluster for cluster in lab.state()["clusters"] if cluster["name"] == name)


def host_components(lab, names=None):
    hosts = dict((host["name"], host) for host in lab.state()["hosts"])
    return dict((name, hosts[name]["components"]) for name in names or GPU_HOSTS)


def routes_called(lab, prefix="POST /api/esx"):
    return dict((route, count) for route, count in lab.stats()["rest_by_route"].items() if route.startswith(prefix))
