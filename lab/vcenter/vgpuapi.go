package main

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/gpu"
	"vcsim/vgputypes"
)

func (m *graphicsManager) RetrieveVgpuProfileInfo(req *vgputypes.RetrieveVgpuProfileInfo) soap.HasFault {
	return &vgputypes.RetrieveVgpuProfileInfoBody{Res: &vgputypes.RetrieveVgpuProfileInfoResponse{
		Returnval: gpu.VGPUProfileInfo([]*gpu.Host{m.host.Host})}}
}

func (m *graphicsManager) RetrieveVgpuDeviceInfo(req *vgputypes.RetrieveVgpuDeviceInfo) soap.HasFault {
	return &vgputypes.RetrieveVgpuDeviceInfoBody{Res: &vgputypes.RetrieveVgpuDeviceInfoResponse{
		Returnval: gpu.VGPUDeviceInfo([]*gpu.Host{m.host.Host})}}
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
		return &vgputypes.ArrayOfHostGraphicsInfo{HostGraphicsInfo: h.GraphicsInfoEx()}
	case types.HostGraphicsConfig, *types.HostGraphicsConfig:
		return *h.GraphicsConfigEx()
	case types.HostConfigInfo:
		return vgputypes.HostConfigInfo{HostConfigInfo: v, GraphicsInfo: h.GraphicsInfoEx(), GraphicsConfig: h.GraphicsConfigEx()}
	case *types.HostConfigInfo:
		return vgputypes.HostConfigInfo{HostConfigInfo: *v, GraphicsInfo: h.GraphicsInfoEx(), GraphicsConfig: h.GraphicsConfigEx()}
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
