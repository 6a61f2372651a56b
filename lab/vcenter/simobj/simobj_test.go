package simobj

import (
	"testing"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

func TestEntityAndAncestor(t *testing.T) {
	labtest.Simulator(t)
	cluster := simulator.Map.Any("ClusterComputeResource").(*simulator.ClusterComputeResource)
	host := cluster.Host[0]
	if e := Entity(host); e == nil || e.Entity().Self != host {
		t.Fatalf("Entity(%v): %v", host, e)
	}
	if got, ok := Ancestor(host, "ClusterComputeResource"); !ok || got != cluster.Self {
		t.Errorf("the cluster of %v: %v %v", host, got, ok)
	}
	dc := simulator.Map.Any("Datacenter").Reference()
	if got, ok := Ancestor(host, "Datacenter"); !ok || got != dc {
		t.Errorf("the datacenter of %v: %v %v, want %v", host, got, ok, dc)
	}
	if _, ok := Ancestor(dc, "ClusterComputeResource"); ok {
		t.Error("a datacenter is in a cluster")
	}
	missing := types.ManagedObjectReference{Type: "HostSystem", Value: "host-999"}
	if Entity(missing) != nil {
		t.Errorf("Entity(%v) is not nil", missing)
	}
	if _, ok := Ancestor(missing, "Datacenter"); ok {
		t.Errorf("%v has a datacenter", missing)
	}
}
