package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vgputypes"
)

// mixedHost is a host with the given GPUs in Shared Direct and mixed-size mode, as after an Xorg restart.
func mixedHost(t *testing.T, model string, count int) *hostState {
	t.Helper()
	h := gpuHost(t, model, count)
	for _, g := range h.gpus {
		g.mode = vgputypes.ModeMixedSize
	}
	return h
}

// placeMixed places one single-vGPU VM after another on a host's current loads and returns the placement IDs.
func placeMixed(t *testing.T, loads []*gpuLoad, policy string, profiles ...string) []int64 {
	t.Helper()
	var ids []int64
	for _, p := range profiles {
		chosen, why := place(loads, devices(p), policy)
		if why != "" {
			t.Fatalf("placing %s: %s", p, why)
		}
		ids = append(ids, chosen[0].at)
	}
	return ids
}

func TestMixedSizeSharesAGPUAtPlacementIDs(t *testing.T) {
	h := mixedHost(t, "L40S", 1)
	if got := h.gpus[0].vgpuMode(); got != vgputypes.ModeMixedSize {
		t.Fatalf("vgpuMode %s", got)
	}
	loads := loadsOf(h)
	// 16c at 0 takes [0,16); 8c cannot start at 0, so 16; 24c cannot start at 0, so 24: 48 GiB used.
	if got := placeMixed(t, loads, policyPerformance, "grid_l40s-16c", "grid_l40s-8q", "grid_l40s-24c"); !reflect.DeepEqual(got, []int64{0, 16, 24}) {
		t.Errorf("placement IDs %v, want [0 16 24]", got)
	}
	_, why := place(loads, devices("grid_l40s-4c"), policyPerformance)
	if !strings.Contains(why, "0000:3b:00.0 (mixed-size mode, 49152 of 49152 MiB in use) has no free placement for grid_l40s-4c") {
		t.Errorf("a full GPU: %s", why)
	}
}

func TestMixedSizeFreeFramebufferIsNotEnoughWithoutAPlacement(t *testing.T) {
	h := mixedHost(t, "L4", 1)
	loads := loadsOf(h)
	// 12c at 0 and 8c at 16 leave [12,16) free: a 6c has no placement there (0, 6, 12 and 18 all overlap), a 4c
	// fits at 12.
	if got := placeMixed(t, loads, policyPerformance, "grid_l4-12c", "grid_l4-8c"); !reflect.DeepEqual(got, []int64{0, 16}) {
		t.Fatalf("placement IDs %v", got)
	}
	if _, why := place(cloneLoads(loads), devices("grid_l4-6c"), policyPerformance); !strings.Contains(why,
		"20480 of 24576 MiB in use) has no free placement for grid_l4-6c (placement IDs 0, 6, 12, 18 GiB)") {
		t.Errorf("4 GiB free but no 6c placement: %s", why)
	}
	if got := placeMixed(t, loads, policyPerformance, "grid_l4-4c"); !reflect.DeepEqual(got, []int64{12}) {
		t.Errorf("4c goes to the gap at 12: %v", got)
	}
}

func TestMixedSizeLowerMaximaAndTypesWithoutPlacement(t *testing.T) {
	mixed, equal := mixedHost(t, "L40S", 1), gpuHost(t, "L40S", 1)
	eight := []string{"grid_l40s-8c", "grid_l40s-8c", "grid_l40s-8c", "grid_l40s-8c"}
	mixedLoads, equalLoads := loadsOf(mixed), loadsOf(equal)
	placeMixed(t, mixedLoads, policyPerformance, eight...)
	placeMixed(t, equalLoads, policyPerformance, eight...)
	if _, why := place(mixedLoads, devices("grid_l40s-8c"), policyPerformance); why == "" {
		t.Error("mixed-size mode takes at most 4 8c vGPUs on an L40S (placement IDs 0, 16, 24, 40)")
	}
	if _, why := place(equalLoads, devices("grid_l40s-8c"), policyPerformance); why != "" {
		t.Errorf("equal-size mode takes 6: %s", why)
	}
	if _, why := place(loadsOf(mixed), devices("grid_l40s-2q"), policyPerformance); !strings.Contains(why,
		"is in mixed-size mode, where grid_l40s-2q has no placement") {
		t.Errorf("a type without known placements: %s", why)
	}
	if _, why := place(loadsOf(equal), devices("grid_l40s-2q"), policyPerformance); why != "" {
		t.Errorf("equal-size mode keeps offering it: %s", why)
	}
}

func TestMixedSizeIgnoresTheAssignmentPolicy(t *testing.T) {
	h := mixedHost(t, "L40S", 2)
	h.gpus[0].vgpus = []*vgpuSlot{{profile: "grid_l40s-24c", gpu: h.gpus[0], at: 0}}
	chosen, why := place(loadsOf(h), devices("grid_l40s-8c"), policyConsolidation)
	if why != "" || chosen[0].gpu != h.gpus[1] || chosen[0].at != 0 {
		t.Errorf("the least used GPU takes the vGPU whatever the policy: %+v %s", chosen, why)
	}
	h.gpus[1].mode = ""
	chosen, _ = place(loadsOf(h), devices("grid_l40s-8c"), policyConsolidation)
	if chosen[0].gpu != h.gpus[1] || chosen[0].at != -1 {
		t.Errorf("consolidation fills an equal-size GPU before a mixed-size one: %+v", chosen)
	}
}

func TestMixedSizeNeedsACapableModel(t *testing.T) {
	h := mixedHost(t, "P40", 1)
	if got := h.gpus[0].vgpuMode(); got != vgputypes.ModeSameSize {
		t.Fatalf("a P40 configured mixedSize runs %s", got)
	}
	loads := loadsOf(h)
	placeMixed(t, loads, policyPerformance, "grid_p40-8q")
	if _, why := place(loads, devices("grid_p40-4q"), policyPerformance); !strings.Contains(why, "equal-size mode") {
		t.Errorf("equal-size rules: %s", why)
	}
}

func TestVgpuModeChangeRefusedWhileVgpusRun(t *testing.T) {
	h := gpuHost(t, "L40S", 2)
	h.gpus[0].vgpus = []*vgpuSlot{{profile: "grid_l40s-8c", gpu: h.gpus[0], at: -1}}
	f := h.updateGraphicsConfig(vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{
		{DeviceId: "0000:5e:00.0", GraphicsType: graphicsSharedDirect, VgpuMode: vgputypes.ModeMixedSize},
		{DeviceId: "0000:3b:00.0", GraphicsType: graphicsSharedDirect, VgpuMode: vgputypes.ModeMixedSize}}})
	if f == nil || !strings.Contains(f.Msg, "0000:3b:00.0 cannot change from sameSize to mixedSize while vGPUs run") {
		t.Fatalf("fault %v", f)
	}
	if _, ok := f.Fault.(*types.InvalidState); !ok || len(h.config.DeviceType) != 0 {
		t.Errorf("InvalidState and nothing stored: %T %+v", f.Fault, h.config.DeviceType)
	}
	same := vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{
		{DeviceId: "0000:3b:00.0", GraphicsType: graphicsShared, VgpuMode: vgputypes.ModeSameSize}}}
	if f := h.updateGraphicsConfig(same); f != nil {
		t.Errorf("sameSize spelled out is no change of mode: %v", f)
	}
	h.gpus[0].vgpus = nil
	if f := h.updateGraphicsConfig(vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{
		{DeviceId: "0000:3b:00.0", GraphicsType: graphicsSharedDirect, VgpuMode: vgputypes.ModeMixedSize}}}); f != nil {
		t.Errorf("an idle GPU changes mode: %v", f)
	}
}
