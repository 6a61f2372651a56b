package gpu

import (
	"fmt"
	"strings"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/lists"
	"vcsim/vgputypes"
	"vcsim/vimfault"
)

// UpdateConfig validates the whole request first, then stores it: fields given replace the stored ones,
// deviceType entries replace the stored entry of the same deviceId.
func (h *Host) UpdateConfig(c vgputypes.HostGraphicsConfig) *vimfault.Fault {
	if c.HostDefaultGraphicsType != "" && !lists.Contains(configurableGraphicsTypes, c.HostDefaultGraphicsType) {
		return vimfault.InvalidArgument("config.hostDefaultGraphicsType", "%q is not one of %s", c.HostDefaultGraphicsType,
			strings.Join(configurableGraphicsTypes, ", "))
	}
	if c.SharedPassthruAssignmentPolicy != "" && !lists.Contains(assignmentPolicies, c.SharedPassthruAssignmentPolicy) {
		return vimfault.InvalidArgument("config.sharedPassthruAssignmentPolicy", "%q is not one of %s",
			c.SharedPassthruAssignmentPolicy, strings.Join(assignmentPolicies, ", "))
	}
	for _, d := range c.DeviceType {
		if h.GPU(d.DeviceId) == nil {
			return vimfault.InvalidArgument("config.deviceType.deviceId", "%q is not a graphics device of host %s "+
				"(its graphics devices: %s)", d.DeviceId, h.Name, h.PCIIDs())
		}
		if !lists.Contains(configurableGraphicsTypes, d.GraphicsType) {
			return vimfault.InvalidArgument("config.deviceType.graphicsType", "%q for device %s is not one of %s",
				d.GraphicsType, d.DeviceId, strings.Join(configurableGraphicsTypes, ", "))
		}
		if d.VgpuMode != "" && !lists.Contains(vgputypes.ConfigurableModes, d.VgpuMode) {
			return vimfault.InvalidArgument("config.deviceType.vgpuMode", "%q for device %s is not one of %s",
				d.VgpuMode, d.DeviceId, strings.Join(vgputypes.ConfigurableModes, ", "))
		}
		if f := h.GPU(d.DeviceId).modeChangeInUse(d.VgpuMode); f != nil {
			return f
		}
	}
	if c.HostDefaultGraphicsType != "" {
		h.Config.HostDefaultGraphicsType = c.HostDefaultGraphicsType
	}
	if c.SharedPassthruAssignmentPolicy != "" {
		h.Config.SharedPassthruAssignmentPolicy = c.SharedPassthruAssignmentPolicy
	}
	for _, d := range c.DeviceType {
		replaced := false
		for i := range h.Config.DeviceType {
			if h.Config.DeviceType[i].DeviceId == d.DeviceId {
				h.Config.DeviceType[i] = vgputypes.HostGraphicsConfigDeviceType{DeviceId: d.DeviceId,
					GraphicsType: d.GraphicsType, VgpuMode: d.VgpuMode}
				replaced = true
			}
		}
		if !replaced {
			h.Config.DeviceType = append(h.Config.DeviceType, vgputypes.HostGraphicsConfigDeviceType{
				DeviceId: d.DeviceId, GraphicsType: d.GraphicsType, VgpuMode: d.VgpuMode,
			})
		}
	}
	h.logf("host %s: graphics config now default=%s policy=%s devices=%s", h.Name,
		h.Config.HostDefaultGraphicsType, h.Config.SharedPassthruAssignmentPolicy, deviceTypes(h.Config.DeviceType))
	return nil
}

// modeChangeInUse refuses a new vGPU mode for a GPU that runs vGPUs: their placement depends on the mode. The
// fault and its wording are the lab's choice; how vCenter 8.0.3 answers this is not confirmed.
func (g *Device) modeChangeInUse(mode string) *vimfault.Fault {
	if len(g.VGPUs) == 0 || effectiveMode(mode) == effectiveMode(g.configuredMode()) {
		return nil
	}
	var vms []string
	for _, ref := range g.VMs() {
		vms = append(vms, g.Host.vmName(ref))
	}
	reason := fmt.Sprintf("the vGPU mode of device %s cannot change from %s to %s while vGPUs run on it (virtual "+
		"machines %s)", g.PciID, effectiveMode(g.configuredMode()), effectiveMode(mode), strings.Join(vms, ", "))
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

// GraphicsInfoEx is HostGraphicsInfo with each GPU's vGPU mode in effect.
func (h *Host) GraphicsInfoEx() []vgputypes.HostGraphicsInfo {
	info := make([]vgputypes.HostGraphicsInfo, len(h.GPUs))
	for i, g := range h.GPUs {
		info[i] = vgputypes.HostGraphicsInfo{
			DeviceName:     g.Model.DeviceName,
			VendorName:     NVIDIAVendorName,
			PciId:          g.PciID,
			GraphicsType:   g.Active,
			VgpuMode:       g.VgpuMode(),
			MemorySizeInKB: g.Model.FramebufferMiB * 1024,
			Vm:             g.VMs(),
		}
	}
	return info
}

// GraphicsConfigEx is the configuration with each device's vgpuMode.
func (h *Host) GraphicsConfigEx() *vgputypes.HostGraphicsConfig {
	c := h.Config
	c.DeviceType = append([]vgputypes.HostGraphicsConfigDeviceType(nil), h.Config.DeviceType...)
	return &c
}
