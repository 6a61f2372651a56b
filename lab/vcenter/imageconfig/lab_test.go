package imageconfig

import (
	"context"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/bundle"
	"vcsim/labtest"
	"vcsim/vlcm"
)

// testLab is govmomi's own simulator (labtest.Simulator: a cluster of two hosts and a standalone host) with an
// image configuration manager on each host, as the lab attaches them, over vLCM's record as plain values.
type testLab struct {
	c     *govmomi.Client
	hosts []types.ManagedObjectReference
	vlcm  *recordedVLCM
}

// recordedVLCM answers Lab from plain values: what each host runs, the base images and components vLCM knows.
type recordedVLCM struct {
	installed  map[types.ManagedObjectReference]map[string]string
	baseImages []vlcm.BaseImage
	components []bundle.Component
}

func (v *recordedVLCM) Installed(host types.ManagedObjectReference) map[string]string {
	return v.installed[host]
}

func (v *recordedVLCM) BaseImage(version string) *vlcm.BaseImage {
	for i := range v.baseImages {
		if v.baseImages[i].Version == version {
			return &v.baseImages[i]
		}
	}
	return nil
}

func (v *recordedVLCM) Component(name, version string) *bundle.Component {
	for i := range v.components {
		if v.components[i].Name == name && v.components[i].Version == version {
			return &v.components[i]
		}
	}
	return nil
}

func startLab(t *testing.T) *testLab {
	t.Helper()
	model := labtest.Simulator(t)
	tl := &testLab{vlcm: &recordedVLCM{installed: map[types.ManagedObjectReference]map[string]string{}}}
	for _, e := range simulator.Map.All("HostSystem") {
		host := e.(*simulator.HostSystem)
		tl.hosts = append(tl.hosts, host.Self)
		m := New(host.Self, tl.vlcm)
		simulator.Map.Put(m)
		ref := m.Self
		host.ConfigManager.ImageConfigManager = &ref
	}
	tl.c = labtest.Serve(t, model, nil)
	return tl
}

// manager is the image configuration manager a host's configManager names.
func (tl *testLab) manager(t *testing.T, host types.ManagedObjectReference) types.ManagedObjectReference {
	t.Helper()
	var content []types.ObjectContent
	if err := tl.c.PropertyCollector().Retrieve(context.Background(), []types.ManagedObjectReference{host},
		[]string{"configManager.imageConfigManager"}, &content); err != nil {
		t.Fatal(err)
	}
	if len(content) != 1 || len(content[0].PropSet) != 1 {
		t.Fatalf("host %s: no image configuration manager: %+v", host.Value, content)
	}
	return content[0].PropSet[0].Val.(types.ManagedObjectReference)
}
