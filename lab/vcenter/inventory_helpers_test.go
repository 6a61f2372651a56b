package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// startLabFolders starts a lab of the test topology and logs in; it answers the first datacenter's folders.
func startLabFolders(t *testing.T) (*testLab, *govmomi.Client, *object.DatacenterFolders) {
	t.Helper()
	tl := startLab(t)
	c := tl.client(t)
	folders, err := object.NewDatacenter(c.Client, tl.datacenters[0]).Folders(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tl, c, folders
}

// startLabHostManager starts a lab of the test topology, logs in and answers the first host's manager at path
// (configManager.networkSystem, ...).
func startLabHostManager(t *testing.T, path string) (*testLab, *govmomi.Client, types.ManagedObjectReference) {
	t.Helper()
	tl := startLab(t)
	c := tl.client(t)
	return tl, c, labtest.HostManager(t, c, tl.hosts[0].Ref, path)
}
