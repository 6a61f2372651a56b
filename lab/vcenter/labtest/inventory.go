package labtest

import (
	"context"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"
)

// CreateDVS creates a distributed switch in the network folder.
func CreateDVS(t *testing.T, c *govmomi.Client, folders *object.DatacenterFolders,
	spec types.DVSConfigSpec) *object.DistributedVirtualSwitch {
	t.Helper()
	ctx := context.Background()
	task, err := folders.NetworkFolder.CreateDVS(ctx, types.DVSCreateSpec{ConfigSpec: &types.VMwareDVSConfigSpec{
		DVSConfigSpec: spec}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := task.WaitForResult(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return object.NewDistributedVirtualSwitch(c.Client, info.Result.(types.ManagedObjectReference))
}
