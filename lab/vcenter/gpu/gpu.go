// Package gpu is the lab's GPU device model: a host's NVIDIA GPUs and NVSwitches, its graphics configuration and
// Xorg's part in it, the vGPUs running on each GPU and vCenter's rules for placing them (equal-size and mixed-size
// modes, the host's assignment policy), whole-GPU passthrough (DirectPath I/O) and the faults vCenter answers when a
// rule refuses, and the host's HostGraphicsManager. What it needs of the lab (its log, VM names, the host's
// passthrough state, publishing a change) is its Lab interface.
package gpu

import (
	"fmt"
	"strings"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/catalog"
	"vcsim/topology"
	"vcsim/vgputypes"
)

// NVIDIA's PCI identity, the graphics types of HostGraphicsInfo and HostGraphicsConfig, and the assignment
// policies of Shared Direct GPUs.
const (
	NVIDIAVendorID   = 0x10de
	NVIDIAVendorName = "NVIDIA Corporation"
	PCIClass3D       = 0x0302 // display controller, 3D

	GraphicsBasic        = "basic"
	GraphicsShared       = "shared"
	GraphicsSharedDirect = "sharedDirect"

	PolicyPerformance   = "performance"
	PolicyConsolidation = "consolidation"

	// IdleTemperatureC is the core temperature an idle GPU's nvidia-smi reports: an idle passive datacenter GPU in
	// a cooled server; the value is the lab's choice.
	IdleTemperatureC = 34
)

var (
	configurableGraphicsTypes = []string{GraphicsShared, GraphicsSharedDirect}
	assignmentPolicies        = []string{PolicyPerformance, PolicyConsolidation}
)

// Lab is what the device model needs of the lab: its log, the names of VMs, a host's passthrough state
// (HostPciPassthruInfo of a device, nil when it has none), and publishing a host's graphics state to the
// simulator's objects (its GraphicsManager and HostSystem.config) once it changed.
type Lab interface {
	Logf(format string, args ...interface{})
	VMName(ref types.ManagedObjectReference) string
	PassthruInfo(host types.ManagedObjectReference, pciID string) *types.HostPciPassthruInfo
	Publish(host types.ManagedObjectReference)
}

// Host is a host's GPUs and graphics settings.
type Host struct {
	Ref  types.ManagedObjectReference
	Name string

	GPUs       []*Device
	Config     vgputypes.HostGraphicsConfig // as configured; GPUs follow it when Xorg restarts
	Profiles   []string                     // vGPU profiles the host's GPUs offer, catalog order
	NVSwitches []NVSwitch

	lab     Lab
	catalog *catalog.Catalog
}

// NewHost is a host with the GPUs of a topology, in the PCI slots of topology.GPUBuses, all in graphics type basic
// until Xorg starts; lab may be nil (no log, no VM names, no passthrough, nothing published).
func NewHost(lab Lab, ref types.ManagedObjectReference, name string, gpus []*topology.GPUSpec, models *catalog.Catalog) *Host {
	h := &Host{
		Ref:  ref,
		Name: name,
		Config: vgputypes.HostGraphicsConfig{
			HostDefaultGraphicsType:        GraphicsShared,
			SharedPassthruAssignmentPolicy: PolicyPerformance,
		},
		lab:     lab,
		catalog: models,
	}
	seen := map[string]bool{}
	for _, spec := range gpus {
		model := models.GPUs[spec.Model]
		for i := 0; i < spec.Count*model.GPUsPerBoard; i++ {
			bus := topology.GPUBuses[len(h.GPUs)]
			h.GPUs = append(h.GPUs, &Device{
				Host:         h,
				PciID:        fmt.Sprintf("0000:%02x:00.0", bus),
				Bus:          bus,
				Model:        model,
				Active:       GraphicsBasic,
				ECC:          spec.ECC != topology.ECCDisabled,
				TemperatureC: IdleTemperatureC,
			})
		}
		for _, p := range model.Profiles {
			if !seen[p.Name] {
				seen[p.Name] = true
				h.Profiles = append(h.Profiles, p.Name)
			}
		}
	}
	return h
}

func (h *Host) logf(format string, args ...interface{}) {
	if h.lab != nil {
		h.lab.Logf(format, args...)
	}
}

func (h *Host) vmName(ref types.ManagedObjectReference) string {
	if h.lab == nil {
		return ""
	}
	return h.lab.VMName(ref)
}

func (h *Host) publish() {
	if h.lab != nil {
		h.lab.Publish(h.Ref)
	}
}

func (h *Host) passthruInfo(pciID string) *types.HostPciPassthruInfo {
	if h.lab == nil {
		return nil
	}
	return h.lab.PassthruInfo(h.Ref, pciID)
}

// Device is one physical GPU of a host.
type Device struct {
	Host   *Host
	PciID  string
	Bus    uint8
	Model  *catalog.GPUModel
	Active string  // graphics type in effect
	Mode   string  // configured vGPU mode in effect ("" for the default)
	VGPUs  []*Slot // vGPUs running on the GPU, in the order they started

	ECC          bool // ECC mode in effect, as the host's nvidia-smi reports it
	TemperatureC int  // core temperature the host's nvidia-smi reports; POST /lab/gpus raises it
	NVLinkPeers  []*Device
	HeldBy       *types.ManagedObjectReference // the running VM the GPU is passed through to
}

// Slot is a running vGPU: one VirtualPCIPassthrough device of a powered-on VM, placed on a physical GPU.
type Slot struct {
	VM      types.ManagedObjectReference
	Key     int32
	Profile string
	GPU     *Device
	At      int64 // mixed-size mode: the placement ID (GiB offset) it starts at; -1 in equal-size mode
}

// framebufferOf is the framebuffer of one of the GPU's vGPU profiles in MiB.
func (g *Device) framebufferOf(profile string) int64 {
	if p := g.Model.Supports(profile); p != nil {
		return p.FramebufferMiB
	}
	return 0
}

// GPU is the host's GPU at a PCI address, or nil.
func (h *Host) GPU(pciID string) *Device {
	for _, g := range h.GPUs {
		if g.PciID == pciID {
			return g
		}
	}
	return nil
}

// PCIIDs lists the PCI addresses of the host's GPUs ("none" for none).
func (h *Host) PCIIDs() string {
	if len(h.GPUs) == 0 {
		return "none"
	}
	ids := make([]string, len(h.GPUs))
	for i, g := range h.GPUs {
		ids[i] = g.PciID
	}
	return strings.Join(ids, ", ")
}

// supports reports whether any GPU of the host offers the profile.
func (h *Host) supports(profile string) bool {
	for _, p := range h.Profiles {
		if p == profile {
			return true
		}
	}
	return false
}

func (h *Host) gpuModels() string {
	var names []string
	seen := map[string]bool{}
	for _, g := range h.GPUs {
		if !seen[g.Model.ID] {
			seen[g.Model.ID] = true
			names = append(names, g.Model.DeviceName)
		}
	}
	if len(names) == 0 {
		return "no NVIDIA GPU"
	}
	return strings.Join(names, ", ")
}

// ConfiguredType is the graphics type the GPU gets at the next Xorg restart.
func (g *Device) ConfiguredType() string {
	for _, d := range g.Host.Config.DeviceType {
		if d.DeviceId == g.PciID {
			return d.GraphicsType
		}
	}
	return g.Host.Config.HostDefaultGraphicsType
}

// configuredMode is the vGPU mode the host's graphics configuration gives the GPU ("" for the default).
func (g *Device) configuredMode() string {
	for _, d := range g.Host.Config.DeviceType {
		if d.DeviceId == g.PciID {
			return d.VgpuMode
		}
	}
	return ""
}

// VgpuMode is HostGraphicsInfo.vgpuMode: none unless the GPU runs in Shared Direct, where vGPUs are equal-size
// unless mixed-size mode is configured and the GPU's model supports it.
func (g *Device) VgpuMode() string {
	switch {
	case g.Active != GraphicsSharedDirect:
		return vgputypes.ModeNone
	case g.Mode == vgputypes.ModeMixedSize && g.Model.MixedSizeCapable:
		return vgputypes.ModeMixedSize
	}
	return vgputypes.ModeSameSize
}

// Profile is the vGPU profile the GPU is carved into, "" while no vGPU runs on it (equal-size mode: the first vGPU
// fixes it until the last one stops).
func (g *Device) Profile() string {
	if len(g.VGPUs) == 0 {
		return ""
	}
	return g.VGPUs[0].Profile
}

// VMs lists the VMs running a vGPU on the GPU, each once.
func (g *Device) VMs() []types.ManagedObjectReference {
	var refs []types.ManagedObjectReference
	seen := map[types.ManagedObjectReference]bool{}
	for _, s := range g.VGPUs {
		if !seen[s.VM] {
			seen[s.VM] = true
			refs = append(refs, s.VM)
		}
	}
	return refs
}

// ApplyConfig is what an Xorg (re)start does: each idle GPU switches to its configured type. A GPU with
// running vGPUs keeps its type until it is idle at a later restart.
func (h *Host) ApplyConfig() {
	for _, g := range h.GPUs {
		want, wantMode := g.ConfiguredType(), g.configuredMode()
		if g.Active == want && g.Mode == wantMode {
			continue
		}
		if len(g.VGPUs) > 0 {
			h.logf("host %s: GPU %s keeps graphics type %s: %d vGPU(s) running", h.Name, g.PciID, g.Active,
				len(g.VGPUs))
			continue
		}
		h.logf("host %s: GPU %s graphics type %s -> %s, vGPU mode %q -> %q", h.Name, g.PciID, g.Active, want,
			g.Mode, wantMode)
		g.Active, g.Mode = want, wantMode
	}
}

// SharedGraphicsActive is HostGraphicsManager.IsSharedGraphicsActive: a GPU runs in Shared or Shared Direct.
func (h *Host) SharedGraphicsActive() bool {
	for _, g := range h.GPUs {
		if g.Active == GraphicsShared || g.Active == GraphicsSharedDirect {
			return true
		}
	}
	return false
}

// PCIDevices are the host's GPUs and NVSwitches as HostSystem.hardware.pciDevice lists them.
func (h *Host) PCIDevices() []types.HostPciDevice {
	devices := make([]types.HostPciDevice, len(h.GPUs))
	for i, g := range h.GPUs {
		devices[i] = types.HostPciDevice{
			Id:           g.PciID,
			ClassId:      int16(PCIClass3D),
			Bus:          g.Bus,
			Slot:         0,
			Function:     0,
			VendorId:     int16(uint16(NVIDIAVendorID)),
			SubVendorId:  int16(uint16(NVIDIAVendorID)),
			VendorName:   NVIDIAVendorName,
			DeviceId:     int16(g.Model.DeviceID),
			SubDeviceId:  0,
			ParentBridge: fmt.Sprintf("0000:%02x:00.0", g.Bus-1),
			DeviceName:   g.Model.DeviceName,
		}
	}
	for _, s := range h.NVSwitches {
		devices = append(devices, types.HostPciDevice{
			Id: s.PciID, ClassId: int16(PCIClassOtherBridge), Bus: s.Bus,
			VendorId: int16(uint16(NVIDIAVendorID)), SubVendorId: int16(uint16(NVIDIAVendorID)),
			VendorName: NVIDIAVendorName, DeviceId: int16(s.DeviceID),
			ParentBridge: fmt.Sprintf("0000:%02x:00.0", s.Bus-1), DeviceName: s.Name,
		})
	}
	return devices
}

// The views below are fresh copies: the simulator hands them to clients while the lab keeps changing its own state.

// GraphicsInfo is HostGraphicsInfo of each GPU in govmomi's type, without vgpuMode.
func (h *Host) GraphicsInfo() []types.HostGraphicsInfo {
	info := make([]types.HostGraphicsInfo, len(h.GPUs))
	for i, g := range h.GPUs {
		info[i] = types.HostGraphicsInfo{
			DeviceName:     g.Model.DeviceName,
			VendorName:     NVIDIAVendorName,
			PciId:          g.PciID,
			GraphicsType:   g.Active,
			MemorySizeInKB: g.Model.FramebufferMiB * 1024,
			Vm:             g.VMs(),
		}
	}
	return info
}

// GraphicsConfig is the configuration in govmomi's type, without vgpuMode (the property collector answers with
// graphicsConfigEx).
func (h *Host) GraphicsConfig() *types.HostGraphicsConfig {
	c := &types.HostGraphicsConfig{
		HostDefaultGraphicsType:        h.Config.HostDefaultGraphicsType,
		SharedPassthruAssignmentPolicy: h.Config.SharedPassthruAssignmentPolicy,
	}
	for _, d := range h.Config.DeviceType {
		c.DeviceType = append(c.DeviceType, types.HostGraphicsConfigDeviceType{DeviceId: d.DeviceId,
			GraphicsType: d.GraphicsType})
	}
	return c
}

// SharedGpuCapabilities lists what each of the host's vGPU profiles supports.
func (h *Host) SharedGpuCapabilities() []types.HostSharedGpuCapabilities {
	caps := make([]types.HostSharedGpuCapabilities, len(h.Profiles))
	for i, p := range h.Profiles {
		caps[i] = types.HostSharedGpuCapabilities{
			Vgpu:                    p,
			DiskSnapshotSupported:   true,
			MemorySnapshotSupported: true,
			SuspendSupported:        true,
			MigrateSupported:        true,
		}
	}
	return caps
}

// ProfileList is a copy of the host's vGPU profiles (sharedPassthruGpuTypes).
func (h *Host) ProfileList() []string {
	return append([]string(nil), h.Profiles...)
}
