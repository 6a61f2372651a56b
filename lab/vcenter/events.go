package main

import (
	"fmt"
	"html"
	"net/http"
	"regexp"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/events"
	"vcsim/soaphttp"
)

// vCenter's maintenance mode events, by the user who asked; the history and QueryEvents are package events's.

func init() {
	labServedMethods["QueryEvents"] = true
}

// hostEvent is the HostEvent part of an event about host ref: the host, its compute resource and its datacenter,
// as vCenter fills them.
func (l *Lab) hostEvent(ref types.ManagedObjectReference) types.HostEvent {
	var e types.HostEvent
	obj := l.hostObject(ref)
	e.Host = &types.HostEventArgument{EntityEventArgument: types.EntityEventArgument{Name: obj.Name}, Host: ref}
	for parent := obj.Parent; parent != nil; {
		entity, ok := simulator.Map.Get(*parent).(mo.Entity)
		if !ok {
			break
		}
		switch p := entity.(type) {
		case *simulator.ClusterComputeResource:
			e.ComputeResource = &types.ComputeResourceEventArgument{
				EntityEventArgument: types.EntityEventArgument{Name: p.Name}, ComputeResource: p.Self}
		case *mo.ComputeResource:
			e.ComputeResource = &types.ComputeResourceEventArgument{
				EntityEventArgument: types.EntityEventArgument{Name: p.Name}, ComputeResource: p.Self}
		case *simulator.Datacenter:
			e.Datacenter = &types.DatacenterEventArgument{
				EntityEventArgument: types.EntityEventArgument{Name: p.Name}, Datacenter: p.Self}
		}
		if e.ComputeResource == nil && parent.Type == "ComputeResource" {
			e.ComputeResource = &types.ComputeResourceEventArgument{
				EntityEventArgument: types.EntityEventArgument{Name: entity.Entity().Name}, ComputeResource: *parent}
		}
		parent = entity.Entity().Parent
	}
	return e
}

// maintenanceEvent posts one of vCenter's maintenance mode events for host ref, by the user who asked for the
// change (the caller of the request being served; vCenter itself for vLCM). vSphere Web Services API:
// EnteringMaintenanceModeEvent "a host has begun the process of entering maintenance mode",
// EnteredMaintenanceModeEvent "the host has completely entered maintenance mode", ExitMaintenanceModeEvent "the
// host is no longer in maintenance mode" (pyVmomi docs, vim.event.*MaintenanceModeEvent).
func (l *Lab) maintenanceEvent(kind string, ref types.ManagedObjectReference) {
	host := l.hostEvent(ref)
	var event types.BaseEvent
	switch kind {
	case "entering":
		event = &types.EnteringMaintenanceModeEvent{HostEvent: host}
	case "entered":
		event = &types.EnteredMaintenanceModeEvent{HostEvent: host}
	default:
		event = &types.ExitMaintenanceModeEvent{HostEvent: host}
	}
	events.Post(l.ctx, l.caller, event)
}

// whoamiProbe reads the session's user (SessionManager.currentSession) through the simulator's dispatcher.
const whoamiProbe = `<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope ` +
	`xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><RetrievePropertiesEx xmlns="urn:vim25">` +
	`<_this type="PropertyCollector">%s</_this><specSet><propSet><type>SessionManager</type>` +
	`<pathSet>currentSession</pathSet></propSet><objectSet><obj type="SessionManager">%s</obj></objectSet>` +
	`</specSet><options></options></RetrievePropertiesEx></soapenv:Body></soapenv:Envelope>`

var userNameElement = regexp.MustCompile(`<userName>([^<]*)</userName>`)

// callerOf names the user of the session a request comes in, for the methods whose events name it.
func (l *Lab) callerOf(svc *simulator.Service, r *http.Request, call soaphttp.Call) string {
	if call.Method != "EnterMaintenanceMode_Task" && call.Method != "ExitMaintenanceMode_Task" {
		return ""
	}
	sc := serviceContent()
	answer := inSession(svc, r, fmt.Sprintf(whoamiProbe, sc.PropertyCollector.Value, sc.SessionManager.Value))
	if m := userNameElement.FindStringSubmatch(answer); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

func serviceContent() types.ServiceContent {
	return simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance).Content
}
