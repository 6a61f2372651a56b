package envbrowser

import (
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/gpu"
	"vcsim/labtest"
	"vcsim/topology"
)

// fakeLab is the lab's GPUs by host; a host it lacks is one the lab does not know.
type fakeLab map[types.ManagedObjectReference]*gpu.Host

func (f fakeLab) GPUHosts(refs []types.ManagedObjectReference) []*gpu.Host {
	var hosts []*gpu.Host
	for _, ref := range refs {
		if h := f[ref]; h != nil {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// testLab is govmomi's own simulator (labtest.Simulator: cluster DC0_C0 of two hosts, standalone host DC0_H0) with
// every compute resource's environment browser replaced by a Browser, as the lab does, and a client logged in. The
// lab knows the cluster's hosts: the first with two P40s and a T4, the second with a T4; it does not know DC0_H0.
type testLab struct {
	c                         *govmomi.Client
	cluster, standalone       types.ManagedObjectReference // the compute resources
	clusterHosts              []types.ManagedObjectReference
	standaloneHost            types.ManagedObjectReference
	clusterBrowser, saBrowser types.ManagedObjectReference
}

func startLab(t *testing.T) *testLab {
	t.Helper()
	model := labtest.Simulator(t)
	models := labtest.Catalog(t)
	tl := &testLab{}
	lab := fakeLab{}
	for _, e := range simulator.Map.All("ClusterComputeResource") {
		cr := e.(*simulator.ClusterComputeResource)
		tl.cluster, tl.clusterHosts, tl.clusterBrowser = cr.Self, cr.Host, *cr.EnvironmentBrowser
		for i, gpus := range [][]*topology.GPUSpec{{{Model: "P40", Count: 2}, {Model: "T4", Count: 1}},
			{{Model: "T4", Count: 1}}} {
			lab[cr.Host[i]] = gpu.NewHost(nil, cr.Host[i], cr.Name, gpus, models)
		}
	}
	for _, e := range simulator.Map.All("ComputeResource") {
		cr := e.(*mo.ComputeResource)
		tl.standalone, tl.standaloneHost, tl.saBrowser = cr.Self, cr.Host[0], *cr.EnvironmentBrowser
	}
	for ref, owner := range map[types.ManagedObjectReference]types.ManagedObjectReference{
		tl.clusterBrowser: tl.cluster, tl.saBrowser: tl.standalone} {
		simulator.Map.Put(New(simulator.Map.Get(ref).(*simulator.EnvironmentBrowser), lab, owner))
	}
	tl.c = labtest.Serve(t, model, nil)
	return tl
}
