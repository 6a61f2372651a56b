package main

import (
	"github.com/vmware/govmomi/simulator"

	"vcsim/datastores"
	"vcsim/hostconfig"
	"vcsim/hostnet"
	"vcsim/imageconfig"
	"vcsim/pcipassthru"
	"vcsim/settings"
)

// attachConfigManagers gives a host its vSAN, power, date and time systems and lockdown mode (package hostconfig),
// its image configuration manager (package imageconfig), its PCI passthrough system (package pcipassthru, with the
// host's GPUs' switch rule and whether it rebinds devices only at a reboot), its network system and VMkernel
// NIC manager as vCenter reports them (package hostnet), its file systems (package datastores), and an object for
// every other configManager reference the simulator leaves pointing at nothing (hostconfig.AddPlaceholders).
func (l *Lab) attachConfigManagers(h *hostState, obj *simulator.HostSystem) {
	vsan := hostconfig.NewVsanSystem(obj)
	passthru := pcipassthru.New(labView{l}, h.Ref, obj.Hardware.PciDevice, h.Host, h.rebindNeedsReboot)
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
	obj.Config.PciPassthruInfo = passthru.HostInfo()
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
