# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Acceptance test of the lab vCenter (vcsim-gpu) through pyVmomi: every rule, read back from /lab/state.

    vcenter_smoke.py [--binary lab/.build/vcsim-gpu] [--catalog lab/vcenter/testdata/catalog-sample.json] [--no-scale]

Starts its own simulators on free ports with topologies of its own (a small one for the rules, then a reset back to
its start; a 30-host/300-VM one for timing), so it never disturbs a running lab. Needs the stdlib and pyVmomi. Exits 1 on any mismatch.
"""

import argparse
import datetime
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from pyVim.connect import Disconnect, SmartConnect
from pyVim.task import WaitForTasks
from pyVmomi import vim, vmodl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "lab", "vcenter")
USER, PASSWORD = "administrator@vsphere.local", "lab-Secret-1"
P40_8Q, P40_4Q, T4_4Q = "grid_p40-8q", "grid_p40-4q", "grid_t4-4q"
GB16 = 16384

TOPOLOGY = {"datacenters": [{
    "name": "smoke-dc",
    "clusters": [
        {"name": "gpu-cluster", "drs": {"enabled": True, "behavior": "fullyAutomated"},
         "dpm": {"enabled": False, "behavior": "manual"},
         "hosts": [{"name": "esxi-01", "gpus": [{"model": "P40", "count": 2}]},
                   {"name": "esxi-02", "gpus": [{"model": "P40", "count": 1}], "bmc": {"vendor": "x", "port": 1}},
                   {"name": "esxi-03", "gpus": [{"model": "T4", "count": 1}]}]},
        {"name": "manual-cluster", "drs": {"enabled": True, "behavior": "manual"},
         "hosts": [{"name": "esxi-11", "gpus": [{"model": "P40", "count": 1}]}]},
    ],
    "hosts": [{"name": "esxi-sa-01", "gpus": []}],
    "vms": [{"name": "vm-%02d" % n, "host": "esxi-01", "memory_mb": GB16, "cpus": 4, "guest_id": "ubuntu64Guest"}
            for n in range(1, 6)] + [
        {"name": "plain-01", "host": "esxi-02", "memory_mb": 4096, "power_state": "poweredOn"},
        {"name": "vm-11", "host": "esxi-11", "memory_mb": 8192, "power_state": "poweredOn"},
        {"name": "sa-vm", "host": "esxi-sa-01", "power_state": "poweredOn"},
    ] + [{"name": "rr-%d" % n, "cluster": "gpu-cluster"} for n in range(1, 4)],
}]}

HOST_PATHS = ["name", "config.graphicsInfo", "config.graphicsConfig", "config.sharedPassthruGpuTypes",
              "config.sharedGpuCapabilities", "configManager.graphicsManager", "hardware.pciDevice",
              "runtime.connectionState", "runtime.inMaintenanceMode", "parent"]
VM_PATHS = ["name", "config.hardware.device", "config.memoryReservationLockedToMax", "runtime.powerState",
            "runtime.host", "config.hardware.memoryMB", "resourceConfig.memoryAllocation.reservation", "config.uuid"]


class Smoke:
    def __init__(self):
        self.failures = []
        self.checks = 0

    def check(self, condition, message):
        self.checks += 1
        if not condition:
            self.failures.append(message)
            print("  FAIL: %s" % message)
        return condition

    def equal(self, actual, expected, message):
        return self.check(actual == expected, "%s: expected %r, got %r" % (message, expected, actual))


class Simulator:
    """A vcsim-gpu process on a free port."""

    def __init__(self, binary, catalog, topology, workdir, name):
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir)
        self.topology = os.path.join(self.dir, "topology.json")
        with open(self.topology, "w") as handle:
            json.dump(topology, handle)
        ready = os.path.join(self.dir, "ready")
        self.log = open(os.path.join(self.dir, "vcsim.log"), "w")
        started = time.monotonic()
        self.proc = subprocess.Popen([binary, "-listen", "127.0.0.1:0", "-topology", self.topology, "-catalog", catalog,
                                      "-username", USER, "-password", PASSWORD, "-ready-file", ready],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        while not os.path.exists(ready):
            if self.proc.poll() is not None or time.monotonic() - started > 60:
                raise SystemExit("vcsim-gpu did not start, see %s" % self.log.name)
            time.sleep(0.02)
        self.startup = time.monotonic() - started
        with open(ready) as handle:
            self.url = handle.read().strip()
        self.base = self.url[:-len("/sdk")]
        self.port = int(self.base.rsplit(":", 1)[1])

    def lab(self, method, path, body=None):
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, context=context, timeout=30) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def state(self):
        return self.lab("GET", "/lab/state")[1]

    def connect(self, password=PASSWORD):
        return SmartConnect(host="127.0.0.1", port=self.port, user=USER, pwd=password, disableSslCertValidation=True)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=10)
        finally:
            self.log.close()


def wait(task):
    info = task.info
    while info.state in (vim.TaskInfo.State.queued, vim.TaskInfo.State.running):
        time.sleep(0.05)
        info = task.info
    return info


def by_name(state, kind, name):
    return next(item for item in state[kind] if item["name"] == name)


def read_inventory(si):
    """One RetrievePropertiesEx over a container view: every host and VM path the collection reads."""
    content = si.RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [vim.HostSystem, vim.VirtualMachine], True)
    spec = vmodl.query.PropertyCollector.FilterSpec(
        objectSet=[vmodl.query.PropertyCollector.ObjectSpec(obj=view, skip=True, selectSet=[
            vmodl.query.PropertyCollector.TraversalSpec(name="view", type=vim.view.ContainerView, path="view")])],
        propSet=[vmodl.query.PropertyCollector.PropertySpec(type=vim.HostSystem, pathSet=HOST_PATHS),
                 vmodl.query.PropertyCollector.PropertySpec(type=vim.VirtualMachine, pathSet=VM_PATHS)])
    objects = []
    result = content.propertyCollector.RetrievePropertiesEx([spec], vmodl.query.PropertyCollector.RetrieveOptions())
    while result:
        objects.extend(result.objects)
        result = content.propertyCollector.ContinueRetrievePropertiesEx(result.token) if result.token else None
    view.DestroyView()
    return {oc.obj: ({p.name: p.val for p in oc.propSet}, oc.missingSet) for oc in objects}


class Inventory:
    def __init__(self, si):
        self.si = si
        self.content = si.RetrieveContent()
        self.props = read_inventory(si)
        self.hosts = {p["name"]: obj for obj, (p, _faults) in self.props.items() if isinstance(obj, vim.HostSystem)}
        self.vms = {p["name"]: obj for obj, (p, _faults) in self.props.items()
                    if isinstance(obj, vim.VirtualMachine)}


def wait_for_power_state(si, vm, wanted, timeout):
    """Wait for runtime.powerState through WaitForUpdatesEx, as the collection waits; returns the seconds taken."""
    content = si.RetrieveContent()
    collector = content.propertyCollector.CreatePropertyCollector()
    started = time.monotonic()
    try:
        collector.CreateFilter(vmodl.query.PropertyCollector.FilterSpec(
            objectSet=[vmodl.query.PropertyCollector.ObjectSpec(obj=vm)],
            propSet=[vmodl.query.PropertyCollector.PropertySpec(type=vim.VirtualMachine,
                                                                pathSet=["runtime.powerState"])]), True)
        version, state = "", None
        while state != wanted and time.monotonic() - started < timeout:
            update = collector.WaitForUpdatesEx(version, vmodl.query.PropertyCollector.WaitOptions(maxWaitSeconds=1))
            if update is None:
                continue
            version = update.version
            for filter_set in update.filterSet:
                for obj_update in filter_set.objectSet:
                    for change in obj_update.changeSet:
                        state = change.val
    finally:
        collector.DestroyPropertyCollector()
    return time.monotonic() - started if state == wanted else None


def vgpu_spec(profile, operation="add", device=None):
    if device is None:
        device = vim.vm.device.VirtualPCIPassthrough(
            key=-1, backing=vim.vm.device.VirtualPCIPassthrough.VmiopBackingInfo(vgpu=profile))
    return vim.vm.device.VirtualDeviceSpec(operation=operation, device=device)


def vgpu_devices(vm):
    return [d for d in vm.config.hardware.device if isinstance(d, vim.vm.device.VirtualPCIPassthrough)]


def reconfigure(vm, changes=(), **spec):
    return wait(vm.ReconfigVM_Task(spec=vim.vm.ConfigSpec(deviceChange=list(changes), **spec)))


def fault_name(info):
    return type(info.error).__name__.rsplit(".", 1)[-1] if info.error else None


def test_login_and_reads(t, sim, si):
    print("login, one PropertyCollector read, ground truth")
    try:
        sim.connect(password="wrong")
        t.check(False, "login with a wrong password was accepted")
    except vim.fault.InvalidLogin:
        t.check(True, "")
    sim.lab("POST", "/lab/stats/reset")
    inv = Inventory(si)
    stats = sim.lab("GET", "/lab/stats")[1]
    t.equal(stats["by_method"].get("RetrievePropertiesEx"), 1, "RetrievePropertiesEx calls for the whole inventory")
    state = sim.state()
    t.equal([dc["name"] for dc in state["datacenters"]], ["smoke-dc"], "datacenters (no simulator defaults)")
    t.equal(sorted(inv.hosts), sorted(h["name"] for h in state["hosts"]), "hosts read over SOAP")
    t.equal(sorted(inv.vms), sorted(v["name"] for v in state["vms"]), "VMs read over SOAP")
    managers = set()
    for obj, (props, missing) in inv.props.items():
        t.equal(missing, [], "missing properties of %s" % props.get("name"))
        paths = HOST_PATHS if isinstance(obj, vim.HostSystem) else VM_PATHS
        t.equal(sorted(props), sorted(paths), "properties of %s" % props.get("name"))
    for name, host in inv.hosts.items():
        props, truth = inv.props[host][0], by_name(state, "hosts", name)
        info = props["config.graphicsInfo"]
        t.equal([(g.pciId, g.graphicsType, g.deviceName, g.vendorName, g.memorySizeInKB) for g in info],
                [(g["pci_id"], "basic", g["device_name"], "NVIDIA Corporation", g["memory_mib"] * 1024)
                 for g in truth["gpus"]], "graphicsInfo of %s" % name)
        nvidia = [d for d in props["hardware.pciDevice"] if d.vendorId == 0x10de]
        t.equal([(d.id, d.classId, "0x%04x" % d.deviceId, d.vendorName) for d in nvidia],
                [(g["pci_id"], 0x0302, g["device_id"], "NVIDIA Corporation") for g in truth["gpus"]],
                "NVIDIA PCI devices of %s" % name)
        t.equal(list(props["config.sharedPassthruGpuTypes"]), truth["supported_profiles"], "profiles of %s" % name)
        t.equal([c.vgpu for c in props["config.sharedGpuCapabilities"]], truth["supported_profiles"],
                "sharedGpuCapabilities of %s" % name)
        t.equal(props["config.graphicsConfig"].hostDefaultGraphicsType, "shared", "default graphics type")
        t.equal(props["runtime.connectionState"], "connected", "connection state of %s" % name)
        managers.add(props["configManager.graphicsManager"]._moId)
    t.equal(len(managers), len(inv.hosts), "one graphics manager per host")
    t.equal(sorted(g.pciId for g in inv.props[inv.hosts["esxi-01"]][0]["config.graphicsInfo"]),
            ["0000:3b:00.0", "0000:5e:00.0"], "bus ids of esxi-01's GPUs")
    for name, vm in inv.vms.items():
        props, truth = inv.props[vm][0], by_name(state, "vms", name)
        t.equal((props["config.uuid"], props["config.hardware.memoryMB"], props["runtime.powerState"]),
                (truth["uuid"], truth["memory_mb"], truth["power_state"]), "VM %s" % name)
    t.equal([by_name(state, "vms", "rr-%d" % n)["host"] for n in (1, 2, 3)], ["esxi-01", "esxi-02", "esxi-03"],
            "VMs naming only a cluster go round-robin over its hosts")
    t.equal(by_name(state, "hosts", "esxi-sa-01")["cluster"], None, "standalone host has no cluster")
    t.check(by_name(state, "clusters", "gpu-cluster")["moid"].startswith("domain-c"), "cluster moid is domain-cN")
    return inv


def test_client_reads(t, si):
    """What vSphere clients read with plain pyVmomi attribute access (Fetch, one property per call)."""
    print("pyVmomi attribute access: unset properties, vSAN, PCI passthrough, cluster configuration")
    content = si.RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [], True)
    objects = list(view.view)
    view.Destroy()
    vm = next(o for o in objects if isinstance(o, vim.VirtualMachine))
    t.equal((vm.snapshot, vm.parentVApp), (None, None), "unset VM properties read as None")
    for host in (o for o in objects if isinstance(o, vim.HostSystem)):
        managers = (getattr(host.configManager, p.name) for p in host.configManager._GetPropertyList())
        objects += [m for m in managers if isinstance(m, vim.ManagedObject)]
        status = host.configManager.vsanSystem.QueryHostStatus()
        t.equal((status.health, status.nodeState.state, status.uuid), ("unknown", "disabled", None),
                "vSAN status of %s" % host.name)
        passthru = {p.id: p for p in host.config.pciPassthruInfo}
        t.equal(sorted(passthru), sorted(d.id for d in host.hardware.pciDevice),
                "a passthrough entry per PCI device of %s" % host.name)
        for device in host.hardware.pciDevice:
            entry = passthru.get(device.id)
            if device.vendorId == 0x10de:
                t.check(entry and entry.passthruCapable and not entry.passthruEnabled,
                        "GPU %s of %s passthrough capable, not enabled" % (device.id, host.name))
            if device.classId >> 8 == 0x06:
                t.check(entry and not entry.passthruCapable, "bridge %s of %s not capable" % (device.id, host.name))
        t.equal(len(host.configManager.pciPassthruSystem.pciPassthruInfo), len(passthru),
                "pciPassthruSystem of %s" % host.name)
    for cluster in (o for o in objects if isinstance(o, vim.ClusterComputeResource)):
        config = cluster.configurationEx
        t.equal((config.vsanConfigInfo.enabled, config.vsanConfigInfo.defaultConfig.autoClaimStorage,
                 config.dasConfig.enabled, config.dasConfig.defaultVmSettings.vmToolsMonitoringSettings.minUpTime,
                 config.dpmConfigInfo.enabled, config.proactiveDrsConfig.enabled),
                (False, False, False, 120, False, False), "configurationEx defaults of %s" % cluster.name)
    failed = []
    for obj in objects + [content.rootFolder]:
        for prop in obj._GetPropertyList():
            if prop.version in ("vim.version.v8_0_3_0", "vim.version.v9_0_0_0", "vim.version.v9_1_0_0"):
                continue  # newer than the lab's API (8.0.2): vCenter 8.0.2 refuses them too
            try:
                getattr(obj, prop.name)
            except vmodl.MethodFault as err:
                failed.append("%s.%s: %s" % (obj._moId, prop.name, type(err).__name__))
    t.equal(failed, [], "every property of every managed object reads through pyVmomi")


def test_host_and_cluster_methods(t, sim, si):
    """Methods clients call that the simulator lacks: GetResourceUsage, DisconnectHost_Task, ReconnectHost_Task,
    UpdatePassthruConfig."""
    print("cluster resource usage, host disconnect and reconnect, PCI passthrough configuration")
    content = si.RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [vim.ClusterComputeResource], True)
    clusters = list(view.view)
    view.Destroy()
    for cluster in clusters:
        usage = cluster.GetResourceUsage()
        hosts = cluster.host
        t.equal((usage.cpuCapacityMHz, usage.memCapacityMB),
                (sum(h.summary.hardware.cpuMhz * h.summary.hardware.numCpuCores for h in hosts),
                 sum(h.summary.hardware.memorySize >> 20 for h in hosts)), "capacity of %s" % cluster.name)
        datastores = {ds._moId: ds.summary for h in hosts for ds in h.datastore}.values()
        t.equal((usage.storageCapacityMB, usage.storageUsedMB),
                (sum(s.capacity >> 20 for s in datastores), sum((s.capacity - s.freeSpace) >> 20 for s in datastores)),
                "storage capacity and use of %s" % cluster.name)
    host = clusters[0].host[0]
    vms = list(host.vm)
    info = wait(host.DisconnectHost_Task())
    t.equal((info.state, host.runtime.connectionState), ("success", "disconnected"), "host disconnected")
    t.equal(sorted({vm.runtime.connectionState for vm in vms}), ["disconnected"] if vms else [],
            "its VMs disconnected with it")
    t.equal(by_name(sim.state(), "hosts", host.name)["connection_state"], "disconnected", "/lab/state agrees")
    usage = clusters[0].GetResourceUsage()
    t.equal(usage.cpuCapacityMHz, sum(h.summary.hardware.cpuMhz * h.summary.hardware.numCpuCores
                                      for h in clusters[0].host[1:]), "a disconnected host adds no capacity")
    info = wait(host.ReconnectHost_Task())
    t.equal((info.state, host.runtime.connectionState), ("success", "connected"), "host reconnected")
    t.equal(sorted({vm.runtime.connectionState for vm in vms}), ["connected"] if vms else [], "its VMs too")

    passthru_system = host.configManager.pciPassthruSystem
    gpu = next(d.id for d in host.hardware.pciDevice if d.vendorId == 0x10de)
    bridge = next(d.id for d in host.hardware.pciDevice if d.classId >> 8 == 0x06)
    enable = vim.host.PciPassthruConfig(id=gpu, passthruEnabled=True)
    for bad in (bridge, "0000:ff:1f.7"):
        try:
            passthru_system.UpdatePassthruConfig([enable, vim.host.PciPassthruConfig(id=bad, passthruEnabled=True)])
            t.check(False, "passthrough of %s refused" % bad)
        except vim.fault.HostConfigFault:
            t.check(True, "passthrough of %s refused" % bad)
    entry = {p.id: p for p in host.config.pciPassthruInfo}[gpu]
    t.equal((entry.passthruEnabled, entry.passthruActive), (False, False), "a refused update changes nothing")
    passthru_system.UpdatePassthruConfig([enable])
    for source in (host.config.pciPassthruInfo, passthru_system.pciPassthruInfo):
        entry = {p.id: p for p in source}[gpu]
        t.equal((entry.passthruEnabled, entry.passthruActive), (True, True), "passthrough of GPU %s on" % gpu)
    passthru_system.UpdatePassthruConfig([vim.host.PciPassthruConfig(id=gpu, passthruEnabled=False)])
    entry = {p.id: p for p in host.config.pciPassthruInfo}[gpu]
    t.equal((entry.passthruEnabled, entry.passthruActive), (False, False), "passthrough of GPU %s off" % gpu)


def test_scheduled_tasks(t, si):
    """ScheduledTaskManager: tasks are created, listed and removed with vCenter's faults (the lab never runs them)."""
    print("scheduled tasks")
    content = si.RetrieveContent()
    manager = content.scheduledTaskManager
    view = content.viewManager.CreateContainerView(content.rootFolder, [vim.VirtualMachine], True)
    vm = view.view[0]
    view.Destroy()
    run_at = datetime.datetime(2030, 10, 10, 10, 10, tzinfo=datetime.timezone.utc)

    def spec(name):
        return vim.scheduler.ScheduledTaskSpec(
            name=name, description="power on", enabled=True, scheduler=vim.scheduler.OnceTaskScheduler(runAt=run_at),
            action=vim.action.MethodAction(name=vim.VirtualMachine.PowerOn))

    task = manager.CreateScheduledTask(vm, spec("power-on-later"))
    t.equal((task.info.name, task.info.entity, task.info.nextRunTime, task.info.state),
            ("power-on-later", vm, run_at, "queued"), "scheduled task stored as given")
    t.equal(manager.RetrieveEntityScheduledTask(vm), [task], "listed for its VM")
    gone = vim.VirtualMachine("vm-999999", vm._stub)
    for entity, bad, fault in ((vm, spec("power-on-later"), vim.fault.DuplicateName),
                               (vm, spec(""), vim.fault.InvalidName),
                               (gone, spec("other"), vmodl.fault.ManagedObjectNotFound)):
        try:
            manager.CreateScheduledTask(entity, bad)
            t.check(False, "%s refused" % fault.__name__)
        except fault:
            t.check(True, "%s refused" % fault.__name__)
    task.RemoveScheduledTask()
    t.equal((manager.RetrieveEntityScheduledTask(vm), manager.scheduledTask), ([], []), "removed")


def test_config_target(t, inv):
    print("environment browser: sharedGpuPassthroughTypes")
    cluster = inv.hosts["esxi-01"].parent
    union = [p.vgpu for p in cluster.environmentBrowser.QueryConfigTarget().sharedGpuPassthroughTypes]
    t.check(P40_8Q in union and T4_4Q in union, "cluster config target offers P40 and T4 profiles")
    t.equal(len(union), len(set(union)), "no duplicate profile in the cluster's config target")
    t4 = [p.vgpu for p in cluster.environmentBrowser.QueryConfigTarget(host=inv.hosts["esxi-03"])
          .sharedGpuPassthroughTypes]
    t.check(T4_4Q in t4 and P40_8Q not in t4, "config target of esxi-03 has only T4 profiles")
    try:
        cluster.environmentBrowser.QueryConfigTarget(host=inv.hosts["esxi-11"])
        t.check(False, "QueryConfigTarget accepted a host of another cluster")
    except vmodl.fault.InvalidArgument:
        pass
    sa = inv.hosts["esxi-sa-01"].parent.environmentBrowser.QueryConfigTarget()
    t.equal(list(sa.sharedGpuPassthroughTypes), [], "config target of a host without GPUs")


def test_vgpu_api(t, sim, inv):
    print("vGPU API of vSphere 8.0.3: vgpuMode, RetrieveVgpuProfileInfo/DeviceInfo, config target")
    about = inv.content.about
    t.equal((about.apiVersion, about.version), ("8.0.3.0", "8.0.3"), "about")
    t.equal([g.vgpuMode for g in graphics(inv, "esxi-01").graphicsInfo], ["sameSize", "none"],
            "graphicsInfo vgpuMode: Shared Direct GPU equal-size, Shared GPU none")
    manager = graphics(inv, "esxi-02")
    pci = manager.graphicsInfo[0].pciId
    try:
        manager.UpdateGraphicsConfig(config=vim.host.GraphicsConfig(
            hostDefaultGraphicsType="sharedDirect", sharedPassthruAssignmentPolicy="performance",
            deviceType=[vim.host.GraphicsConfig.DeviceType(deviceId=pci, graphicsType="sharedDirect",
                                                           vgpuMode="equal")]))
        t.check(False, "an unknown vgpuMode was accepted")
    except vmodl.fault.InvalidArgument as err:
        t.check("vgpuMode" in err.msg, "InvalidArgument names vgpuMode: %s" % err.msg)
    manager.UpdateGraphicsConfig(config=vim.host.GraphicsConfig(
        hostDefaultGraphicsType="sharedDirect", sharedPassthruAssignmentPolicy="performance",
        deviceType=[vim.host.GraphicsConfig.DeviceType(deviceId=pci, graphicsType="sharedDirect",
                                                       vgpuMode="sameSize")]))
    t.equal([(d.deviceId, d.vgpuMode) for d in manager.graphicsConfig.deviceType], [(pci, "sameSize")],
            "graphicsConfig deviceType vgpuMode")
    t.equal([(d.deviceId, d.vgpuMode) for d in inv.hosts["esxi-02"].config.graphicsConfig.deviceType],
            [(pci, "sameSize")], "host config.graphicsConfig mirrors the manager")
    t.equal(by_name(sim.state(), "hosts", "esxi-02")["graphics_config"]["device_types"],
            [{"device_id": pci, "graphics_type": "sharedDirect", "vgpu_mode": "sameSize"}], "lab state device types")
    t.equal([g.vgpuMode for g in inv.hosts["esxi-02"].config.graphicsInfo], ["sameSize"],
            "host config.graphicsInfo vgpuMode")
    collector = inv.content.propertyCollector
    spec = vmodl.query.PropertyCollector.FilterSpec(
        objectSet=[vmodl.query.PropertyCollector.ObjectSpec(obj=manager),
                   vmodl.query.PropertyCollector.ObjectSpec(obj=inv.hosts["esxi-02"])],
        propSet=[vmodl.query.PropertyCollector.PropertySpec(type=vim.host.GraphicsManager,
                                                            pathSet=["graphicsInfo", "graphicsConfig"]),
                 vmodl.query.PropertyCollector.PropertySpec(type=vim.HostSystem, pathSet=["config.graphicsInfo"])])
    options = vmodl.query.PropertyCollector.RetrieveOptions()
    props = {p.name: p.val for o in collector.RetrievePropertiesEx([spec], options).objects for p in o.propSet}
    t.equal(([g.vgpuMode for g in props["graphicsInfo"]], [d.vgpuMode for d in props["graphicsConfig"].deviceType],
             [g.vgpuMode for g in props["config.graphicsInfo"]]), (["sameSize"], ["sameSize"], ["sameSize"]),
            "vgpuMode through RetrievePropertiesEx")
    profiles = {p.profileName: p for p in manager.RetrieveVgpuProfileInfo()}
    p8q = profiles.get(P40_8Q)
    t.check(p8q is not None and isinstance(p8q, vim.vm.VgpuProfileInfo), "RetrieveVgpuProfileInfo lists %s" % P40_8Q)
    if p8q is not None:
        t.equal((p8q.fbSizeInGib, p8q.profileSharing, p8q.profileClass, p8q.deviceVendorId),
                (8, "timeSliced", "quadro", 0x10de), "P40-8Q profile facts")
    t.check(all(name.startswith("grid_p40-") for name in profiles), "a P40 host lists only P40 profiles")
    devices = manager.RetrieveVgpuDeviceInfo()
    t.equal([(d.deviceName, d.maxFbSizeInGib, d.timeSlicedCapable, d.migCapable) for d in devices],
            [("Tesla P40", 24, True, False)], "RetrieveVgpuDeviceInfo")
    target = inv.hosts["esxi-01"].parent.environmentBrowser.QueryConfigTarget()
    names = [p.profileName for p in target.vgpuProfileInfo]
    t.check(P40_8Q in names and T4_4Q in names and len(names) == len(set(names)),
            "config target vgpuProfileInfo: P40 and T4 profiles, each once")
    t.equal(sorted(d.deviceName for d in target.vgpuDeviceInfo), ["Tesla P40", "Tesla T4"],
            "config target vgpuDeviceInfo")


def test_settings(t, sim, inv):
    print("vCenter setting vgpu.hotmigrate.enabled")
    setting = inv.content.setting
    t.equal([o.value for o in setting.setting if o.key == "vgpu.hotmigrate.enabled"], [False], "default value")
    option = [o for o in setting.supportedOption if o.key == "vgpu.hotmigrate.enabled"]
    t.check(option and isinstance(option[0].optionType, vim.option.BoolOption), "option is bool-typed")
    try:
        setting.UpdateOptions(changedValue=[vim.option.OptionValue(key="vgpu.hotmigrate.enabled", value="true")])
        t.check(False, "a string was accepted for a bool option")
    except vmodl.fault.InvalidArgument as err:
        t.check("vgpu.hotmigrate.enabled" in err.msg, "InvalidArgument names the option: %s" % err.msg)
    t.equal(sim.state()["settings"]["vgpu.hotmigrate.enabled"], False, "setting unchanged by the refused update")


def set_hot_migrate(inv, value):
    inv.content.setting.UpdateOptions(changedValue=[vim.option.OptionValue(key="vgpu.hotmigrate.enabled",
                                                                           value=value)])


def graphics(inv, host):
    return inv.hosts[host].configManager.graphicsManager


def update_graphics(inv, host, default=None, policy=None, devices=()):
    manager = graphics(inv, host)
    current = manager.graphicsConfig
    manager.UpdateGraphicsConfig(config=vim.host.GraphicsConfig(
        hostDefaultGraphicsType=default or current.hostDefaultGraphicsType,
        sharedPassthruAssignmentPolicy=policy or current.sharedPassthruAssignmentPolicy,
        deviceType=[vim.host.GraphicsConfig.DeviceType(deviceId=d, graphicsType=g) for d, g in devices]))


def restart_xorg(inv, host):
    inv.hosts[host].configManager.serviceSystem.RestartService(id="xorg")


def gpu_state(sim, host):
    return {g["pci_id"]: g for g in by_name(sim.state(), "hosts", host)["gpus"]}


def test_graphics(t, sim, inv):
    print("graphics configuration and Xorg restart")
    manager = graphics(inv, "esxi-01")
    for config, expected in (
            (vim.host.GraphicsConfig(
                hostDefaultGraphicsType="sharedDirect", sharedPassthruAssignmentPolicy="performance",
                deviceType=[vim.host.GraphicsConfig.DeviceType(deviceId="0000:99:00.0", graphicsType="shared")]),
             "0000:99:00.0"),
            (vim.host.GraphicsConfig(hostDefaultGraphicsType="direct", sharedPassthruAssignmentPolicy="performance"),
             "direct"),
            (vim.host.GraphicsConfig(hostDefaultGraphicsType="shared", sharedPassthruAssignmentPolicy="fastest"),
             "fastest")):
        try:
            manager.UpdateGraphicsConfig(config=config)
            t.check(False, "UpdateGraphicsConfig accepted %s" % expected)
        except vmodl.fault.InvalidArgument as err:
            t.check(expected in err.msg, "InvalidArgument names %s: %s" % (expected, err.msg))
    t.equal(by_name(sim.state(), "hosts", "esxi-01")["graphics_config"]["default_graphics_type"], "shared",
            "a refused config changes nothing")
    update_graphics(inv, "esxi-01", default="sharedDirect", devices=[("0000:5e:00.0", "shared")])
    gpus = gpu_state(sim, "esxi-01")
    t.equal([(g["configured_graphics_type"], g["graphics_type"]) for g in gpus.values()],
            [("sharedDirect", "basic"), ("shared", "basic")], "configured, not yet active")
    manager.RefreshGraphicsManager()
    t.equal(gpu_state(sim, "esxi-01")["0000:3b:00.0"]["graphics_type"], "basic", "refresh does not apply")
    t.equal(manager.IsSharedGraphicsActive(), False, "IsSharedGraphicsActive before Xorg restart")
    restart_xorg(inv, "esxi-01")
    host = by_name(sim.state(), "hosts", "esxi-01")
    t.equal([g["graphics_type"] for g in host["gpus"]], ["sharedDirect", "shared"], "active after Xorg restart")
    t.equal(host["xorg_restarts"], 1, "Xorg restarts recorded")
    t.equal(host["graphics_config"]["device_types"],
            [{"device_id": "0000:5e:00.0", "graphics_type": "shared", "vgpu_mode": ""}], "device types")
    t.equal(manager.IsSharedGraphicsActive(), True, "IsSharedGraphicsActive after Xorg restart")
    t.equal([g.graphicsType for g in manager.graphicsInfo], ["sharedDirect", "shared"], "manager graphicsInfo")
    t.equal([g.graphicsType for g in inv.hosts["esxi-01"].config.graphicsInfo], ["sharedDirect", "shared"],
            "host config.graphicsInfo mirrors the manager")
    services = inv.hosts["esxi-01"].configManager.serviceSystem
    services.StopService(id="xorg")
    t.equal([x.running for x in services.serviceInfo.service if x.key == "xorg"], [False], "Xorg stopped")
    services.StartService(id="xorg")
    t.equal(by_name(sim.state(), "hosts", "esxi-01")["xorg_restarts"], 2, "starting Xorg counts as a restart")
    try:
        inv.hosts["esxi-01"].configManager.serviceSystem.RestartService(id="nosuch")
        t.check(False, "restarting an unknown service succeeded")
    except vim.fault.NotFound:
        pass
    for name in ("esxi-02", "esxi-03", "esxi-11"):
        update_graphics(inv, name, default="sharedDirect")
        restart_xorg(inv, name)


def test_reconfigure(t, sim, inv):
    print("vGPU reconfigure rules")
    vm1, vm2 = inv.vms["vm-01"], inv.vms["vm-02"]
    info = reconfigure(vm1, [vgpu_spec(P40_8Q)], memoryReservationLockedToMax=True)
    t.equal(info.state, "success", "add %s to vm-01 (%s)" % (P40_8Q, info.error))
    truth = by_name(sim.state(), "vms", "vm-01")
    t.equal([(v["profile"], v["gpu"]) for v in truth["vgpus"]], [(P40_8Q, None)], "vm-01 vGPUs")
    t.check(truth["vgpus"] and truth["vgpus"][0]["key"] >= 13000, "vGPU device key numbered like vCenter")
    t.equal((truth["memory_reservation_locked_to_max"], truth["memory_reservation_mb"]), (True, GB16),
            "reservation locked to max")
    props = read_inventory(inv.si)[vm1][0]
    t.equal(props["config.memoryReservationLockedToMax"], True, "memoryReservationLockedToMax read back")
    t.equal(props["resourceConfig.memoryAllocation.reservation"], GB16, "resourceConfig reservation")
    backings = [d.backing.vgpu for d in props["config.hardware.device"]
                if isinstance(d, vim.vm.device.VirtualPCIPassthrough)]
    t.equal(backings, [P40_8Q], "VmiopBackingInfo in config.hardware.device")

    info = reconfigure(vm2, [vgpu_spec(T4_4Q)])
    t.equal(fault_name(info), "InvalidDeviceSpec", "profile the host does not offer")
    t.check(info.error and T4_4Q in info.error.msg and "esxi-01" in info.error.msg,
            "fault names profile and host: %s" % (info.error and info.error.msg))
    info = reconfigure(vm1, [vgpu_spec(P40_4Q)])
    t.equal(fault_name(info), "InvalidDeviceSpec", "two profiles on one VM")
    t.equal(by_name(sim.state(), "vms", "vm-02")["vgpus"], [], "refused reconfigure changed nothing")

    status, added = sim.lab("POST", "/lab/faults", {"kind": "fail_reconfigure", "vm": "vm-02", "message": "boom"})
    t.equal(status, 201, "fault accepted")
    t.equal([f["kind"] for f in sim.lab("GET", "/lab/faults")[1]["faults"]], ["fail_reconfigure"], "pending faults")
    info = reconfigure(vm2, [vgpu_spec(P40_8Q)], memoryMB=8192)
    t.equal(fault_name(info), "SystemError", "injected reconfigure failure")
    t.check(info.error and "boom" in info.error.msg, "injected message: %s" % (info.error and info.error.msg))
    truth = by_name(sim.state(), "vms", "vm-02")
    t.equal((truth["vgpus"], truth["memory_mb"]), ([], GB16), "failed reconfigure changed nothing")
    t.equal(sim.lab("GET", "/lab/faults")[1]["faults"], [], "fault used up")
    for bad in ({"kind": "nosuch"}, {"kind": "fail_reconfigure", "vm": "ghost"}, {"kind": "drop_connection", "x": 1}):
        t.equal(sim.lab("POST", "/lab/faults", bad)[0], 400, "bad fault %r refused" % bad)


def power_on(vm):
    return wait(vm.PowerOnVM_Task())


def test_power_on(t, sim, inv):
    print("power-on placement")
    vms = {n: inv.vms["vm-%02d" % n] for n in range(1, 6)}
    t.equal(reconfigure(vms[2], [vgpu_spec(P40_8Q)]).state, "success", "add vGPU to vm-02 without reservation")
    info = power_on(vms[2])
    t.equal(fault_name(info), "GenericVmConfigFault", "power-on without full reservation")
    t.check(info.error and "memory reservation" in info.error.msg, "reservation message: %s" %
            (info.error and info.error.msg))
    t.equal(reconfigure(vms[2], memoryAllocation=vim.ResourceAllocationInfo(reservation=GB16)).state, "success",
            "reserve all memory of vm-02")
    for n in (3, 4):
        t.equal(reconfigure(vms[n], [vgpu_spec(P40_8Q)], memoryReservationLockedToMax=True).state, "success",
                "add vGPU to vm-%02d" % n)
    t.equal(reconfigure(vms[5], [vgpu_spec(P40_4Q)], memoryReservationLockedToMax=True).state, "success",
            "add 4q vGPU to vm-05")

    t.equal(power_on(vms[1]).state, "success", "power on vm-01")
    t.equal(by_name(sim.state(), "vms", "vm-01")["vgpus"][0]["gpu"], "0000:3b:00.0",
            "the GPU in shared mode is not used")
    update_graphics(inv, "esxi-01", devices=[("0000:5e:00.0", "sharedDirect")])
    restart_xorg(inv, "esxi-01")
    t.equal(power_on(vms[2]).state, "success", "power on vm-02")
    t.equal(by_name(sim.state(), "vms", "vm-02")["vgpus"][0]["gpu"], "0000:5e:00.0", "performance: least loaded GPU")
    update_graphics(inv, "esxi-01", policy="consolidation")
    for n in (3, 4):
        t.equal(power_on(vms[n]).state, "success", "power on vm-%02d" % n)
    gpus = gpu_state(sim, "esxi-01")
    t.equal(gpus["0000:3b:00.0"]["vms"], ["vm-01", "vm-03", "vm-04"], "consolidation: most loaded GPU first")
    t.equal(gpus["0000:5e:00.0"]["vms"], ["vm-02"], "vm-02 alone on the second GPU")
    t.equal((gpus["0000:3b:00.0"]["profile"], gpus["0000:5e:00.0"]["profile"]), (P40_8Q, P40_8Q), "GPU profiles")
    info = power_on(vms[5])
    t.equal(fault_name(info), "InsufficientGraphicsResourcesFault", "no GPU for a second profile")
    t.check(info.error and info.error.msg.count("runs %s" % P40_8Q) == 2,
            "reasons per GPU: %s" % (info.error and info.error.msg))
    manager = graphics(inv, "esxi-01")
    t.equal([sorted(vm.name for vm in g.vm) for g in manager.graphicsInfo],
            [["vm-01", "vm-03", "vm-04"], ["vm-02"]], "graphicsInfo[].vm")
    t.equal(vms[1].guest.toolsRunningStatus, "guestToolsRunning", "VMware Tools running in a powered-on VM")

    info = reconfigure(vms[1], [vgpu_spec(None, "remove", vgpu_devices(vms[1])[0])])
    t.equal(fault_name(info), "InvalidPowerState", "remove a vGPU from a powered-on VM")
    info = reconfigure(vms[1], [vgpu_spec(P40_8Q)])
    t.equal(fault_name(info), "InvalidPowerState", "add a vGPU to a powered-on VM")

    t.equal(wait(vms[4].PowerOffVM_Task()).state, "success", "power off vm-04")
    t.equal(gpu_state(sim, "esxi-01")["0000:3b:00.0"]["vms"], ["vm-01", "vm-03"], "power-off releases the slot")
    t.equal(by_name(sim.state(), "vms", "vm-04")["vgpus"][0]["gpu"], None, "no GPU while powered off")
    try:
        vms[4].ShutdownGuest()
        t.check(False, "ShutdownGuest of a powered-off VM succeeded")
    except vim.fault.InvalidPowerState:
        pass

    vms[3].ShutdownGuest()
    t.equal(by_name(sim.state(), "vms", "vm-03")["power_state"], "poweredOn", "guest shutdown takes a moment")
    took = wait_for_power_state(inv.si, vms[3], "poweredOff", 5)
    t.check(took is not None and took < 2, "guest shut down, seen through WaitForUpdatesEx (%s s)" % took)
    t.equal(gpu_state(sim, "esxi-01")["0000:3b:00.0"]["vms"], ["vm-01"], "guest shutdown releases the slot")
    sim.lab("POST", "/lab/faults", {"kind": "shutdown_ignored", "vm": "vm-02"})
    vms[2].ShutdownGuest()
    time.sleep(0.6)
    t.equal(by_name(sim.state(), "vms", "vm-02")["power_state"], "poweredOn", "ignored guest shutdown")
    sim.lab("DELETE", "/lab/faults")
    sim.lab("POST", "/lab/faults", {"kind": "shutdown_delay", "vm": "vm-02", "delay_ms": 1200})
    vms[2].ShutdownGuest()
    time.sleep(0.6)
    t.equal(by_name(sim.state(), "vms", "vm-02")["power_state"], "poweredOn", "slow guest still running")
    time.sleep(1.0)
    t.equal(by_name(sim.state(), "vms", "vm-02")["power_state"], "poweredOff", "slow guest shut down")
    sim.lab("DELETE", "/lab/faults")


def test_migration(t, sim, inv):
    print("vGPU vMotion and relocation")
    vm1 = inv.vms["vm-01"]
    info = wait(vm1.MigrateVM_Task(host=inv.hosts["esxi-02"], priority="defaultPriority"))
    t.equal(fault_name(info), "DisallowedMigrationDeviceAttached", "vGPU vMotion while the setting is off")
    t.check(info.error and "vgpu.hotmigrate.enabled" in info.error.msg, "message names the setting: %s" %
            (info.error and info.error.msg))
    set_hot_migrate(inv, True)
    t.equal(sim.state()["settings"]["vgpu.hotmigrate.enabled"], True, "setting stored as a bool")
    info = wait(vm1.MigrateVM_Task(host=inv.hosts["esxi-03"], priority="defaultPriority"))
    t.equal(fault_name(info), "InsufficientGraphicsResourcesFault", "target without the profile")
    info = wait(vm1.MigrateVM_Task(host=inv.hosts["esxi-02"], priority="defaultPriority"))
    t.equal(info.state, "success", "vGPU vMotion to esxi-02 (%s)" % info.error)
    truth = by_name(sim.state(), "vms", "vm-01")
    t.equal((truth["host"], truth["vgpus"][0]["gpu"]), ("esxi-02", "0000:3b:00.0"), "vm-01 runs on esxi-02")
    t.equal(gpu_state(sim, "esxi-01")["0000:3b:00.0"]["vms"], [], "source GPU released")
    t.equal(vm1.runtime.host, inv.hosts["esxi-02"], "runtime.host follows")

    vm5 = inv.vms["vm-05"]
    info = wait(vm5.RelocateVM_Task(spec=vim.vm.RelocateSpec(host=inv.hosts["esxi-03"])))
    t.equal(info.state, "success", "a powered-off vGPU VM relocates freely (%s)" % info.error)
    info = power_on(vm5)
    t.equal(fault_name(info), "GenericVmConfigFault", "power-on where the profile is not offered")
    t.equal(wait(vm5.RelocateVM_Task(spec=vim.vm.RelocateSpec(host=inv.hosts["esxi-01"]))).state, "success",
            "relocate vm-05 back")
    other_pool = inv.hosts["esxi-11"].parent.resourcePool
    info = wait(vm5.RelocateVM_Task(spec=vim.vm.RelocateSpec(pool=other_pool, datastore=vm5.datastore[0])))
    t.equal(info.state, "success", "relocate to another cluster's pool (%s)" % info.error)
    t.equal((by_name(sim.state(), "vms", "vm-05")["host"], vm5.resourcePool), ("esxi-11", other_pool),
            "a pool of another cluster picks a host there")
    t.equal(wait(vm5.RelocateVM_Task(spec=vim.vm.RelocateSpec(host=inv.hosts["esxi-01"]))).state, "success",
            "relocate vm-05 home")
    t.equal(vm5.resourcePool, inv.hosts["esxi-01"].parent.resourcePool, "back in gpu-cluster's pool")
    vm2 = inv.vms["vm-02"]
    t.equal(power_on(vm2).state, "success", "power on vm-02 again")
    info = wait(vm2.MigrateVM_Task(host=inv.hosts["esxi-02"], priority="defaultPriority"))
    t.equal(info.state, "success", "second 8q vGPU fits on esxi-02 (%s)" % info.error)
    info = wait(inv.vms["vm-04"].MigrateVM_Task(host=inv.hosts["esxi-11"], priority="defaultPriority"))
    t.equal(info.state, "success", "a powered-off VM migrates to another cluster (%s)" % info.error)
    truth = by_name(sim.state(), "vms", "vm-04")
    t.equal((truth["host"], truth["cluster"]), ("esxi-11", "manual-cluster"), "vm-04 moved cluster")


def test_maintenance(t, sim, inv):
    print("maintenance mode")
    info = wait(inv.hosts["esxi-11"].EnterMaintenanceMode_Task(timeout=0))
    t.equal(fault_name(info), "InvalidState", "DRS manual: running VMs keep the host out of maintenance")
    t.check(info.error and "vm-11" in info.error.msg, "fault names the VM: %s" % (info.error and info.error.msg))
    set_hot_migrate(inv, False)
    info = wait(inv.hosts["esxi-02"].EnterMaintenanceMode_Task(timeout=0))
    t.equal(fault_name(info), "InvalidState", "vGPU VMs cannot move without vGPU vMotion")
    t.check(info.error and "vm-01" in info.error.msg and "vm-02" in info.error.msg,
            "fault names the vGPU VMs: %s" % (info.error and info.error.msg))
    set_hot_migrate(inv, True)
    info = wait(inv.hosts["esxi-02"].EnterMaintenanceMode_Task(timeout=0))
    t.equal(info.state, "success", "DRS evacuates esxi-02 (%s)" % info.error)
    state = sim.state()
    t.equal(by_name(state, "hosts", "esxi-02")["maintenance_mode"], True, "esxi-02 in maintenance mode")
    running = [v["name"] for v in state["vms"] if v["host"] == "esxi-02" and v["power_state"] == "poweredOn"]
    t.equal(running, [], "no powered-on VM left on esxi-02")
    t.equal(sorted(gpu_state(sim, "esxi-01")["0000:3b:00.0"]["vms"] + gpu_state(sim, "esxi-01")["0000:5e:00.0"]["vms"]),
            ["vm-01", "vm-02"], "vGPU VMs moved to GPUs of esxi-01")
    t.equal(inv.hosts["esxi-02"].runtime.inMaintenanceMode, True, "runtime.inMaintenanceMode")
    info = power_on(inv.vms["rr-2"])
    t.equal(fault_name(info), "InvalidHostState", "no power-on on a host in maintenance mode")
    t.equal(wait(inv.hosts["esxi-02"].ExitMaintenanceMode_Task(timeout=0)).state, "success", "exit maintenance")
    t.equal(by_name(sim.state(), "hosts", "esxi-02")["maintenance_mode"], False, "esxi-02 back in service")
    info = wait(inv.hosts["esxi-03"].EnterMaintenanceMode_Task(timeout=0, evacuatePoweredOffVms=True))
    t.equal(info.state, "success", "evacuate powered-off VMs too (%s)" % info.error)
    t.equal([v["name"] for v in sim.state()["vms"] if v["host"] == "esxi-03"], [], "esxi-03 empty")
    wait(inv.hosts["esxi-03"].ExitMaintenanceMode_Task(timeout=0))


def test_bulk(t, sim, inv):
    print("many VMs at once: PowerOnMultiVM_Task, WaitForTasks")
    vms = [inv.vms["rr-1"], inv.vms["rr-3"]]
    tasks = [vm.ReconfigVM_Task(spec=vim.vm.ConfigSpec(annotation="bulk")) for vm in vms]
    WaitForTasks(tasks, si=inv.si)
    t.equal([task.info.state for task in tasks], ["success", "success"], "reconfigure tasks waited on together")
    datacenter = inv.content.rootFolder.childEntity[0]
    info = wait(datacenter.PowerOnMultiVM_Task(vm=vms))
    t.equal(info.state, "success", "PowerOnMultiVM_Task (%s)" % info.error)
    attempted = info.result.attempted if info.result else []
    t.equal(sorted(a.vm.name for a in attempted), ["rr-1", "rr-3"], "every VM attempted")
    WaitForTasks([a.task for a in attempted], si=inv.si)
    state = sim.state()
    t.equal([by_name(state, "vms", n)["power_state"] for n in ("rr-1", "rr-3")], ["poweredOn", "poweredOn"],
            "VMs powered on by the datacenter")


def test_cluster(t, sim, inv):
    print("DRS and DPM with modify semantics")
    cluster = inv.hosts["esxi-01"].parent

    def reconfigure_cluster(modify, **spec):
        return wait(cluster.ReconfigureComputeResource_Task(spec=vim.cluster.ConfigSpecEx(**spec), modify=modify))

    def automation():
        c = by_name(sim.state(), "clusters", "gpu-cluster")
        return c["drs"], c["dpm"]

    t.equal(reconfigure_cluster(True, drsConfig=vim.cluster.DrsConfigInfo(enabled=False)).state, "success",
            "turn DRS off")
    t.equal(automation(), ({"enabled": False, "behavior": "fullyAutomated"}, {"enabled": False, "behavior": "manual"}),
            "only drs.enabled changed")
    t.equal(reconfigure_cluster(True, dpmConfig=vim.cluster.DpmConfigInfo(enabled=True)).state, "success",
            "turn DPM on")
    t.equal(automation(), ({"enabled": False, "behavior": "fullyAutomated"}, {"enabled": True, "behavior": "manual"}),
            "only dpm.enabled changed")
    info = reconfigure_cluster(True, drsConfig=vim.cluster.DrsConfigInfo(defaultVmBehavior="sometimes"))
    t.equal(fault_name(info), "InvalidArgument", "unknown DRS behavior")
    t.equal(reconfigure_cluster(False, drsConfig=vim.cluster.DrsConfigInfo(
        enabled=True, defaultVmBehavior="partiallyAutomated")).state, "success", "replace the configuration")
    t.equal(automation(), ({"enabled": True, "behavior": "partiallyAutomated"},
                           {"enabled": False, "behavior": "manual"}), "modify=false resets what the spec leaves out")
    drs = cluster.configurationEx.drsConfig
    t.equal((drs.enabled, drs.defaultVmBehavior), (True, "partiallyAutomated"), "configurationEx.drsConfig")


def test_connection_drop_and_stats(t, sim, inv):
    print("injected connection drop, request counters")
    sim.lab("POST", "/lab/stats/reset")
    sim.lab("POST", "/lab/faults", {"kind": "drop_connection", "count": 1})
    try:
        inv.si.CurrentTime()
        t.check(False, "a dropped connection answered")
    except vmodl.MethodFault as err:
        t.check(False, "a dropped connection returned a fault: %s" % err)
    except Exception:  # the transport error of a closed connection
        pass
    try:
        inv.si.CurrentTime()
    except Exception as err:
        t.check(False, "the call after a dropped connection failed: %r" % err)
    stats = sim.lab("GET", "/lab/stats")[1]
    t.equal(stats["by_method"].get("CurrentTime"), 2, "both CurrentTime calls counted")
    sim.lab("GET", "/lab/state")
    t.equal(sim.lab("GET", "/lab/stats")[1]["soap_requests"], stats["soap_requests"], "lab endpoints not counted")


def test_reset(t, sim, start):
    print("reset to the start")
    si = sim.connect()
    sim.lab("POST", "/lab/faults", {"kind": "drop_connection", "count": 5})
    started = time.monotonic()
    status, answer = sim.lab("POST", "/lab/reset")
    t.equal(status, 200, "POST /lab/reset (%s)" % answer)
    print("  reset in %.3fs (%s ms in the simulator)" % (time.monotonic() - started, answer.get("reset_ms")))
    t.equal(sim.state(), start, "state after the rules' changes and a reset")
    t.equal(sim.lab("GET", "/lab/faults")[1]["faults"], [], "faults after the reset")
    try:
        si.RetrieveContent().rootFolder.childEntity
        t.check(False, "a session from before the reset still works")
    except vim.fault.NotAuthenticated:
        pass
    si = sim.connect()
    t.equal(len(read_inventory(si)), len(start["hosts"]) + len(start["vms"]), "inventory read after the reset")
    Disconnect(si)


def test_bad_topologies(t, binary, catalog, workdir):
    print("topology errors")
    cases = {
        "unknown GPU model": ({"name": "h1", "gpus": [{"model": "P41", "count": 1}]}, [], "P41"),
        "duplicate host": ({"name": "h1"}, [], "duplicate host"),
        "VM on unknown host": ({"name": "h1"}, [{"name": "v1", "host": "h9"}], "h9"),
    }
    for label, (host, vms, expected) in cases.items():
        hosts = [host, {"name": "h1"}] if label == "duplicate host" else [host]
        path = os.path.join(workdir, "bad.json")
        with open(path, "w") as handle:
            json.dump({"datacenters": [{"name": "dc", "hosts": hosts, "vms": vms}]}, handle)
        run = subprocess.run([binary, "-listen", "127.0.0.1:0", "-topology", path, "-catalog", catalog,
                              "-username", USER, "-password", PASSWORD], capture_output=True, text=True, timeout=30,
                             check=False)
        t.check(run.returncode != 0 and expected in run.stderr, "%s: exit %d, %s" % (label, run.returncode,
                                                                                     run.stderr.strip()))


def big_topology(hosts=30, vms=300):
    names = ["esxi-%03d" % n for n in range(1, hosts + 1)]
    return {"datacenters": [{"name": "big-dc", "clusters": [{
        "name": "gpu-cluster", "drs": {"enabled": True, "behavior": "fullyAutomated"},
        "hosts": [{"name": n, "gpus": [{"model": "P40", "count": 2}]} for n in names]}],
        "vms": [{"name": "gpu-vm-%03d" % n, "host": names[n % hosts], "memory_mb": 8192}
                for n in range(1, vms + 1)]}]}


def test_scale(t, binary, catalog, workdir):
    print("scale: 30 hosts, 300 VMs")
    sim = Simulator(binary, catalog, big_topology(), workdir, "scale")
    try:
        si = sim.connect()
        started = time.monotonic()
        props = read_inventory(si)
        read = time.monotonic() - started
        started = time.monotonic()
        state = sim.state()
        lab_state = time.monotonic() - started
        print("  startup %.2fs, PropertyCollector read of %d objects %.2fs, /lab/state %.2fs"
              % (sim.startup, len(props), read, lab_state))
        t.equal((len(state["hosts"]), len(state["vms"])), (30, 300), "big inventory")
        t.equal(len(props), 330, "objects read in one pass")
        t.check(sim.startup < 10, "startup within 10 s (%.2fs)" % sim.startup)
        t.check(read < 5 and lab_state < 5, "reads within 5 s (%.2fs, %.2fs)" % (read, lab_state))
        Disconnect(si)
        status, answer = sim.lab("POST", "/lab/reset")
        print("  reset %s ms" % answer.get("reset_ms"))
        t.check(status == 200 and answer["reset_ms"] < 5000, "reset within 5 s (%s %s)" % (status, answer))
    finally:
        sim.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, "lab", ".build", "vcsim-gpu"))
    parser.add_argument("--catalog", default=os.path.join(HERE, "testdata", "catalog-sample.json"))
    parser.add_argument("--no-scale", action="store_true", help="skip the 30-host/300-VM timing run")
    args = parser.parse_args()
    t = Smoke()
    with tempfile.TemporaryDirectory(prefix="vcsim-smoke-") as workdir:
        sim = Simulator(args.binary, args.catalog, TOPOLOGY, workdir, "rules")
        print("vcsim-gpu at %s (started in %.2fs)" % (sim.url, sim.startup))
        try:
            start = sim.state()
            si = sim.connect()
            inv = test_login_and_reads(t, sim, si)
            test_client_reads(t, si)
            test_host_and_cluster_methods(t, sim, si)
            test_scheduled_tasks(t, si)
            for test in (test_config_target,):
                test(t, inv)
            for test in (test_settings, test_graphics, test_vgpu_api, test_reconfigure, test_power_on, test_migration,
                         test_maintenance, test_bulk, test_cluster, test_connection_drop_and_stats):
                test(t, sim, inv)
            Disconnect(si)
            test_reset(t, sim, start)
        finally:
            code = sim.stop()
            t.equal(code, 0, "exit code after SIGTERM")
            if t.failures:
                with open(sim.log.name) as handle:
                    sys.stdout.write("--- vcsim-gpu log ---\n" + handle.read()[-6000:])
        test_bad_topologies(t, args.binary, args.catalog, workdir)
        if not args.no_scale:
            test_scale(t, args.binary, args.catalog, workdir)
    print("%d checks, %d failed" % (t.checks, len(t.failures)))
    return 1 if t.failures else 0


if __name__ == "__main__":
    sys.exit(main())
