package main

import (
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/faults"
	"vcsim/gpu"
	"vcsim/simobj"
	"vcsim/vimfault"
)

const (
	toolsVersion         = "12352"
	defaultShutdownDelay = 200 * time.Millisecond
)

// labVM is a simulator VirtualMachine with vCenter's vGPU behaviour. It embeds the simulator's object by value so
// that the property collector still finds the managed object as the first field.
type labVM struct {
	simulator.VirtualMachine

	lab   *Lab
	slots []*gpu.Slot // running vGPUs while powered on
	// passthru maps passthrough device keys to the host GPUs they hold while powered on.
	passthru map[int32]*gpu.Device
	// epoch changes with every power state change; a pending guest shutdown only applies to the epoch it began in.
	epoch           int
	shutdownPending bool
}

// adopt replaces the simulator's VM object by the lab's, with VMware Tools installed and resourceConfig filled.
func (l *Lab) adopt(obj *simulator.VirtualMachine) *labVM {
	vm := &labVM{VirtualMachine: *obj, lab: l}
	running := vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn
	vm.Guest.ToolsVersion = toolsVersion
	vm.Guest.ToolsVersionStatus2 = string(types.VirtualMachineToolsVersionStatusGuestToolsCurrent)
	vm.Guest.ToolsStatus, vm.Guest.ToolsRunningStatus, vm.Guest.GuestState = toolsState(running)
	vm.Summary.Guest.ToolsStatus = vm.Guest.ToolsStatus
	vm.Summary.Guest.ToolsRunningStatus = vm.Guest.ToolsRunningStatus
	l.guestAddresses.Set(&vm.VirtualMachine, running)
	if vm.Config.MemoryReservationLockedToMax == nil {
		vm.Config.MemoryReservationLockedToMax = types.NewBool(false)
	}
	vcenterVMDefaults(&vm.VirtualMachine)
	vm.ResourceConfig = resourceConfig(vm)
	simulator.Map.Put(vm)
	if !l.vmKnown[vm.Self] {
		l.vmKnown[vm.Self] = true
		l.vms = append(l.vms, vm.Self)
	}
	return vm
}

// vcenterVMDefaults makes a VM the simulator created look as one vCenter created: the VMware Tools install record,
// its name escaped in config.name as in name (entitynames.go), and no "govcsim" entry in config.extraConfig (the
// simulator's marker, which vCenter does not have).
func vcenterVMDefaults(vm *simulator.VirtualMachine) {
	toolsInstallRecord(vm)
	if vm.Config == nil {
		return
	}
	vm.Config.Name = simobj.EscapeName(vm.Config.Name)
	vm.Name = simobj.EscapeName(vm.Name) // the simulator registers a new VM before it names it
	if vm.Summary.Config.Name != "" {
		vm.Summary.Config.Name = simobj.EscapeName(vm.Summary.Config.Name)
	}
	kept := vm.Config.ExtraConfig[:0]
	for _, option := range vm.Config.ExtraConfig {
		if value := option.GetOptionValue(); value == nil || value.Key != "govcsim" {
			kept = append(kept, option)
		}
	}
	vm.Config.ExtraConfig = kept
	linkControllerDevices(vm.Config.Hardware.Device)
}

// toolsInstallRecord gives a VM's config.tools the record of VMware Tools installs vCenter keeps for every VM
// (lastInstallInfo, counter 0 until an install through vSphere), which the simulator leaves out.
func toolsInstallRecord(vm *simulator.VirtualMachine) {
	if vm.Config != nil && vm.Config.Tools != nil && vm.Config.Tools.LastInstallInfo == nil {
		vm.Config.Tools.LastInstallInfo = &types.ToolsConfigInfoToolsLastInstallInfo{}
	}
}

func toolsState(running bool) (types.VirtualMachineToolsStatus, string, string) {
	if running {
		return types.VirtualMachineToolsStatusToolsOk,
			string(types.VirtualMachineToolsRunningStatusGuestToolsRunning), "running"
	}
	return types.VirtualMachineToolsStatusToolsNotRunning,
		string(types.VirtualMachineToolsRunningStatusGuestToolsNotRunning), "notRunning"
}

func resourceConfig(vm *labVM) *types.ResourceConfigSpec {
	self := vm.Self
	now := time.Now()
	spec := &types.ResourceConfigSpec{Entity: &self, LastModified: &now}
	if a := vm.Config.CpuAllocation; a != nil {
		spec.CpuAllocation = *a
	}
	if a := vm.Config.MemoryAllocation; a != nil {
		spec.MemoryAllocation = *a
	}
	return spec
}

// powerChanged records a power state change made by the simulator: tools state, epoch and vGPU slots.
// SimulatorVM is the simulator's VM the lab VM extends (events.VMObject).
func (vm *labVM) SimulatorVM() *simulator.VirtualMachine { return &vm.VirtualMachine }

func (vm *labVM) powerChanged() {
	vm.epoch++
	vm.shutdownPending = false
	running := vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn
	if !running {
		vm.lab.release(vm)
	}
	status, runningStatus, guestState := toolsState(running)
	vm.lab.update(vm, append([]types.PropertyChange{
		{Name: "guest.toolsStatus", Val: status},
		{Name: "guest.toolsRunningStatus", Val: runningStatus},
		{Name: "guest.guestState", Val: guestState},
		{Name: "summary.guest.toolsStatus", Val: status},
		{Name: "summary.guest.toolsRunningStatus", Val: runningStatus},
	}, vm.lab.guestAddresses.Changes(&vm.VirtualMachine, running)...)...)
}

func (vm *labVM) ReconfigVMTask(ctx *simulator.Context, req *types.ReconfigVM_Task) soap.HasFault {
	l := vm.lab
	fail := func(f *vimfault.Fault) soap.HasFault {
		ref := l.runTask(vm, "reconfigVm", func(*simulator.Task) (types.AnyType, *vimfault.Fault) { return nil, f })
		return &methods.ReconfigVM_TaskBody{Res: &types.ReconfigVM_TaskResponse{Returnval: ref}}
	}
	if injected := l.faults.Take(faults.FailReconfigure, vm.Name, ""); injected != nil {
		return fail(systemError(injected.Message))
	}
	if f := gpu.CheckReconfigure(vm.managed(), l.host(*vm.Runtime.Host).gpuHost(), &req.Spec); f != nil {
		return fail(f)
	}
	if f := gpu.CheckPassthroughChange(vm.managed(), l.host(*vm.Runtime.Host).gpuHost(), &req.Spec); f != nil {
		return fail(f)
	}
	keepUnsetBackings(vm, &req.Spec)
	f, restore := l.dvPortBackings(vm, &req.Spec)
	if f != nil {
		return fail(f)
	}
	l.prepareReconfigure(vm, &req.Spec)
	body := vm.VirtualMachine.ReconfigVMTask(ctx, req).(*methods.ReconfigVM_TaskBody)
	restore()
	if taskSucceeded(body.Res.Returnval) {
		l.afterReconfigure(vm)
		l.applySpecExtras(&vm.VirtualMachine, &req.Spec)
		linkControllerDevices(vm.Config.Hardware.Device)
		l.update(vm, types.PropertyChange{Name: "config.hardware.device", Val: vm.Config.Hardware.Device})
	}
	return body
}

// afterReconfigure keeps the reservation at the VM's memory while it is locked to max, resourceConfig in step
// with config, and network with the NICs.
func (l *Lab) afterReconfigure(vm *labVM) {
	alloc := *vm.Config.MemoryAllocation
	if isTrue(vm.Config.MemoryReservationLockedToMax) {
		memory := int64(vm.Config.Hardware.MemoryMB)
		alloc.Reservation = &memory
	}
	vm.Config.MemoryAllocation = &alloc
	var reservation int32
	if alloc.Reservation != nil {
		reservation = int32(*alloc.Reservation)
	}
	l.update(vm,
		types.PropertyChange{Name: "network", Val: vmNetworks(vm)},
		types.PropertyChange{Name: "config.memoryAllocation", Val: &alloc},
		types.PropertyChange{Name: "resourceConfig", Val: resourceConfig(vm)},
		types.PropertyChange{Name: "summary.config.memoryReservation", Val: reservation},
	)
}

func systemError(reason string) *vimfault.Fault {
	if reason == "" {
		reason = "fault injected by the lab"
	}
	return &vimfault.Fault{
		Fault: &types.SystemError{Reason: reason},
		Msg:   "A general system error occurred: " + reason,
	}
}

func (vm *labVM) PowerOnVMTask(ctx *simulator.Context, req *types.PowerOnVM_Task) soap.HasFault {
	l := vm.lab
	if vm.Config.Template || vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn {
		return vm.VirtualMachine.PowerOnVMTask(ctx, req) // the simulator's own faults
	}
	fail := func(f *vimfault.Fault) soap.HasFault {
		ref := l.runTask(vm, "powerOn", func(*simulator.Task) (types.AnyType, *vimfault.Fault) { return nil, f })
		return &methods.PowerOnVM_TaskBody{Res: &types.PowerOnVM_TaskResponse{Returnval: ref}}
	}
	if req.Host != nil && *req.Host != *vm.Runtime.Host {
		if f := l.powerOnHost(vm, *req.Host); f != nil {
			return fail(f)
		}
	}
	host := l.host(*vm.Runtime.Host)
	if f := l.hostAccepts(host); f != nil {
		return fail(f)
	}
	chosen, f := gpu.PlanPowerOn(vm.managed(), host.gpuHost())
	if f != nil {
		return fail(f)
	}
	passthru, f := gpu.PlanPassthrough(vm.managed(), host.gpuHost())
	if f != nil {
		return fail(f)
	}
	body := vm.VirtualMachine.PowerOnVMTask(ctx, req).(*methods.PowerOnVM_TaskBody)
	if taskSucceeded(body.Res.Returnval) {
		vm.powerChanged()
		l.commit(vm, chosen)
		l.commitPassthrough(vm, passthru)
	}
	return body
}

func (vm *labVM) PowerOffVMTask(ctx *simulator.Context, req *types.PowerOffVM_Task) soap.HasFault {
	body := vm.VirtualMachine.PowerOffVMTask(ctx, req).(*methods.PowerOffVM_TaskBody)
	if taskSucceeded(body.Res.Returnval) {
		vm.powerChanged()
	}
	return body
}

func (vm *labVM) SuspendVMTask(ctx *simulator.Context, req *types.SuspendVM_Task) soap.HasFault {
	body := vm.VirtualMachine.SuspendVMTask(ctx, req).(*methods.SuspendVM_TaskBody)
	if taskSucceeded(body.Res.Returnval) {
		vm.powerChanged()
	}
	return body
}

// ShutdownGuest asks VMware Tools to shut the guest down: the call returns at once and the VM powers off a moment
// later, as a real guest does.
func (vm *labVM) ShutdownGuest(ctx *simulator.Context, req *types.ShutdownGuest) soap.HasFault {
	l := vm.lab
	body := &methods.ShutdownGuestBody{}
	if state := vm.Runtime.PowerState; state != types.VirtualMachinePowerStatePoweredOn {
		body.Fault_ = gpu.InvalidPowerState(types.VirtualMachinePowerStatePoweredOn, state).SOAP()
		return body
	}
	body.Res = &types.ShutdownGuestResponse{}
	if l.faults.Take(faults.ShutdownIgnored, vm.Name, "") != nil {
		l.logf("VM %s: guest shutdown ignored (injected fault)", vm.Name)
		return body
	}
	if vm.shutdownPending {
		return body
	}
	vm.shutdownPending = true
	epoch, ref := vm.epoch, vm.Self
	l.later(l.faults.ShutdownDelay(vm.Name, defaultShutdownDelay), func() { l.finishShutdown(ctx, ref, epoch) })
	return body
}

func (l *Lab) finishShutdown(ctx *simulator.Context, ref types.ManagedObjectReference, epoch int) {
	vm := l.vm(ref)
	if vm == nil || vm.epoch != epoch || vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
		return
	}
	l.as(ref, func() {
		vm.VirtualMachine.ShutdownGuest(ctx, &types.ShutdownGuest{This: ref})
		vm.powerChanged()
	})
	l.logf("VM %s: guest shut down", vm.Name)
}

func (vm *labVM) MigrateVMTask(ctx *simulator.Context, req *types.MigrateVM_Task) soap.HasFault {
	l := vm.lab
	ref := l.runTask(vm, "migrate", func(*simulator.Task) (types.AnyType, *vimfault.Fault) {
		if req.State != "" && req.State != vm.Runtime.PowerState {
			return nil, gpu.InvalidPowerState(req.State, vm.Runtime.PowerState)
		}
		return nil, l.migrate(vm, req.Host, req.Pool)
	})
	return &methods.MigrateVM_TaskBody{Res: &types.MigrateVM_TaskResponse{Returnval: ref}}
}

func (vm *labVM) RelocateVMTask(ctx *simulator.Context, req *types.RelocateVM_Task) soap.HasFault {
	l := vm.lab
	ref := l.runTask(vm, "relocate", func(*simulator.Task) (types.AnyType, *vimfault.Fault) {
		return nil, l.relocate(ctx, vm, &req.Spec)
	})
	return &methods.RelocateVM_TaskBody{Res: &types.RelocateVM_TaskResponse{Returnval: ref}}
}

func isTrue(b *bool) bool { return b != nil && *b }

// managed is the VM's managed object, as package gpu reads it.
func (vm *labVM) managed() *mo.VirtualMachine { return &vm.VirtualMachine.VirtualMachine }
