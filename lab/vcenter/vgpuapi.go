package main

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/catalog"
	"vcsim/vgputypes"
)

func gib(frameBufferMiB int64) int64 { return frameBufferMiB / 1024 }

func profileInfo(p *catalog.Profile) vgputypes.VirtualMachineVgpuProfileInfo {
	return vgputypes.VirtualMachineVgpuProfileInfo{
		VirtualMachineTargetInfo: types.VirtualMachineTargetInfo{Name: p.Name},
		ProfileName:              p.Name,
		DeviceVendorId:           nvidiaVendorID,
		FbSizeInGib:              gib(p.FramebufferMiB),
		ProfileSharing:           p.Sharing,
		ProfileClass:             p.ProfileClass,
	}
}

func deviceInfo(m *catalog.GPUModel) vgputypes.VirtualMachineVgpuDeviceInfo {
	d := vgputypes.VirtualMachineVgpuDeviceInfo{
		VirtualMachineTargetInfo: types.VirtualMachineTargetInfo{Name: m.DeviceName},
		DeviceName:               m.DeviceName,
		DeviceVendorId:           nvidiaVendorID,
		MaxFbSizeInGib:           gib(m.FramebufferMiB),
		MigCapable:               m.MIGCapable,
	}
	for _, p := range m.Profiles {
		d.TimeSlicedCapable = d.TimeSlicedCapable || p.Sharing == "timeSliced"
		d.ComputeProfileCapable = d.ComputeProfileCapable || p.ProfileClass == "compute"
		d.QuadroProfileCapable = d.QuadroProfileCapable || p.ProfileClass == "quadro"
	}
	return d
}

// vgpuProfileInfo lists the profiles the hosts' GPUs offer, each once, in catalog order.
func vgpuProfileInfo(hosts []*hostState) []vgputypes.VirtualMachineVgpuProfileInfo {
	var list []vgputypes.VirtualMachineVgpuProfileInfo
	seen := map[string]bool{}
	for _, h := range hosts {
		for _, name := range h.profiles {
			if p := h.lab.catalog.Profile(name); p != nil && !seen[name] {
				seen[name] = true
				list = append(list, profileInfo(p))
			}
		}
	}
	return list
}

// vgpuDeviceInfo lists the hosts' GPU models, each once.
func vgpuDeviceInfo(hosts []*hostState) []vgputypes.VirtualMachineVgpuDeviceInfo {
	var list []vgputypes.VirtualMachineVgpuDeviceInfo
	seen := map[*catalog.GPUModel]bool{}
	for _, h := range hosts {
		for _, g := range h.gpus {
			if !seen[g.model] {
				seen[g.model] = true
				list = append(list, deviceInfo(g.model))
			}
		}
	}
	return list
}

func (m *graphicsManager) RetrieveVgpuProfileInfo(req *vgputypes.RetrieveVgpuProfileInfo) soap.HasFault {
	return &vgputypes.RetrieveVgpuProfileInfoBody{Res: &vgputypes.RetrieveVgpuProfileInfoResponse{
		Returnval: vgpuProfileInfo([]*hostState{m.host})}}
}

func (m *graphicsManager) RetrieveVgpuDeviceInfo(req *vgputypes.RetrieveVgpuDeviceInfo) soap.HasFault {
	return &vgputypes.RetrieveVgpuDeviceInfoBody{Res: &vgputypes.RetrieveVgpuDeviceInfoResponse{
		Returnval: vgpuDeviceInfo([]*hostState{m.host})}}
}

// graphicsInfoEx is HostGraphicsInfo with each GPU's vGPU mode in effect.
func (h *hostState) graphicsInfoEx() []vgputypes.HostGraphicsInfo {
	info := make([]vgputypes.HostGraphicsInfo, len(h.gpus))
	for i, g := range h.gpus {
		info[i] = vgputypes.HostGraphicsInfo{
			DeviceName:     g.model.DeviceName,
			VendorName:     nvidiaVendorName,
			PciId:          g.pciID,
			GraphicsType:   g.active,
			VgpuMode:       g.vgpuMode(),
			MemorySizeInKB: g.model.FramebufferMiB * 1024,
			Vm:             g.vms(),
		}
	}
	return info
}

func (h *hostState) graphicsConfigEx() *vgputypes.HostGraphicsConfig {
	c := h.config
	c.DeviceType = append([]vgputypes.HostGraphicsConfigDeviceType(nil), h.config.DeviceType...)
	return &c
}

// extendProperty puts the lab's graphics types in place of govmomi's in a property value of a host or of its
// graphics manager, so that clients read vgpuMode.
func extendProperty(ctx *simulator.Context, obj types.ManagedObjectReference, val types.AnyType) types.AnyType {
	h := graphicsHost(ctx, obj)
	if h == nil {
		return val
	}
	switch v := val.(type) {
	case types.ArrayOfHostGraphicsInfo, *types.ArrayOfHostGraphicsInfo:
		return &vgputypes.ArrayOfHostGraphicsInfo{HostGraphicsInfo: h.graphicsInfoEx()}
	case types.HostGraphicsConfig, *types.HostGraphicsConfig:
		return *h.graphicsConfigEx()
	case types.HostConfigInfo:
		return vgputypes.HostConfigInfo{HostConfigInfo: v, GraphicsInfo: h.graphicsInfoEx(), GraphicsConfig: h.graphicsConfigEx()}
	case *types.HostConfigInfo:
		return vgputypes.HostConfigInfo{HostConfigInfo: *v, GraphicsInfo: h.graphicsInfoEx(), GraphicsConfig: h.graphicsConfigEx()}
	}
	return val
}

// graphicsHost is the lab host of a HostSystem or HostGraphicsManager, or nil.
func graphicsHost(ctx *simulator.Context, ref types.ManagedObjectReference) *hostState {
	switch obj := ctx.Map.Get(ref).(type) {
	case *graphicsManager:
		return obj.host
	case *simulator.HostSystem:
		if obj.ConfigManager.GraphicsManager != nil {
			if m, ok := ctx.Map.Get(*obj.ConfigManager.GraphicsManager).(*graphicsManager); ok {
				return m.host
			}
		}
	}
	return nil
}

// RetrievePropertiesEx answers graphics properties with the lab's types (Fetch comes here as well).
func (pc *propertyCollector) RetrievePropertiesEx(ctx *simulator.Context, req *types.RetrievePropertiesEx) soap.HasFault {
	res := pc.PropertyCollector.RetrievePropertiesEx(ctx, req)
	if body, ok := res.(*methods.RetrievePropertiesExBody); ok && body.Res != nil && body.Res.Returnval != nil {
		extendObjects(ctx, body.Res.Returnval.Objects)
	}
	return res
}

func (pc *propertyCollector) RetrieveProperties(ctx *simulator.Context, req *types.RetrieveProperties) soap.HasFault {
	res := pc.PropertyCollector.RetrieveProperties(ctx, req)
	if body, ok := res.(*methods.RetrievePropertiesBody); ok && body.Res != nil {
		extendObjects(ctx, body.Res.Returnval)
	}
	return res
}

func extendObjects(ctx *simulator.Context, objects []types.ObjectContent) {
	for i := range objects {
		o := &objects[i]
		if o.Obj.Type != "HostSystem" && o.Obj.Type != "HostGraphicsManager" {
			continue
		}
		for j := range o.PropSet {
			o.PropSet[j].Val = extendProperty(ctx, o.Obj, o.PropSet[j].Val)
		}
	}
}
