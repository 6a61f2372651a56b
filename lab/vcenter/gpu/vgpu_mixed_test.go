package gpu

import (
	"reflect"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vgputypes"
)

// mixedHost is a host with the given GPUs in Shared Direct and mixed-size mode, as after an Xorg restart.
func mixedHost(t *testing.T, model string, count int) *Host {
	t.Helper()
	h := gpuHost(t, model, count)
	for _, g := range h.GPUs {
		g.Mode = vgputypes.ModeMixedSize
	}
	return h
}

// placeMixed places one single-vGPU VM after another on a host's current loads and returns the placement IDs.
func placeMixed(t *testing.T, loads []*Load, policy string, profiles ...string) []int64 {
	t.Helper()
	var ids []int64
	for _, p := range profiles {
		chosen, why := Place(loads, devices(p), policy)
		if why != "" {
			t.Fatalf("placing %s: %s", p, why)
		}
		ids = append(ids, chosen[0].At)
	}
	return ids
}

func TestMixedSizeSharesAGPUAtPlacementIDs(t *testing.T) {
	h := mixedHost(t, "L40S", 1)
	if got := h.GPUs[0].VgpuMode(); got != vgputypes.ModeMixedSize {
		t.Fatalf("vgpuMode %s", got)
	}
	loads := LoadsOf(h)
	// 16c at 0 takes [0,16); 8c cannot start at 0, so 16; 24c cannot start at 0, so 24: 48 GiB used.
	if got := placeMixed(t, loads, PolicyPerformance, "grid_l40s-16c", "grid_l40s-8q", "grid_l40s-24c"); !reflect.DeepEqual(got, []int64{0, 16, 24}) {
		t.Errorf("placement IDs %v, want [0 16 24]", got)
	}
	_, why := Place(loads, devices("grid_l40s-4c"), PolicyPerformance)
	if !strings.Contains(why, "0000:3b:00.0 (mixed-size mode, 49152 of 49152 MiB in use) has no free placement for grid_l40s-4c") {
		t.Errorf("a full GPU: %s", why)
	}
}

func TestMixedSizeFreeFramebufferIsNotEnoughWithoutAPlacement(t *testing.T) {
	h := mixedHost(t, "L4", 1)
	loads := LoadsOf(h)
	// 12c at 0 and 8c at 16 leave [12,16) free: a 6c has no placement there (0, 6, 12 and 18 all overlap), a 4c
	// fits at 12.
	if got := placeMixed(t, loads, PolicyPerformance, "grid_l4-12c", "grid_l4-8c"); !reflect.DeepEqual(got, []int64{0, 16}) {
		t.Fatalf("placement IDs %v", got)
	}
	if _, why := Place(CloneLoads(loads), devices("grid_l4-6c"), PolicyPerformance); !strings.Contains(why,
		"20480 of 24576 MiB in use) has no free placement for grid_l4-6c (placement IDs 0, 6, 12, 18 GiB)") {
		t.Errorf("4 GiB free but no 6c placement: %s", why)
	}
	if got := placeMixed(t, loads, PolicyPerformance, "grid_l4-4c"); !reflect.DeepEqual(got, []int64{12}) {
		t.Errorf("4c goes to the gap at 12: %v", got)
	}
}

func TestMixedSizeLowerMaximaAndTypesWithoutPlacement(t *testing.T) {
	mixed, equal := mixedHost(t, "L40S", 1), gpuHost(t, "L40S", 1)
	eight := []string{"grid_l40s-8c", "grid_l40s-8c", "grid_l40s-8c", "grid_l40s-8c"}
	mixedLoads, equalLoads := LoadsOf(mixed), LoadsOf(equal)
	placeMixed(t, mixedLoads, PolicyPerformance, eight...)
	placeMixed(t, equalLoads, PolicyPerformance, eight...)
	if _, why := Place(mixedLoads, devices("grid_l40s-8c"), PolicyPerformance); why == "" {
		t.Error("mixed-size mode takes at most 4 8c vGPUs on an L40S (placement IDs 0, 16, 24, 40)")
	}
	if _, why := Place(equalLoads, devices("grid_l40s-8c"), PolicyPerformance); why != "" {
		t.Errorf("equal-size mode takes 6: %s", why)
	}
	if _, why := Place(LoadsOf(mixed), devices("grid_l40s-2q"), PolicyPerformance); !strings.Contains(why,
		"is in mixed-size mode, where grid_l40s-2q has no placement") {
		t.Errorf("a type without known placements: %s", why)
	}
	if _, why := Place(LoadsOf(equal), devices("grid_l40s-2q"), PolicyPerformance); why != "" {
		t.Errorf("equal-size mode keeps offering it: %s", why)
	}
}

func TestMixedSizeIgnoresTheAssignmentPolicy(t *testing.T) {
	h := mixedHost(t, "L40S", 2)
	h.GPUs[0].VGPUs = []*Slot{{Profile: "grid_l40s-24c", GPU: h.GPUs[0], At: 0}}
	chosen, why := Place(LoadsOf(h), devices("grid_l40s-8c"), PolicyConsolidation)
	if why != "" || chosen[0].GPU != h.GPUs[1] || chosen[0].At != 0 {
		t.Errorf("the least used GPU takes the vGPU whatever the policy: %+v %s", chosen, why)
	}
	h.GPUs[1].Mode = ""
	chosen, _ = Place(LoadsOf(h), devices("grid_l40s-8c"), PolicyConsolidation)
	if chosen[0].GPU != h.GPUs[1] || chosen[0].At != -1 {
		t.Errorf("consolidation fills an equal-size GPU before a mixed-size one: %+v", chosen)
	}
}

func TestMixedSizeNeedsACapableModel(t *testing.T) {
	h := mixedHost(t, "P40", 1)
	if got := h.GPUs[0].VgpuMode(); got != vgputypes.ModeSameSize {
		t.Fatalf("a P40 configured mixedSize runs %s", got)
	}
	loads := LoadsOf(h)
	placeMixed(t, loads, PolicyPerformance, "grid_p40-8q")
	if _, why := Place(loads, devices("grid_p40-4q"), PolicyPerformance); !strings.Contains(why, "equal-size mode") {
		t.Errorf("equal-size rules: %s", why)
	}
}

func TestVgpuModeChangeRefusedWhileVgpusRun(t *testing.T) {
	h := gpuHost(t, "L40S", 2)
	h.GPUs[0].VGPUs = []*Slot{{Profile: "grid_l40s-8c", GPU: h.GPUs[0], At: -1}}
	f := h.UpdateConfig(vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{
		{DeviceId: "0000:5e:00.0", GraphicsType: GraphicsSharedDirect, VgpuMode: vgputypes.ModeMixedSize},
		{DeviceId: "0000:3b:00.0", GraphicsType: GraphicsSharedDirect, VgpuMode: vgputypes.ModeMixedSize}}})
	if f == nil || !strings.Contains(f.Msg, "0000:3b:00.0 cannot change from sameSize to mixedSize while vGPUs run") {
		t.Fatalf("fault %v", f)
	}
	if _, ok := f.Fault.(*types.InvalidState); !ok || len(h.Config.DeviceType) != 0 {
		t.Errorf("InvalidState and nothing stored: %T %+v", f.Fault, h.Config.DeviceType)
	}
	same := vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{
		{DeviceId: "0000:3b:00.0", GraphicsType: GraphicsShared, VgpuMode: vgputypes.ModeSameSize}}}
	if f := h.UpdateConfig(same); f != nil {
		t.Errorf("sameSize spelled out is no change of mode: %v", f)
	}
	h.GPUs[0].VGPUs = nil
	if f := h.UpdateConfig(vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{
		{DeviceId: "0000:3b:00.0", GraphicsType: GraphicsSharedDirect, VgpuMode: vgputypes.ModeMixedSize}}}); f != nil {
		t.Errorf("an idle GPU changes mode: %v", f)
	}
}
