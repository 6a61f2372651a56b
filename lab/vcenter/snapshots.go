package main

import (
	"net/http"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/soaphttp"
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
func (l *Lab) withSimulatorVM(call soaphttp.Call, serve func()) {
	if !snapshotMethods[call.Method] {
		serve()
		return
	}
	ref := call.This
	if call.This.Type == "VirtualMachineSnapshot" {
		snapshot, ok := simulator.Map.Get(call.This).(*simulator.VirtualMachineSnapshot)
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

// serveRenameSnapshot is VirtualMachineSnapshot.RenameSnapshot, which the simulator does not implement: a new name,
// a new description or both, shown in the VM's snapshot tree (vSphere Web Services API, VirtualMachineSnapshot
// .RenameSnapshot; "at least one must be specified").
func (l *Lab) serveRenameSnapshot(w http.ResponseWriter, call soaphttp.Call, body []byte) bool {
	if call.Method != "RenameSnapshot" || call.This.Type != "VirtualMachineSnapshot" {
		return false
	}
	method, err := simulator.UnmarshalBody(types.TypeFunc(), body)
	if err != nil {
		return false
	}
	req, ok := method.Body.(*types.RenameSnapshot)
	snapshot, found := simulator.Map.Get(call.This).(*simulator.VirtualMachineSnapshot)
	if !ok || !found {
		return false
	}
	if req.Name == "" && req.Description == "" {
		soaphttp.WriteFault(w, "A specified parameter was not correct: name", "InvalidArgument",
			"<invalidProperty>name</invalidProperty>")
		return true
	}
	if vm, isLab := simulator.Map.Get(snapshot.Vm).(*labVM); isLab && vm.Snapshot != nil {
		renameInTree(vm.Snapshot.RootSnapshotList, call.This, req.Name, req.Description)
		simulator.Map.Update(vm, []types.PropertyChange{{Name: "snapshot", Val: vm.Snapshot}})
	}
	soaphttp.WriteResponse(w, `<RenameSnapshotResponse xmlns="urn:vim25"></RenameSnapshotResponse>`)
	return true
}

func renameInTree(tree []types.VirtualMachineSnapshotTree, ref types.ManagedObjectReference, name, description string) {
	for i := range tree {
		if tree[i].Snapshot == ref {
			if name != "" {
				tree[i].Name = name
			}
			if description != "" {
				tree[i].Description = description
			}
			return
		}
		renameInTree(tree[i].ChildSnapshotList, ref, name, description)
	}
}
