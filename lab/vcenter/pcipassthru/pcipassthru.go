// Package pcipassthru is a host's HostPciPassthruSystem (configManager.pciPassthruSystem): an entry per PCI device
// of the host in its pciPassthruInfo, which is the host's config.pciPassthruInfo, and UpdatePassthruConfig, which
// enables or disables passthrough by the GPU model's rules.
package pcipassthru

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
)

const pciClassBridge = 0x06 // PCI base class of host, ISA and PCI-to-PCI bridges

// Lab is what a host's passthrough system needs of the lab.
type Lab interface {
	// Update changes properties of a simulator object so that property collector waiters see the change.
	Update(obj mo.Reference, changes ...types.PropertyChange)
}

// GPUs is the GPU model's rule for switching a device's passthrough (gpu.Host.CheckPassthruSwitch): why the device
// cannot be switched to enable, "" when it can or is no GPU of the host.
type GPUs interface {
	CheckPassthruSwitch(id string, enable bool) string
}

// System is a host's HostPciPassthruSystem: its pciPassthruInfo is the host's config.pciPassthruInfo.
type System struct {
	mo.HostPciPassthruSystem

	lab               Lab
	host              types.ManagedObjectReference
	gpus              GPUs
	rebindNeedsReboot bool
}

// New is the passthrough system of a host with these PCI devices, under an id of the host's own. gpus (nil: none)
// checks a switch of the host's GPUs; rebindNeedsReboot is a host that cannot rebind devices without a reboot
// (HostCapability.deviceRebindWithoutRebootSupported false). The caller puts the system in the simulator's registry
// and points the host's configManager.pciPassthruSystem at it and its config.pciPassthruInfo at HostInfo.
func New(lab Lab, host types.ManagedObjectReference, devices []types.HostPciDevice, gpus GPUs,
	rebindNeedsReboot bool) *System {
	s := &System{lab: lab, host: host, gpus: gpus, rebindNeedsReboot: rebindNeedsReboot}
	s.Self = types.ManagedObjectReference{Type: "HostPciPassthruSystem",
		Value: "pciPassthruSystem-" + simobj.Number(host)}
	s.PciPassthruInfo = passthruInfo(devices)
	return s
}

// UpdatePassthruConfig enables or disables passthrough per device, all entries or none (HostConfigFault for a
// device the host does not have or that cannot be passed through). passthruActive follows passthruEnabled at once
// unless applyNow is false or the host cannot rebind devices without a reboot (topology passthrough_needs_reboot:
// HostCapability.deviceRebindWithoutRebootSupported false); then it waits for the host's reboot (Rebooted)
// (HostPciPassthruConfig.applyNow, vSphere API 7.0: "if the configuration can be applied immediately, it will be,
// otherwise ... after reboot").
func (s *System) UpdatePassthruConfig(ctx *simulator.Context, req *types.UpdatePassthruConfig) soap.HasFault {
	byID := map[string]*types.HostPciPassthruInfo{}
	for _, info := range s.PciPassthruInfo {
		entry := info.GetHostPciPassthruInfo()
		byID[entry.Id] = entry
	}
	for _, c := range req.Config {
		config := c.GetHostPciPassthruConfig()
		entry := byID[config.Id]
		if entry == nil || !entry.PassthruCapable {
			reason := "is not a PCI device of the host"
			if entry != nil {
				reason = "cannot be passed through"
			}
			return &methods.UpdatePassthruConfigBody{Fault_: simulator.Fault(
				"Failed to update passthrough configuration: device "+config.Id+" "+reason, &types.HostConfigFault{})}
		}
		if s.gpus == nil {
			continue
		}
		if reason := s.gpus.CheckPassthruSwitch(config.Id, config.PassthruEnabled); reason != "" {
			return &methods.UpdatePassthruConfigBody{Fault_: simulator.Fault(
				"Failed to update passthrough configuration: device "+config.Id+" "+reason, &types.HostConfigFault{})}
		}
	}
	for _, c := range req.Config {
		config := c.GetHostPciPassthruConfig()
		entry := byID[config.Id]
		entry.PassthruEnabled = config.PassthruEnabled
		if (config.ApplyNow == nil || *config.ApplyNow) && !s.rebindNeedsReboot {
			entry.PassthruActive = config.PassthruEnabled
		}
	}
	s.publish()
	return &methods.UpdatePassthruConfigBody{Res: &types.UpdatePassthruConfigResponse{}}
}

// Rebooted is the host back from a reboot: every device's passthruActive follows its passthruEnabled.
func (s *System) Rebooted() {
	for _, info := range s.PciPassthruInfo {
		e := info.GetHostPciPassthruInfo()
		e.PassthruActive = e.PassthruEnabled
	}
	s.publish()
}

// Info is the entry of a device, or nil; the lab reads it, the system changes it.
func (s *System) Info(id string) *types.HostPciPassthruInfo {
	for _, info := range s.PciPassthruInfo {
		if e := info.GetHostPciPassthruInfo(); e.Id == id {
			return e
		}
	}
	return nil
}

// HostInfo is a copy of the devices' entries as they are now, as the host's config.pciPassthruInfo holds them.
func (s *System) HostInfo() []types.BaseHostPciPassthruInfo {
	info := make([]types.BaseHostPciPassthruInfo, len(s.PciPassthruInfo))
	for i, entry := range s.PciPassthruInfo {
		copied := *entry.GetHostPciPassthruInfo()
		info[i] = &copied
	}
	return info
}

// publish makes the devices' state visible in the system's pciPassthruInfo and the host's config.pciPassthruInfo.
func (s *System) publish() {
	if host := simulator.Map.Get(s.host); host != nil {
		s.lab.Update(host, types.PropertyChange{Name: "config.pciPassthruInfo", Val: s.HostInfo()})
	}
	s.lab.Update(s, types.PropertyChange{Name: "pciPassthruInfo", Val: s.PciPassthruInfo})
}

// Refresh re-reads the devices' state on ESXi; the lab's state never goes stale.
func (s *System) Refresh(req *types.Refresh) soap.HasFault {
	return &methods.RefreshBody{Res: &types.RefreshResponse{}}
}

// passthruInfo has an entry per PCI device, as ESXi reports them: every device but the bridges can be passed
// through, none is at start. dependentDevice is the device vmkernel must release for passthrough, the device itself
// for an endpoint (HostPciPassthruInfo in the vSphere Web Services API reference).
func passthruInfo(devices []types.HostPciDevice) []types.BaseHostPciPassthruInfo {
	info := make([]types.BaseHostPciPassthruInfo, len(devices))
	for i, d := range devices {
		info[i] = &types.HostPciPassthruInfo{
			Id:              d.Id,
			DependentDevice: d.Id,
			PassthruCapable: uint16(d.ClassId)>>8 != pciClassBridge,
		}
	}
	return info
}
