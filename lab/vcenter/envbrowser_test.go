package main

import (
	"context"
	"reflect"
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"
)

// Every compute resource's environment browser is package envbrowser's over the lab's hosts: the cluster's config
// target lists a host's vGPU profiles as the lab has them, the standalone host's compute resource offers vmx-21.
func TestEnvironmentBrowsersAreTheLabs(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.client(t)
	t4 := tl.hosts[1]
	cr, _, _ := computeResource(tl.hostObject(t4.Ref))
	target, err := methods.QueryConfigTarget(ctx, c.Client, &types.QueryConfigTarget{This: *environmentBrowserOf(cr),
		Host: &t4.Ref})
	if err != nil {
		t.Fatal(err)
	}
	var profiles []string
	for _, p := range target.Returnval.SharedGpuPassthroughTypes {
		profiles = append(profiles, p.Vgpu)
	}
	if !reflect.DeepEqual(profiles, t4.Profiles) || len(profiles) == 0 {
		t.Errorf("%s: profiles %v, want %v", t4.Name, profiles, t4.Profiles)
	}

	standalone, _, _ := computeResource(tl.hostObject(tl.hosts[2].Ref))
	versions, err := methods.QueryConfigOptionDescriptor(ctx, c.Client, &types.QueryConfigOptionDescriptor{
		This: *environmentBrowserOf(standalone)})
	if err != nil {
		t.Fatal(err)
	}
	if last := versions.Returnval[len(versions.Returnval)-1]; standalone.Type != "ComputeResource" ||
		last.Key != "vmx-21" || !*last.DefaultConfigOption {
		t.Errorf("%s of %s: %+v", tl.hosts[2].Name, standalone, versions.Returnval)
	}
}
