package gpu

import (
	"testing"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
	"vcsim/topology"
	"vcsim/vgputypes"
)

// recordingLab is a Lab that records what the device model publishes.
type recordingLab struct {
	published []types.ManagedObjectReference
}

func (r *recordingLab) Logf(string, ...interface{}) {}

func (r *recordingLab) VMName(ref types.ManagedObjectReference) string { return ref.Value }

func (r *recordingLab) PassthruInfo(types.ManagedObjectReference, string) *types.HostPciPassthruInfo {
	return nil
}

func (r *recordingLab) Publish(host types.ManagedObjectReference) {
	r.published = append(r.published, host)
}

// The graphics manager answers from its host's state, refuses a bad configuration without publishing, and
// publishes a stored one; it does not apply it (only Xorg does).
func TestGraphicsManager(t *testing.T) {
	lab := &recordingLab{}
	models := labtest.Catalog(t)
	h := NewHost(lab, hostRef("host-7"), "esxi-07", []*topology.GPUSpec{{Model: "P40", Count: 2}}, models)
	m := NewGraphicsManager(h)
	if m.Self.Value != "graphicsManager-host-7" || len(m.GraphicsInfo) != 2 || len(m.SharedPassthruGpuTypes) != len(h.Profiles) {
		t.Fatalf("manager %s: %d graphicsInfo, %d profiles", m.Self.Value, len(m.GraphicsInfo), len(m.SharedPassthruGpuTypes))
	}

	bad := m.UpdateGraphicsConfig(&vgputypes.UpdateGraphicsConfig{Config: vgputypes.HostGraphicsConfig{
		HostDefaultGraphicsType: "direct"}}).(*methods.UpdateGraphicsConfigBody)
	if bad.Fault_ == nil || len(lab.published) != 0 {
		t.Fatalf("a bad graphics type: fault %v, published %v", bad.Fault_, lab.published)
	}
	if _, ok := bad.Fault_.Detail.Fault.(*types.InvalidArgument); !ok {
		t.Errorf("fault %T, want InvalidArgument", bad.Fault_.Detail.Fault)
	}

	good := m.UpdateGraphicsConfig(&vgputypes.UpdateGraphicsConfig{Config: vgputypes.HostGraphicsConfig{
		HostDefaultGraphicsType: GraphicsSharedDirect}}).(*methods.UpdateGraphicsConfigBody)
	if good.Fault_ != nil || len(lab.published) != 1 || lab.published[0] != h.Ref {
		t.Fatalf("a good configuration: fault %v, published %v", good.Fault_, lab.published)
	}
	active := func() bool {
		return m.IsSharedGraphicsActive(&types.IsSharedGraphicsActive{}).(*methods.IsSharedGraphicsActiveBody).Res.Returnval
	}
	if active() {
		t.Error("shared graphics active before Xorg restarts")
	}
	h.ApplyConfig()
	if !active() {
		t.Error("shared graphics not active after Xorg restarts")
	}

	devices := m.RetrieveVgpuDeviceInfo(&vgputypes.RetrieveVgpuDeviceInfo{}).(*vgputypes.RetrieveVgpuDeviceInfoBody)
	profiles := m.RetrieveVgpuProfileInfo(&vgputypes.RetrieveVgpuProfileInfo{}).(*vgputypes.RetrieveVgpuProfileInfoBody)
	if len(devices.Res.Returnval) != 1 || len(profiles.Res.Returnval) != len(h.Profiles) {
		t.Errorf("%d devices and %d profiles, want 1 and %d", len(devices.Res.Returnval), len(profiles.Res.Returnval),
			len(h.Profiles))
	}
}
