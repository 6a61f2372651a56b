package main

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vimfault"
)

// folderLab is the lab as package folders sees it (folders.Lab).
type folderLab struct{ labView }

// VM is the simulator part of the lab's VM ref; a VM created through the API becomes a lab VM first.
func (f folderLab) VM(ref types.ManagedObjectReference) *simulator.VirtualMachine {
	if vm := f.l.vm(ref); vm != nil {
		return &vm.VirtualMachine
	}
	return nil
}

func (f folderLab) RunTask(obj mo.Reference, name string, fn func() *vimfault.Fault) types.ManagedObjectReference {
	return f.l.runTask(obj, name, func(*simulator.Task) (types.AnyType, *vimfault.Fault) { return nil, fn() })
}
