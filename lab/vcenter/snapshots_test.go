package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// Snapshots of a lab VM: created, listed in vm.snapshot, reverted to and removed, and the VM stays the lab's.
func TestSnapshots(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.client(t)
	vm := object.NewVirtualMachine(c.Client, tl.vms[0])
	for _, name := range []string{"before-driver", "after-driver"} {
		task, err := vm.CreateSnapshot(ctx, name, "", false, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := task.Wait(ctx); err != nil {
			t.Fatalf("snapshot %s: %v", name, err)
		}
	}
	var got mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"snapshot"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Snapshot == nil || len(got.Snapshot.RootSnapshotList) != 1 ||
		got.Snapshot.RootSnapshotList[0].Name != "before-driver" ||
		len(got.Snapshot.RootSnapshotList[0].ChildSnapshotList) != 1 {
		t.Fatalf("vm.snapshot: %+v", got.Snapshot)
	}
	task, err := vm.RevertToSnapshot(ctx, "before-driver", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatalf("revert: %v", err)
	}
	consolidate := true
	task, err = vm.RemoveAllSnapshot(ctx, &consolidate)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatalf("remove all: %v", err)
	}
	if err := vm.Properties(ctx, vm.Reference(), []string{"snapshot"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Snapshot != nil && len(got.Snapshot.RootSnapshotList) != 0 {
		t.Errorf("snapshots left after RemoveAllSnapshots: %+v", got.Snapshot)
	}
	if _, ok := simulator.Map.Get(vm.Reference()).(*labVM); !ok {
		t.Errorf("the VM is no longer the lab's after snapshot calls")
	}
}

// RenameSnapshot changes a snapshot's name and description in the VM's snapshot tree; with neither it is refused.
func TestRenameSnapshot(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.client(t)
	vm := object.NewVirtualMachine(c.Client, tl.vms[0])
	task, err := vm.CreateSnapshot(ctx, "before-driver", "", false, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	var got mo.VirtualMachine
	if err := vm.Properties(ctx, vm.Reference(), []string{"snapshot"}, &got); err != nil {
		t.Fatal(err)
	}
	ref := got.Snapshot.RootSnapshotList[0].Snapshot
	if _, err := methods.RenameSnapshot(ctx, c.Client, &types.RenameSnapshot{This: ref, Name: "golden",
		Description: "driver 525"}); err != nil {
		t.Fatal(err)
	}
	if _, err := methods.RenameSnapshot(ctx, c.Client, &types.RenameSnapshot{This: ref}); err == nil {
		t.Error("a rename with neither name nor description was taken")
	}
	if err := vm.Properties(ctx, vm.Reference(), []string{"snapshot"}, &got); err != nil {
		t.Fatal(err)
	}
	if node := got.Snapshot.RootSnapshotList[0]; node.Name != "golden" || node.Description != "driver 525" {
		t.Errorf("after the rename: %q, %q", node.Name, node.Description)
	}
	removed, err := methods.RemoveSnapshot_Task(ctx, c.Client, &types.RemoveSnapshot_Task{This: ref})
	if err != nil {
		t.Fatal(err)
	}
	var removal mo.Task
	if err := c.RetrieveOne(ctx, removed.Returnval, []string{"info"}, &removal); err != nil {
		t.Fatal(err)
	}
	if removal.Info.Entity == nil || *removal.Info.Entity != vm.Reference() {
		t.Errorf("the removal task's entity is %v, want the VM %v", removal.Info.Entity, vm.Reference())
	}
}
