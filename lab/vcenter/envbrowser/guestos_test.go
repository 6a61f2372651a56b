package envbrowser

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"
)

// Every guest OS descriptor of QueryConfigOptionEx carries vSphere's required properties, filtered by guest id.
func TestGuestOSDescriptorsAreComplete(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.c
	query := func(ids ...string) []types.GuestOsDescriptor {
		res, err := methods.QueryConfigOptionEx(ctx, c.Client, &types.QueryConfigOptionEx{
			This: tl.clusterBrowser, Spec: &types.EnvironmentBrowserConfigOptionQuerySpec{GuestId: ids}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Returnval.GuestOSDescriptor
	}
	ubuntu := query("ubuntu64Guest")
	if len(ubuntu) != 1 {
		t.Fatalf("filtered to ubuntu64Guest: %d descriptors", len(ubuntu))
	}
	d := ubuntu[0]
	if d.FullName != "Ubuntu Linux (64-bit)" || d.RecommendedDiskController != "ParaVirtualSCSIController" ||
		d.RecommendedEthernetCard != "VirtualVmxnet3" || d.SupportedMaxCPUs != 768 || d.VRAMSizeInKB == nil ||
		d.SupportsMemoryHotAdd == nil || d.SupportedForCreate == nil {
		t.Errorf("ubuntu64Guest descriptor: %+v", d)
	}
	for _, d := range query() {
		if d.FullName == "" || len(d.SupportedEthernetCard) == 0 || d.RecommendedDiskController == "" {
			t.Errorf("%s lacks required properties", d.Id)
		}
	}
}
