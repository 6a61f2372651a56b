package vcmanagers

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// A custom field's name is taken once (AddCustomFieldDef, the simulator's), SetField replaces an entity's value for
// the field instead of adding a second one, and refuses an unknown field or entity with vCenter's faults.
func TestCustomFieldsTakeOnceAndSetFieldReplaces(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	m, err := object.GetCustomFieldsManager(tl.c.Client)
	if err != nil {
		t.Fatal(err)
	}
	cluster, vm := tl.clusters[0], tl.vms[0]
	def, err := m.Add(ctx, "gpuops.vgpu.lock."+cluster.Value, "ClusterComputeResource", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(ctx, "gpuops.vgpu.lock."+cluster.Value, "ClusterComputeResource", nil, nil); err == nil {
		t.Fatal("a second AddCustomFieldDef of the same name succeeded")
	} else if _, ok := soap.ToSoapFault(err).VimFault().(types.DuplicateName); !ok {
		t.Fatalf("want DuplicateName, got %v", err)
	}
	other, err := m.Add(ctx, "owner", "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, value := range []string{"first", "second"} {
		if err := m.Set(ctx, cluster, def.Key, value); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Set(ctx, vm, other.Key, "lab"); err != nil {
		t.Fatal(err)
	}
	var e mo.ManagedEntity
	if err := tl.c.RetrieveOne(ctx, cluster, []string{"customValue", "value"}, &e); err != nil {
		t.Fatal(err)
	}
	for _, values := range [][]types.BaseCustomFieldValue{e.CustomValue, e.Value} {
		if len(values) != 1 || values[0].(*types.CustomFieldStringValue).Value != "second" {
			t.Fatalf("the cluster's values after two SetField: %v", values)
		}
	}
	got := customValues(cluster)
	if len(got) != 1 || got["gpuops.vgpu.lock."+cluster.Value] != "second" {
		t.Fatalf("custom values after two SetField: %v", got)
	}
	if got := customValues(vm); len(got) != 1 || got["owner"] != "lab" {
		t.Fatalf("the VM's custom values: %v", got)
	}
	if err := m.Set(ctx, cluster, def.Key+100, "x"); !labtest.IsFault(err, "InvalidArgument") {
		t.Fatalf("SetField of an unknown key: want InvalidArgument, got %v", err)
	}
	gone := types.ManagedObjectReference{Type: "VirtualMachine", Value: "vm-404"}
	if err := m.Set(ctx, gone, def.Key, "x"); !labtest.IsFault(err, "ManagedObjectNotFound") {
		t.Fatalf("SetField on a missing entity: want ManagedObjectNotFound, got %v", err)
	}
	if err := m.Remove(ctx, def.Key); err != nil {
		t.Fatal(err)
	}
	if got := customValues(cluster); len(got) != 0 {
		t.Fatalf("custom values after RemoveCustomFieldDef: %v", got)
	}
}
