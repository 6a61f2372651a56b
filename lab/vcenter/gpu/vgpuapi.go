package gpu

import (
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/catalog"
	"vcsim/vgputypes"
)

func gib(frameBufferMiB int64) int64 { return frameBufferMiB / 1024 }

func profileInfo(p *catalog.Profile) vgputypes.VirtualMachineVgpuProfileInfo {
	return vgputypes.VirtualMachineVgpuProfileInfo{
		VirtualMachineTargetInfo: types.VirtualMachineTargetInfo{Name: p.Name},
		ProfileName:              p.Name,
		DeviceVendorId:           NVIDIAVendorID,
		FbSizeInGib:              gib(p.FramebufferMiB),
		ProfileSharing:           p.Sharing,
		ProfileClass:             p.ProfileClass,
	}
}

func deviceInfo(m *catalog.GPUModel) vgputypes.VirtualMachineVgpuDeviceInfo {
	d := vgputypes.VirtualMachineVgpuDeviceInfo{
		VirtualMachineTargetInfo: types.VirtualMachineTargetInfo{Name: m.DeviceName},
		DeviceName:               m.DeviceName,
		DeviceVendorId:           NVIDIAVendorID,
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

// VGPUProfileInfo lists the profiles the hosts' GPUs offer, each once, in catalog order.
func VGPUProfileInfo(hosts []*Host) []vgputypes.VirtualMachineVgpuProfileInfo {
	var list []vgputypes.VirtualMachineVgpuProfileInfo
	seen := map[string]bool{}
	for _, h := range hosts {
		for _, name := range h.Profiles {
			if p := h.catalog.Profile(name); p != nil && !seen[name] {
				seen[name] = true
				list = append(list, profileInfo(p))
			}
		}
	}
	return list
}

// VGPUDeviceInfo lists the hosts' GPU models, each once.
func VGPUDeviceInfo(hosts []*Host) []vgputypes.VirtualMachineVgpuDeviceInfo {
	var list []vgputypes.VirtualMachineVgpuDeviceInfo
	seen := map[*catalog.GPUModel]bool{}
	for _, h := range hosts {
		for _, g := range h.GPUs {
			if !seen[g.Model] {
				seen[g.Model] = true
				list = append(list, deviceInfo(g.Model))
			}
		}
	}
	return list
}
