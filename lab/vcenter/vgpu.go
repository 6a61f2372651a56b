package main

import (
	"fmt"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/gpu"
)

const (
	firstPCIPassthroughKey = 13000 // vCenter numbers PCI passthrough devices from here
	pciControllerKey       = 100
)

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
		profile, isVgpu := gpu.VGPUProfile(c.Device)
		_, isPassthrough := gpu.PassthroughOf(c.Device)
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

// commit starts the VM's vGPUs on the GPUs a plan chose.
func (l *Lab) commit(vm *labVM, chosen []gpu.Placement) {
	devices := gpu.VGPUs(vm.Config.Hardware.Device)
	hosts := map[*hostState]bool{}
	for i, d := range devices {
		g := chosen[i].GPU
		slot := &gpu.Slot{VM: vm.Self, Key: d.Key, Profile: d.Profile, GPU: g, At: chosen[i].At}
		g.VGPUs = append(g.VGPUs, slot)
		vm.slots = append(vm.slots, slot)
		hosts[l.host(g.Host.Ref)] = true
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
		g := s.GPU
		l.recordVGPU("vgpu_stop", vm, s)
		for i, other := range g.VGPUs {
			if other == s {
				g.VGPUs = append(g.VGPUs[:i], g.VGPUs[i+1:]...)
				break
			}
		}
		hosts[l.host(g.Host.Ref)] = true
	}
	vm.slots = nil
	for h := range hosts {
		h.publish()
	}
}
