// Package guestnet is what VMware Tools reports of a lab VM's guest network: a VM whose topology entry has a
// guest_ip shows it, while it runs, in guest.ipAddress (and summary.guest.ipAddress) and as the address of its first
// NIC in guest.net (GuestNicInfo: network, MAC address, connected, deviceConfigId, ipAddress), as vCenter shows the
// primary address Tools reports. A VM that is not running, or has no guest_ip, reports none. The lab's guest
// containers are reached on the loopback address with a port of their own (labctl gives their VMs guest_ip 127.0.0.1
// with --guests).
package guestnet

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/topology"
)

// Addresses are the topology's guest addresses by VM name.
type Addresses map[string]string

// New keeps the guest addresses of the topology's VMs that have one.
func New(topo *topology.Topology) Addresses {
	a := Addresses{}
	for _, dc := range topo.Datacenters {
		for _, vm := range dc.VMs {
			if vm.GuestIP != "" {
				a[vm.Name] = vm.GuestIP
			}
		}
	}
	return a
}

// report is what Tools reports of a VM's network: its address and NICs, none while the VM does not run.
func (a Addresses) report(vm *simulator.VirtualMachine, running bool) (string, []types.GuestNicInfo) {
	ip := a[vm.Name]
	if !running || ip == "" || vm.Config == nil {
		return "", nil
	}
	for _, device := range vm.Config.Hardware.Device {
		nic, ok := device.(types.BaseVirtualEthernetCard)
		if !ok {
			continue
		}
		card := nic.GetVirtualEthernetCard()
		network := ""
		if backing, ok := card.Backing.(*types.VirtualEthernetCardNetworkBackingInfo); ok {
			network = backing.DeviceName
		}
		return ip, []types.GuestNicInfo{{Network: network, IpAddress: []string{ip}, MacAddress: card.MacAddress,
			Connected: true, DeviceConfigId: card.Key}}
	}
	return ip, nil
}

// Set writes a VM's guest address at adoption (no property change is sent: the VM is new to clients).
func (a Addresses) Set(vm *simulator.VirtualMachine, running bool) {
	vm.Guest.IpAddress, vm.Guest.Net = a.report(vm, running)
	vm.Summary.Guest.IpAddress = vm.Guest.IpAddress
}

// Changes are the property changes of a VM's guest address after a power change.
func (a Addresses) Changes(vm *simulator.VirtualMachine, running bool) []types.PropertyChange {
	ip, nics := a.report(vm, running)
	return []types.PropertyChange{{Name: "guest.ipAddress", Val: ip}, {Name: "guest.net", Val: nics},
		{Name: "summary.guest.ipAddress", Val: ip}}
}
