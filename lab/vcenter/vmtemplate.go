package main

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// Templates and resource pools. On vCenter a template belongs to no resource pool: MarkAsTemplate unsets the VM's
// resourcePool and takes it out of the pool's vm list, MarkAsVirtualMachine puts it into the pool it names
// (VirtualMachine.resourcePool: "unset if the virtual machine is a template"; MarkAsVirtualMachine's pool argument,
// vSphere Web Services API reference). The simulator only changes the VM's side, which left a destroyed template
// in its old pool's vm list, where a container view then lists an object that no longer exists.

func (vm *labVM) MarkAsTemplate(ctx *simulator.Context, req *types.MarkAsTemplate) soap.HasFault {
	pool := vm.ResourcePool
	r := vm.VirtualMachine.MarkAsTemplate(req)
	if r.Fault() == nil && pool != nil {
		if p, ok := simulator.Map.Get(*pool).(*simulator.ResourcePool); ok {
			vm.lab.update(p, types.PropertyChange{Name: "vm", Val: without(p.Vm, vm.Self)})
		}
	}
	return r
}

func (vm *labVM) MarkAsVirtualMachine(ctx *simulator.Context, req *types.MarkAsVirtualMachine) soap.HasFault {
	r := vm.VirtualMachine.MarkAsVirtualMachine(req)
	if r.Fault() == nil {
		if p, ok := simulator.Map.Get(req.Pool).(*simulator.ResourcePool); ok {
			vm.lab.update(p, types.PropertyChange{Name: "vm", Val: append(without(p.Vm, vm.Self), vm.Self)})
		}
	}
	return r
}
