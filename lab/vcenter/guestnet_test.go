package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// A VM with a guest_ip reports it through VMware Tools while it runs (guest.ipAddress, its NIC in guest.net,
// summary.guest.ipAddress) and none once powered off; a VM without one never reports an address.
func TestGuestAddressWhileRunning(t *testing.T) {
	tl := startLabWith(t, `{"datacenters": [{"name": "dc", "hosts": [{"name": "esx-1"}], "vms": [
		{"name": "vm-a", "host": "esx-1", "guest_ip": "127.0.0.1"}, {"name": "vm-b", "host": "esx-1", "power_state": "poweredOn"}]}]}`)
	ctx := context.Background()
	c, err := tl.connect(t, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) mo.VirtualMachine {
		var vm mo.VirtualMachine
		if err := property.DefaultCollector(c.Client).RetrieveOne(ctx, tl.vmNamed(t, name),
			[]string{"guest.ipAddress", "guest.net", "summary.guest.ipAddress", "config.hardware.device"}, &vm); err != nil {
			t.Fatal(err)
		}
		return vm
	}
	if vm := read("vm-a"); vm.Guest != nil && (vm.Guest.IpAddress != "" || len(vm.Guest.Net) != 0) {
		t.Fatalf("powered off: %+v", vm.Guest)
	}
	vmA := object.NewVirtualMachine(c.Client, tl.vmNamed(t, "vm-a"))
	if err := waitTask(vmA.PowerOn(ctx)); err != nil {
		t.Fatal(err)
	}
	vm := read("vm-a")
	if vm.Guest.IpAddress != "127.0.0.1" || vm.Summary.Guest.IpAddress != "127.0.0.1" || len(vm.Guest.Net) != 1 {
		t.Fatalf("running: %+v", vm.Guest)
	}
	net := vm.Guest.Net[0]
	card := object.VirtualDeviceList(vm.Config.Hardware.Device).SelectByType((*types.VirtualVmxnet3)(nil))[0].(types.BaseVirtualEthernetCard).GetVirtualEthernetCard()
	if net.Network != "VM Network" || !net.Connected || len(net.IpAddress) != 1 || net.IpAddress[0] != "127.0.0.1" ||
		net.MacAddress != card.MacAddress || net.DeviceConfigId != card.Key {
		t.Fatalf("guest.net: %+v", net)
	}
	if err := waitTask(vmA.PowerOff(ctx)); err != nil {
		t.Fatal(err)
	}
	if vm := read("vm-a"); vm.Guest.IpAddress != "" || len(vm.Guest.Net) != 0 {
		t.Fatalf("powered off again: %+v", vm.Guest)
	}
	if vm := read("vm-b"); vm.Guest.IpAddress != "" || len(vm.Guest.Net) != 0 {
		t.Fatalf("a VM without guest_ip: %+v", vm.Guest)
	}
}
