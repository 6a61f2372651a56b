package main

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
)

// A cluster created through the API gets a domain-c<n> id and can be destroyed while empty; a cluster with hosts
// is refused with ResourceInUse and stays.
func TestClusterCreateAndDestroy(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.client(t)
	dc := object.NewDatacenter(c.Client, tl.datacenters[0])
	folders, err := dc.Folders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	created, err := folders.HostFolder.CreateCluster(ctx, "scratch", types.ClusterConfigSpecEx{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.Reference().Value, "domain-c") {
		t.Errorf("new cluster id %s, want domain-c<n>", created.Reference().Value)
	}
	finder := find.NewFinder(c.Client, false).SetDatacenter(dc)
	if found, err := finder.ClusterComputeResource(ctx, "scratch"); err != nil || found.Reference() != created.Reference() {
		t.Fatalf("finding the new cluster: %v, %v", found, err)
	}
	task, err := created.Destroy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatalf("destroying an empty cluster: %v", err)
	}
	if _, err := finder.ClusterComputeResource(ctx, "scratch"); err == nil {
		t.Error("the destroyed cluster is still in the inventory")
	}

	task, err = object.NewClusterComputeResource(c.Client, tl.clusters[0]).Destroy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("destroying a cluster with hosts: got %v, want ResourceInUse", err)
	}
	if len(tl.state(t).Clusters) != 1 {
		t.Errorf("the cluster with hosts is gone")
	}
}
