package vlcm

import (
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/faults"
)

// Lab is what vLCM reads and changes of the rest of the lab. vLCM calls every method holding the lab's lock (the
// one given to New); the host and cluster objects themselves it reads from the simulator's registry.
type Lab interface {
	// Hosts lists the lab's hosts at start, in topology order, with their topology names.
	Hosts() []Host
	// Clusters lists the lab's clusters from the topology, in its order.
	Clusters() []types.ManagedObjectReference
	Logf(format string, args ...interface{})
	// Pause waits d without the lock; false means the lab was reset meanwhile and the work should stop.
	Pause(d time.Duration) bool
	Faults() *faults.Store

	// EvacuationBlocker says why the host cannot enter maintenance mode now (a VM that cannot move), or "".
	EvacuationBlocker(host types.ManagedObjectReference, evacuateOff bool) string
	// MaintenanceMode enters or leaves maintenance mode through a vCenter task, by the lab's rules; it answers
	// the task's message when it failed, or "".
	MaintenanceMode(host types.ManagedObjectReference, enter, evacuateOff bool) string
	// PoweredOnVMs lists the powered-on VMs of a host.
	PoweredOnVMs(host types.ManagedObjectReference) []types.ManagedObjectReference
	// SetPower powers a VM on or off or suspends it through a vCenter task; it answers whether the task succeeded.
	SetPower(vm types.ManagedObjectReference, state types.VirtualMachinePowerState) bool
	// HostImageChanged records that a host now runs a new image, under the given NVIDIA host driver ("" if none).
	HostImageChanged(host, driver string)
}

// Host is a host of the lab and the name the topology gives it.
type Host struct {
	Ref  types.ManagedObjectReference
	Name string
}

func name(ref types.ManagedObjectReference) string {
	if e, ok := simulator.Map.Get(ref).(mo.Entity); ok {
		return e.Entity().Name
	}
	return ""
}

func hostObject(ref types.ManagedObjectReference) *simulator.HostSystem {
	h, _ := simulator.Map.Get(ref).(*simulator.HostSystem)
	return h
}

// PowerMethods are the power methods of a VM, the simulator's or the lab's.
type PowerMethods interface {
	PowerOffVMTask(ctx *simulator.Context, req *types.PowerOffVM_Task) soap.HasFault
	SuspendVMTask(ctx *simulator.Context, req *types.SuspendVM_Task) soap.HasFault
	PowerOnVMTask(ctx *simulator.Context, req *types.PowerOnVM_Task) soap.HasFault
}

// PowerTask runs the vCenter task that takes the VM ref to state (poweredOff, suspended, else poweredOn) and
// answers the task; the caller holds what the simulator holds for a call on ref.
func PowerTask(ctx *simulator.Context, vm PowerMethods, ref types.ManagedObjectReference,
	state types.VirtualMachinePowerState) types.ManagedObjectReference {
	switch state {
	case types.VirtualMachinePowerStatePoweredOff:
		return vm.PowerOffVMTask(ctx, &types.PowerOffVM_Task{This: ref}).(*methods.PowerOffVM_TaskBody).Res.Returnval
	case types.VirtualMachinePowerStateSuspended:
		return vm.SuspendVMTask(ctx, &types.SuspendVM_Task{This: ref}).(*methods.SuspendVM_TaskBody).Res.Returnval
	default:
		return vm.PowerOnVMTask(ctx, &types.PowerOnVM_Task{This: ref}).(*methods.PowerOnVM_TaskBody).Res.Returnval
	}
}
