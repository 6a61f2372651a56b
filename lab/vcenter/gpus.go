package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/catalog"
	"vcsim/topology"
	"vcsim/vgputypes"
)

// PCI buses of the GPU slots of a typical two-socket GPU server, in slot order.

const (
	nvidiaVendorID   = 0x10de
	nvidiaVendorName = "NVIDIA Corporation"
	pciClass3D       = 0x0302 // display controller, 3D

	graphicsBasic        = "basic"
	graphicsShared       = "shared"
	graphicsSharedDirect = "sharedDirect"

	policyPerformance   = "performance"
	policyConsolidation = "consolidation"
)

var (
	configurableGraphicsTypes = []string{graphicsShared, graphicsSharedDirect}
	assignmentPolicies        = []string{policyPerformance, policyConsolidation}
)

// hostState is what the lab knows about a host beyond the simulator's HostSystem: its GPUs and graphics settings.
type hostState struct {
	lab  *Lab
	ref  types.ManagedObjectReference
	name string

	gpus     []*gpuDevice
	config   vgputypes.HostGraphicsConfig // as configured; GPUs follow it when Xorg restarts
	profiles []string                     // vGPU profiles the host's GPUs offer, catalog order

	xorgRestarts int
	services     []types.HostService

	// rebindNeedsReboot: passthrough changes wait for a reboot (HostCapability.deviceRebindWithoutRebootSupported
	// false); rebootDuration is how long a reboot keeps the host away; reboots counts them.
	rebindNeedsReboot bool
	rebootDuration    time.Duration
	reboots           int

	nvswitches []nvswitchDevice

	graphics *graphicsManager
	svc      *serviceSystem
}

// gpuDevice is one physical GPU of a host.
type gpuDevice struct {
	host   *hostState
	pciID  string
	bus    uint8
	model  *catalog.GPUModel
	active string      // graphics type in effect
	mode   string      // configured vGPU mode in effect ("" for the default)
	vgpus  []*vgpuSlot // vGPUs running on the GPU, in the order they started

	ecc          bool // ECC mode in effect, as the host's nvidia-smi reports it
	temperatureC int  // core temperature the host's nvidia-smi reports; POST /lab/gpus raises it
	nvlinkPeers  []*gpuDevice
	heldBy       *types.ManagedObjectReference // the running VM the GPU is passed through to
}

// vgpuSlot is a running vGPU: one VirtualPCIPassthrough device of a powered-on VM, placed on a physical GPU.
type vgpuSlot struct {
	vm      types.ManagedObjectReference
	key     int32
	profile string
	gpu     *gpuDevice
	at      int64 // mixed-size mode: the placement ID (GiB offset) it starts at; -1 in equal-size mode
}

// framebufferOf is the framebuffer of one of the GPU's vGPU profiles in MiB.
func (g *gpuDevice) framebufferOf(profile string) int64 {
	if p := g.model.Supports(profile); p != nil {
		return p.FramebufferMiB
	}
	return 0
}

func newHostState(l *Lab, ref types.ManagedObjectReference, name string, gpus []*topology.GPUSpec, models *catalog.Catalog) *hostState {
	h := &hostState{
		lab:  l,
		ref:  ref,
		name: name,
		config: vgputypes.HostGraphicsConfig{
			HostDefaultGraphicsType:        graphicsShared,
			SharedPassthruAssignmentPolicy: policyPerformance,
		},
		services:       defaultServices(),
		rebootDuration: topology.DefaultRebootDuration,
	}
	seen := map[string]bool{}
	for _, spec := range gpus {
		model := models.GPUs[spec.Model]
		for i := 0; i < spec.Count*model.GPUsPerBoard; i++ {
			bus := topology.GPUBuses[len(h.gpus)]
			h.gpus = append(h.gpus, &gpuDevice{
				host:         h,
				pciID:        fmt.Sprintf("0000:%02x:00.0", bus),
				bus:          bus,
				model:        model,
				active:       graphicsBasic,
				ecc:          spec.ECC != topology.ECCDisabled,
				temperatureC: idleTemperatureC,
			})
		}
		for _, p := range model.Profiles {
			if !seen[p.Name] {
				seen[p.Name] = true
				h.profiles = append(h.profiles, p.Name)
			}
		}
	}
	return h
}

func (h *hostState) gpu(pciID string) *gpuDevice {
	for _, g := range h.gpus {
		if g.pciID == pciID {
			return g
		}
	}
	return nil
}

func (h *hostState) pciIDs() string {
	if len(h.gpus) == 0 {
		return "none"
	}
	ids := make([]string, len(h.gpus))
	for i, g := range h.gpus {
		ids[i] = g.pciID
	}
	return strings.Join(ids, ", ")
}

// supports reports whether any GPU of the host offers the profile.
func (h *hostState) supports(profile string) bool {
	for _, p := range h.profiles {
		if p == profile {
			return true
		}
	}
	return false
}

func (h *hostState) gpuModels() string {
	var names []string
	seen := map[string]bool{}
	for _, g := range h.gpus {
		if !seen[g.model.ID] {
			seen[g.model.ID] = true
			names = append(names, g.model.DeviceName)
		}
	}
	if len(names) == 0 {
		return "no NVIDIA GPU"
	}
	return strings.Join(names, ", ")
}

// configuredType is the graphics type the GPU gets at the next Xorg restart.
func (g *gpuDevice) configuredType() string {
	for _, d := range g.host.config.DeviceType {
		if d.DeviceId == g.pciID {
			return d.GraphicsType
		}
	}
	return g.host.config.HostDefaultGraphicsType
}

// configuredMode is the vGPU mode the host's graphics configuration gives the GPU ("" for the default).
func (g *gpuDevice) configuredMode() string {
	for _, d := range g.host.config.DeviceType {
		if d.DeviceId == g.pciID {
			return d.VgpuMode
		}
	}
	return ""
}

// vgpuMode is HostGraphicsInfo.vgpuMode: none unless the GPU runs in Shared Direct, where vGPUs are equal-size
// unless mixed-size mode is configured and the GPU's model supports it.
func (g *gpuDevice) vgpuMode() string {
	switch {
	case g.active != graphicsSharedDirect:
		return vgputypes.ModeNone
	case g.mode == vgputypes.ModeMixedSize && g.model.MixedSizeCapable:
		return vgputypes.ModeMixedSize
	}
	return vgputypes.ModeSameSize
}

// profile is the vGPU profile the GPU is carved into, "" while no vGPU runs on it (equal-size mode: the first vGPU
// fixes it until the last one stops).
func (g *gpuDevice) profile() string {
	if len(g.vgpus) == 0 {
		return ""
	}
	return g.vgpus[0].profile
}

// vms lists the VMs running a vGPU on the GPU, each once.
func (g *gpuDevice) vms() []types.ManagedObjectReference {
	var refs []types.ManagedObjectReference
	seen := map[types.ManagedObjectReference]bool{}
	for _, s := range g.vgpus {
		if !seen[s.vm] {
			seen[s.vm] = true
			refs = append(refs, s.vm)
		}
	}
	return refs
}

// applyGraphicsConfig is what an Xorg (re)start does: each idle GPU switches to its configured type. A GPU with
// running vGPUs keeps its type until it is idle at a later restart.
func (h *hostState) applyGraphicsConfig() {
	for _, g := range h.gpus {
		want, wantMode := g.configuredType(), g.configuredMode()
		if g.active == want && g.mode == wantMode {
			continue
		}
		if len(g.vgpus) > 0 {
			h.lab.logf("host %s: GPU %s keeps graphics type %s: %d vGPU(s) running", h.name, g.pciID, g.active,
				len(g.vgpus))
			continue
		}
		h.lab.logf("host %s: GPU %s graphics type %s -> %s, vGPU mode %q -> %q", h.name, g.pciID, g.active, want,
			g.mode, wantMode)
		g.active, g.mode = want, wantMode
	}
}

func (h *hostState) sharedGraphicsActive() bool {
	for _, g := range h.gpus {
		if g.active == graphicsShared || g.active == graphicsSharedDirect {
			return true
		}
	}
	return false
}

func (h *hostState) pciDevices() []types.HostPciDevice {
	devices := make([]types.HostPciDevice, len(h.gpus))
	for i, g := range h.gpus {
		devices[i] = types.HostPciDevice{
			Id:           g.pciID,
			ClassId:      int16(pciClass3D),
			Bus:          g.bus,
			Slot:         0,
			Function:     0,
			VendorId:     int16(uint16(nvidiaVendorID)),
			SubVendorId:  int16(uint16(nvidiaVendorID)),
			VendorName:   nvidiaVendorName,
			DeviceId:     int16(g.model.DeviceID),
			SubDeviceId:  0,
			ParentBridge: fmt.Sprintf("0000:%02x:00.0", g.bus-1),
			DeviceName:   g.model.DeviceName,
		}
	}
	for _, s := range h.nvswitches {
		devices = append(devices, types.HostPciDevice{
			Id: s.pciID, ClassId: int16(pciClassOtherBridge), Bus: s.bus,
			VendorId: int16(uint16(nvidiaVendorID)), SubVendorId: int16(uint16(nvidiaVendorID)),
			VendorName: nvidiaVendorName, DeviceId: int16(s.deviceID),
			ParentBridge: fmt.Sprintf("0000:%02x:00.0", s.bus-1), DeviceName: s.name,
		})
	}
	return devices
}

// The views below are fresh copies: the simulator hands them to clients while the lab keeps changing its own state.

func (h *hostState) graphicsInfo() []types.HostGraphicsInfo {
	info := make([]types.HostGraphicsInfo, len(h.gpus))
	for i, g := range h.gpus {
		info[i] = types.HostGraphicsInfo{
			DeviceName:     g.model.DeviceName,
			VendorName:     nvidiaVendorName,
			PciId:          g.pciID,
			GraphicsType:   g.active,
			MemorySizeInKB: g.model.FramebufferMiB * 1024,
			Vm:             g.vms(),
		}
	}
	return info
}

// graphicsConfig is the configuration in govmomi's type, without vgpuMode (the property collector answers with
// graphicsConfigEx).
func (h *hostState) graphicsConfig() *types.HostGraphicsConfig {
	c := &types.HostGraphicsConfig{
		HostDefaultGraphicsType:        h.config.HostDefaultGraphicsType,
		SharedPassthruAssignmentPolicy: h.config.SharedPassthruAssignmentPolicy,
	}
	for _, d := range h.config.DeviceType {
		c.DeviceType = append(c.DeviceType, types.HostGraphicsConfigDeviceType{DeviceId: d.DeviceId,
			GraphicsType: d.GraphicsType})
	}
	return c
}

func (h *hostState) sharedGpuCapabilities() []types.HostSharedGpuCapabilities {
	caps := make([]types.HostSharedGpuCapabilities, len(h.profiles))
	for i, p := range h.profiles {
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

// publish copies the host's graphics state into its HostGraphicsManager and into HostSystem.config, through the
// registry so that property collector waiters see the change.
func (h *hostState) publish() {
	l := h.lab
	l.update(h.graphics,
		types.PropertyChange{Name: "graphicsInfo", Val: h.graphicsInfo()},
		types.PropertyChange{Name: "graphicsConfig", Val: h.graphicsConfig()},
		types.PropertyChange{Name: "sharedPassthruGpuTypes", Val: h.profileList()},
		types.PropertyChange{Name: "sharedGpuCapabilities", Val: h.sharedGpuCapabilities()},
	)
	host := l.hostObject(h.ref)
	if host == nil {
		return
	}
	l.update(host,
		types.PropertyChange{Name: "config.graphicsInfo", Val: h.graphicsInfo()},
		types.PropertyChange{Name: "config.graphicsConfig", Val: h.graphicsConfig()},
		types.PropertyChange{Name: "config.sharedPassthruGpuTypes", Val: h.profileList()},
		types.PropertyChange{Name: "config.sharedGpuCapabilities", Val: h.sharedGpuCapabilities()},
	)
}

func (h *hostState) profileList() []string {
	return append([]string(nil), h.profiles...)
}
