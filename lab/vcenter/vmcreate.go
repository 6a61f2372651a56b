package main

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

func init() { hookedMethods["CreateVM_Task"] = true }

// createVMTask refuses what vCenter refuses before it makes anything: a guest id that is not one of
// VirtualMachineGuestOsIdentifier's values fails the task with InvalidArgument on configSpec.guestId ("A specified
// parameter was not correct: configSpec.guestId", which community.vmware's vmware_guest target expects from vCenter;
// the reference's fault list for CreateVM_Task was not checked). Valid ids are those the simulator's environment
// browser lists (simulator.GuestID).
func (l *Lab) createVMTask(t *simulator.Task, original taskRunner) (types.AnyType, types.BaseMethodFault) {
	if req, ok := l.inflight.(*types.CreateVM_Task); ok && req.Config.GuestId != "" && !knownGuestID(req.Config.GuestId) {
		return l.taskResult(t, nil, invalidArgument("configSpec.guestId", "%s is not a guest OS identifier",
			req.Config.GuestId))
	}
	result, fault := newVMToolsRecord(t, original)
	if req, ok := l.inflight.(*types.CreateVM_Task); ok && fault == nil {
		if ref, isRef := result.(types.ManagedObjectReference); isRef {
			if vm, isVM := simulator.Map.Get(ref).(*simulator.VirtualMachine); isVM {
				l.applySpecExtras(vm, &req.Config)
			}
		}
	}
	return result, fault
}

// applySpecExtras applies the ConfigSpec fields the simulator ignores, on create and reconfigure, so that a client
// reading config back sees what it set: maxMksConnections (the remote console limit).
func (l *Lab) applySpecExtras(vm *simulator.VirtualMachine, spec *types.VirtualMachineConfigSpec) {
	if spec.MaxMksConnections != 0 {
		vm.Config.MaxMksConnections = spec.MaxMksConnections
		l.update(vm, types.PropertyChange{Name: "config.maxMksConnections", Val: spec.MaxMksConnections})
	}
}
