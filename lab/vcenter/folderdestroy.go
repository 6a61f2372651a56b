package main

import (
	"fmt"
	"net/http"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/soaphttp"
	"vcsim/vimfault"
)

// serveUnregisterAndDestroy answers Folder.UnregisterAndDestroy_Task, which the simulator lacks. vSphere Web
// Services API, Folder (developer.broadcom.com/xapis/vsphere-web-services-api/latest/vim.Folder.html): it applies
// only to virtual machine folders (NotSupported otherwise), unregisters every VM below the folder (their files stay
// on the datastore) and destroys the folder with its child folders; a VM that is powered on makes it fail with
// InvalidState. The lab checks every VM before it changes anything, where vCenter may have unregistered some VMs
// before it reaches a powered-on one (not confirmed). A datacenter's own vm folder cannot go (NotSupported), and a
// vApp below the folder is refused with NotSupported, as the lab does not model vApps.
func (l *Lab) serveUnregisterAndDestroy(w http.ResponseWriter, call soaphttp.Call) bool {
	if call.Method != "UnregisterAndDestroy_Task" {
		return false
	}
	folder, _ := simulator.Map.Get(call.This).(*simulator.Folder)
	if folder == nil {
		soaphttp.WriteObjectNotFound(w, call.This)
		return true
	}
	ref := l.runTask(folder, "unregisterAndDestroy", func(*simulator.Task) (types.AnyType, *vimfault.Fault) {
		if f := l.checkUnregisterAndDestroy(folder); f != nil {
			return nil, f
		}
		l.unregisterAndDestroy(folder)
		l.logf("folder %s unregistered and destroyed", folder.Name)
		return nil, nil
	})
	soaphttp.WriteResponse(w, fmt.Sprintf(`<UnregisterAndDestroy_TaskResponse xmlns="urn:vim25"><returnval type="Task">%s`+
		`</returnval></UnregisterAndDestroy_TaskResponse>`, ref.Value))
	return true
}

func notSupported() *vimfault.Fault {
	return &vimfault.Fault{Fault: &types.NotSupported{}, Msg: "The operation is not supported on the object."}
}

// checkUnregisterAndDestroy refuses a folder that is not a VM folder, a datacenter's root VM folder, and a subtree
// that holds a powered-on VM or a vApp.
func (l *Lab) checkUnregisterAndDestroy(folder *simulator.Folder) *vimfault.Fault {
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
				if vm := l.vm(child); vm != nil && vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn {
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
func (l *Lab) unregisterAndDestroy(folder *simulator.Folder) {
	for _, child := range append([]types.ManagedObjectReference(nil), folder.ChildEntity...) {
		switch obj := simulator.Map.Get(child).(type) {
		case *simulator.Folder:
			l.unregisterAndDestroy(obj)
		default:
			if vm := l.vm(child); vm != nil {
				simulator.Map.WithLock(child, func() {
					_ = vm.VirtualMachine.UnregisterVM(l.ctx, &types.UnregisterVM{This: child}).(*methods.UnregisterVMBody)
				})
			}
		}
	}
	if parent, ok := simulator.Map.Get(*folder.Parent).(*simulator.Folder); ok {
		simulator.Map.RemoveReference(parent, &parent.ChildEntity, folder.Self)
	}
	simulator.Map.Remove(folder.Self)
}
