package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/catalog"
	"vcsim/vgputypes"
	"vcsim/vimfault"
)

const (
	firstPCIPassthroughKey = 13000 // vCenter numbers PCI passthrough devices from here
	pciControllerKey       = 100
	vgpuPlugin             = "/usr/lib64/vmware/plugin/libnvidia-vgx.so"
)

// vgpuDevice is a vGPU as configured on a VM: a VirtualPCIPassthrough with a VMIOP backing.
type vgpuDevice struct {
	key     int32
	profile string
	label   string
}

func vgpuProfile(d types.BaseVirtualDevice) (string, bool) {
	pci, ok := d.(*types.VirtualPCIPassthrough)
	if !ok {
		return "", false
	}
	backing, ok := pci.Backing.(*types.VirtualPCIPassthroughVmiopBackingInfo)
	if !ok {
		return "", false
	}
	return backing.Vgpu, true
}

func vgpuDevices(devices []types.BaseVirtualDevice) []vgpuDevice {
	var list []vgpuDevice
	for _, d := range devices {
		if profile, ok := vgpuProfile(d); ok {
			v := d.GetVirtualDevice()
			list = append(list, vgpuDevice{key: v.Key, profile: profile, label: deviceLabel(v)})
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

// checkReconfigure applies vCenter's vGPU rules to a ReconfigVM_Task spec before anything changes.
func (l *Lab) checkReconfigure(vm *labVM, spec *types.VirtualMachineConfigSpec) *vimfault.Fault {
	devices := object.VirtualDeviceList(vm.Config.Hardware.Device)
	after := map[int32]string{} // vGPUs after the change: device key -> profile
	for _, d := range devices {
		if profile, ok := vgpuProfile(d); ok {
			after[d.GetVirtualDevice().Key] = profile
		}
	}
	var added []string
	var profileFault *vimfault.Fault
	host := l.host(*vm.Runtime.Host)
	checkProfile := func(index int, profile string) {
		if profileFault == nil {
			profileFault = l.checkProfile(host, index, profile)
		}
	}
	touched := false
	for i, change := range spec.DeviceChange {
		c := change.GetVirtualDeviceConfigSpec()
		key := c.Device.GetVirtualDevice().Key
		profile, isVgpu := vgpuProfile(c.Device)
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
			_, wasVgpu := vgpuProfile(existing)
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
		return invalidPowerState(types.VirtualMachinePowerStatePoweredOff, state)
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

func (l *Lab) checkProfile(host *hostState, index int, profile string) *vimfault.Fault {
	if profile == "" {
		return invalidDeviceSpec(index, "the vGPU backing names no profile")
	}
	if host == nil || !host.supports(profile) {
		name, offer := "(unknown)", "none"
		if host != nil {
			name = host.name
			if len(host.profiles) > 0 {
				offer = strings.Join(host.profiles, ", ")
			}
		}
		return invalidDeviceSpec(index, "vGPU profile %s is not supported by host %s (%s; profiles offered: %s)",
			profile, name, hostGPUs(host), offer)
	}
	return nil
}

func hostGPUs(h *hostState) string {
	if h == nil {
		return "no NVIDIA GPU"
	}
	return h.gpuModels()
}

func invalidPowerState(requested, existing types.VirtualMachinePowerState) *vimfault.Fault {
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

// prepareReconfigure gives new vGPU devices the keys, controller and labels vCenter gives them, and turns partial
// resource allocations into full ones (the simulator would otherwise drop the fields the spec leaves out).
func (l *Lab) prepareReconfigure(vm *labVM, spec *types.VirtualMachineConfigSpec) {
	devices := object.VirtualDeviceList(vm.Config.Hardware.Device)
	used := map[int32]bool{}
	pci := 0
	for _, d := range devices {
		used[d.GetVirtualDevice().Key] = true
		if _, ok := d.(*types.VirtualPCIPassthrough); ok {
			pci++
		}
	}
	for _, change := range spec.DeviceChange {
		if key := change.GetVirtualDeviceConfigSpec().Device.GetVirtualDevice().Key; key > 0 {
			used[key] = true
		}
	}
	next := int32(firstPCIPassthroughKey)
	for _, change := range spec.DeviceChange {
		c := change.GetVirtualDeviceConfigSpec()
		profile, isVgpu := vgpuProfile(c.Device)
		_, isPassthrough := passthroughOf(c.Device)
		if !(isVgpu || isPassthrough) || c.Operation != types.VirtualDeviceConfigSpecOperationAdd {
			continue
		}
		d := c.Device.GetVirtualDevice()
		if d.Key <= 0 {
			for used[next] {
				next++
			}
			d.Key = next
			used[next] = true
		}
		if d.ControllerKey == 0 {
			d.ControllerKey = pciControllerKey
		}
		if d.DeviceInfo == nil {
			d.DeviceInfo = &types.Description{
				Label:   fmt.Sprintf("PCI device %d", pci),
				Summary: "NVIDIA GRID vGPU " + profile,
			}
			if isPassthrough {
				d.DeviceInfo.GetDescription().Summary = "DirectPath I/O PCI device"
			}
		}
		pci++
	}
	if spec.MemoryAllocation != nil {
		spec.MemoryAllocation = mergeAllocation(vm.Config.MemoryAllocation, spec.MemoryAllocation)
	}
	if spec.CpuAllocation != nil {
		spec.CpuAllocation = mergeAllocation(vm.Config.CpuAllocation, spec.CpuAllocation)
	}
}

func mergeAllocation(current, change *types.ResourceAllocationInfo) *types.ResourceAllocationInfo {
	merged := types.ResourceAllocationInfo{}
	if current != nil {
		merged = *current
	}
	if change.Reservation != nil {
		merged.Reservation = change.Reservation
	}
	if change.Limit != nil {
		merged.Limit = change.Limit
	}
	if change.Shares != nil {
		merged.Shares = change.Shares
	}
	if change.ExpandableReservation != nil {
		merged.ExpandableReservation = change.ExpandableReservation
	}
	return &merged
}

// gpuLoad is a GPU's vGPU load while a placement is being planned.
type gpuLoad struct {
	gpu     *gpuDevice
	mixed   bool   // the GPU runs in mixed-size mode
	profile string // equal-size mode: the profile the GPU is carved into
	count   int
	usedMiB int64
	spans   []span // mixed-size mode: the framebuffer ranges its vGPUs occupy
}

// span is the framebuffer range [start, end) in MiB that a vGPU occupies on a GPU in mixed-size mode.
type span struct{ start, end int64 }

// vgpuPlacement is where one vGPU goes: its GPU and, in mixed-size mode, its placement ID (GiB offset), else -1.
type vgpuPlacement struct {
	gpu *gpuDevice
	at  int64
}

func loadsOf(h *hostState) []*gpuLoad {
	loads := make([]*gpuLoad, len(h.gpus))
	for i, g := range h.gpus {
		l := &gpuLoad{gpu: g, mixed: g.vgpuMode() == vgputypes.ModeMixedSize, profile: g.profile(), count: len(g.vgpus)}
		for _, s := range g.vgpus {
			fb := g.framebufferOf(s.profile)
			l.usedMiB += fb
			if l.mixed {
				l.spans = append(l.spans, placementSpan(s.at, fb))
			}
		}
		loads[i] = l
	}
	return loads
}

func (g *gpuLoad) clone() *gpuLoad {
	c := *g
	c.spans = append([]span(nil), g.spans...)
	return &c
}

// fit says where on the GPU one more vGPU of the profile goes (-1: no placement ID, equal-size mode), or why it
// cannot go there.
func (g *gpuLoad) fit(profile string) (int64, string) {
	d := g.gpu
	switch p := d.model.Supports(profile); {
	case d.passthruActive():
		return -1, fmt.Sprintf("%s is passed through whole (DirectPath I/O)", d.pciID)
	case d.active != graphicsSharedDirect:
		why := fmt.Sprintf("%s is in graphics mode %s, not sharedDirect", d.pciID, d.active)
		if want := d.configuredType(); want != d.active {
			why += fmt.Sprintf(" (%s is configured and applies when Xorg restarts)", want)
		}
		return -1, why
	case p == nil:
		return -1, fmt.Sprintf("%s (%s) does not offer %s", d.pciID, d.model.DeviceName, profile)
	case g.mixed:
		return g.mixedFit(p)
	case g.profile != "" && g.profile != profile:
		return -1, fmt.Sprintf("%s runs %s (equal-size mode: one profile per GPU)", d.pciID, g.profile)
	case g.count >= p.MaxPerGPU:
		return -1, fmt.Sprintf("%s is full (%d of %d %s vGPUs)", d.pciID, g.count, p.MaxPerGPU, profile)
	}
	return -1, ""
}

// mixedFit is NVIDIA's mixed-size rule: a vGPU starts at one of its type's placement IDs and its framebuffer range
// must not overlap another vGPU's. The lowest free placement ID is taken (how vSphere chooses among free ones is
// not documented).
func (g *gpuLoad) mixedFit(p *catalog.Profile) (int64, string) {
	d := g.gpu
	if len(p.Placements) == 0 {
		return -1, fmt.Sprintf("%s is in mixed-size mode, where %s has no placement", d.pciID, p.Name)
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
		d.pciID, g.usedMiB, d.model.FramebufferMiB, p.Name, strings.Join(ids, ", "))
}

func placementSpan(at, frameBufferMiB int64) span {
	return span{start: at * 1024, end: at*1024 + frameBufferMiB}
}

func (g *gpuLoad) overlaps(s span) bool {
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
func (g *gpuLoad) preferred(best *gpuLoad, policy string) bool {
	switch {
	case best == nil:
		return true
	case policy == policyConsolidation && !g.mixed && !best.mixed:
		return g.count > best.count
	case policy == policyConsolidation && g.mixed != best.mixed:
		return !g.mixed
	}
	return g.usedMiB < best.usedMiB
}

// place chooses a GPU for each vGPU (see preferred). loads is updated with the placements, so that one plan can span
// several VMs. On failure it returns the reasons of every GPU.
func place(loads []*gpuLoad, devices []vgpuDevice, policy string) ([]vgpuPlacement, string) {
	chosen := make([]vgpuPlacement, len(devices))
	for i, d := range devices {
		var best *gpuLoad
		bestAt := int64(-1)
		var reasons []string
		for _, g := range loads {
			at, why := g.fit(d.profile)
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
		fb := best.gpu.framebufferOf(d.profile)
		if best.mixed {
			best.spans = append(best.spans, placementSpan(bestAt, fb))
		} else {
			best.profile = d.profile
		}
		best.count++
		best.usedMiB += fb
		chosen[i] = vgpuPlacement{gpu: best.gpu, at: bestAt}
	}
	return chosen, ""
}

// planPowerOn checks what vSphere checks when a VM with vGPUs powers on and chooses its GPUs.
func (l *Lab) planPowerOn(vm *labVM, h *hostState) ([]vgpuPlacement, *vimfault.Fault) {
	devices := vgpuDevices(vm.Config.Hardware.Device)
	if len(devices) == 0 {
		return nil, nil
	}
	memory := int64(vm.Config.Hardware.MemoryMB)
	if !isTrue(vm.Config.MemoryReservationLockedToMax) && reservationMB(vm) < memory {
		return nil, genericVMConfigFault(fmt.Sprintf("Invalid memory setting: memory reservation (sched.mem.min) "+
			"should be equal to memsize(%d).", memory))
	}
	for _, d := range devices {
		if h == nil || !h.supports(d.profile) {
			name := "(unknown)"
			if h != nil {
				name = h.name
			}
			return nil, genericVMConfigFault(fmt.Sprintf("Could not initialize plugin '%s' for vGPU '%s': host %s "+
				"(%s) does not offer this profile.", vgpuPlugin, d.profile, name, hostGPUs(h)))
		}
	}
	chosen, why := place(loadsOf(h), devices, h.config.SharedPassthruAssignmentPolicy)
	if why != "" {
		return nil, insufficientGraphics(vm.Name, h.name, devices[0].profile, why)
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

func reservationMB(vm *labVM) int64 {
	if a := vm.Config.MemoryAllocation; a != nil && a.Reservation != nil {
		return *a.Reservation
	}
	return 0
}

func isTrue(b *bool) bool { return b != nil && *b }

// commit starts the VM's vGPUs on the GPUs a plan chose.
func (l *Lab) commit(vm *labVM, chosen []vgpuPlacement) {
	devices := vgpuDevices(vm.Config.Hardware.Device)
	hosts := map[*hostState]bool{}
	for i, d := range devices {
		g := chosen[i].gpu
		slot := &vgpuSlot{vm: vm.Self, key: d.key, profile: d.profile, gpu: g, at: chosen[i].at}
		g.vgpus = append(g.vgpus, slot)
		vm.slots = append(vm.slots, slot)
		hosts[g.host] = true
		l.recordVGPU("vgpu_start", vm, slot)
	}
	for h := range hosts {
		h.publish()
	}
}

// release stops the VM's vGPUs; a GPU without vGPUs is free for any profile again.
func (l *Lab) release(vm *labVM) {
	l.releasePassthrough(vm)
	hosts := map[*hostState]bool{}
	for _, s := range vm.slots {
		g := s.gpu
		l.recordVGPU("vgpu_stop", vm, s)
		for i, other := range g.vgpus {
			if other == s {
				g.vgpus = append(g.vgpus[:i], g.vgpus[i+1:]...)
				break
			}
		}
		hosts[g.host] = true
	}
	vm.slots = nil
	for h := range hosts {
		h.publish()
	}
}
