package main

import (
	"context"
	"testing"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"
)

const eventsTopology = `{"datacenters": [{"name": "dc",
	"clusters": [{"name": "hpc", "drs": {"enabled": true, "behavior": "fullyAutomated"}, "hosts": [
		{"name": "esxi-41", "gpus": [{"model": "A100-40", "count": 1}]},
		{"name": "esxi-42", "gpus": [{"model": "A100-40", "count": 1}]}]}],
	"vms": [{"name": "vm-1", "host": "esxi-41", "power_state": "poweredOff"}]}]}`

func queryEvents(t *testing.T, c *govmomi.Client, filter types.EventFilterSpec) []types.BaseEvent {
	t.Helper()
	res, err := methods.QueryEvents(context.Background(), c.Client,
		&types.QueryEvents{This: *c.ServiceContent.EventManager, Filter: filter})
	if err != nil {
		t.Fatal(err)
	}
	return res.Returnval
}

// startEventsLab starts a lab of eventsTopology, logs in and answers its first host (esxi-41).
func startEventsLab(t *testing.T) (*testLab, *govmomi.Client, *object.HostSystem) {
	t.Helper()
	tl, c := startConnectedLab(t, eventsTopology)
	return tl, c, object.NewHostSystem(c.Client, tl.hosts[0].Ref)
}

// ofEntity filters the events of ref itself.
func ofEntity(ref types.ManagedObjectReference) *types.EventFilterSpecByEntity {
	return &types.EventFilterSpecByEntity{Entity: ref, Recursion: types.EventFilterSpecRecursionOptionSelf}
}

func eventNames(events []types.BaseEvent) []string {
	var names []string
	for _, e := range events {
		names = append(names, typeName(e))
	}
	return names
}

func typeName(e types.BaseEvent) string {
	switch e.(type) {
	case *types.EnteringMaintenanceModeEvent:
		return "EnteringMaintenanceModeEvent"
	case *types.EnteredMaintenanceModeEvent:
		return "EnteredMaintenanceModeEvent"
	case *types.ExitMaintenanceModeEvent:
		return "ExitMaintenanceModeEvent"
	case *types.VmPoweredOnEvent:
		return "VmPoweredOnEvent"
	}
	return "other"
}

func TestMaintenanceModeEventsNameTheHostAndTheUser(t *testing.T) {
	tl, c, host := startEventsLab(t)
	ctx := context.Background()
	byHost := ofEntity(host.Reference())
	maintenance := []string{"EnteringMaintenanceModeEvent", "EnteredMaintenanceModeEvent", "ExitMaintenanceModeEvent"}

	if err := waitTask(host.EnterMaintenanceMode(ctx, 60, false, nil)); err != nil {
		t.Fatal(err)
	}
	// Entering again changes nothing and posts nothing.
	if err := waitTask(host.EnterMaintenanceMode(ctx, 60, false, nil)); err != nil {
		t.Fatal(err)
	}
	if err := waitTask(host.ExitMaintenanceMode(ctx, 60)); err != nil {
		t.Fatal(err)
	}
	events := queryEvents(t, c, types.EventFilterSpec{Entity: byHost, EventTypeId: maintenance})
	names := eventNames(events)
	if len(names) != 3 || names[0] != maintenance[0] || names[1] != maintenance[1] || names[2] != maintenance[2] {
		t.Fatalf("entering, entered and exit, oldest first: %v", names)
	}
	for _, e := range events {
		ev := e.GetEvent()
		if ev.UserName != "lab" || ev.Host == nil || ev.Host.Host != host.Reference() || ev.Host.Name != "esxi-41" ||
			ev.ComputeResource == nil || ev.ComputeResource.Name != "hpc" || ev.Datacenter == nil ||
			ev.Datacenter.Name != "dc" || ev.FullFormattedMessage == "" {
			t.Fatalf("the event names the user, host, cluster and datacenter: %+v", ev)
		}
	}
	other := queryEvents(t, c, types.EventFilterSpec{Entity: ofEntity(tl.hosts[1].Ref), EventTypeId: maintenance})
	if len(other) != 0 {
		t.Fatalf("the other host has no maintenance events: %v", eventNames(other))
	}
	cluster := queryEvents(t, c, types.EventFilterSpec{Entity: &types.EventFilterSpecByEntity{
		Entity: events[0].GetEvent().ComputeResource.ComputeResource, Recursion: types.EventFilterSpecRecursionOptionChildren},
		EventTypeId: []string{"HostEvent"}})
	if len(cluster) != 3 {
		t.Fatalf("the cluster's children (base type HostEvent) include the host's events: %v", eventNames(cluster))
	}
}

func TestQueryEventsHonoursTheWholeFilter(t *testing.T) {
	_, c, host := startEventsLab(t)
	ctx := context.Background()
	byHost := ofEntity(host.Reference())
	exit := []string{"ExitMaintenanceModeEvent"}
	cycle := func() {
		if err := waitTask(host.EnterMaintenanceMode(ctx, 60, false, nil)); err != nil {
			t.Fatal(err)
		}
		if err := waitTask(host.ExitMaintenanceMode(ctx, 60)); err != nil {
			t.Fatal(err)
		}
	}
	cycle()
	first := queryEvents(t, c, types.EventFilterSpec{Entity: byHost, EventTypeId: exit})
	if len(first) != 1 {
		t.Fatalf("one exit: %v", eventNames(first))
	}
	at := first[0].GetEvent().CreatedTime
	time.Sleep(20 * time.Millisecond)
	mark := time.Now()
	time.Sleep(20 * time.Millisecond)
	cycle()

	since := queryEvents(t, c, types.EventFilterSpec{Entity: byHost, EventTypeId: exit,
		Time: &types.EventFilterSpecByTime{BeginTime: &mark}})
	if len(since) != 1 || !since[0].GetEvent().CreatedTime.After(mark) {
		t.Fatalf("beginTime leaves out the older exit: %v", since)
	}
	before := queryEvents(t, c, types.EventFilterSpec{Entity: byHost, EventTypeId: exit,
		Time: &types.EventFilterSpecByTime{EndTime: &mark}})
	if len(before) != 1 || !before[0].GetEvent().CreatedTime.Equal(at) {
		t.Fatalf("endTime leaves out the newer exit: %v", before)
	}
	if got := queryEvents(t, c, types.EventFilterSpec{Entity: byHost, EventTypeId: exit, MaxCount: 1}); len(got) != 1 ||
		!got[0].GetEvent().CreatedTime.After(mark) {
		t.Fatalf("maxCount 1 keeps the newest: %v", got)
	}
	if got := queryEvents(t, c, types.EventFilterSpec{Entity: byHost, EventTypeId: exit,
		UserName: &types.EventFilterSpecByUsername{UserList: []string{"someone-else"}}}); len(got) != 0 {
		t.Fatalf("a user list without the lab's user: %v", eventNames(got))
	}
	if got := queryEvents(t, c, types.EventFilterSpec{Entity: byHost, EventTypeId: exit,
		UserName: &types.EventFilterSpecByUsername{UserList: []string{"lab"}}}); len(got) != 2 {
		t.Fatalf("the lab's user: %v", eventNames(got))
	}
	if got := queryEvents(t, c, types.EventFilterSpec{Entity: byHost, EventTypeId: exit,
		UserName: &types.EventFilterSpecByUsername{SystemUser: true, UserList: []string{"nobody"}}}); len(got) != 0 {
		t.Fatalf("system events only: %v", eventNames(got))
	}
	if got := queryEvents(t, c, types.EventFilterSpec{Entity: byHost, EventTypeId: exit, Category: []string{"error"}}); len(got) != 0 {
		t.Fatalf("exits are info events: %v", eventNames(got))
	}
	if got := queryEvents(t, c, types.EventFilterSpec{Entity: byHost, EventTypeId: exit,
		EventChainId: first[0].GetEvent().ChainId}); len(got) != 1 {
		t.Fatalf("one chain: %v", eventNames(got))
	}
	if got := queryEvents(t, c, types.EventFilterSpec{Entity: byHost, EventTypeId: exit,
		DisableFullMessage: types.NewBool(true)}); len(got) != 2 || got[0].GetEvent().FullFormattedMessage != "" {
		t.Fatalf("disableFullMessage: %+v", got)
	}
	if got := queryEvents(t, c, types.EventFilterSpec{Entity: byHost, EventTypeId: exit}); got[0].GetEvent().FullFormattedMessage == "" {
		t.Fatal("the history keeps the messages")
	}
	_, err := methods.QueryEvents(ctx, c.Client, &types.QueryEvents{This: *c.ServiceContent.EventManager,
		Filter: types.EventFilterSpec{MaxCount: -1}})
	expectFault(t, "negative maxCount", err, "maxCount")
}

func TestEventHistoryOutlivesTheSimulatorsRing(t *testing.T) {
	tl, c := startConnectedLab(t, eventsTopology)
	ctx := context.Background()
	vm := object.NewVirtualMachine(c.Client, tl.vms[0])
	if err := waitTask(vm.PowerOn(ctx)); err != nil {
		t.Fatal(err)
	}
	m := *c.ServiceContent.EventManager
	for i := 0; i < 1100; i++ {
		if _, err := methods.PostEvent(ctx, c.Client, &types.PostEvent{This: m, EventToPost: &types.GeneralUserEvent{
			GeneralEvent: types.GeneralEvent{Message: "filler"}}}); err != nil {
			t.Fatal(err)
		}
	}
	got := queryEvents(t, c, types.EventFilterSpec{Entity: ofEntity(tl.vms[0]),
		EventTypeId: []string{"VmPoweredOnEvent"}})
	if len(got) != 1 || got[0].GetEvent().Vm.Vm != tl.vms[0] {
		t.Fatalf("the power-on is still in the history after 1100 newer events: %v", eventNames(got))
	}
	if all := queryEvents(t, c, types.EventFilterSpec{EventTypeId: []string{"GeneralUserEvent"}}); len(all) != 1100 {
		t.Fatalf("every filler event: %d", len(all))
	}
}
