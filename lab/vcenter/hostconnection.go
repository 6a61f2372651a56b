package main

import (
	"fmt"
	"net/http"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/soaphttp"
)

// hostConnectionMethods are HostSystem methods the simulator lacks. The simulator type-asserts HostSystem objects,
// so the lab cannot give them methods of its own; it answers these calls before the simulator sees them.
var hostConnectionMethods = map[string]types.HostSystemConnectionState{
	"DisconnectHost_Task": types.HostSystemConnectionStateDisconnected,
	"ReconnectHost_Task":  types.HostSystemConnectionStateConnected,
}

// serveHostConnection answers DisconnectHost_Task and ReconnectHost_Task as vCenter does (vSphere Web Services API,
// HostSystem): a task on the host that sets runtime.connectionState to disconnected ("the user has explicitly taken
// the host down") or back to connected; the host and its VMs stay in the inventory, and the VMs' connection state
// follows the host's. Both succeed on a host already in the state asked for.
func (l *Lab) serveHostConnection(w http.ResponseWriter, call soaphttp.Call) bool {
	state, ok := hostConnectionMethods[call.Method]
	if !ok || call.This.Type != "HostSystem" {
		return false
	}
	obj := l.hostObject(call.This)
	if obj == nil {
		soaphttp.WriteObjectNotFound(w, call.This)
		return true
	}
	task := simulator.CreateTask(obj, call.Method, func(*simulator.Task) (types.AnyType, types.BaseMethodFault) {
		vmState := types.VirtualMachineConnectionStateConnected
		if state == types.HostSystemConnectionStateDisconnected {
			vmState = types.VirtualMachineConnectionStateDisconnected
		}
		l.setHostConnection(obj, state, vmState)
		l.logf("host %s: %s", obj.Name, state)
		return nil, nil
	})
	ref := task.Run()
	soaphttp.WriteResponse(w, fmt.Sprintf(`<%sResponse xmlns="urn:vim25"><returnval type="Task">%s</returnval></%sResponse>`,
		call.Method, ref.Value, call.Method))
	return true
}
