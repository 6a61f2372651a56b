package main

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/datastores"
	"vcsim/hostconfig"
	"vcsim/hostnet"
	"vcsim/imageconfig"
	"vcsim/settings"
	"vcsim/simobj"
)

const pciClassBridge = 0x06 // PCI base class of host, ISA and PCI-to-PCI bridges

// pciPassthruSystem is a host's HostPciPassthruSystem (configManager.pciPassthruSystem): its pciPassthruInfo is the
// host's config.pciPassthruInfo.
type pciPassthruSystem struct {
	mo.HostPciPassthruSystem
	host  types.ManagedObjectReference
	state *hostState
}

func newPciPassthruSystem(h *hostState, devices []types.HostPciDevice) *pciPassthruSystem {
	s := &pciPassthruSystem{}
	s.Self = types.ManagedObjectReference{Type: "HostPciPassthruSystem",
		Value: "pciPassthruSystem-" + simobj.Number(h.Ref)}
	s.PciPassthruInfo = pciPassthruInfo(devices)
	s.host, s.state = h.Ref, h
	return s
}

// UpdatePassthruConfig enables or disables passthrough per device, all entries or none (HostConfigFault for a
// device the host does not have or that cannot be passed through). passthruActive follows passthruEnabled at once
// unless applyNow is false or the host cannot rebind devices without a reboot (topology passthrough_needs_reboot:
// HostCapability.deviceRebindWithoutRebootSupported false); then it waits for the host's reboot
// (HostPciPassthruConfig.applyNow, vSphere API 7.0: "if the configuration can be applied immediately, it will be,
// otherwise ... after reboot").
func (s *pciPassthruSystem) UpdatePassthruConfig(ctx *simulator.Context, req *types.UpdatePassthruConfig) soap.HasFault {
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
		if reason := s.state.CheckPassthruSwitch(config.Id, config.PassthruEnabled); reason != "" {
			return &methods.UpdatePassthruConfigBody{Fault_: simulator.Fault(
				"Failed to update passthrough configuration: device "+config.Id+" "+reason, &types.HostConfigFault{})}
		}
	}
	for _, c := range req.Config {
		config := c.GetHostPciPassthruConfig()
		entry := byID[config.Id]
		entry.PassthruEnabled = config.PassthruEnabled
		if (config.ApplyNow == nil || *config.ApplyNow) && !s.state.rebindNeedsReboot {
			entry.PassthruActive = config.PassthruEnabled
		}
	}
	s.publish()
	return &methods.UpdatePassthruConfigBody{Res: &types.UpdatePassthruConfigResponse{}}
}

// publish makes the devices' state visible in the system's pciPassthruInfo and the host's config.pciPassthruInfo.
func (s *pciPassthruSystem) publish() {
	l := s.state.lab
	info := make([]types.BaseHostPciPassthruInfo, len(s.PciPassthruInfo))
	for i, entry := range s.PciPassthruInfo {
		copied := *entry.GetHostPciPassthruInfo()
		info[i] = &copied
	}
	l.update(l.hostObject(s.host), types.PropertyChange{Name: "config.pciPassthruInfo", Val: info})
	l.update(s, types.PropertyChange{Name: "pciPassthruInfo", Val: s.PciPassthruInfo})
}

// Refresh re-reads the devices' state on ESXi; the lab's state never goes stale.
func (s *pciPassthruSystem) Refresh(req *types.Refresh) soap.HasFault {
	return &methods.RefreshBody{Res: &types.RefreshResponse{}}
}

// pciPassthruInfo has an entry per PCI device, as ESXi reports them: every device but the bridges can be passed
// through, none is at start. dependentDevice is the device vmkernel must release for passthrough, the device itself
// for an endpoint (HostPciPassthruInfo in the vSphere Web Services API reference).
func pciPassthruInfo(devices []types.HostPciDevice) []types.BaseHostPciPassthruInfo {
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

// attachConfigManagers gives a host its vSAN, power, date and time systems and lockdown mode (package hostconfig),
// its image configuration manager (package imageconfig), its PCI passthrough system, its network system and VMkernel
// NIC manager as vCenter reports them (package hostnet), its file systems (package datastores), and an object for
// every other configManager reference the simulator leaves pointing at nothing (hostconfig.AddPlaceholders).
func (l *Lab) attachConfigManagers(h *hostState, obj *simulator.HostSystem) {
	vsan := hostconfig.NewVsanSystem(obj)
	passthru := newPciPassthruSystem(h, obj.Hardware.PciDevice)
	simulator.Map.Put(vsan)
	simulator.Map.Put(passthru)
	power, clock, image := hostconfig.NewPowerSystem(obj), hostconfig.NewDateTimeSystem(obj),
		imageconfig.New(h.Ref, imageConfigLab{l})
	simulator.Map.Put(power)
	simulator.Map.Put(clock)
	simulator.Map.Put(image)
	powerRef, clockRef, imageRef := power.Self, clock.Self, image.Self
	obj.ConfigManager.PowerSystem, obj.ConfigManager.DateTimeSystem = &powerRef, &clockRef
	obj.ConfigManager.ImageConfigManager = &imageRef
	vsanRef, passthruRef := vsan.Self, passthru.Self
	obj.ConfigManager.VsanSystem = &vsanRef
	obj.ConfigManager.PciPassthruSystem = &passthruRef
	obj.Config.PciPassthruInfo = pciPassthruInfo(obj.Hardware.PciDevice)
	if network := hostnet.NewNetworkSystem(obj); network != nil {
		simulator.Map.Put(network)
	}
	if storage := datastores.NewHostStorageSystem(obj); storage != nil {
		simulator.Map.Put(storage)
	}
	simulator.Map.Put(hostconfig.NewAutoStartManager(obj))
	vnics, access := hostnet.NewVirtualNicManager(obj), hostconfig.NewAccessManager(obj)
	simulator.Map.Put(vnics)
	simulator.Map.Put(access)
	vnicsRef, accessRef := vnics.Self, access.Self
	obj.ConfigManager.VirtualNicManager, obj.ConfigManager.HostAccessManager = &vnicsRef, &accessRef
	if om, ok := simulator.Map.Get(*obj.ConfigManager.AdvancedOption).(*simulator.OptionManager); ok {
		simulator.Map.Put(settings.NewManager(om, settings.ESXiOptions, true))
	}

	hostconfig.AddPlaceholders(obj)
}
