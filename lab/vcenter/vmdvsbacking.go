package main

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/dvs"
	"vcsim/vimfault"
)

// dvPortBackings checks the NICs a ReconfigVM_Task spec puts on a distributed port group: vCenter asks that the
// VM's own host is a member of the switch (a NIC backed by a switch its host has not joined cannot connect), not
// every host of its cluster as the simulator does. It returns the fault to answer, or a function that lets the
// simulator's own check pass for the spec's switches and must be called once the simulator is done. The fault's
// wording is vCenter's InvalidArgument for the property named; the exact fault vCenter gives here is not confirmed.
func (l *Lab) dvPortBackings(vm *labVM, spec *types.VirtualMachineConfigSpec) (*vimfault.Fault, func()) {
	host := l.hostObject(*vm.Runtime.Host)
	if host == nil {
		return nil, func() {}
	}
	_, clusterHosts, _ := computeResource(host)
	var restore []func()
	undo := func() {
		for i := len(restore) - 1; i >= 0; i-- {
			restore[i]()
		}
	}
	for _, change := range spec.DeviceChange {
		device := change.GetVirtualDeviceConfigSpec().Device
		if device == nil {
			continue
		}
		backing, ok := device.GetVirtualDevice().Backing.(*types.VirtualEthernetCardDistributedVirtualPortBackingInfo)
		if !ok {
			continue
		}
		dvs := dvs.ByUUID(backing.Port.SwitchUuid)
		if dvs == nil {
			continue // the simulator answers NotFound
		}
		if simulator.FindReference(dvs.Summary.HostMember, host.Self) == nil {
			undo()
			return &vimfault.Fault{Fault: &types.InvalidArgument{InvalidProperty: "spec.deviceChange.device.port.switchUuid"},
				Msg: fmt.Sprintf("A specified parameter was not correct: spec.deviceChange.device.port.switchUuid "+
					"(host %s is not a member of the distributed switch %s)", host.Name, dvs.Name)}, func() {}
		}
		members := dvs.Summary.HostMember
		widened := append([]types.ManagedObjectReference(nil), members...)
		for _, ref := range clusterHosts {
			if simulator.FindReference(widened, ref) == nil {
				widened = append(widened, ref)
			}
		}
		dvs.Summary.HostMember = widened
		restore = append(restore, func() { dvs.Summary.HostMember = members })
	}
	return nil, undo
}
