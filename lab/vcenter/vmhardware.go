package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vimfault"
)

// newestHardwareVersion is the newest of envbrowser.HardwareVersions, vSphere 8.0 U2's.
const newestHardwareVersion = 21

func hardwareKey(version int) string { return fmt.Sprintf("vmx-%02d", version) }

func hardwareNumber(key string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(key, "vmx-"))
	return n, err == nil && strings.HasPrefix(key, "vmx-")
}

// UpgradeVMTask upgrades to the requested version, or the newest when none is given (the simulator always set
// vmx-13). A version at or below the VM's is AlreadyUpgraded, one the hosts do not offer NotSupported, and a powered-on
// VM InvalidPowerState, the faults UpgradeVM_Task declares.
func (vm *labVM) UpgradeVMTask(ctx *simulator.Context, req *types.UpgradeVM_Task) soap.HasFault {
	l := vm.lab
	ref := l.runTask(vm, "upgradeVm", func(*simulator.Task) (types.AnyType, *vimfault.Fault) {
		target := newestHardwareVersion
		if req.Version != "" {
			n, ok := hardwareNumber(req.Version)
			if !ok || n > newestHardwareVersion {
				return nil, &vimfault.Fault{Fault: &types.NotSupported{},
					Msg: fmt.Sprintf("The operation is not supported on the object: hardware version %s", req.Version)}
			}
			target = n
		}
		if vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff {
			return nil, &vimfault.Fault{Fault: &types.InvalidPowerState{RequestedState: types.VirtualMachinePowerStatePoweredOff,
				ExistingState: vm.Runtime.PowerState},
				Msg: "The attempted operation cannot be performed in the current state (Powered on)."}
		}
		if current, ok := hardwareNumber(vm.Config.Version); ok && target <= current {
			return nil, &vimfault.Fault{Fault: &types.AlreadyUpgraded{},
				Msg: "Virtual machine compatibility is already up-to-date."}
		}
		key := hardwareKey(target)
		vm.Config.Version = key
		l.update(vm, types.PropertyChange{Name: "config.version", Val: key},
			types.PropertyChange{Name: "summary.config.hwVersion", Val: key})
		return nil, nil
	})
	return &methods.UpgradeVM_TaskBody{Res: &types.UpgradeVM_TaskResponse{Returnval: ref}}
}

// linkControllerDevices fills each controller's device list with the keys of the devices attached to it, as vCenter
// does (VirtualController.device); the simulator leaves the lists of controllers it adds empty, so a client looking
// for a controller's disks through them finds none and adds the disks again.
func linkControllerDevices(devices []types.BaseVirtualDevice) {
	for _, d := range devices {
		controller, ok := d.(types.BaseVirtualController)
		if !ok {
			continue
		}
		c := controller.GetVirtualController()
		c.Device = nil
		for _, other := range devices {
			if other.GetVirtualDevice().ControllerKey == c.Key && other.GetVirtualDevice().Key != c.Key {
				c.Device = append(c.Device, other.GetVirtualDevice().Key)
			}
		}
	}
}
