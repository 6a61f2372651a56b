package main

import (
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vgputypes"
)

// graphicsManager is a host's HostGraphicsManager (configManager.graphicsManager).
type graphicsManager struct {
	mo.HostGraphicsManager

	host *hostState
}

func newGraphicsManager(h *hostState) *graphicsManager {
	m := &graphicsManager{host: h}
	// One manager per host: the ESXi default id (ha-graphics-manager) would collide between hosts.
	m.Self = types.ManagedObjectReference{Type: "HostGraphicsManager", Value: "graphicsManager-" + h.Ref.Value}
	m.GraphicsInfo = h.GraphicsInfo()
	m.GraphicsConfig = h.GraphicsConfig()
	m.SharedPassthruGpuTypes = h.ProfileList()
	m.SharedGpuCapabilities = h.SharedGpuCapabilities()
	return m
}

func (m *graphicsManager) UpdateGraphicsConfig(req *vgputypes.UpdateGraphicsConfig) soap.HasFault {
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
func (m *graphicsManager) RefreshGraphicsManager(req *types.RefreshGraphicsManager) soap.HasFault {
	m.host.publish()
	return &methods.RefreshGraphicsManagerBody{Res: &types.RefreshGraphicsManagerResponse{}}
}

func (m *graphicsManager) IsSharedGraphicsActive(req *types.IsSharedGraphicsActive) soap.HasFault {
	return &methods.IsSharedGraphicsActiveBody{
		Res: &types.IsSharedGraphicsActiveResponse{Returnval: m.host.SharedGraphicsActive()},
	}
}
