package main

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labapi"
)

func unregisterAndDestroy(ctx context.Context, t *testing.T, c *object.Folder) error {
	t.Helper()
	res, err := methods.UnregisterAndDestroy_Task(ctx, c.Client(), &types.UnregisterAndDestroy_Task{This: c.Reference()})
	if err != nil {
		return err
	}
	return object.NewTask(c.Client(), res.Returnval).Wait(ctx)
}

func stateVMNames(state labapi.State) string {
	var names []string
	for _, vm := range state.VMs {
		names = append(names, vm.Name)
	}
	return strings.Join(names, ",")
}

// UnregisterAndDestroy_Task on a VM folder takes its VMs out of the inventory and removes it with its subfolders;
// a powered-on VM below it, a host folder and a datacenter's own VM folder are refused and nothing changes.
func TestFolderUnregisterAndDestroy(t *testing.T) {
	tl, c, folders := startLabFolders(t)
	ctx := context.Background()
	dc := object.NewDatacenter(c.Client, tl.datacenters[0])
	outer, err := folders.VmFolder.CreateFolder(ctx, "outer")
	if err != nil {
		t.Fatal(err)
	}
	inner, err := outer.CreateFolder(ctx, "inner")
	if err != nil {
		t.Fatal(err)
	}
	finder := find.NewFinder(c.Client, false).SetDatacenter(dc)
	vm1, err := finder.VirtualMachine(ctx, "vm-1")
	if err != nil {
		t.Fatal(err)
	}
	vm3, err := finder.VirtualMachine(ctx, "vm-3") // powered on
	if err != nil {
		t.Fatal(err)
	}
	for _, move := range []struct {
		folder *object.Folder
		vm     *object.VirtualMachine
	}{{inner, vm1}, {outer, vm3}} {
		task, err := move.folder.MoveInto(ctx, []types.ManagedObjectReference{move.vm.Reference()})
		if err != nil {
			t.Fatal(err)
		}
		if err := task.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}

	if err := unregisterAndDestroy(ctx, t, outer); err == nil || !strings.Contains(err.Error(), "current state") {
		t.Fatalf("with a powered-on VM below: got %v, want InvalidState", err)
	}
	if got := stateVMNames(tl.state(t)); got != "vm-1,vm-2,vm-3" {
		t.Fatalf("after the refused call the lab has VMs %s, want all three", got)
	}
	for _, folder := range []*object.Folder{folders.HostFolder, folders.VmFolder} {
		if err := unregisterAndDestroy(ctx, t, folder); err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("on %s: got %v, want NotSupported", folder.Reference().Value, err)
		}
	}

	if _, err := vm3.PowerOff(ctx); err != nil {
		t.Fatal(err)
	}
	if err := unregisterAndDestroy(ctx, t, outer); err != nil {
		t.Fatalf("on a folder of powered-off VMs: %v", err)
	}
	if got := stateVMNames(tl.state(t)); got != "vm-2" {
		t.Errorf("after unregistering the lab has VMs %s, want vm-2", got)
	}
	for _, path := range []string{"/dc/vm/outer", "/dc/vm/outer/inner"} {
		if _, err := finder.Folder(ctx, path); err == nil {
			t.Errorf("folder %s is still in the inventory", path)
		}
	}
	var host mo.HostSystem
	if err := object.NewCommon(c.Client, tl.hosts[0].Ref).Properties(ctx, tl.hosts[0].Ref, []string{"vm"},
		&host); err != nil {
		t.Fatal(err)
	}
	for _, ref := range host.Vm {
		if ref == vm1.Reference() {
			t.Errorf("host %s still lists the unregistered VM", tl.hosts[0].Name)
		}
	}
}
