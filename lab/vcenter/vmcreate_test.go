package main

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// An unknown guest id fails CreateVM_Task with InvalidArgument on configSpec.guestId and leaves no VM behind; a known
// one creates the VM.
func TestCreateVMRefusesAnUnknownGuestID(t *testing.T) {
	tl, c, folders := startLabFolders(t)
	ctx := context.Background()
	pool, store := placementOf(t, c, tl.vms[0])
	create := func(name, guest string) error {
		spec := types.VirtualMachineConfigSpec{Name: name, GuestId: guest, NumCPUs: 1, MemoryMB: 128,
			Files: &types.VirtualMachineFileInfo{VmPathName: "[" + store + "]"}}
		task, err := folders.VmFolder.CreateVM(ctx, spec, pool, nil)
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

// vApp properties added, edited and removed through ReconfigVM_Task read back from config.vAppConfig.
func TestVAppPropertiesReadBack(t *testing.T) {
	tl, c, _ := startLabFolders(t)
	ctx := context.Background()
	vm := object.NewVirtualMachine(c.Client, tl.vms[0])
	reconfigure := func(updates ...types.VAppPropertySpec) []types.VAppPropertyInfo {
		task, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{VAppConfig: &types.VmConfigSpec{
			Property: updates}})
		if err != nil || task.Wait(ctx) != nil {
			t.Fatalf("reconfigure: %v", err)
		}
		var got mo.VirtualMachine
		if err := c.RetrieveOne(ctx, vm.Reference(), []string{"config.vAppConfig"}, &got); err != nil {
			t.Fatal(err)
		}
		return got.Config.VAppConfig.GetVmConfigInfo().Property
	}
	add := func(key int32, id, value string) types.VAppPropertySpec {
		return types.VAppPropertySpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: "add"},
			Info: &types.VAppPropertyInfo{Key: key, Id: id, Value: value, Type: "string"}}
	}
	if props := reconfigure(add(0, "one", "1"), add(1, "two", "2")); len(props) != 2 || props[1].Value != "2" {
		t.Fatalf("after adding two: %+v", props)
	}
	edit := types.VAppPropertySpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: "edit"},
		Info: &types.VAppPropertyInfo{Key: 1, Id: "two", Value: "3", Type: "string"}}
	remove := types.VAppPropertySpec{ArrayUpdateSpec: types.ArrayUpdateSpec{Operation: "remove", RemoveKey: int32(0)}}
	props := reconfigure(edit, remove)
	if len(props) != 1 || props[0].Id != "two" || props[0].Value != "3" {
		t.Fatalf("after editing one and removing the other: %+v", props)
	}
}

// A VM named with '/', '\' and '%' and only a datastore as its path is created, its files under the escaped name.
func TestCreateVMWithSpecialCharacters(t *testing.T) {
	tl, c, folders := startLabFolders(t)
	ctx := context.Background()
	pool, store := placementOf(t, c, tl.vms[0])
	spec := types.VirtualMachineConfigSpec{Name: `test_vm\/%`, GuestId: "otherLinux64Guest", NumCPUs: 1,
		MemoryMB: 128, Files: &types.VirtualMachineFileInfo{VmPathName: "[" + store + "]"}}
	task, err := folders.VmFolder.CreateVM(ctx, spec, pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := task.WaitForResult(ctx, nil)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	var created mo.VirtualMachine
	if err := c.RetrieveOne(ctx, info.Result.(types.ManagedObjectReference), []string{"name", "config.files"},
		&created); err != nil {
		t.Fatal(err)
	}
	want := "[" + store + "] test_vm%5c%2f%25/test_vm%5c%2f%25.vmx"
	if created.Name != `test_vm%5c%2f%25` || created.Config.Files.VmPathName != want {
		t.Fatalf("name %q, files %q; want %q", created.Name, created.Config.Files.VmPathName, want)
	}
}

// placementOf returns the resource pool and datastore name of a VM, where a test creates its own VMs.
func placementOf(t *testing.T, c *govmomi.Client, ref types.ManagedObjectReference) (*object.ResourcePool, string) {
	t.Helper()
	ctx := context.Background()
	var existing mo.VirtualMachine
	if err := c.RetrieveOne(ctx, ref, []string{"resourcePool", "datastore"}, &existing); err != nil {
		t.Fatal(err)
	}
	var store mo.Datastore
	if err := c.RetrieveOne(ctx, existing.Datastore[0], []string{"name"}, &store); err != nil {
		t.Fatal(err)
	}
	return object.NewResourcePool(c.Client, *existing.ResourcePool), store.Name
}
