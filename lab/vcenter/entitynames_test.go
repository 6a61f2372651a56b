package main

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// Entities created or renamed through the API keep their names with /, \ and % escaped, as vCenter stores them.
func TestEntityNamesEscaped(t *testing.T) {
	_, c, folders := startLabFolders(t)
	ctx := context.Background()
	created, err := folders.VmFolder.CreateFolder(ctx, "team/a 100%")
	if err != nil {
		t.Fatal(err)
	}
	name := func() string {
		var folder mo.Folder
		if err := c.RetrieveOne(ctx, created.Reference(), []string{"name"}, &folder); err != nil {
			t.Fatal(err)
		}
		return folder.Name
	}
	if got := name(); got != "team%2fa 100%25" {
		t.Errorf("created folder's name %q, want team%%2fa 100%%25", got)
	}
	task, err := created.Rename(ctx, `team\b`)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if got := name(); got != "team%5cb" {
		t.Errorf("renamed folder's name %q, want team%%5cb", got)
	}

	dvs := labtest.CreateDVS(t, c, folders, types.DVSConfigSpec{Name: "dvs-names"})
	add, err := dvs.AddPortgroup(ctx, []types.DVPortgroupConfigSpec{{Name: `pg\/%`, NumPorts: 8,
		Type: "earlyBinding"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := add.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	var sw mo.DistributedVirtualSwitch
	if err := c.RetrieveOne(ctx, dvs.Reference(), []string{"portgroup"}, &sw); err != nil {
		t.Fatal(err)
	}
	var pgs []mo.DistributedVirtualPortgroup
	if err := c.Retrieve(ctx, sw.Portgroup, []string{"name"}, &pgs); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, pg := range pgs {
		names[pg.Name] = true
	}
	if !names["pg%5c%2f%25"] {
		t.Errorf("port group names %v, want pg%%5c%%2f%%25 (a network's own name field escaped too)", names)
	}
}
