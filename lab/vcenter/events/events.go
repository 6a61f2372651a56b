// Package events is vCenter's event history as the lab keeps it, and EventManager.QueryEvents with every filter of
// EventFilterSpec.
//
// The simulator keeps its last 1000 events and filters them by entity and type only (EventFilterSpec.time,
// userName, category, eventChainId ... are ignored, and QueryEvents without maxCount answers 10 events). vCenter
// keeps its event history for days and honours the whole filter (vSphere Web Services API, EventFilterSpec:
// developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/data-structures/EventFilterSpec). The lab
// copies every event the simulator posts into a History (Drain, after each request) and answers QueryEvents from it
// (Serve).
package events

import (
	"bytes"
	"net/http"
	"reflect"
	"sort"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"

	"vcsim/soaphttp"
)

// History is the lab's copy of the events the simulator posted, oldest first.
type History struct {
	events []types.BaseEvent
	key    int32 // the key of the newest event held
}

// VMObject is an object the simulator holds for a VM under another type than its own (the lab's VMs).
type VMObject interface {
	SimulatorVM() *simulator.VirtualMachine
}

// Drain copies the events the simulator posted since the last call into the history. Called with the lab's lock
// held, after each SOAP request and before each query: the simulator's ring holds 1000 events, far more than one
// request posts.
func (h *History) Drain(ctx *simulator.Context) {
	m := simulator.Map.EventManager()
	key := int32(reflect.ValueOf(m).Elem().FieldByName("key").Int()) // read only; the simulator keeps it unexported
	if key == h.key {
		return
	}
	body := m.QueryEvents(ctx, &types.QueryEvents{This: m.Self, Filter: types.EventFilterSpec{MaxCount: 1000}})
	res, ok := body.(*methods.QueryEventsBody)
	if !ok || res.Res == nil {
		return
	}
	var fresh []types.BaseEvent
	for _, event := range res.Res.Returnval {
		if event.GetEvent().Key > h.key {
			fresh = append(fresh, event)
		}
	}
	sort.Slice(fresh, func(i, j int) bool { return fresh[i].GetEvent().Key < fresh[j].GetEvent().Key })
	h.events = append(h.events, fresh...)
	h.key = key
}

// Post posts an event as vCenter does for an operation user asked for ("" for vCenter itself, as when vLCM takes a
// host through maintenance mode: a system event, EventFilterSpec.ByUsername.systemUser).
func Post(ctx *simulator.Context, user string, event types.BaseEvent) {
	m := simulator.Map.EventManager()
	as := *ctx
	as.Session = &simulator.Session{UserSession: types.UserSession{UserName: user}, Registry: ctx.Session.Registry}
	simulator.Map.WithLock(m, func() { m.PostEvent(&as, &types.PostEvent{This: m.Self, EventToPost: event}) })
}

// Serve answers EventManager.QueryEvents from the history with the whole filter applied; false for other calls.
func (h *History) Serve(ctx *simulator.Context, w http.ResponseWriter, call soaphttp.Call, body []byte) bool {
	if call.Method != "QueryEvents" || call.This.Type != "EventManager" {
		return false
	}
	method, err := simulator.UnmarshalBody(types.TypeFunc(), body)
	if err != nil {
		return false
	}
	req, ok := method.Body.(*types.QueryEvents)
	if !ok {
		return false
	}
	if req.Filter.MaxCount < 0 {
		soaphttp.WriteFault(w, "A specified parameter was not correct: maxCount", "InvalidArgument",
			"<invalidProperty>maxCount</invalidProperty>")
		return true
	}
	h.Drain(ctx)
	events := h.Query(&req.Filter)
	var out bytes.Buffer
	start := xml.StartElement{Name: xml.Name{Space: "urn:vim25", Local: "QueryEventsResponse"}}
	if err := xml.NewEncoder(&out).EncodeElement(&types.QueryEventsResponse{Returnval: events}, start); err != nil {
		soaphttp.WriteSystemError(w, err.Error())
		return true
	}
	soaphttp.WriteResponse(w, out.String())
	return true
}

// Query is the history under spec, oldest first; with maxCount, the newest maxCount of them.
func (h *History) Query(spec *types.EventFilterSpec) []types.BaseEvent {
	var found []types.BaseEvent
	for _, event := range h.events {
		if matches(event, spec) {
			found = append(found, event)
		}
	}
	if spec.MaxCount > 0 && len(found) > int(spec.MaxCount) {
		found = found[len(found)-int(spec.MaxCount):]
	}
	if spec.DisableFullMessage != nil && *spec.DisableFullMessage {
		for i, event := range found {
			found[i] = withoutFullMessage(event)
		}
	}
	return found
}

func withoutFullMessage(event types.BaseEvent) types.BaseEvent {
	v := reflect.ValueOf(event).Elem()
	clone := reflect.New(v.Type())
	clone.Elem().Set(v)
	copied := clone.Interface().(types.BaseEvent)
	copied.GetEvent().FullFormattedMessage = ""
	return copied
}

// matches applies every part of an EventFilterSpec (vSphere Web Services API, EventFilterSpec and its
// ByTime, ByUsername and ByEntity: developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/
// data-structures/EventFilterSpec, .../EventFilterSpecByTime, .../EventFilterSpecByUsername). Not confirmed
// against a vCenter: whether beginTime and endTime are inclusive (the lab includes both ends).
func matches(event types.BaseEvent, spec *types.EventFilterSpec) bool {
	e := event.GetEvent()
	if t := spec.Time; t != nil {
		if (t.BeginTime != nil && e.CreatedTime.Before(*t.BeginTime)) || (t.EndTime != nil && e.CreatedTime.After(*t.EndTime)) {
			return false
		}
	}
	if u := spec.UserName; u != nil && !userMatches(e.UserName, u) {
		return false
	}
	if spec.EventChainId != 0 && e.ChainId != spec.EventChainId {
		return false
	}
	if len(spec.Tag) > 0 && !contains(spec.Tag, e.ChangeTag) {
		return false
	}
	if len(spec.Category) > 0 && !contains(spec.Category, eventCategory(event)) {
		return false
	}
	if !typeMatches(event, spec.EventTypeId) || !typeMatches(event, spec.Type) {
		return false
	}
	if spec.Alarm != nil {
		alarm, ok := event.(types.BaseAlarmEvent)
		if !ok || alarm.GetAlarmEvent().Alarm.Alarm != *spec.Alarm {
			return false
		}
	}
	if spec.ScheduledTask != nil {
		task, ok := event.(types.BaseScheduledTaskEvent)
		if !ok || task.GetScheduledTaskEvent().ScheduledTask.ScheduledTask != *spec.ScheduledTask {
			return false
		}
	}
	return spec.Entity == nil || entityMatches(e, spec.Entity)
}

// userMatches: "systemUser: true for system user event"; "userList: if this property is not set, then all regular
// user events are collected". An event without a user is vCenter's own (a system event).
func userMatches(user string, by *types.EventFilterSpecByUsername) bool {
	if user == "" {
		return by.SystemUser
	}
	return len(by.UserList) == 0 || contains(by.UserList, user)
}

// typeMatches: an event matches a type name that is its own, one of its base types (VmEvent, HostEvent, Event),
// or, for an EventEx, its eventTypeId.
func typeMatches(event types.BaseEvent, names []string) bool {
	if len(names) == 0 {
		return true
	}
	if ex, ok := event.(*types.EventEx); ok && contains(names, ex.EventTypeId) {
		return true
	}
	for t := reflect.TypeOf(event).Elem(); ; {
		if contains(names, t.Name()) {
			return true
		}
		if t.NumField() == 0 || !t.Field(0).Anonymous || t.Field(0).Type.Kind() != reflect.Struct {
			return false
		}
		t = t.Field(0).Type
	}
}

// eventCategory is the category vCenter's event descriptions give the event's type (info, warning, error, user);
// an EventEx carries its own severity.
func eventCategory(event types.BaseEvent) string {
	if ex, ok := event.(*types.EventEx); ok && ex.Severity != "" {
		return ex.Severity
	}
	name := reflect.TypeOf(event).Elem().Name()
	for _, info := range simulator.Map.EventManager().Description.EventInfo {
		if info.Key == name {
			return info.Category
		}
	}
	return "info"
}

// entityMatches: an event is about every entity it names (VM, host, compute resource, datastore, network, switch,
// datacenter). recursion self: the entity is one of them (the root folder: every event); children: one of them
// lies below the entity in the inventory; all: either.
func entityMatches(e *types.Event, by *types.EventFilterSpecByEntity) bool {
	root := serviceContent().RootFolder
	for _, ref := range eventEntities(e) {
		self := ref == by.Entity || by.Entity == root
		switch by.Recursion {
		case types.EventFilterSpecRecursionOptionSelf:
			if self {
				return true
			}
		case types.EventFilterSpecRecursionOptionChildren:
			if ref != by.Entity && below(ref, by.Entity) {
				return true
			}
		default:
			if self || below(ref, by.Entity) {
				return true
			}
		}
	}
	return false
}

func eventEntities(e *types.Event) []types.ManagedObjectReference {
	var refs []types.ManagedObjectReference
	if e.Vm != nil {
		refs = append(refs, e.Vm.Vm)
	}
	if e.Host != nil {
		refs = append(refs, e.Host.Host)
	}
	if e.ComputeResource != nil {
		refs = append(refs, e.ComputeResource.ComputeResource)
	}
	if e.Ds != nil {
		refs = append(refs, e.Ds.Datastore)
	}
	if e.Net != nil {
		refs = append(refs, e.Net.Network)
	}
	if e.Dvs != nil {
		refs = append(refs, e.Dvs.Dvs)
	}
	if e.Datacenter != nil {
		refs = append(refs, e.Datacenter.Datacenter)
	}
	return refs
}

// below says whether ancestor lies above ref in the inventory: its folders, and for a VM its resource pools and
// its host's compute resource too.
func below(ref, ancestor types.ManagedObjectReference) bool {
	seen := map[types.ManagedObjectReference]bool{}
	queue := []types.ManagedObjectReference{ref}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if seen[cur] {
			continue
		}
		seen[cur] = true
		if cur != ref && cur == ancestor {
			return true
		}
		obj := simulator.Map.Get(cur)
		if entity, ok := obj.(mo.Entity); ok && entity.Entity().Parent != nil {
			queue = append(queue, *entity.Entity().Parent)
		}
		var vm *simulator.VirtualMachine
		switch v := obj.(type) {
		case VMObject:
			vm = v.SimulatorVM()
		case *simulator.VirtualMachine:
			vm = v
		}
		if vm != nil {
			if vm.ResourcePool != nil {
				queue = append(queue, *vm.ResourcePool)
			}
			if vm.Runtime.Host != nil {
				queue = append(queue, *vm.Runtime.Host)
			}
		}
		if pool, ok := obj.(*simulator.ResourcePool); ok && pool.Owner.Value != "" {
			queue = append(queue, pool.Owner)
		}
	}
	return false
}

func serviceContent() types.ServiceContent {
	return simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance).Content
}

func contains(list []string, s string) bool {
	for _, item := range list {
		if item == s {
			return true
		}
	}
	return false
}
