# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the GRID guest driver stand-in learns from the host its VM runs on (shared by nvidia-smi and nvidia-gridd).

A real guest driver talks to the vGPU Manager of its host when it loads; if the manager does not accept the guest's
branch, the vGPU fails to load ("Compatibility Requirements for the NVIDIA vGPU Manager and Guest VM Driver",
section 1.2 of every vGPU release notes, e.g. https://docs.nvidia.com/vgpu/16.0/grid-vgpu-release-notes-vmware-vsphere/
index.html: same release, previous branch, previous LTS branch for an LTS manager). The stand-in asks the lab
vCenter instead: GET /lab/state gives the VM's host and the NVIDIA host driver component that host runs.

Settings: /etc/gpuops-lab/vgpu.json (labctl writes it for a guest bound to a vGPU VM): ``vm``, ``lab_url``,
``server_name``, ``cafile``. Without it the guest is not bound to a VM and every host is taken to accept it.
The driver's own version and the branch table (from the collection's catalog) are in driver.json next to this file.
"""
import http.client
import json
import os
import socket
import ssl

HERE = os.path.dirname(os.path.realpath(__file__))
SETTINGS = os.environ.get("GPUOPS_LAB_VGPU", "/etc/gpuops-lab/vgpu.json")
DRIVER = os.path.join(HERE, "driver.json")
LOADS = "/var/lib/gpuops-lab/vgpu-loads.json"
HOST_DRIVER_PREFIXES = ("NVD-VGPU-", "NVD-AIE-")


def driver():
    with open(DRIVER) as handle:
        return json.load(handle)


def _read(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


class _LabConnection(http.client.HTTPSConnection):
    def __init__(self, host, port, server_name, context):
        http.client.HTTPSConnection.__init__(self, host, port, timeout=30, context=context)
        self.server_name = server_name

    def connect(self):
        self.sock = self._context.wrap_socket(socket.create_connection((self.host, self.port), self.timeout),
                                              server_hostname=self.server_name)


def _lab_state(settings):
    host_port, _, path = settings["lab_url"].partition("://")[2].partition("/")
    host, _, port = host_port.partition(":")
    context = ssl.create_default_context(cafile=settings["cafile"])
    connection = _LabConnection(host, int(port or 443), settings.get("server_name") or host, context)
    connection.request("GET", "/%s/state" % path)
    answer = connection.getresponse()
    if answer.status != 200:
        raise OSError("the lab answered %s" % answer.status)
    return json.load(answer)


def accepted_branches(host_branch, branches):
    """The guest branches a vGPU Manager of ``host_branch`` accepts, after the release notes' rule."""
    rows = dict((row["branch"], row) for row in branches)
    if host_branch not in rows:
        return [host_branch]
    release, lts = rows[host_branch]["release"], rows[host_branch]["lts"]
    accepted = [host_branch]
    accepted += [b for b, row in rows.items() if row["release"] == release - 1]
    if lts:
        older = sorted(b for b, row in rows.items() if row["lts"] and row["release"] < release)
        accepted += older[-1:]
    return sorted(set(accepted))


def host_view():
    """``None`` when the guest is not bound to a VM; else ``{vm, host, host_driver, accepted, seq}`` (``seq`` the
    number of the lab's vgpu_events so far), ``host`` None when the VM does not run with a vGPU."""
    settings = _read(SETTINGS)
    if not settings:
        return None
    own = driver()
    state = _lab_state(settings)
    view = {"vm": settings["vm"], "driver": own["version"], "host": None, "host_driver": None, "accepted": False,
            "seq": len(state.get("vgpu_events") or [])}
    vm = next((v for v in state["vms"] if v["name"] == settings["vm"]), None)
    if vm is None or vm["power_state"] != "poweredOn" or not any(g.get("gpu") for g in vm.get("vgpus") or []):
        return view
    host = next(h for h in state["hosts"] if h["name"] == vm["host"])
    components = host.get("components") or {}
    version = next((v for name, v in sorted(components.items()) if name.startswith(HOST_DRIVER_PREFIXES)), "")
    view.update(host=host["name"], host_driver=version.split("-")[0] or None)
    if view["host_driver"]:
        host_branch = int(view["host_driver"].split(".")[0])
        view["accepted"] = int(own["version"].split(".")[0]) in accepted_branches(host_branch, own["branches"])
    return view


def record_load(view):
    """Append what the driver found when it loaded (the daemon's start) to LOADS, for tests to compare with
    the lab's vgpu_events."""
    loads = _read(LOADS) or []
    loads.append(view)
    os.makedirs(os.path.dirname(LOADS), exist_ok=True)
    with open(LOADS + ".new", "w") as handle:
        json.dump(loads, handle)
    os.rename(LOADS + ".new", LOADS)
