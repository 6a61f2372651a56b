package main

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vimfault"
)

// clusterLab is the lab as package clusters sees it (clusters.Lab).
type clusterLab struct{ labView }

func (c clusterLab) Inflight() interface{} { return c.l.inflight }

func (c clusterLab) SetInflight(req interface{}) { c.l.inflight = req }

func (c clusterLab) TaskFailed(t *simulator.Task, f *vimfault.Fault) (types.AnyType, types.BaseMethodFault) {
	return c.l.taskResult(t, nil, f)
}

func (c clusterLab) ClusterDestroyed(ref types.ManagedObjectReference) {
	kept := c.l.clusters[:0]
	for _, cluster := range c.l.clusters {
		if cluster != ref {
			kept = append(kept, cluster)
		}
	}
	c.l.clusters = kept
}
