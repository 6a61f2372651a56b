package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/vim25/mo"
)

// The lab reports a VM's guest address (package guestnet) from the topology's guest_ip: at adoption for a VM that
// starts powered on, and after each power change through the API.
func TestGuestAddressFollowsPower(t *testing.T) {
	tl := startLabWith(t, `{"datacenters": [{"name": "dc", "hosts": [{"name": "esx-1"}], "vms": [
		{"name": "vm-a", "host": "esx-1", "guest_ip": "127.0.0.1", "power_state": "poweredOn"}]}]}`)
	ctx := context.Background()
	c := tl.client(t)
	ref := tl.vmNamed(t, "vm-a")
	read := func() mo.VirtualMachine {
		var vm mo.VirtualMachine
		if err := property.DefaultCollector(c.Client).RetrieveOne(ctx, ref,
			[]string{"guest.ipAddress", "guest.net", "summary.guest.ipAddress"}, &vm); err != nil {
			t.Fatal(err)
		}
		return vm
	}
	reports := func(vm mo.VirtualMachine) bool {
		return vm.Guest != nil && vm.Summary.Guest != nil && vm.Guest.IpAddress == "127.0.0.1" && vm.Summary.Guest.IpAddress == "127.0.0.1" &&
			len(vm.Guest.Net) == 1 && vm.Guest.Net[0].Network == "VM Network"
	}
	if vm := read(); !reports(vm) {
		t.Fatalf("powered on at start: %+v", vm.Guest)
	}
	vmA := object.NewVirtualMachine(c.Client, ref)
	if err := waitTask(vmA.PowerOff(ctx)); err != nil {
		t.Fatal(err)
	}
	// An empty property is left out of the answer.
	if vm := read(); vm.Guest != nil && (vm.Guest.IpAddress != "" || len(vm.Guest.Net) != 0) ||
		vm.Summary.Guest != nil && vm.Summary.Guest.IpAddress != "" {
		t.Fatalf("powered off: %+v, summary %+v", vm.Guest, vm.Summary.Guest)
	}
	if err := waitTask(vmA.PowerOn(ctx)); err != nil {
		t.Fatal(err)
	}
	if vm := read(); !reports(vm) {
		t.Fatalf("powered on again: %+v", vm.Guest)
	}
}
