package clusters

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// GetResourceUsage sums CPU and memory capacity and use over the cluster's connected hosts, and storage over the
// datastores its hosts mount (each once, a disconnected host's too).
func TestClusterResourceUsage(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	cluster := simulator.Map.Get(tl.cluster).(*simulator.ClusterComputeResource)
	if len(cluster.Host) != 2 {
		t.Fatalf("cluster with %d hosts, want 2", len(cluster.Host))
	}
	datastores := map[types.ManagedObjectReference]bool{}
	for i, ref := range cluster.Host {
		host := simulator.Map.Get(ref).(*simulator.HostSystem)
		host.Summary.Hardware = &types.HostHardwareSummary{CpuMhz: 2000, NumCpuCores: int16(8 * (i + 1)),
			MemorySize: int64(64*(i+1)) << 30}
		host.Summary.QuickStats.OverallCpuUsage, host.Summary.QuickStats.OverallMemoryUsage = int32(1000*(i+1)), int32(4096*(i+1))
		for _, ds := range host.Datastore {
			datastores[ds] = true
		}
	}
	if len(datastores) == 0 {
		t.Fatal("the cluster's hosts mount no datastore")
	}
	for ref := range datastores {
		ds := simulator.Map.Get(ref).(*simulator.Datastore)
		ds.Summary.Capacity, ds.Summary.FreeSpace = 100<<30, 40<<30
	}
	usage := func() types.ClusterResourceUsageSummary {
		t.Helper()
		res, err := methods.GetResourceUsage(ctx, tl.c, &types.GetResourceUsage{This: tl.cluster})
		if err != nil {
			t.Fatal(err)
		}
		return res.Returnval
	}
	storage, storageUsed := int64(len(datastores))*100<<10, int64(len(datastores))*60<<10
	want := types.ClusterResourceUsageSummary{CpuUsedMHz: 3000, CpuCapacityMHz: 2000 * 24, MemUsedMB: 12288,
		MemCapacityMB: 192 << 10, StorageUsedMB: storageUsed, StorageCapacityMB: storage}
	if got := usage(); got != want {
		t.Errorf("usage of two hosts: %+v, want %+v", got, want)
	}

	simulator.Map.Get(cluster.Host[1]).(*simulator.HostSystem).Runtime.ConnectionState = types.HostSystemConnectionStateDisconnected
	want = types.ClusterResourceUsageSummary{CpuUsedMHz: 1000, CpuCapacityMHz: 2000 * 8, MemUsedMB: 4096,
		MemCapacityMB: 64 << 10, StorageUsedMB: storageUsed, StorageCapacityMB: storage}
	if got := usage(); got != want {
		t.Errorf("usage with the second host disconnected: %+v, want %+v", got, want)
	}

	gone := types.ManagedObjectReference{Type: "ClusterComputeResource", Value: "domain-c404"}
	if _, err := methods.GetResourceUsage(ctx, tl.c, &types.GetResourceUsage{This: gone}); !labtest.IsFault(err, "ManagedObjectNotFound") {
		t.Errorf("an unknown cluster: %v, want ManagedObjectNotFound", err)
	}
}
