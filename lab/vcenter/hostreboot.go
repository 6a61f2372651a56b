package main

import (
	"fmt"
	"net/http"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/soaphttp"
	"vcsim/vimfault"
)

// Host reboot as vCenter runs it (vSphere Web Services API, HostSystem.RebootHost_Task; RebootHostRequestType:
// "force: whether or not the host should be rebooted regardless of whether it is in maintenance mode. If true, the
// host is rebooted, even if there are virtual machines running"):
//   - force false on a host outside maintenance mode fails the task with InvalidState, nothing changed;
//   - otherwise the task succeeds once the host took the command; the host then drops out of vCenter
//     (runtime.connectionState notResponding, its VMs disconnected), its running VMs stop (powered off, as a host
//     that goes down leaves them), and after the host's boot time it is connected again with a new
//     runtime.bootTime, still in maintenance mode if it was.
//   - Passthrough changes waiting for the reboot (passthruEnabled set, passthruActive not yet, on hosts whose
//     devices cannot be rebound without one: HostCapability.deviceRebindWithoutRebootSupported false, vSphere API
//     7.0.2) take effect during the boot.
// A host that is not connected is refused with InvalidHostState.

const (
	rebootMethod = "RebootHost_Task"
	// invalidStateMessage is vCenter's text for InvalidState (vim.Fault.InvalidState).
	invalidStateMessage = "The operation is not allowed in the current state."
)

// hostsBooted is every host's runtime.bootTime until it reboots: when the lab program started, so that a lab reset
// (a new inventory in the same process) gives the hosts the boot time they had at the lab's start.
var hostsBooted = time.Now().UTC().Truncate(time.Second)

func init() {
	labServedMethods[rebootMethod] = true
	hookedMethods[rebootMethod] = true
}

// serveHostReboot answers RebootHost_Task before the simulator, which has no such method.
func (l *Lab) serveHostReboot(w http.ResponseWriter, call soaphttp.Call) bool {
	if call.Method != rebootMethod || call.This.Type != "HostSystem" {
		return false
	}
	obj := l.hostObject(call.This)
	if obj == nil {
		soaphttp.WriteObjectNotFound(w, call.This)
		return true
	}
	force := false
	if req, ok := l.inflight.(*types.RebootHost_Task); ok {
		force = req.Force
	}
	ref := l.runTask(obj, rebootMethod, func(*simulator.Task) (types.AnyType, *vimfault.Fault) {
		return nil, l.rebootHost(l.host(obj.Self), obj, force)
	})
	soaphttp.WriteResponse(w, fmt.Sprintf(`<%sResponse xmlns="urn:vim25"><returnval type="Task">%s</returnval></%sResponse>`,
		rebootMethod, ref.Value, rebootMethod))
	return true
}

// rebootHost takes the host down; it comes back after h.rebootDuration (finishReboot).
func (l *Lab) rebootHost(h *hostState, obj *simulator.HostSystem, force bool) *vimfault.Fault {
	if state := obj.Runtime.ConnectionState; state != types.HostSystemConnectionStateConnected {
		return invalidHostState(h, "is "+string(state))
	}
	if !force && !obj.Runtime.InMaintenanceMode {
		return &vimfault.Fault{Fault: &types.InvalidState{}, Msg: invalidStateMessage}
	}
	for _, vm := range h.runningVMs() {
		ref := vm.Self
		l.as(ref, func() {
			vm.PowerOffVMTask(l.ctx, &types.PowerOffVM_Task{This: ref})
		})
		l.logf("host %s: VM %s powered off by the host's reboot", h.Name, vm.Name)
	}
	l.setHostConnection(obj, types.HostSystemConnectionStateNotResponding,
		types.VirtualMachineConnectionStateDisconnected)
	l.logf("host %s: rebooting (back in %s)", h.Name, h.rebootDuration)
	l.later(h.rebootDuration, func() { l.finishReboot(h, obj) })
	return nil
}

// finishReboot is the host back from its reboot: pending passthrough active, a new boot time, connected.
func (l *Lab) finishReboot(h *hostState, obj *simulator.HostSystem) {
	if s := h.passthruSystem(); s != nil {
		s.Rebooted()
	}
	now := time.Now()
	l.update(obj, types.PropertyChange{Name: "runtime.bootTime", Val: &now})
	l.setHostConnection(obj, types.HostSystemConnectionStateConnected, types.VirtualMachineConnectionStateConnected)
	h.reboots++
	l.logf("host %s: back from its reboot", h.Name)
}

// setHostConnection sets the connection state of a host and of its VMs.
func (l *Lab) setHostConnection(obj *simulator.HostSystem, state types.HostSystemConnectionState,
	vmState types.VirtualMachineConnectionState) {
	l.update(obj, types.PropertyChange{Name: "runtime.connectionState", Val: state})
	for _, ref := range obj.Vm {
		if vm := simulator.Map.Get(ref); vm != nil {
			l.update(vm, types.PropertyChange{Name: "runtime.connectionState", Val: vmState},
				types.PropertyChange{Name: "summary.runtime.connectionState", Val: vmState})
		}
	}
}
