package gpu

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"

	"vcsim/vgputypes"
)

func TestVgpuMode(t *testing.T) {
	h := gpuHost(t, "P40", 2)
	f := h.UpdateConfig(vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{
		DeviceId: "0000:3b:00.0", GraphicsType: GraphicsSharedDirect, VgpuMode: "equal"}}})
	if f == nil || f.Fault.(*types.InvalidArgument).InvalidProperty != "config.deviceType.vgpuMode" ||
		!strings.Contains(f.Msg, `"equal" for device 0000:3b:00.0 is not one of sameSize, mixedSize`) {
		t.Errorf("unknown vgpuMode: fault %v", f)
	}
	if len(h.Config.DeviceType) != 0 {
		t.Fatalf("a refused config changed the host: %+v", h.Config)
	}

	// A P40 keeps mixedSize in its configuration but runs equal-size vGPUs.
	if f := h.UpdateConfig(vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{
		DeviceId: "0000:5e:00.0", GraphicsType: GraphicsSharedDirect, VgpuMode: vgputypes.ModeMixedSize}}}); f != nil {
		t.Fatal(f)
	}
	h.ApplyConfig()
	if h.GPUs[1].VgpuMode() != vgputypes.ModeSameSize || h.GraphicsConfigEx().DeviceType[0].VgpuMode != vgputypes.ModeMixedSize {
		t.Errorf("mixedSize on a P40: in effect %s, configured %+v", h.GPUs[1].VgpuMode(), h.GraphicsConfigEx())
	}

	h = gpuHost(t, "P40", 2)
	h.GPUs[0].Model.MixedSizeCapable = true
	defer func() { h.GPUs[0].Model.MixedSizeCapable = false }()
	if f := h.UpdateConfig(vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{
		DeviceId: "0000:3b:00.0", GraphicsType: GraphicsSharedDirect, VgpuMode: vgputypes.ModeMixedSize}}}); f != nil {
		t.Fatal(f)
	}
	h.GPUs[1].Active = GraphicsShared
	if got := []string{h.GPUs[0].VgpuMode(), h.GPUs[1].VgpuMode()}; got[0] != vgputypes.ModeSameSize || got[1] != vgputypes.ModeNone {
		t.Errorf("before Xorg restarts: %v, want [sameSize none]", got)
	}
	h.ApplyConfig()
	info := h.GraphicsInfoEx()
	if info[0].VgpuMode != vgputypes.ModeMixedSize || info[1].VgpuMode != vgputypes.ModeNone {
		t.Errorf("after Xorg restart: %+v", info)
	}
	if c := h.GraphicsConfigEx(); len(c.DeviceType) != 1 || c.DeviceType[0].VgpuMode != vgputypes.ModeMixedSize ||
		h.GraphicsConfig().DeviceType[0].GraphicsType != GraphicsSharedDirect {
		t.Errorf("graphicsConfig: %+v", c)
	}

	// An entry given again replaces the stored one, vgpuMode included.
	if f := h.UpdateConfig(vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{
		DeviceId: "0000:3b:00.0", GraphicsType: GraphicsSharedDirect}}}); f != nil {
		t.Fatal(f)
	}
	h.ApplyConfig()
	if got := h.GPUs[0].VgpuMode(); got != vgputypes.ModeSameSize {
		t.Errorf("entry without vgpuMode: %s, want sameSize", got)
	}
}

func TestVgpuProfileAndDeviceInfo(t *testing.T) {
	h := gpuHost(t, "P40", 2)
	profiles := VGPUProfileInfo([]*Host{h, h})
	if len(profiles) != len(h.Profiles) {
		t.Fatalf("%d profiles, want each of the host's %d once", len(profiles), len(h.Profiles))
	}
	var p8q *vgputypes.VirtualMachineVgpuProfileInfo
	for i := range profiles {
		if profiles[i].ProfileName == "grid_p40-8q" {
			p8q = &profiles[i]
		}
	}
	if p8q == nil || p8q.Name != "grid_p40-8q" || p8q.FbSizeInGib != 8 || p8q.ProfileSharing != "timeSliced" ||
		p8q.ProfileClass != "quadro" || p8q.DeviceVendorId != NVIDIAVendorID {
		t.Errorf("grid_p40-8q: %+v", p8q)
	}
	devices := VGPUDeviceInfo([]*Host{h})
	if len(devices) != 1 || devices[0].DeviceName != "Tesla P40" || devices[0].MaxFbSizeInGib != 24 ||
		!devices[0].TimeSlicedCapable || devices[0].MigCapable || !devices[0].QuadroProfileCapable {
		t.Errorf("device info: %+v", devices)
	}
}

// The wire form: WSDL type and element names, vgpuMode inside each HostGraphicsInfo.
func TestVgpuTypesMarshal(t *testing.T) {
	h := gpuHost(t, "P40", 1)
	var buf bytes.Buffer
	value := types.DynamicProperty{Name: "graphicsInfo",
		Val: &vgputypes.ArrayOfHostGraphicsInfo{HostGraphicsInfo: h.GraphicsInfoEx()}}
	if err := xml.NewEncoder(&buf).Encode(value); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`type="ArrayOfHostGraphicsInfo"`, "<HostGraphicsInfo>",
		"<graphicsType>sharedDirect</graphicsType><vgpuMode>sameSize</vgpuMode>"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("%s lacks %s", buf.String(), want)
		}
	}
}
