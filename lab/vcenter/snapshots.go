package main

import (
	"github.com/vmware/govmomi/simulator"
)

// snapshotMethods are the snapshot calls the simulator implements on its own VM type and type-asserts that type
// for (VirtualMachine.CreateSnapshot_Task and the revert and removal calls on the VM and on its snapshots).
var snapshotMethods = map[string]bool{
	"CreateSnapshot_Task": true, "CreateSnapshotEx_Task": true, "RevertToCurrentSnapshot_Task": true,
	"RemoveAllSnapshots_Task": true, "RevertToSnapshot_Task": true, "RemoveSnapshot_Task": true,
	"RenameSnapshot": true, "ExportSnapshot": true,
}

// withSimulatorVM runs a snapshot call with the simulator's VM object in the registry in place of the lab's: the
// lab's VM embeds it by value, so what the call changes is the lab VM's state, which is registered again after.
func (l *Lab) withSimulatorVM(call soapCall, serve func()) {
	if !snapshotMethods[call.method] {
		serve()
		return
	}
	ref := call.this
	if call.this.Type == "VirtualMachineSnapshot" {
		snapshot, ok := simulator.Map.Get(call.this).(*simulator.VirtualMachineSnapshot)
		if !ok {
			serve()
			return
		}
		ref = snapshot.Vm
	}
	vm, ok := simulator.Map.Get(ref).(*labVM)
	if !ok || ref.Type != "VirtualMachine" {
		serve()
		return
	}
	simulator.Map.Put(&vm.VirtualMachine)
	defer simulator.Map.Put(vm)
	serve()
}
