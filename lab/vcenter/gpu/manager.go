package gpu

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vgputypes"
)

// GraphicsManager is a host's HostGraphicsManager (configManager.graphicsManager).
type GraphicsManager struct {
	mo.HostGraphicsManager

	host *Host
}

// NewGraphicsManager is the host's HostGraphicsManager with its graphics state; the lab registers it.
func NewGraphicsManager(h *Host) *GraphicsManager {
	m := &GraphicsManager{host: h}
	// One manager per host: the ESXi default id (ha-graphics-manager) would collide between hosts.
	m.Self = types.ManagedObjectReference{Type: "HostGraphicsManager", Value: "graphicsManager-" + h.Ref.Value}
	m.GraphicsInfo = h.GraphicsInfo()
	m.GraphicsConfig = h.GraphicsConfig()
	m.SharedPassthruGpuTypes = h.ProfileList()
	m.SharedGpuCapabilities = h.SharedGpuCapabilities()
	return m
}

func (m *GraphicsManager) UpdateGraphicsConfig(req *vgputypes.UpdateGraphicsConfig) soap.HasFault {
	body := &methods.UpdateGraphicsConfigBody{}
	if f := m.host.UpdateConfig(req.Config); f != nil {
		body.Fault_ = f.SOAP()
		return body
	}
	m.host.publish()
	body.Res = &types.UpdateGraphicsConfigResponse{}
	return body
}

// RefreshGraphicsManager re-reads device information; it does not apply a configuration (only Xorg does).
func (m *GraphicsManager) RefreshGraphicsManager(req *types.RefreshGraphicsManager) soap.HasFault {
	m.host.publish()
	return &methods.RefreshGraphicsManagerBody{Res: &types.RefreshGraphicsManagerResponse{}}
}

func (m *GraphicsManager) IsSharedGraphicsActive(req *types.IsSharedGraphicsActive) soap.HasFault {
	return &methods.IsSharedGraphicsActiveBody{
		Res: &types.IsSharedGraphicsActiveResponse{Returnval: m.host.SharedGraphicsActive()},
	}
}

func (m *GraphicsManager) RetrieveVgpuProfileInfo(req *vgputypes.RetrieveVgpuProfileInfo) soap.HasFault {
	return &vgputypes.RetrieveVgpuProfileInfoBody{Res: &vgputypes.RetrieveVgpuProfileInfoResponse{
		Returnval: VGPUProfileInfo([]*Host{m.host})}}
}

func (m *GraphicsManager) RetrieveVgpuDeviceInfo(req *vgputypes.RetrieveVgpuDeviceInfo) soap.HasFault {
	return &vgputypes.RetrieveVgpuDeviceInfoBody{Res: &vgputypes.RetrieveVgpuDeviceInfoResponse{
		Returnval: VGPUDeviceInfo([]*Host{m.host})}}
}

// ExtendProperty puts the lab's graphics types in place of govmomi's in a property value of a host or of its
// graphics manager, so that clients read vgpuMode.
func ExtendProperty(ctx *simulator.Context, obj types.ManagedObjectReference, val types.AnyType) types.AnyType {
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
func graphicsHost(ctx *simulator.Context, ref types.ManagedObjectReference) *Host {
	switch obj := ctx.Map.Get(ref).(type) {
	case *GraphicsManager:
		return obj.host
	case *simulator.HostSystem:
		if obj.ConfigManager.GraphicsManager != nil {
			if m, ok := ctx.Map.Get(*obj.ConfigManager.GraphicsManager).(*GraphicsManager); ok {
				return m.host
			}
		}
	}
	return nil
}
