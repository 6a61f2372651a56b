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
// reading config back sees what it set: maxMksConnections (the remote console limit) and the vApp properties.
func (l *Lab) applySpecExtras(vm *simulator.VirtualMachine, spec *types.VirtualMachineConfigSpec) {
	if spec.MaxMksConnections != 0 {
		vm.Config.MaxMksConnections = spec.MaxMksConnections
		l.update(vm, types.PropertyChange{Name: "config.maxMksConnections", Val: spec.MaxMksConnections})
	}
	if vapp, ok := spec.VAppConfig.(*types.VmConfigSpec); ok && len(vapp.Property) > 0 {
		info, _ := vm.Config.VAppConfig.(*types.VmConfigInfo)
		if info == nil {
			info = &types.VmConfigInfo{}
		}
		info.Property = vappProperties(info.Property, vapp.Property)
		vm.Config.VAppConfig = info
		l.update(vm, types.PropertyChange{Name: "config.vAppConfig", Val: info})
	}
}

// vappProperties applies VmConfigSpec.property's array updates (add, edit by key, remove by removeKey).
func vappProperties(current []types.VAppPropertyInfo, updates []types.VAppPropertySpec) []types.VAppPropertyInfo {
	out := append([]types.VAppPropertyInfo(nil), current...)
	for _, u := range updates {
		switch u.Operation {
		case types.ArrayUpdateOperationAdd:
			if u.Info != nil {
				out = append(out, *u.Info)
			}
		case types.ArrayUpdateOperationEdit:
			for i := range out {
				if u.Info != nil && out[i].Key == u.Info.Key {
					out[i] = *u.Info
				}
			}
		case types.ArrayUpdateOperationRemove:
			kept := out[:0]
			for _, p := range out {
				if key, ok := intKey(u.RemoveKey); !ok || p.Key != key {
					kept = append(kept, p)
				}
			}
			out = kept
		}
	}
	return out
}

// intKey reads an array update's removeKey, which clients send as xsd:int, xsd:short or xsd:long.
func intKey(v types.AnyType) (int32, bool) {
	switch k := v.(type) {
	case int32:
		return k, true
	case int64:
		return int32(k), true
	case int16:
		return int32(k), true
	case int:
		return int32(k), true
	}
	return 0, false
}
