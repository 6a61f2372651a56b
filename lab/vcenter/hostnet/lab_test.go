package hostnet

import (
	"context"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// testLab is govmomi's own simulator (labtest.Simulator: a cluster of two hosts and a standalone host) with each
// host's network system and VMkernel NIC manager as the lab attaches them, and a client logged in.
type testLab struct {
	c     *govmomi.Client
	hosts []types.ManagedObjectReference // the cluster's hosts, then the standalone one
}

func startLab(t *testing.T) *testLab {
	t.Helper()
	model := labtest.Simulator(t)
	tl := &testLab{}
	cluster := simulator.Map.Any("ClusterComputeResource").(*simulator.ClusterComputeResource)
	tl.hosts = append(tl.hosts, cluster.Host...)
	for _, e := range simulator.Map.All("HostSystem") {
		if simulator.FindReference(tl.hosts, e.Reference()) == nil {
			tl.hosts = append(tl.hosts, e.Reference())
		}
	}
	for _, ref := range tl.hosts {
		host := simulator.Map.Get(ref).(*simulator.HostSystem)
		if network := NewNetworkSystem(host); network != nil {
			simulator.Map.Put(network)
		}
		vnics := NewVirtualNicManager(host)
		simulator.Map.Put(vnics)
		vnicsRef := vnics.Self
		host.ConfigManager.VirtualNicManager = &vnicsRef
	}
	tl.c = labtest.Serve(t, model, nil)
	return tl
}

// hostManager is the manager of the first host at a configManager path.
func (tl *testLab) hostManager(t *testing.T, path string) types.ManagedObjectReference {
	t.Helper()
	var content []types.ObjectContent
	if err := tl.c.PropertyCollector().Retrieve(context.Background(), tl.hosts[:1], []string{path},
		&content); err != nil {
		t.Fatal(err)
	}
	if len(content) != 1 || len(content[0].PropSet) != 1 {
		t.Fatalf("the host has no %s", path)
	}
	ref, ok := content[0].PropSet[0].Val.(types.ManagedObjectReference)
	if !ok {
		t.Fatalf("%s is a %T", path, content[0].PropSet[0].Val)
	}
	return ref
}
