package labtest

import (
	"context"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// HostLab is Simulator's model with what a package's lab attaches to each host, served to a client logged in.
type HostLab struct {
	Client *govmomi.Client
	Hosts  []types.ManagedObjectReference // in Hosts's order
}

// StartHosts serves Simulator's model for one test after attach has been called with each host (Hosts).
func StartHosts(t *testing.T, attach func(host *simulator.HostSystem)) *HostLab {
	t.Helper()
	model := Simulator(t)
	hosts := Hosts(attach)
	return &HostLab{Client: Serve(t, model, nil), Hosts: hosts}
}

// Hosts calls attach with each host of Simulator's model, for what a package's lab attaches to a host (its
// configuration managers, its service system), and answers the hosts in that order: the cluster's, then the
// standalone one.
func Hosts(attach func(host *simulator.HostSystem)) []types.ManagedObjectReference {
	cluster := simulator.Map.Any("ClusterComputeResource").(*simulator.ClusterComputeResource)
	hosts := append([]types.ManagedObjectReference(nil), cluster.Host...)
	for _, e := range simulator.Map.All("HostSystem") {
		if simulator.FindReference(hosts, e.Reference()) == nil {
			hosts = append(hosts, e.Reference())
		}
	}
	for _, ref := range hosts {
		attach(simulator.Map.Get(ref).(*simulator.HostSystem))
	}
	return hosts
}

// HostManager is the reference a host holds at a configManager path (configManager.networkSystem, ...).
func HostManager(t *testing.T, c *govmomi.Client, host types.ManagedObjectReference,
	path string) types.ManagedObjectReference {
	t.Helper()
	var content []types.ObjectContent
	if err := c.PropertyCollector().Retrieve(context.Background(), []types.ManagedObjectReference{host},
		[]string{path}, &content); err != nil {
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
