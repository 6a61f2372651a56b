package main

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// The lab serves Folder.UnregisterAndDestroy_Task through package folders (the rules are its tests'): only with a
// session, reading the power state of the lab's own VMs, and the VMs it unregisters leave the lab's state.
func TestFolderUnregisterAndDestroyWiring(t *testing.T) {
	tl, c, folders := startLabFolders(t)
	ctx := context.Background()
	outer, err := folders.VmFolder.CreateFolder(ctx, "outer")
	if err != nil {
		t.Fatal(err)
	}
	vm3, err := find.NewFinder(c.Client, false).SetDatacenter(object.NewDatacenter(c.Client, tl.datacenters[0])).
		VirtualMachine(ctx, "vm-3") // powered on
	if err != nil {
		t.Fatal(err)
	}
	task, err := outer.MoveInto(ctx, []types.ManagedObjectReference{vm3.Reference()})
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	call := func() error {
		res, err := methods.UnregisterAndDestroy_Task(ctx, c.Client,
			&types.UnregisterAndDestroy_Task{This: outer.Reference()})
		if err != nil {
			return err
		}
		return object.NewTask(c.Client, res.Returnval).Wait(ctx)
	}

	anonymous, err := vim25.NewClient(ctx, soap.NewClient(tl.sdk, true))
	if err != nil {
		t.Fatal(err)
	}
	_, err = methods.UnregisterAndDestroy_Task(ctx, anonymous, &types.UnregisterAndDestroy_Task{This: outer.Reference()})
	if !soap.IsSoapFault(err) {
		t.Errorf("without a session: got %v, want a NotAuthenticated fault", err)
	} else if _, ok := soap.ToSoapFault(err).VimFault().(types.NotAuthenticated); !ok {
		t.Errorf("without a session: got %#v, want NotAuthenticated", soap.ToSoapFault(err).VimFault())
	}
	if err := call(); err == nil || err.Error() != "The operation is not allowed in the current state." {
		t.Fatalf("with a powered-on VM below: got %v, want InvalidState with vCenter's message", err)
	}
	if got := stateVMNames(t, tl); got != "vm-1,vm-2,vm-3" {
		t.Fatalf("after the refused calls the lab has VMs %s, want all three", got)
	}
	if _, err := vm3.PowerOff(ctx); err != nil {
		t.Fatal(err)
	}
	if err := call(); err != nil {
		t.Fatalf("on a folder of a powered-off VM: %v", err)
	}
	if got := stateVMNames(t, tl); got != "vm-1,vm-2" {
		t.Errorf("after unregistering the lab has VMs %s, want vm-1,vm-2", got)
	}
}

func stateVMNames(t *testing.T, tl *testLab) string {
	t.Helper()
	var names []string
	for _, vm := range tl.state(t).VMs {
		names = append(names, vm.Name)
	}
	return strings.Join(names, ",")
}
