package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// A NIC edited without a backing (only its connection state here) stays on its network.
func TestNICEditKeepsBacking(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.client(t)
	nic := func() (types.BaseVirtualDevice, mo.VirtualMachine) {
		var vm mo.VirtualMachine
		if err := c.RetrieveOne(ctx, tl.vms[0], []string{"config.hardware.device", "network"}, &vm); err != nil {
			t.Fatal(err)
		}
		for _, device := range vm.Config.Hardware.Device {
			if _, ok := device.(types.BaseVirtualEthernetCard); ok {
				return device, vm
			}
		}
		t.Fatal("the VM has no NIC")
		return nil, vm
	}
	device, before := nic()
	backing, ok := device.GetVirtualDevice().Backing.(*types.VirtualEthernetCardNetworkBackingInfo)
	if !ok {
		t.Fatalf("the NIC's backing: %#v", device.GetVirtualDevice().Backing)
	}
	device.GetVirtualDevice().Backing = nil
	device.GetVirtualDevice().Connectable = &types.VirtualDeviceConnectInfo{StartConnected: false, Connected: false}
	task, err := object.NewVirtualMachine(c.Client, tl.vms[0]).Reconfigure(ctx, types.VirtualMachineConfigSpec{
		DeviceChange: []types.BaseVirtualDeviceConfigSpec{&types.VirtualDeviceConfigSpec{
			Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: device}}})
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	after, vm := nic()
	kept, ok := after.GetVirtualDevice().Backing.(*types.VirtualEthernetCardNetworkBackingInfo)
	if !ok || kept.DeviceName != backing.DeviceName {
		t.Errorf("the NIC lost its backing: %#v", after.GetVirtualDevice().Backing)
	}
	if after.GetVirtualDevice().Connectable == nil || after.GetVirtualDevice().Connectable.StartConnected {
		t.Errorf("the edit itself was not applied: %+v", after.GetVirtualDevice().Connectable)
	}
	if len(vm.Network) != len(before.Network) {
		t.Errorf("the VM's networks changed: %v -> %v", before.Network, vm.Network)
	}
}
