package main

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// A NIC goes on a distributed port group when the VM's own host has joined the switch, whatever the other hosts of
// its cluster; a VM on a host outside the switch is refused, and the switch's members stay as they were.
func TestNICOnDistributedPortGroup(t *testing.T) {
	tl, c, folders := startLabFolders(t)
	ctx := context.Background()
	dvs := labtest.CreateDVS(t, c, folders, types.DVSConfigSpec{Name: "dvs-nic"})
	task, err := dvs.Reconfigure(ctx, &types.DVSConfigSpec{ConfigVersion: "1",
		Host: []types.DistributedVirtualSwitchHostMemberConfigSpec{{Operation: "add", Host: tl.hosts[0].Ref}}})
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	task, err = dvs.AddPortgroup(ctx, []types.DVPortgroupConfigSpec{{Name: "dvpg-nic", Type: "earlyBinding", NumPorts: 8}})
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	var sw mo.DistributedVirtualSwitch
	if err := c.RetrieveOne(ctx, dvs.Reference(), []string{"uuid", "portgroup", "summary.hostMember"}, &sw); err != nil {
		t.Fatal(err)
	}
	var key string
	for _, ref := range sw.Portgroup {
		var pg mo.DistributedVirtualPortgroup
		if err := c.RetrieveOne(ctx, ref, []string{"name", "key"}, &pg); err != nil {
			t.Fatal(err)
		}
		if pg.Name == "dvpg-nic" {
			key = pg.Key
		}
	}
	addNIC := func(vm types.ManagedObjectReference) error {
		nic := &types.VirtualVmxnet3{VirtualVmxnet: types.VirtualVmxnet{VirtualEthernetCard: types.VirtualEthernetCard{
			VirtualDevice: types.VirtualDevice{Backing: &types.VirtualEthernetCardDistributedVirtualPortBackingInfo{
				Port: types.DistributedVirtualSwitchPortConnection{SwitchUuid: sw.Uuid, PortgroupKey: key}}}}}}
		task, err := object.NewVirtualMachine(c.Client, vm).Reconfigure(ctx, types.VirtualMachineConfigSpec{
			DeviceChange: []types.BaseVirtualDeviceConfigSpec{&types.VirtualDeviceConfigSpec{
				Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: nic}}})
		if err != nil {
			return err
		}
		return task.Wait(ctx)
	}
	if err := addNIC(tl.vms[0]); err != nil {
		t.Errorf("a VM on a member host: %v", err)
	}
	// The VM's network lists each network of its NICs once, the port group among them, and nothing empty.
	if err := addNIC(tl.vms[0]); err != nil {
		t.Fatal(err)
	}
	var vm mo.VirtualMachine
	if err := c.RetrieveOne(ctx, tl.vms[0], []string{"network"}, &vm); err != nil {
		t.Fatal(err)
	}
	seen := map[types.ManagedObjectReference]bool{}
	for _, ref := range vm.Network {
		if ref.Value == "" || seen[ref] {
			t.Errorf("network lists %v twice or empty: %v", ref, vm.Network)
		}
		seen[ref] = true
	}
	if !seen[types.ManagedObjectReference{Type: "DistributedVirtualPortgroup", Value: key}] {
		t.Errorf("network lacks the port group %s: %v", key, vm.Network)
	}
	err = addNIC(tl.vms[1])
	if err == nil || !strings.Contains(err.Error(), "is not a member of the distributed switch dvs-nic") {
		t.Errorf("a VM on a host outside the switch: %v", err)
	}
	var after mo.DistributedVirtualSwitch
	if err := c.RetrieveOne(ctx, dvs.Reference(), []string{"summary.hostMember"}, &after); err != nil {
		t.Fatal(err)
	}
	if len(after.Summary.HostMember) != len(sw.Summary.HostMember) {
		t.Errorf("the switch's members changed: %v -> %v", sw.Summary.HostMember, after.Summary.HostMember)
	}
}
