# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plain pyVmomi calls that set up lab state for tests without going through the collection's own code."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json

from pyVim.connect import Disconnect, SmartConnect
from pyVim.task import WaitForTask
from pyVmomi import vim


class Direct:
    def __init__(self, lab):
        conn = lab.connection
        self.si = SmartConnect(host=conn["hostname"], port=conn["port"], user=conn["username"],
                               pwd=conn["password"], disableSslCertValidation=True)
        self.content = self.si.RetrieveContent()

    def close(self):
        Disconnect(self.si)

    def _find(self, vim_type, name):
        view = self.content.viewManager.CreateContainerView(self.content.rootFolder, [vim_type], True)
        try:
            for obj in view.view:
                if obj.name == name:
                    return obj
        finally:
            view.DestroyView()
        raise LookupError("%s %s not found" % (vim_type.__name__, name))

    def host(self, name):
        return self._find(vim.HostSystem, name)

    def vm(self, name):
        return self._find(vim.VirtualMachine, name)

    def shared_direct(self, host_name):
        """Every GPU of the host to Shared Direct, then restart Xorg so it takes effect."""
        host = self.host(host_name)
        manager = host.configManager.graphicsManager
        manager.UpdateGraphicsConfig(vim.host.GraphicsConfig(hostDefaultGraphicsType="sharedDirect"))
        host.configManager.serviceSystem.RestartService(id="xorg")

    def cluster(self, name):
        return self._find(vim.ClusterComputeResource, name)

    def graphics_modes(self):
        """``{host name: {pci id: vgpuMode}}`` for every host, from one PropertyCollector read of
        config.graphicsInfo."""
        pc = self.content.propertyCollector
        view = self.content.viewManager.CreateContainerView(self.content.rootFolder, [vim.HostSystem], True)
        try:
            spec = vim.PropertyCollector.FilterSpec(
                objectSet=[vim.PropertyCollector.ObjectSpec(obj=view, skip=True, selectSet=[
                    vim.PropertyCollector.TraversalSpec(name="view", type=vim.view.ContainerView, path="view")])],
                propSet=[vim.PropertyCollector.PropertySpec(type=vim.HostSystem,
                                                            pathSet=["name", "config.graphicsInfo"])])
            result = pc.RetrievePropertiesEx(specSet=[spec], options=vim.PropertyCollector.RetrieveOptions())
        finally:
            view.DestroyView()
        modes = {}
        for obj in result.objects:
            props = dict((prop.name, prop.val) for prop in obj.propSet)
            modes[props["name"]] = dict((info.pciId, info.vgpuMode) for info in props.get("config.graphicsInfo", []))
        return modes

    def vgpu_profile_info(self, host_name):
        """HostGraphicsManager.RetrieveVgpuProfileInfo() of a host."""
        return self.host(host_name).configManager.graphicsManager.RetrieveVgpuProfileInfo()

    def config_target(self, cluster_name, host_name=None):
        """EnvironmentBrowser.QueryConfigTarget of a cluster, for one of its hosts or for all."""
        browser = self.cluster(cluster_name).environmentBrowser
        return browser.QueryConfigTarget(host=self.host(host_name) if host_name else None)

    def set_vgpu_mode(self, host_name, pci_id, mode, restart=True):
        """One GPU to Shared Direct in the given vGPU mode, then (by default) restart Xorg so it takes effect."""
        host = self.host(host_name)
        host.configManager.graphicsManager.UpdateGraphicsConfig(vim.host.GraphicsConfig(
            hostDefaultGraphicsType="sharedDirect", deviceType=[vim.host.GraphicsConfig.DeviceType(
                deviceId=pci_id, graphicsType="sharedDirect", vgpuMode=mode)]))
        if restart:
            host.configManager.serviceSystem.RestartService(id="xorg")

    def add_vgpu(self, vm_name, profile, lock_memory=True):
        vm = self.vm(vm_name)
        device = vim.vm.device.VirtualPCIPassthrough(
            key=-1, backing=vim.vm.device.VirtualPCIPassthrough.VmiopBackingInfo(vgpu=profile))
        spec = vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation="add", device=device)])
        if lock_memory:
            spec.memoryReservationLockedToMax = True
        WaitForTask(vm.ReconfigVM_Task(spec=spec))

    def run_vgpu(self, host_name, vm_name, profile):
        """The host's GPUs in Shared Direct and the VM (on that host) powered on with one vGPU of the profile."""
        self.shared_direct(host_name)
        self.add_vgpu(vm_name, profile)
        self.power_on(vm_name)

    def power_on(self, vm_name):
        WaitForTask(self.vm(vm_name).PowerOnVM_Task())

    def power_off(self, vm_name):
        WaitForTask(self.vm(vm_name).PowerOffVM_Task())

    def enter_maintenance(self, host_name):
        WaitForTask(self.host(host_name).EnterMaintenanceMode_Task(timeout=60))

    def exit_maintenance(self, host_name):
        WaitForTask(self.host(host_name).ExitMaintenanceMode_Task(timeout=60))

    def events(self, entity, type_ids, **filters):
        """EventManager.QueryEvents for ``entity`` itself and the event types ``type_ids``; ``filters`` are further
        EventFilterSpec fields."""
        spec = vim.event.EventFilterSpec(entity=vim.event.EventFilterSpec.ByEntity(entity=entity, recursion="self"),
                                         eventTypeId=list(type_ids), **filters)
        return self.content.eventManager.QueryEvents(filter=spec)

    def set_host_field(self, host_name, field_name, value):
        """Set the custom attribute ``field_name`` of a host, made first where vCenter has none."""
        manager = self.content.customFieldsManager
        field = next((f for f in manager.field if f.name == field_name), None) or \
            manager.AddCustomFieldDef(name=field_name, moType=vim.HostSystem)
        manager.SetField(entity=self.host(host_name), key=field.key, value=value)

    def left_off_by_an_interrupted_run(self, vm_name, want, run="20261128T090000Z-4242", by="ops@ctl02"):
        """A running VM that a vm_vgpu run on another controller powered off and died before powering on again:
        its power record as vm_vgpu writes it (this vCenter, the VM's cluster, vCenter's time, the change ``want``),
        then the power-off."""
        vm = self.vm(vm_name)
        now = self.si.CurrentTime().astimezone(datetime.timezone.utc).replace(tzinfo=None)
        record = {"v": 1, "run": run, "by": by, "vcenter": self.content.about.instanceUuid,
                  "cluster": vm.runtime.host.parent._moId, "power": "poweredOn",
                  "at": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "want": want}
        manager = self.content.customFieldsManager
        field = next((f for f in manager.field if f.name == "gpuops.vgpu.vm_vgpu.power"), None) or \
            manager.AddCustomFieldDef(name="gpuops.vgpu.vm_vgpu.power", moType=vim.VirtualMachine)
        manager.SetField(entity=vm, key=field.key, value=json.dumps(record))
        self.power_off(vm_name)
