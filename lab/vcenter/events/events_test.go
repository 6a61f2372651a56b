package events

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
	"vcsim/simobj"
	"vcsim/soaphttp"
)

// testLab serves govmomi's model with the history answering QueryEvents, as the lab does: the history drained after
// each request.
type testLab struct {
	mu      sync.Mutex
	ctx     *simulator.Context
	history History
	c       *govmomi.Client
	model   *simulator.Model
}

func newTestLab(t *testing.T) *testLab {
	tl := &testLab{model: labtest.Simulator(t)}
	tl.ctx = simobj.Context(context.Background())
	tl.c = labtest.Serve(t, tl.model, func(w http.ResponseWriter, call soaphttp.Call, body []byte, sim func()) {
		tl.mu.Lock()
		defer tl.mu.Unlock()
		defer tl.history.Drain(tl.ctx)
		if !tl.history.Serve(tl.ctx, w, call, body) {
			sim()
		}
	})
	return tl
}

func (tl *testLab) query(t *testing.T, filter types.EventFilterSpec) []types.BaseEvent {
	t.Helper()
	res, err := methods.QueryEvents(context.Background(), tl.c.Client,
		&types.QueryEvents{This: *tl.c.ServiceContent.EventManager, Filter: filter})
	if err != nil {
		t.Fatal(err)
	}
	return res.Returnval
}

// post posts event as user ("" for a system event), as the lab does for maintenance mode.
func (tl *testLab) post(user string, event types.BaseEvent) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	Post(tl.ctx, user, event)
	tl.history.Drain(tl.ctx)
}

func hostEvent(t *testing.T, name string) (types.HostEvent, *simulator.HostSystem) {
	var host *simulator.HostSystem
	for _, entity := range simulator.Map.All("HostSystem") {
		if entity.Entity().Name == name {
			host = entity.(*simulator.HostSystem)
		}
	}
	if host == nil {
		t.Fatalf("no host %s", name)
	}
	return types.HostEvent{Event: types.Event{Host: &types.HostEventArgument{
		EntityEventArgument: types.EntityEventArgument{Name: host.Name}, Host: host.Self}}}, host
}

func TestQueryHonoursTheWholeFilter(t *testing.T) {
	tl := newTestLab(t)
	event, host := hostEvent(t, "DC0_C0_H0")
	tl.post("alice", &types.EnteringMaintenanceModeEvent{HostEvent: event})
	tl.post("", &types.EnteredMaintenanceModeEvent{HostEvent: event})
	time.Sleep(20 * time.Millisecond)
	mark := time.Now()
	time.Sleep(20 * time.Millisecond)
	tl.post("bob", &types.ExitMaintenanceModeEvent{HostEvent: event})
	self := &types.EventFilterSpecByEntity{Entity: host.Self, Recursion: types.EventFilterSpecRecursionOptionSelf}
	maintenance := []string{"EnteringMaintenanceModeEvent", "EnteredMaintenanceModeEvent", "ExitMaintenanceModeEvent"}

	cases := []struct {
		name   string
		filter types.EventFilterSpec
		want   int
	}{
		{"the host's maintenance events", types.EventFilterSpec{Entity: self, EventTypeId: maintenance}, 3},
		{"a base type (HostEvent) names them all", types.EventFilterSpec{Entity: self, Type: []string{"HostEvent"}}, 3},
		{"since the mark", types.EventFilterSpec{Entity: self, Time: &types.EventFilterSpecByTime{BeginTime: &mark}}, 1},
		{"until the mark", types.EventFilterSpec{Entity: self, Time: &types.EventFilterSpecByTime{EndTime: &mark}}, 2},
		{"alice's", types.EventFilterSpec{Entity: self,
			UserName: &types.EventFilterSpecByUsername{UserList: []string{"alice"}}}, 1},
		{"every user's, no system event", types.EventFilterSpec{Entity: self,
			UserName: &types.EventFilterSpecByUsername{}}, 2},
		{"system events only", types.EventFilterSpec{Entity: self,
			UserName: &types.EventFilterSpecByUsername{SystemUser: true, UserList: []string{"nobody"}}}, 1},
		{"no error among them", types.EventFilterSpec{Entity: self, Category: []string{"error"}}, 0},
		{"the newest", types.EventFilterSpec{Entity: self, MaxCount: 1}, 1},
	}
	for _, c := range cases {
		if got := tl.query(t, c.filter); len(got) != c.want {
			t.Errorf("%s: %d events, want %d", c.name, len(got), c.want)
		}
	}
	newest := tl.query(t, types.EventFilterSpec{Entity: self, MaxCount: 1})
	if _, ok := newest[0].(*types.ExitMaintenanceModeEvent); !ok || newest[0].GetEvent().UserName != "bob" {
		t.Fatalf("maxCount keeps the newest: %#v", newest[0])
	}
	bare := tl.query(t, types.EventFilterSpec{Entity: self, DisableFullMessage: types.NewBool(true)})
	if len(bare) != 3 || bare[0].GetEvent().FullFormattedMessage != "" {
		t.Fatalf("disableFullMessage: %#v", bare)
	}
	if full := tl.query(t, types.EventFilterSpec{Entity: self}); full[0].GetEvent().FullFormattedMessage == "" {
		t.Fatal("the history keeps the messages")
	}
}

func TestEntityRecursionFollowsTheInventory(t *testing.T) {
	tl := newTestLab(t)
	event, host := hostEvent(t, "DC0_C0_H0")
	tl.post("alice", &types.EnteringMaintenanceModeEvent{HostEvent: event})
	cluster := *host.Parent
	for recursion, want := range map[types.EventFilterSpecRecursionOption]int{
		types.EventFilterSpecRecursionOptionSelf:     0, // the event names the host, not its cluster
		types.EventFilterSpecRecursionOptionChildren: 1,
		types.EventFilterSpecRecursionOptionAll:      1,
	} {
		got := tl.query(t, types.EventFilterSpec{EventTypeId: []string{"EnteringMaintenanceModeEvent"},
			Entity: &types.EventFilterSpecByEntity{Entity: cluster, Recursion: recursion}})
		if len(got) != want {
			t.Errorf("the cluster with recursion %s: %d events, want %d", recursion, len(got), want)
		}
	}
	other, _ := hostEvent(t, "DC0_H0")
	if got := tl.query(t, types.EventFilterSpec{EventTypeId: []string{"EnteringMaintenanceModeEvent"},
		Entity: &types.EventFilterSpecByEntity{Entity: other.Host.Host,
			Recursion: types.EventFilterSpecRecursionOptionAll}}); len(got) != 0 {
		t.Fatalf("another host: %d events", len(got))
	}
}

func TestTheHistoryOutlivesTheSimulatorsRing(t *testing.T) {
	tl := newTestLab(t)
	event, host := hostEvent(t, "DC0_C0_H0")
	tl.post("alice", &types.EnteringMaintenanceModeEvent{HostEvent: event})
	m := *tl.c.ServiceContent.EventManager
	for i := 0; i < 1100; i++ {
		if _, err := methods.PostEvent(context.Background(), tl.c.Client, &types.PostEvent{This: m,
			EventToPost: &types.GeneralUserEvent{GeneralEvent: types.GeneralEvent{Message: "filler"}}}); err != nil {
			t.Fatal(err)
		}
	}
	got := tl.query(t, types.EventFilterSpec{EventTypeId: []string{"EnteringMaintenanceModeEvent"},
		Entity: &types.EventFilterSpecByEntity{Entity: host.Self, Recursion: types.EventFilterSpecRecursionOptionSelf}})
	if len(got) != 1 {
		t.Fatalf("the event is still in the history after 1100 newer ones: %d", len(got))
	}
	if all := tl.query(t, types.EventFilterSpec{EventTypeId: []string{"GeneralUserEvent"}}); len(all) != 1100 {
		t.Fatalf("every filler event: %d", len(all))
	}
}

func TestANegativeMaxCountIsRefused(t *testing.T) {
	tl := newTestLab(t)
	_, err := methods.QueryEvents(context.Background(), tl.c.Client,
		&types.QueryEvents{This: *tl.c.ServiceContent.EventManager, Filter: types.EventFilterSpec{MaxCount: -1}})
	if !labtest.IsFault(err, "InvalidArgument") {
		t.Fatalf("InvalidArgument for maxCount -1: %v", err)
	}
}
