package clusters

import (
	"context"
	"strings"
	"testing"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// A cluster created through the API gets vCenter's defaults and the DRS of its spec, and can be destroyed while
// empty (the lab is told); a cluster with hosts is refused with ResourceInUse.
func TestClusterCreateAndDestroy(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	dc, err := object.NewSearchIndex(tl.c.Client).FindByInventoryPath(ctx, "/DC0")
	if err != nil || dc == nil {
		t.Fatalf("datacenter DC0: %v", err)
	}
	folders, err := dc.(*object.Datacenter).Folders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	created, err := folders.HostFolder.CreateCluster(ctx, "scratch", types.ClusterConfigSpecEx{
		DrsConfig: &types.ClusterDrsConfigInfo{Enabled: types.NewBool(true)}})
	if err != nil {
		t.Fatal(err)
	}
	var cr mo.ClusterComputeResource
	if err := created.Properties(ctx, created.Reference(), []string{"configurationEx"}, &cr); err != nil {
		t.Fatal(err)
	}
	cfg := cr.ConfigurationEx.(*types.ClusterConfigInfoEx)
	if cfg.VsanConfigInfo == nil || isTrue(cfg.VsanConfigInfo.Enabled) || !isTrue(cfg.DrsConfig.Enabled) {
		t.Errorf("new cluster: vSAN %+v, DRS %+v; want vSAN off and DRS on", cfg.VsanConfigInfo, cfg.DrsConfig)
	}
	task, err := created.Destroy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err != nil {
		t.Fatalf("destroying an empty cluster: %v", err)
	}
	if len(tl.destroyed) != 1 || tl.destroyed[0] != created.Reference() {
		t.Errorf("the lab was told of %v, want %v", tl.destroyed, created.Reference())
	}
	task, err = object.NewClusterComputeResource(tl.c.Client, tl.cluster).Destroy(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Wait(ctx); err == nil || !strings.Contains(err.Error(), "is in use") {
		t.Errorf("destroying a cluster with hosts: got %v, want ResourceInUse", err)
	}
}
