package main

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// An unknown guest id fails CreateVM_Task with InvalidArgument on configSpec.guestId and leaves no VM behind; a known
// one creates the VM.
func TestCreateVMRefusesAnUnknownGuestID(t *testing.T) {
	tl, c, folders := startLabFolders(t)
	ctx := context.Background()
	var existing mo.VirtualMachine
	if err := c.RetrieveOne(ctx, tl.vms[0], []string{"resourcePool", "datastore"}, &existing); err != nil {
		t.Fatal(err)
	}
	var store mo.Datastore
	if err := c.RetrieveOne(ctx, existing.Datastore[0], []string{"name"}, &store); err != nil {
		t.Fatal(err)
	}
	create := func(name, guest string) error {
		spec := types.VirtualMachineConfigSpec{Name: name, GuestId: guest, NumCPUs: 1, MemoryMB: 128,
			Files: &types.VirtualMachineFileInfo{VmPathName: "[" + store.Name + "]"}}
		task, err := folders.VmFolder.CreateVM(ctx, spec, object.NewResourcePool(c.Client, *existing.ResourcePool), nil)
		if err != nil {
			return err
		}
		_, err = task.WaitForResult(ctx, nil)
		return err
	}
	err := create("bad-guest", "invalid_guest_id")
	if err == nil || !strings.Contains(err.Error(), "configSpec.guestId") {
		t.Fatalf("unknown guest id: %v", err)
	}
	for _, vm := range tl.state(t).VMs {
		if vm.Name == "bad-guest" {
			t.Fatal("the refused VM exists")
		}
	}
	if err := create("good-guest", "otherLinux64Guest"); err != nil {
		t.Fatalf("known guest id: %v", err)
	}
}

// maxMksConnections set on create or reconfigure reads back as set.
func TestMaxMksConnectionsReadsBack(t *testing.T) {
	tl, c, _ := startLabFolders(t)
	ctx := context.Background()
	vm := object.NewVirtualMachine(c.Client, tl.vms[0])
	task, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{MaxMksConnections: 4})
	if err != nil || task.Wait(ctx) != nil {
		t.Fatalf("reconfigure: %v", err)
	}
	var got mo.VirtualMachine
	if err := c.RetrieveOne(ctx, vm.Reference(), []string{"config.maxMksConnections"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Config.MaxMksConnections != 4 {
		t.Fatalf("config.maxMksConnections %d after setting 4", got.Config.MaxMksConnections)
	}
}
