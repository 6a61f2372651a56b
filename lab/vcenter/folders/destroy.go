// Package folders answers Folder.UnregisterAndDestroy_Task, which the simulator lacks.
package folders

import (
	"fmt"
	"net/http"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/soaphttp"
	"vcsim/vimfault"
)

// Lab is what the package needs of the lab.
type Lab interface {
	// VM is the simulator part of the lab's VM ref (its power state, the object UnregisterVM runs on), or nil where
	// ref is no VM.
	VM(ref types.ManagedObjectReference) *simulator.VirtualMachine
	// Context is the simulator context of what the lab does on its own, outside a client's request.
	Context() *simulator.Context
	// RunTask runs a task named name on obj, which fails with the fault fn returns, if any, worded as vCenter words it.
	RunTask(obj mo.Reference, name string, fn func() *vimfault.Fault) types.ManagedObjectReference
	Logf(format string, args ...interface{})
}

// Method is the SOAP method the package answers.
const Method = "UnregisterAndDestroy_Task"

// Serve answers Folder.UnregisterAndDestroy_Task, and says whether it did. vSphere Web Services API, Folder
// (developer.broadcom.com/xapis/vsphere-web-services-api/latest/vim.Folder.html): it applies only to virtual
// machine folders (NotSupported otherwise), unregisters every VM below the folder (their files stay on the
// datastore) and destroys the folder with its child folders; a VM that is powered on makes it fail with
// InvalidState. The lab checks every VM before it changes anything, where vCenter may have unregistered some VMs
// before it reaches a powered-on one (not confirmed). A datacenter's own vm folder cannot go (NotSupported), and a
// vApp below the folder is refused with NotSupported, as the lab does not model vApps.
func Serve(lab Lab, w http.ResponseWriter, call soaphttp.Call) bool {
	if call.Method != Method {
		return false
	}
	folder, _ := simulator.Map.Get(call.This).(*simulator.Folder)
	if folder == nil {
		soaphttp.WriteObjectNotFound(w, call.This)
		return true
	}
	ref := lab.RunTask(folder, "unregisterAndDestroy", func() *vimfault.Fault {
		if f := check(lab, folder); f != nil {
			return f
		}
		unregisterAndDestroy(lab, folder)
		lab.Logf("folder %s unregistered and destroyed", folder.Name)
		return nil
	})
	soaphttp.WriteResponse(w, fmt.Sprintf(`<UnregisterAndDestroy_TaskResponse xmlns="urn:vim25"><returnval type="Task">%s`+
		`</returnval></UnregisterAndDestroy_TaskResponse>`, ref.Value))
	return true
}

func notSupported() *vimfault.Fault {
	return &vimfault.Fault{Fault: &types.NotSupported{}, Msg: "The operation is not supported on the object."}
}

// check refuses a folder that is not a VM folder, a datacenter's root VM folder, and a subtree that holds a
// powered-on VM or a vApp.
func check(lab Lab, folder *simulator.Folder) *vimfault.Fault {
	vmFolder := false
	for _, kind := range folder.ChildType {
		vmFolder = vmFolder || kind == "VirtualMachine"
	}
	if !vmFolder || folder.Parent == nil || folder.Parent.Type == "Datacenter" {
		return notSupported()
	}
	var walk func(*simulator.Folder) *vimfault.Fault
	walk = func(f *simulator.Folder) *vimfault.Fault {
		for _, child := range f.ChildEntity {
			switch obj := simulator.Map.Get(child).(type) {
			case *simulator.Folder:
				if fault := walk(obj); fault != nil {
					return fault
				}
			case *simulator.VirtualApp:
				return notSupported()
			default:
				if vm := lab.VM(child); vm != nil && vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn {
					return &vimfault.Fault{Fault: &types.InvalidState{}, Msg: "The operation is not allowed in the current state."}
				}
			}
		}
		return nil
	}
	return walk(folder)
}

// unregisterAndDestroy unregisters the VMs below folder (the simulator's UnregisterVM: host, pool and datastore
// references and the folder entry go) and removes the folders bottom up.
func unregisterAndDestroy(lab Lab, folder *simulator.Folder) {
	for _, child := range append([]types.ManagedObjectReference(nil), folder.ChildEntity...) {
		switch obj := simulator.Map.Get(child).(type) {
		case *simulator.Folder:
			unregisterAndDestroy(lab, obj)
		default:
			if vm := lab.VM(child); vm != nil {
				simulator.Map.WithLock(child, func() {
					_ = vm.UnregisterVM(lab.Context(), &types.UnregisterVM{This: child}).(*methods.UnregisterVMBody)
				})
			}
		}
	}
	if parent, ok := simulator.Map.Get(*folder.Parent).(*simulator.Folder); ok {
		simulator.Map.RemoveReference(parent, &parent.ChildEntity, folder.Self)
	}
	simulator.Map.Remove(folder.Self)
}
