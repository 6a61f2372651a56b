package main

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
	f := h.updateGraphicsConfig(vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{
		DeviceId: "0000:3b:00.0", GraphicsType: graphicsSharedDirect, VgpuMode: "equal"}}})
	if f == nil || f.Fault.(*types.InvalidArgument).InvalidProperty != "config.deviceType.vgpuMode" ||
		!strings.Contains(f.Msg, `"equal" for device 0000:3b:00.0 is not one of sameSize, mixedSize`) {
		t.Errorf("unknown vgpuMode: fault %v", f)
	}
	if len(h.config.DeviceType) != 0 {
		t.Fatalf("a refused config changed the host: %+v", h.config)
	}

	// A P40 keeps mixedSize in its configuration but runs equal-size vGPUs.
	if f := h.updateGraphicsConfig(vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{
		DeviceId: "0000:5e:00.0", GraphicsType: graphicsSharedDirect, VgpuMode: vgputypes.ModeMixedSize}}}); f != nil {
		t.Fatal(f)
	}
	h.applyGraphicsConfig()
	if h.gpus[1].vgpuMode() != vgputypes.ModeSameSize || h.graphicsConfigEx().DeviceType[0].VgpuMode != vgputypes.ModeMixedSize {
		t.Errorf("mixedSize on a P40: in effect %s, configured %+v", h.gpus[1].vgpuMode(), h.graphicsConfigEx())
	}

	h = gpuHost(t, "P40", 2)
	h.gpus[0].model.MixedSizeCapable = true
	defer func() { h.gpus[0].model.MixedSizeCapable = false }()
	if f := h.updateGraphicsConfig(vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{
		DeviceId: "0000:3b:00.0", GraphicsType: graphicsSharedDirect, VgpuMode: vgputypes.ModeMixedSize}}}); f != nil {
		t.Fatal(f)
	}
	h.gpus[1].active = graphicsShared
	if got := []string{h.gpus[0].vgpuMode(), h.gpus[1].vgpuMode()}; got[0] != vgputypes.ModeSameSize || got[1] != vgputypes.ModeNone {
		t.Errorf("before Xorg restarts: %v, want [sameSize none]", got)
	}
	h.applyGraphicsConfig()
	info := h.graphicsInfoEx()
	if info[0].VgpuMode != vgputypes.ModeMixedSize || info[1].VgpuMode != vgputypes.ModeNone {
		t.Errorf("after Xorg restart: %+v", info)
	}
	if c := h.graphicsConfigEx(); len(c.DeviceType) != 1 || c.DeviceType[0].VgpuMode != vgputypes.ModeMixedSize ||
		h.graphicsConfig().DeviceType[0].GraphicsType != graphicsSharedDirect {
		t.Errorf("graphicsConfig: %+v", c)
	}

	// An entry given again replaces the stored one, vgpuMode included.
	if f := h.updateGraphicsConfig(vgputypes.HostGraphicsConfig{DeviceType: []vgputypes.HostGraphicsConfigDeviceType{{
		DeviceId: "0000:3b:00.0", GraphicsType: graphicsSharedDirect}}}); f != nil {
		t.Fatal(f)
	}
	h.applyGraphicsConfig()
	if got := h.gpus[0].vgpuMode(); got != vgputypes.ModeSameSize {
		t.Errorf("entry without vgpuMode: %s, want sameSize", got)
	}
}

func TestVgpuProfileAndDeviceInfo(t *testing.T) {
	h := gpuHost(t, "P40", 2)
	profiles := vgpuProfileInfo([]*hostState{h, h})
	if len(profiles) != len(h.profiles) {
		t.Fatalf("%d profiles, want each of the host's %d once", len(profiles), len(h.profiles))
	}
	var p8q *vgputypes.VirtualMachineVgpuProfileInfo
	for i := range profiles {
		if profiles[i].ProfileName == "grid_p40-8q" {
			p8q = &profiles[i]
		}
	}
	if p8q == nil || p8q.Name != "grid_p40-8q" || p8q.FbSizeInGib != 8 || p8q.ProfileSharing != "timeSliced" ||
		p8q.ProfileClass != "quadro" || p8q.DeviceVendorId != nvidiaVendorID {
		t.Errorf("grid_p40-8q: %+v", p8q)
	}
	devices := vgpuDeviceInfo([]*hostState{h})
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
		Val: &vgputypes.ArrayOfHostGraphicsInfo{HostGraphicsInfo: h.graphicsInfoEx()}}
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
