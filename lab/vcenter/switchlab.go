package main

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vimfault"
)

// switchLab is the lab as package dvs sees it (dvs.Lab).
type switchLab struct{ labView }

func (s switchLab) Inflight() interface{} { return s.l.inflight }

func (s switchLab) TaskFailed(t *simulator.Task, f *vimfault.Fault) (types.AnyType, types.BaseMethodFault) {
	return s.l.taskResult(t, nil, f)
}

// VMNetworks reads the lab's VMs, which the simulator's own code cannot see.
func (s switchLab) VMNetworks(ref types.ManagedObjectReference) []types.ManagedObjectReference {
	if vm := s.l.vm(ref); vm != nil {
		return vm.Network
	}
	return nil
}
