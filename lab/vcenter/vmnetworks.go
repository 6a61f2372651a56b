package main

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// vmNetworks is a VM's `network` as vCenter keeps it: each network its NICs are backed by, once, in device order
// (vSphere Web Services API, VirtualMachine.network: "the subset of network objects in the datacenter that is used
// by this virtual machine"). The simulator appends a reference on every NIC it configures, an empty one for a
// backing it does not resolve, and never drops one; the lab derives the list from the devices after a reconfigure.
func vmNetworks(vm *labVM) []types.ManagedObjectReference {
	var networks []types.ManagedObjectReference
	add := func(ref types.ManagedObjectReference) {
		if ref.Value != "" && simulator.Map.Get(ref) != nil && simulator.FindReference(networks, ref) == nil {
			networks = append(networks, ref)
		}
	}
	if vm.Config == nil {
		return nil
	}
	for _, device := range vm.Config.Hardware.Device {
		if _, ok := device.(types.BaseVirtualEthernetCard); !ok {
			continue
		}
		switch backing := device.GetVirtualDevice().Backing.(type) {
		case *types.VirtualEthernetCardNetworkBackingInfo:
			if backing.Network != nil {
				add(*backing.Network)
			}
		case *types.VirtualEthernetCardDistributedVirtualPortBackingInfo:
			add(dvPortgroupByKey(backing.Port.PortgroupKey))
		}
	}
	return networks
}

func dvPortgroupByKey(key string) types.ManagedObjectReference {
	for _, entity := range simulator.Map.All("DistributedVirtualPortgroup") {
		if pg, ok := entity.(*simulator.DistributedVirtualPortgroup); ok && pg.Key == key {
			return pg.Self
		}
	}
	return types.ManagedObjectReference{}
}

// keepUnsetBackings gives a device edited without a backing the backing it has: vCenter keeps what an edit spec
// leaves unset (community.vmware's vmware_guest_network edits a NIC's DirectPath I/O or connection state that way
// and its target expects the NIC to stay on its network; not confirmed in VMware's reference). The simulator would
// drop the backing.
func keepUnsetBackings(vm *labVM, spec *types.VirtualMachineConfigSpec) {
	if vm.Config == nil {
		return
	}
	for _, change := range spec.DeviceChange {
		c := change.GetVirtualDeviceConfigSpec()
		if c.Operation != types.VirtualDeviceConfigSpecOperationEdit || c.Device == nil {
			continue
		}
		edited := c.Device.GetVirtualDevice()
		if edited.Backing != nil {
			continue
		}
		for _, device := range vm.Config.Hardware.Device {
			if current := device.GetVirtualDevice(); current.Key == edited.Key {
				edited.Backing = current.Backing
			}
		}
	}
}
