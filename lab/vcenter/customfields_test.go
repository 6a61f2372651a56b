package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

func TestCustomFieldsTakeOnceAndSetFieldReplaces(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c, err := tl.connect(t, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	m, err := object.GetCustomFieldsManager(c.Client)
	if err != nil {
		t.Fatal(err)
	}
	cluster := tl.clusters[0]
	def, err := m.Add(ctx, "gpuops.vgpu.lock."+cluster.Value, "ClusterComputeResource", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(ctx, "gpuops.vgpu.lock."+cluster.Value, "ClusterComputeResource", nil, nil); err == nil {
		t.Fatal("a second AddCustomFieldDef of the same name succeeded")
	} else if _, ok := soap.ToSoapFault(err).VimFault().(types.DuplicateName); !ok {
		t.Fatalf("want DuplicateName, got %v", err)
	}
	for _, value := range []string{"first", "second"} {
		if err := m.Set(ctx, cluster, def.Key, value); err != nil {
			t.Fatal(err)
		}
	}
	got := tl.state(t).Clusters[0].CustomValues
	if len(got) != 1 || got["gpuops.vgpu.lock."+cluster.Value] != "second" {
		t.Fatalf("custom values after two SetField: %v", got)
	}
	if err := m.Set(ctx, cluster, def.Key+100, "x"); err == nil {
		t.Fatal("SetField of an unknown key succeeded")
	}
	if err := m.Remove(ctx, def.Key); err != nil {
		t.Fatal(err)
	}
	if got := tl.state(t).Clusters[0].CustomValues; len(got) != 0 {
		t.Fatalf("custom values after RemoveCustomFieldDef: %v", got)
	}
}
