package clusters

import (
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// testLab is govmomi's own simulator (its VPX model, one cluster of two hosts with two VMs) as the clusters see a
// lab (labtest.Hooked): the clusters' task hook and their new cluster defaults run as the lab runs them.
type testLab struct {
	labtest.Hooked
	clusters  *Clusters
	destroyed []types.ManagedObjectReference
	c         *govmomi.Client
	cluster   types.ManagedObjectReference
	vms       []types.ManagedObjectReference // the cluster's VMs
}

func (tl *testLab) Update(obj mo.Reference, changes ...types.PropertyChange) {
	simulator.Map.Update(obj, changes)
}

func (tl *testLab) ClusterDestroyed(ref types.ManagedObjectReference) {
	tl.destroyed = append(tl.destroyed, ref)
}

func startLab(t *testing.T) *testLab {
	t.Helper()
	model := simulator.VPX()
	model.Host, model.ClusterHost, model.Machine = 0, 2, 2
	if err := model.Create(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(model.Remove)
	tl := &testLab{}
	tl.clusters = New(tl)
	cluster := simulator.Map.Any("ClusterComputeResource").(*simulator.ClusterComputeResource)
	tl.cluster = cluster.Self
	cfg := cluster.ConfigurationEx.(*types.ClusterConfigInfoEx)
	FillDefaults(cfg)
	SyncLegacyConfiguration(cluster)
	for _, e := range simulator.Map.All("VirtualMachine") {
		tl.vms = append(tl.vms, e.Reference())
	}
	tl.Hooks = map[string]labtest.TaskHook{"ClusterComputeResource.reconfigureCluster": tl.clusters.Reconfigure}
	tl.Put = func(obj mo.Reference) {
		if cluster, ok := obj.(*simulator.ClusterComputeResource); ok {
			tl.clusters.Created(cluster)
		}
	}
	tl.c = tl.Serve(t, model, RequestsRead, tl.clusters.Serve)
	return tl
}
