package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/http"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
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
func (l *Lab) serveHostConnection(w http.ResponseWriter, call soapCall) bool {
	state, ok := hostConnectionMethods[call.method]
	if !ok || call.this.Type != "HostSystem" {
		return false
	}
	obj := l.hostObject(call.this)
	if obj == nil {
		writeObjectNotFound(w, call.this)
		return true
	}
	task := simulator.CreateTask(obj, call.method, func(*simulator.Task) (types.AnyType, types.BaseMethodFault) {
		vmState := types.VirtualMachineConnectionStateConnected
		if state == types.HostSystemConnectionStateDisconnected {
			vmState = types.VirtualMachineConnectionStateDisconnected
		}
		l.setHostConnection(obj, state, vmState)
		l.logf("host %s: %s", obj.Name, state)
		return nil, nil
	})
	ref := task.Run()
	writeResponse(w, fmt.Sprintf(`<%sResponse xmlns="urn:vim25"><returnval type="Task">%s</returnval></%sResponse>`,
		call.method, ref.Value, call.method))
	return true
}

const soapEnvelope = `<soapenv:Envelope xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/" ` +
	`xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" ` +
	`xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>%s</soapenv:Body></soapenv:Envelope>`

func writeResponse(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "%s"+soapEnvelope, xml.Header, body)
}

// writeObjectNotFound answers as vCenter does for a reference to an object that does not exist.
func writeObjectNotFound(w http.ResponseWriter, ref types.ManagedObjectReference) {
	writeFault(w, fmt.Sprintf("The object '%s' has already been deleted or has not been completely created",
		ref.Value), "ManagedObjectNotFound", fmt.Sprintf(`<obj type="%s">%s</obj>`, ref.Type, ref.Value))
}

// writeFault answers with a SOAP fault of the given vim25 type; detail is the fault's properties, already XML.
func writeFault(w http.ResponseWriter, message, faultType, detail string) {
	var text bytes.Buffer
	_ = xml.EscapeText(&text, []byte(message))
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	fmt.Fprintf(w, "%s"+soapEnvelope, xml.Header, fmt.Sprintf(`<soapenv:Fault><faultcode>ServerFaultCode</faultcode>`+
		`<faultstring>%s</faultstring><detail><%sFault xmlns="urn:vim25" xsi:type="%s">%s</%sFault></detail>`+
		`</soapenv:Fault>`, text.String(), faultType, faultType, detail, faultType))
}
