package main

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
func gpuHost(t *testing.T, model string, count int) *hostState {
	t.Helper()
	models := labtest.Catalog(t)
	h := newHostState(NewLab(models), hostRef("host-1"), "esxi-01", []*topology.GPUSpec{{Model: model, Count: count}}, models)
	for _, g := range h.gpus {
		g.active = graphicsSharedDirect
	}
	return h
}

func devices(profiles ...string) []vgpuDevice {
	list := make([]vgpuDevice, len(profiles))
	for i, p := range profiles {
		list[i] = vgpuDevice{key: int32(13000 + i), profile: p}
	}
	return list
}

// placeAll places one single-vGPU VM after another and returns the PCI slot index each one got.
func placeAll(t *testing.T, h *hostState, policy string, profiles ...string) []int {
	t.Helper()
	loads := loadsOf(h)
	var slots []int
	for _, p := range profiles {
		chosen, why := place(loads, devices(p), policy)
		if why != "" {
			t.Fatalf("placing %s: %s", p, why)
		}
		for i, g := range h.gpus {
			if g == chosen[0].gpu {
				slots = append(slots, i)
			}
		}
	}
	return slots
}

func TestPlacementPolicies(t *testing.T) {
	h := gpuHost(t, "P40", 3)
	if got := placeAll(t, h, policyPerformance, "grid_p40-8q", "grid_p40-8q", "grid_p40-8q", "grid_p40-8q"); !equalInts(got, []int{0, 1, 2, 0}) {
		t.Errorf("performance spreads over the least loaded GPUs: %v", got)
	}
	if got := placeAll(t, h, policyConsolidation, "grid_p40-8q", "grid_p40-8q", "grid_p40-8q", "grid_p40-8q"); !equalInts(got, []int{0, 0, 0, 1}) {
		t.Errorf("consolidation fills a GPU first: %v", got)
	}
}

func TestEqualSizeAndCapacity(t *testing.T) {
	h := gpuHost(t, "P40", 2)
	h.gpus[0].vgpus = []*vgpuSlot{{profile: "grid_p40-8q", gpu: h.gpus[0]}}
	for _, policy := range []string{policyPerformance, policyConsolidation} {
		if got := placeAll(t, h, policy, "grid_p40-4q"); !equalInts(got, []int{1}) {
			t.Errorf("%s: a 4q vGPU must avoid the GPU carved for 8q, got %v", policy, got)
		}
	}
	h.gpus[1].vgpus = []*vgpuSlot{{profile: "grid_p40-24q", gpu: h.gpus[1]}}
	h.gpus[0].vgpus = append(h.gpus[0].vgpus, &vgpuSlot{profile: "grid_p40-8q"}, &vgpuSlot{profile: "grid_p40-8q"})
	_, why := place(loadsOf(h), devices("grid_p40-8q"), policyPerformance)
	for _, want := range []string{"0000:3b:00.0 is full (3 of 3 grid_p40-8q vGPUs)",
		"0000:5e:00.0 runs grid_p40-24q (equal-size mode: one profile per GPU)"} {
		if !strings.Contains(why, want) {
			t.Errorf("reason %q does not say %q", why, want)
		}
	}
}

func TestSeveralVGPUsOfOneVM(t *testing.T) {
	h := gpuHost(t, "P40", 2)
	chosen, why := place(loadsOf(h), devices("grid_p40-12q", "grid_p40-12q", "grid_p40-12q"), policyConsolidation)
	if why != "" || chosen[0].gpu != h.gpus[0] || chosen[1].gpu != h.gpus[0] || chosen[2].gpu != h.gpus[1] {
		t.Fatalf("each vGPU takes a slot (12q: 2 per GPU): %v %s", chosen, why)
	}
	if _, why := place(loadsOf(h), devices("grid_p40-24q", "grid_p40-24q", "grid_p40-24q"), policyPerformance); why == "" {
		t.Error("three 24q vGPUs fit on two P40s")
	}
}

func TestRefusals(t *testing.T) {
	h := gpuHost(t, "T4", 1)
	if _, why := place(loadsOf(h), devices("grid_p40-8q"), policyPerformance); !strings.Contains(why, "(Tesla T4) does not offer grid_p40-8q") {
		t.Errorf("profile of another GPU: %s", why)
	}
	h.gpus[0].active = graphicsBasic
	if _, why := place(loadsOf(h), devices("grid_t4-4q"), policyPerformance); !strings.Contains(why,
		"is in graphics mode basic, not sharedDirect (shared is configured and applies when Xorg restarts)") {
		t.Errorf("GPU not in Shared Direct: %s", why)
	}
	h.gpus = nil
	if _, why := place(loadsOf(h), devices("grid_t4-4q"), policyPerformance); why != "the host has no NVIDIA GPU" {
		t.Errorf("host without GPUs: %s", why)
	}
}

func TestGraphicsConfig(t *testing.T) {
	h := gpuHost(t, "P40", 2)
	for _, g := range h.gpus {
		g.active = graphicsBasic
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
		f := h.updateGraphicsConfig(b.config)
		if f == nil || f.Fault.(*types.InvalidArgument).InvalidProperty != b.property || !strings.Contains(f.Msg, b.property) {
			t.Errorf("%+v: fault %v, want InvalidArgument on %s", b.config, f, b.property)
		}
	}
	if h.config.HostDefaultGraphicsType != graphicsShared || len(h.config.DeviceType) != 0 {
		t.Fatalf("a refused config changed the host: %+v", h.config)
	}
	ok := func(c vgputypes.HostGraphicsConfig) {
		if f := h.updateGraphicsConfig(c); f != nil {
			t.Fatal(f)
		}
	}
	ok(vgputypes.HostGraphicsConfig{HostDefaultGraphicsType: graphicsSharedDirect,
		DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{DeviceId: "0000:5e:00.0", GraphicsType: graphicsShared}}})
	ok(vgputypes.HostGraphicsConfig{SharedPassthruAssignmentPolicy: policyConsolidation,
		DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{DeviceId: "0000:5e:00.0", GraphicsType: graphicsSharedDirect}}})
	if c := h.config; c.HostDefaultGraphicsType != graphicsSharedDirect || c.SharedPassthruAssignmentPolicy != policyConsolidation ||
		len(c.DeviceType) != 1 || c.DeviceType[0].GraphicsType != graphicsSharedDirect {
		t.Errorf("fields given replace, device types merge by id: %+v", c)
	}
	if h.gpus[0].active != graphicsBasic || h.sharedGraphicsActive() {
		t.Error("a stored config must not apply before Xorg restarts")
	}

	h.gpus[1].vgpus = []*vgpuSlot{{profile: "grid_p40-8q"}}
	ok(vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{DeviceId: "0000:5e:00.0", GraphicsType: graphicsShared}}})
	h.gpus[1].active = graphicsSharedDirect
	h.applyGraphicsConfig()
	if h.gpus[0].active != graphicsSharedDirect || h.gpus[1].active != graphicsSharedDirect || !h.sharedGraphicsActive() {
		t.Errorf("Xorg restart: idle GPU follows the config, busy GPU keeps its type: %s, %s", h.gpus[0].active, h.gpus[1].active)
	}
}

func TestMergeAllocation(t *testing.T) {
	reservation, limit, newReservation := int64(0), int64(-1), int64(4096)
	shares := &types.SharesInfo{Level: types.SharesLevelNormal}
	merged := mergeAllocation(&types.ResourceAllocationInfo{Reservation: &reservation, Limit: &limit, Shares: shares},
		&types.ResourceAllocationInfo{Reservation: &newReservation})
	if *merged.Reservation != 4096 || merged.Limit != &limit || merged.Shares != shares {
		t.Errorf("a partial allocation keeps the other fields: %+v", merged)
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
