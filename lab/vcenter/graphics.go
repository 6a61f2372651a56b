package main

import (
	"fmt"
	"strings"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/lists"
	"vcsim/vgputypes"
	"vcsim/vimfault"
)

// graphicsManager is a host's HostGraphicsManager (configManager.graphicsManager).
type graphicsManager struct {
	mo.HostGraphicsManager

	host *hostState
}

func newGraphicsManager(h *hostState) *graphicsManager {
	m := &graphicsManager{host: h}
	// One manager per host: the ESXi default id (ha-graphics-manager) would collide between hosts.
	m.Self = types.ManagedObjectReference{Type: "HostGraphicsManager", Value: "graphicsManager-" + h.ref.Value}
	m.GraphicsInfo = h.graphicsInfo()
	m.GraphicsConfig = h.graphicsConfig()
	m.SharedPassthruGpuTypes = h.profileList()
	m.SharedGpuCapabilities = h.sharedGpuCapabilities()
	return m
}

func (m *graphicsManager) UpdateGraphicsConfig(req *vgputypes.UpdateGraphicsConfig) soap.HasFault {
	body := &methods.UpdateGraphicsConfigBody{}
	if f := m.host.updateGraphicsConfig(req.Config); f != nil {
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
		Res: &types.IsSharedGraphicsActiveResponse{Returnval: m.host.sharedGraphicsActive()},
	}
}

// updateGraphicsConfig validates the whole request first, then stores it: fields given replace the stored ones,
// deviceType entries replace the stored entry of the same deviceId.
func (h *hostState) updateGraphicsConfig(c vgputypes.HostGraphicsConfig) *vimfault.Fault {
	if c.HostDefaultGraphicsType != "" && !lists.Contains(configurableGraphicsTypes, c.HostDefaultGraphicsType) {
		return vimfault.InvalidArgument("config.hostDefaultGraphicsType", "%q is not one of %s", c.HostDefaultGraphicsType,
			strings.Join(configurableGraphicsTypes, ", "))
	}
	if c.SharedPassthruAssignmentPolicy != "" && !lists.Contains(assignmentPolicies, c.SharedPassthruAssignmentPolicy) {
		return vimfault.InvalidArgument("config.sharedPassthruAssignmentPolicy", "%q is not one of %s",
			c.SharedPassthruAssignmentPolicy, strings.Join(assignmentPolicies, ", "))
	}
	for _, d := range c.DeviceType {
		if h.gpu(d.DeviceId) == nil {
			return vimfault.InvalidArgument("config.deviceType.deviceId", "%q is not a graphics device of host %s "+
				"(its graphics devices: %s)", d.DeviceId, h.name, h.pciIDs())
		}
		if !lists.Contains(configurableGraphicsTypes, d.GraphicsType) {
			return vimfault.InvalidArgument("config.deviceType.graphicsType", "%q for device %s is not one of %s",
				d.GraphicsType, d.DeviceId, strings.Join(configurableGraphicsTypes, ", "))
		}
		if d.VgpuMode != "" && !lists.Contains(vgputypes.ConfigurableModes, d.VgpuMode) {
			return vimfault.InvalidArgument("config.deviceType.vgpuMode", "%q for device %s is not one of %s",
				d.VgpuMode, d.DeviceId, strings.Join(vgputypes.ConfigurableModes, ", "))
		}
		if f := h.gpu(d.DeviceId).modeChangeInUse(d.VgpuMode); f != nil {
			return f
		}
	}
	if c.HostDefaultGraphicsType != "" {
		h.config.HostDefaultGraphicsType = c.HostDefaultGraphicsType
	}
	if c.SharedPassthruAssignmentPolicy != "" {
		h.config.SharedPassthruAssignmentPolicy = c.SharedPassthruAssignmentPolicy
	}
	for _, d := range c.DeviceType {
		replaced := false
		for i := range h.config.DeviceType {
			if h.config.DeviceType[i].DeviceId == d.DeviceId {
				h.config.DeviceType[i] = vgputypes.HostGraphicsConfigDeviceType{DeviceId: d.DeviceId,
					GraphicsType: d.GraphicsType, VgpuMode: d.VgpuMode}
				replaced = true
			}
		}
		if !replaced {
			h.config.DeviceType = append(h.config.DeviceType, vgputypes.HostGraphicsConfigDeviceType{
				DeviceId: d.DeviceId, GraphicsType: d.GraphicsType, VgpuMode: d.VgpuMode,
			})
		}
	}
	h.lab.logf("host %s: graphics config now default=%s policy=%s devices=%s", h.name,
		h.config.HostDefaultGraphicsType, h.config.SharedPassthruAssignmentPolicy, deviceTypes(h.config.DeviceType))
	return nil
}

// modeChangeInUse refuses a new vGPU mode for a GPU that runs vGPUs: their placement depends on the mode. The
// fault and its wording are the lab's choice; how vCenter 8.0.3 answers this is not confirmed.
func (g *gpuDevice) modeChangeInUse(mode string) *vimfault.Fault {
	if len(g.vgpus) == 0 || effectiveMode(mode) == effectiveMode(g.configuredMode()) {
		return nil
	}
	var vms []string
	for _, ref := range g.vms() {
		vms = append(vms, name(ref))
	}
	reason := fmt.Sprintf("the vGPU mode of device %s cannot change from %s to %s while vGPUs run on it (virtual "+
		"machines %s)", g.pciID, effectiveMode(g.configuredMode()), effectiveMode(mode), strings.Join(vms, ", "))
	return &vimfault.Fault{Fault: &types.InvalidState{},
		Msg: "The operation is not allowed in the current state: " + reason + "."}
}

// effectiveMode is a configured vGPU mode with the default spelled out.
func effectiveMode(mode string) string {
	if mode == "" {
		return vgputypes.ModeSameSize
	}
	return mode
}

func deviceTypes(list []vgputypes.HostGraphicsConfigDeviceType) string {
	parts := make([]string, len(list))
	for i, d := range list {
		parts[i] = d.DeviceId + "=" + d.GraphicsType
		if d.VgpuMode != "" {
			parts[i] += "/" + d.VgpuMode
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}
