package gpu

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/catalog"
	"vcsim/vgputypes"
	"vcsim/vimfault"
)

const vgpuPlugin = "/usr/lib64/vmware/plugin/libnvidia-vgx.so"

// VGPU is a vGPU as configured on a VM: a VirtualPCIPassthrough with a VMIOP backing.
type VGPU struct {
	Key     int32
	Profile string
	Label   string
}

// VGPUProfile is the vGPU profile of a VM device, if it is a vGPU (a VMIOP backing).
func VGPUProfile(d types.BaseVirtualDevice) (string, bool) {
	backing, ok := pciBacking(d).(*types.VirtualPCIPassthroughVmiopBackingInfo)
	if !ok {
		return "", false
	}
	return backing.Vgpu, true
}

// pciBacking is the backing of a VM device that is a VirtualPCIPassthrough (a vGPU's or a whole device's), else nil.
func pciBacking(d types.BaseVirtualDevice) types.BaseVirtualDeviceBackingInfo {
	if pci, ok := d.(*types.VirtualPCIPassthrough); ok {
		return pci.Backing
	}
	return nil
}

// VGPUs lists a VM's vGPUs.
func VGPUs(devices []types.BaseVirtualDevice) []VGPU {
	var list []VGPU
	for _, d := range devices {
		if profile, ok := VGPUProfile(d); ok {
			v := d.GetVirtualDevice()
			list = append(list, VGPU{Key: v.Key, Profile: profile, Label: deviceLabel(v)})
		}
	}
	return list
}

// deviceLabel is the label vCenter shows for a device ("PCI device 0"), else one made from its key.
func deviceLabel(v *types.VirtualDevice) string {
	if v.DeviceInfo != nil && v.DeviceInfo.GetDescription().Label != "" {
		return v.DeviceInfo.GetDescription().Label
	}
	return fmt.Sprintf("device %d", v.Key)
}

func invalidDeviceSpec(index int, format string, args ...interface{}) *vimfault.Fault {
	return &vimfault.Fault{
		Fault: &types.InvalidDeviceSpec{
			InvalidVmConfig: types.InvalidVmConfig{Property: "spec.deviceChange.device.backing.vgpu"},
			DeviceIndex:     int32(index),
		},
		Msg: fmt.Sprintf("Invalid configuration for device '%d': %s", index, fmt.Sprintf(format, args...)),
	}
}

// CheckReconfigure applies vCenter's vGPU rules to a ReconfigVM_Task spec before anything changes.
func CheckReconfigure(vm *mo.VirtualMachine, host *Host, spec *types.VirtualMachineConfigSpec) *vimfault.Fault {
	devices := object.VirtualDeviceList(vm.Config.Hardware.Device)
	after := map[int32]string{} // vGPUs after the change: device key -> profile
	for _, d := range devices {
		if profile, ok := VGPUProfile(d); ok {
			after[d.GetVirtualDevice().Key] = profile
		}
	}
	var added []string
	var profileFault *vimfault.Fault
	checkProfile := func(index int, profile string) {
		if profileFault == nil {
			profileFault = checkHostProfile(host, index, profile)
		}
	}
	touched := false
	for i, change := range spec.DeviceChange {
		c := change.GetVirtualDeviceConfigSpec()
		key := c.Device.GetVirtualDevice().Key
		profile, isVgpu := VGPUProfile(c.Device)
		switch c.Operation {
		case types.VirtualDeviceConfigSpecOperationAdd:
			if isVgpu {
				touched = true
				checkProfile(i, profile)
				added = append(added, profile)
			}
		case types.VirtualDeviceConfigSpecOperationRemove, types.VirtualDeviceConfigSpecOperationEdit:
			existing := devices.FindByKey(key)
			if existing == nil {
				return invalidDeviceSpec(i, "virtual machine %s has no device with key %d", vm.Name, key)
			}
			_, wasVgpu := VGPUProfile(existing)
			touched = touched || wasVgpu || isVgpu
			delete(after, key)
			if c.Operation == types.VirtualDeviceConfigSpecOperationEdit && isVgpu {
				checkProfile(i, profile)
				after[key] = profile
			}
		}
	}
	if !touched {
		return nil
	}
	if state := vm.Runtime.PowerState; state != types.VirtualMachinePowerStatePoweredOff {
		return InvalidPowerState(types.VirtualMachinePowerStatePoweredOff, state)
	}
	if profileFault != nil {
		return profileFault
	}
	for _, p := range after {
		added = append(added, p)
	}
	if distinct := distinctSorted(added); len(distinct) > 1 {
		return invalidDeviceSpec(0, "all vGPUs of a virtual machine must have the same profile; %s would have %s",
			vm.Name, strings.Join(distinct, " and "))
	}
	return nil
}

// checkHostProfile refuses a vGPU profile the host's GPUs do not offer.
func checkHostProfile(host *Host, index int, profile string) *vimfault.Fault {
	if profile == "" {
		return invalidDeviceSpec(index, "the vGPU backing names no profile")
	}
	if host == nil || !host.supports(profile) {
		name, offer := "(unknown)", "none"
		if host != nil {
			name = host.Name
			if len(host.Profiles) > 0 {
				offer = strings.Join(host.Profiles, ", ")
			}
		}
		return invalidDeviceSpec(index, "vGPU profile %s is not supported by host %s (%s; profiles offered: %s)",
			profile, name, hostGPUs(host), offer)
	}
	return nil
}

func hostGPUs(h *Host) string {
	if h == nil {
		return "no NVIDIA GPU"
	}
	return h.gpuModels()
}

// InvalidPowerState is vCenter's InvalidPowerState with its wording.
func InvalidPowerState(requested, existing types.VirtualMachinePowerState) *vimfault.Fault {
	names := map[types.VirtualMachinePowerState]string{
		types.VirtualMachinePowerStatePoweredOn:  "Powered on",
		types.VirtualMachinePowerStatePoweredOff: "Powered off",
		types.VirtualMachinePowerStateSuspended:  "Suspended",
	}
	return &vimfault.Fault{
		Fault: &types.InvalidPowerState{RequestedState: requested, ExistingState: existing},
		Msg:   fmt.Sprintf("The attempted operation cannot be performed in the current state (%s).", names[existing]),
	}
}

func distinctSorted(values []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range values {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// Load is a GPU's vGPU load while a placement is being planned.
type Load struct {
	gpu     *Device
	mixed   bool   // the GPU runs in mixed-size mode
	profile string // equal-size mode: the profile the GPU is carved into
	count   int
	usedMiB int64
	spans   []span // mixed-size mode: the framebuffer ranges its vGPUs occupy
}

// span is the framebuffer range [start, end) in MiB that a vGPU occupies on a GPU in mixed-size mode.
type span struct{ start, end int64 }

// Placement is where one vGPU goes: its GPU and, in mixed-size mode, its placement ID (GiB offset), else -1.
type Placement struct {
	GPU *Device
	At  int64
}

// LoadsOf is the vGPU load of each of the host's GPUs, for planning placements.
func LoadsOf(h *Host) []*Load {
	loads := make([]*Load, len(h.GPUs))
	for i, g := range h.GPUs {
		l := &Load{gpu: g, mixed: g.VgpuMode() == vgputypes.ModeMixedSize, profile: g.Profile(), count: len(g.VGPUs)}
		for _, s := range g.VGPUs {
			fb := g.framebufferOf(s.Profile)
			l.usedMiB += fb
			if l.mixed {
				l.spans = append(l.spans, placementSpan(s.At, fb))
			}
		}
		loads[i] = l
	}
	return loads
}

func (g *Load) clone() *Load {
	c := *g
	c.spans = append([]span(nil), g.spans...)
	return &c
}

// Fit says where on the GPU one more vGPU of the profile goes (-1: no placement ID, equal-size mode), or why it
// cannot go there.
func (g *Load) Fit(profile string) (int64, string) {
	d := g.gpu
	switch p := d.Model.Supports(profile); {
	case d.PassthruActive():
		return -1, fmt.Sprintf("%s is passed through whole (DirectPath I/O)", d.PciID)
	case d.Active != GraphicsSharedDirect:
		why := fmt.Sprintf("%s is in graphics mode %s, not sharedDirect", d.PciID, d.Active)
		if want := d.ConfiguredType(); want != d.Active {
			why += fmt.Sprintf(" (%s is configured and applies when Xorg restarts)", want)
		}
		return -1, why
	case p == nil:
		return -1, fmt.Sprintf("%s (%s) does not offer %s", d.PciID, d.Model.DeviceName, profile)
	case g.mixed:
		return g.mixedFit(p)
	case g.profile != "" && g.profile != profile:
		return -1, fmt.Sprintf("%s runs %s (equal-size mode: one profile per GPU)", d.PciID, g.profile)
	case g.count >= p.MaxPerGPU:
		return -1, fmt.Sprintf("%s is full (%d of %d %s vGPUs)", d.PciID, g.count, p.MaxPerGPU, profile)
	}
	return -1, ""
}

// mixedFit is NVIDIA's mixed-size rule: a vGPU starts at one of its type's placement IDs and its framebuffer range
// must not overlap another vGPU's. The lowest free placement ID is taken (how vSphere chooses among free ones is
// not documented).
func (g *Load) mixedFit(p *catalog.Profile) (int64, string) {
	d := g.gpu
	if len(p.Placements) == 0 {
		return -1, fmt.Sprintf("%s is in mixed-size mode, where %s has no placement", d.PciID, p.Name)
	}
	for _, at := range p.Placements {
		if !g.overlaps(placementSpan(at, p.FramebufferMiB)) {
			return at, ""
		}
	}
	ids := make([]string, len(p.Placements))
	for i, at := range p.Placements {
		ids[i] = fmt.Sprint(at)
	}
	return -1, fmt.Sprintf("%s (mixed-size mode, %d of %d MiB in use) has no free placement for %s (placement IDs %s GiB)",
		d.PciID, g.usedMiB, d.Model.FramebufferMiB, p.Name, strings.Join(ids, ", "))
}

func placementSpan(at, frameBufferMiB int64) span {
	return span{start: at * 1024, end: at*1024 + frameBufferMiB}
}

func (g *Load) overlaps(s span) bool {
	for _, o := range g.spans {
		if s.start < o.end && o.start < s.end {
			return true
		}
	}
	return false
}

// preferred says whether g is a better choice than best. The host's assignment policy applies to equal-size GPUs
// (performance: least loaded, consolidation: most loaded, and equal-size GPUs before mixed-size ones); a GPU in
// mixed-size mode is chosen by the framebuffer in use, least first, whatever the policy. Ties keep the lower slot.
func (g *Load) preferred(best *Load, policy string) bool {
	switch {
	case best == nil:
		return true
	case policy == PolicyConsolidation && !g.mixed && !best.mixed:
		return g.count > best.count
	case policy == PolicyConsolidation && g.mixed != best.mixed:
		return !g.mixed
	}
	return g.usedMiB < best.usedMiB
}

// Place chooses a GPU for each vGPU (see preferred). loads is updated with the placements, so that one plan can span
// several VMs. On failure it returns the reasons of every GPU.
func Place(loads []*Load, devices []VGPU, policy string) ([]Placement, string) {
	chosen := make([]Placement, len(devices))
	for i, d := range devices {
		var best *Load
		bestAt := int64(-1)
		var reasons []string
		for _, g := range loads {
			at, why := g.Fit(d.Profile)
			if why != "" {
				reasons = append(reasons, why)
				continue
			}
			if g.preferred(best, policy) {
				best, bestAt = g, at
			}
		}
		if best == nil {
			if len(reasons) == 0 {
				reasons = append(reasons, "the host has no NVIDIA GPU")
			}
			return nil, strings.Join(reasons, "; ")
		}
		fb := best.gpu.framebufferOf(d.Profile)
		if best.mixed {
			best.spans = append(best.spans, placementSpan(bestAt, fb))
		} else {
			best.profile = d.Profile
		}
		best.count++
		best.usedMiB += fb
		chosen[i] = Placement{GPU: best.gpu, At: bestAt}
	}
	return chosen, ""
}

// PlanPowerOn checks what vSphere checks when a VM with vGPUs powers on and chooses its GPUs.
func PlanPowerOn(vm *mo.VirtualMachine, h *Host) ([]Placement, *vimfault.Fault) {
	devices := VGPUs(vm.Config.Hardware.Device)
	if len(devices) == 0 {
		return nil, nil
	}
	if fault := fullReservation(vm); fault != nil {
		return nil, fault
	}
	for _, d := range devices {
		if h == nil || !h.supports(d.Profile) {
			name := "(unknown)"
			if h != nil {
				name = h.Name
			}
			return nil, genericVMConfigFault(fmt.Sprintf("Could not initialize plugin '%s' for vGPU '%s': host %s "+
				"(%s) does not offer this profile.", vgpuPlugin, d.Profile, name, hostGPUs(h)))
		}
	}
	chosen, why := Place(LoadsOf(h), devices, h.Config.SharedPassthruAssignmentPolicy)
	if why != "" {
		return nil, insufficientGraphics(vm.Name, h.Name, devices[0].Profile, why)
	}
	return chosen, nil
}

func genericVMConfigFault(reason string) *vimfault.Fault {
	return &vimfault.Fault{Fault: &types.GenericVmConfigFault{Reason: reason}, Msg: reason}
}

func insufficientGraphics(vm, host, profile, why string) *vimfault.Fault {
	return &vimfault.Fault{
		Fault: &types.InsufficientGraphicsResourcesFault{},
		Msg: fmt.Sprintf("Insufficient graphics resources for vGPU %s of virtual machine %s on host %s: %s.",
			profile, vm, host, why),
	}
}

// ReservationMB is the memory the VM reserves in MB.
func ReservationMB(vm *mo.VirtualMachine) int64 {
	if a := vm.Config.MemoryAllocation; a != nil && a.Reservation != nil {
		return *a.Reservation
	}
	return 0
}

// fullReservation is what vSphere asks of a VM with vGPUs or passthrough devices that powers on: all its memory
// reserved (or the reservation locked to the memory size).
func fullReservation(vm *mo.VirtualMachine) *vimfault.Fault {
	memory := int64(vm.Config.Hardware.MemoryMB)
	if !isTrue(vm.Config.MemoryReservationLockedToMax) && ReservationMB(vm) < memory {
		return genericVMConfigFault(fmt.Sprintf("Invalid memory setting: memory reservation (sched.mem.min) "+
			"should be equal to memsize(%d).", memory))
	}
	return nil
}

func isTrue(b *bool) bool { return b != nil && *b }

// CloneLoads copies loads, so that a plan can be tried without changing them.
func CloneLoads(loads []*Load) []*Load {
	out := make([]*Load, len(loads))
	for i, g := range loads {
		out[i] = g.clone()
	}
	return out
}
