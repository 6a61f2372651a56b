package envbrowser

import (
	"context"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"
)

// A compute resource's environment browser lists the hardware versions of ESXi 8.0 U2, vmx-21 the default.
func TestHardwareVersionDescriptors(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	res, err := methods.QueryConfigOptionDescriptor(ctx, tl.c.Client, &types.QueryConfigOptionDescriptor{
		This: tl.clusterBrowser})
	if err != nil {
		t.Fatal(err)
	}
	var keys, defaults []string
	for _, d := range res.Returnval {
		keys = append(keys, d.Key)
		if d.DefaultConfigOption != nil && *d.DefaultConfigOption {
			defaults = append(defaults, d.Key)
		}
		if len(d.Host) != len(tl.clusterHosts) {
			t.Errorf("%s: hosts %v, want the cluster's %v", d.Key, d.Host, tl.clusterHosts)
		}
	}
	if len(keys) != len(esxiHardwareVersions) || keys[len(keys)-1] != "vmx-21" || len(defaults) != 1 ||
		defaults[0] != "vmx-21" {
		t.Errorf("descriptors %v, defaults %v: want vmx-04 to vmx-21, vmx-21 the default", keys, defaults)
	}
}
