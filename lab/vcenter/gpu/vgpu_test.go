package gpu

import (
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
	"vcsim/topology"
	"vcsim/vgputypes"
)

func hostRef(value string) types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "HostSystem", Value: value}
}

// gpuHost is a host with the given GPUs, all in Shared Direct mode as after an Xorg restart.
func gpuHost(t *testing.T, model string, count int) *Host {
	t.Helper()
	models := labtest.Catalog(t)
	h := NewHost(nil, hostRef("host-1"), "esxi-01", []*topology.GPUSpec{{Model: model, Count: count}}, models)
	for _, g := range h.GPUs {
		g.Active = GraphicsSharedDirect
	}
	return h
}

func devices(profiles ...string) []VGPU {
	list := make([]VGPU, len(profiles))
	for i, p := range profiles {
		list[i] = VGPU{Key: int32(13000 + i), Profile: p}
	}
	return list
}

// placeAll places one single-vGPU VM after another and returns the PCI slot index each one got.
func placeAll(t *testing.T, h *Host, policy string, profiles ...string) []int {
	t.Helper()
	loads := LoadsOf(h)
	var slots []int
	for _, p := range profiles {
		chosen, why := Place(loads, devices(p), policy)
		if why != "" {
			t.Fatalf("placing %s: %s", p, why)
		}
		for i, g := range h.GPUs {
			if g == chosen[0].GPU {
				slots = append(slots, i)
			}
		}
	}
	return slots
}

func TestPlacementPolicies(t *testing.T) {
	h := gpuHost(t, "P40", 3)
	if got := placeAll(t, h, PolicyPerformance, "grid_p40-8q", "grid_p40-8q", "grid_p40-8q", "grid_p40-8q"); !equalInts(got, []int{0, 1, 2, 0}) {
		t.Errorf("performance spreads over the least loaded GPUs: %v", got)
	}
	if got := placeAll(t, h, PolicyConsolidation, "grid_p40-8q", "grid_p40-8q", "grid_p40-8q", "grid_p40-8q"); !equalInts(got, []int{0, 0, 0, 1}) {
		t.Errorf("consolidation fills a GPU first: %v", got)
	}
}

func TestEqualSizeAndCapacity(t *testing.T) {
	h := gpuHost(t, "P40", 2)
	h.GPUs[0].VGPUs = []*Slot{{Profile: "grid_p40-8q", GPU: h.GPUs[0]}}
	for _, policy := range []string{PolicyPerformance, PolicyConsolidation} {
		if got := placeAll(t, h, policy, "grid_p40-4q"); !equalInts(got, []int{1}) {
			t.Errorf("%s: a 4q vGPU must avoid the GPU carved for 8q, got %v", policy, got)
		}
	}
	h.GPUs[1].VGPUs = []*Slot{{Profile: "grid_p40-24q", GPU: h.GPUs[1]}}
	h.GPUs[0].VGPUs = append(h.GPUs[0].VGPUs, &Slot{Profile: "grid_p40-8q"}, &Slot{Profile: "grid_p40-8q"})
	_, why := Place(LoadsOf(h), devices("grid_p40-8q"), PolicyPerformance)
	for _, want := range []string{"0000:3b:00.0 is full (3 of 3 grid_p40-8q vGPUs)",
		"0000:5e:00.0 runs grid_p40-24q (equal-size mode: one profile per GPU)"} {
		if !strings.Contains(why, want) {
			t.Errorf("reason %q does not say %q", why, want)
		}
	}
}

func TestSeveralVGPUsOfOneVM(t *testing.T) {
	h := gpuHost(t, "P40", 2)
	chosen, why := Place(LoadsOf(h), devices("grid_p40-12q", "grid_p40-12q", "grid_p40-12q"), PolicyConsolidation)
	if why != "" || chosen[0].GPU != h.GPUs[0] || chosen[1].GPU != h.GPUs[0] || chosen[2].GPU != h.GPUs[1] {
		t.Fatalf("each vGPU takes a slot (12q: 2 per GPU): %v %s", chosen, why)
	}
	if _, why := Place(LoadsOf(h), devices("grid_p40-24q", "grid_p40-24q", "grid_p40-24q"), PolicyPerformance); why == "" {
		t.Error("three 24q vGPUs fit on two P40s")
	}
}

func TestRefusals(t *testing.T) {
	h := gpuHost(t, "T4", 1)
	if _, why := Place(LoadsOf(h), devices("grid_p40-8q"), PolicyPerformance); !strings.Contains(why, "(Tesla T4) does not offer grid_p40-8q") {
		t.Errorf("profile of another GPU: %s", why)
	}
	h.GPUs[0].Active = GraphicsBasic
	if _, why := Place(LoadsOf(h), devices("grid_t4-4q"), PolicyPerformance); !strings.Contains(why,
		"is in graphics mode basic, not sharedDirect (shared is configured and applies when Xorg restarts)") {
		t.Errorf("GPU not in Shared Direct: %s", why)
	}
	h.GPUs = nil
	if _, why := Place(LoadsOf(h), devices("grid_t4-4q"), PolicyPerformance); why != "the host has no NVIDIA GPU" {
		t.Errorf("host without GPUs: %s", why)
	}
}

func TestGraphicsConfig(t *testing.T) {
	h := gpuHost(t, "P40", 2)
	for _, g := range h.GPUs {
		g.Active = GraphicsBasic
	}
	bad := []struct {
		config   vgputypes.HostGraphicsConfig
		property string
	}{
		{vgputypes.HostGraphicsConfig{HostDefaultGraphicsType: "direct"}, "config.hostDefaultGraphicsType"},
		{vgputypes.HostGraphicsConfig{SharedPassthruAssignmentPolicy: "fastest"}, "config.sharedPassthruAssignmentPolicy"},
		{vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{DeviceId: "0000:99:00.0", GraphicsType: "shared"}}}, "config.deviceType.deviceId"},
		{vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{DeviceId: "0000:3b:00.0", GraphicsType: "basic"}}}, "config.deviceType.graphicsType"},
	}
	for _, b := range bad {
		f := h.UpdateConfig(b.config)
		if f == nil || f.Fault.(*types.InvalidArgument).InvalidProperty != b.property || !strings.Contains(f.Msg, b.property) {
			t.Errorf("%+v: fault %v, want InvalidArgument on %s", b.config, f, b.property)
		}
	}
	if h.Config.HostDefaultGraphicsType != GraphicsShared || len(h.Config.DeviceType) != 0 {
		t.Fatalf("a refused config changed the host: %+v", h.Config)
	}
	ok := func(c vgputypes.HostGraphicsConfig) {
		if f := h.UpdateConfig(c); f != nil {
			t.Fatal(f)
		}
	}
	ok(vgputypes.HostGraphicsConfig{HostDefaultGraphicsType: GraphicsSharedDirect,
		DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{DeviceId: "0000:5e:00.0", GraphicsType: GraphicsShared}}})
	ok(vgputypes.HostGraphicsConfig{SharedPassthruAssignmentPolicy: PolicyConsolidation,
		DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{DeviceId: "0000:5e:00.0", GraphicsType: GraphicsSharedDirect}}})
	if c := h.Config; c.HostDefaultGraphicsType != GraphicsSharedDirect || c.SharedPassthruAssignmentPolicy != PolicyConsolidation ||
		len(c.DeviceType) != 1 || c.DeviceType[0].GraphicsType != GraphicsSharedDirect {
		t.Errorf("fields given replace, device types merge by id: %+v", c)
	}
	if h.GPUs[0].Active != GraphicsBasic || h.SharedGraphicsActive() {
		t.Error("a stored config must not apply before Xorg restarts")
	}

	h.GPUs[1].VGPUs = []*Slot{{Profile: "grid_p40-8q"}}
	ok(vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{DeviceId: "0000:5e:00.0", GraphicsType: GraphicsShared}}})
	h.GPUs[1].Active = GraphicsSharedDirect
	h.ApplyConfig()
	if h.GPUs[0].Active != GraphicsSharedDirect || h.GPUs[1].Active != GraphicsSharedDirect || !h.SharedGraphicsActive() {
		t.Errorf("Xorg restart: idle GPU follows the config, busy GPU keeps its type: %s, %s", h.GPUs[0].Active, h.GPUs[1].Active)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
