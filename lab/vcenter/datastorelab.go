package main

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vimfault"
)

// datastoreLab is the lab as package datastores sees it (datastores.Lab).
type datastoreLab struct{ labView }

func (d datastoreLab) RunTask(obj mo.Reference, name string,
	fn func() (types.BaseMethodFault, string)) types.ManagedObjectReference {
	return d.l.runTask(obj, name, func(*simulator.Task) (types.AnyType, *vimfault.Fault) {
		if fault, msg := fn(); fault != nil {
			return nil, &vimfault.Fault{Fault: fault, Msg: msg}
		}
		return nil, nil
	})
}

func (d datastoreLab) VMConfig(ref types.ManagedObjectReference) *types.VirtualMachineConfigInfo {
	switch vm := simulator.Map.Get(ref).(type) {
	case *labVM:
		return vm.Config
	case *simulator.VirtualMachine:
		return vm.Config
	}
	return nil
}
