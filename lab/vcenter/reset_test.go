package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labapi"
	"vcsim/labtest"
	"vcsim/settings"
	"vcsim/stats"
	"vcsim/vapi"
)

// startResettableLab serves a topology the way vcsim-gpu does, POST /lab/reset included.
func startResettableLab(t *testing.T, topology string) *testLab {
	t.Helper()
	topo, err := labtest.Topology(t, topology)
	if err != nil {
		t.Fatal(err)
	}
	models, dataDir := labtest.Catalog(t), t.TempDir()
	server := httptest.NewUnstartedServer(nil)
	sdk := &url.URL{Scheme: "https", Host: server.Listener.Addr().String(), Path: "/sdk"}
	labs, err := newLabServer(func() (*Lab, *simulator.Service, error) {
		if err := emptyDir(dataDir); err != nil {
			return nil, nil, err
		}
		l, svc, err := NewSimulator(models, topo, dataDir)
		if err == nil {
			svc.Listen = &url.URL{Scheme: "https", Host: sdk.Host, Path: "/sdk", User: url.UserPassword("lab", "s3cret")}
		}
		return l, svc, err
	})
	if err != nil {
		t.Fatal(err)
	}
	server.Config.Handler = labs
	server.StartTLS()
	t.Cleanup(server.Close)
	return &testLab{Lab: labs.lab, server: server, sdk: sdk}
}

func (tl *testLab) reset(t *testing.T) time.Duration {
	t.Helper()
	started := time.Now()
	var answer map[string]interface{}
	if code := tl.call(t, http.MethodPost, "/lab/reset", nil, &answer); code != http.StatusOK {
		t.Fatalf("POST /lab/reset: %d %v", code, answer)
	}
	return time.Since(started)
}

func sameState(t *testing.T, what string, got, want labapi.State) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func eventMaxAge(t *testing.T, ctx context.Context, c *object.OptionManager) interface{} {
	t.Helper()
	values, err := c.Query(ctx, "event.maxAge")
	if err != nil {
		t.Fatal(err)
	}
	for _, value := range values {
		if value.GetOptionValue().Key == "event.maxAge" {
			return value.GetOptionValue().Value
		}
	}
	t.Fatalf("no event.maxAge in %v", values)
	return nil
}

// Everything a test can change goes back to what the topology gives, with the same managed object ids; sessions
// end, and a guest shutdown still pending is not waited for and never lands on the new lab.
func TestResetPutsTheLabBackToItsStart(t *testing.T) {
	tl := startResettableLab(t, testTopology)
	start := tl.state(t)
	c := tl.client(t)
	ctx := context.Background()
	options := object.NewOptionManager(c.Client, *c.ServiceContent.Setting)
	maxAge := eventMaxAge(t, ctx, options)
	if err := options.Update(ctx, []types.BaseOptionValue{
		&types.OptionValue{Key: "event.maxAge", Value: int32(7)},
		&types.OptionValue{Key: settings.VGPUHotMigrate, Value: true},
		&types.OptionValue{Key: "config.gpuops.owner", Value: "test"},
	}); err != nil {
		t.Fatal(err)
	}
	tl.runVGPU(t, ctx, c)
	a := tl.login(t)
	imageWithDriver(t, tl, a)
	for _, fault := range []map[string]interface{}{
		{"kind": "shutdown_delay", "vm": "vm-3", "delay_ms": 60000},
		{"kind": "fail_reconfigure", "vm": "vm-2"},
	} {
		if code := tl.call(t, http.MethodPost, "/lab/faults", fault, nil); code != http.StatusCreated {
			t.Fatalf("POST /lab/faults %v: %d", fault, code)
		}
	}
	if err := object.NewVirtualMachine(c.Client, tl.vms[2]).ShutdownGuest(ctx); err != nil {
		t.Fatal(err)
	}
	changed := tl.state(t)
	if reflect.DeepEqual(changed, start) || eventMaxAge(t, ctx, options) != int32(7) {
		t.Fatal("the changes did not land, so the reset cannot be checked")
	}

	if took := tl.reset(t); took > 10*time.Second {
		t.Errorf("the reset took %s: it waited for the pending guest shutdown", took)
	}

	sameState(t, "state after the reset", tl.state(t), start)
	var stats stats.Snapshot
	tl.call(t, http.MethodGet, "/lab/stats", nil, &stats)
	if stats.SOAPRequests != 0 || stats.RESTRequests != 0 {
		t.Errorf("counters after the reset: %+v", stats)
	}
	var faults map[string][]interface{}
	tl.call(t, http.MethodGet, "/lab/faults", nil, &faults)
	if len(faults["faults"]) != 0 {
		t.Errorf("faults after the reset: %v", faults)
	}
	if _, err := listHosts(ctx, c); err == nil || !strings.Contains(err.Error(), "NotAuthenticated") {
		t.Errorf("a session of the replaced lab still works: %v", err)
	}
	if code := a.Do(http.MethodGet, "/api/session", nil, nil); code != http.StatusUnauthorized {
		t.Errorf("a REST session of the replaced lab answers %d", code)
	}
	c = tl.client(t)
	if got := eventMaxAge(t, ctx, object.NewOptionManager(c.Client, *c.ServiceContent.Setting)); got != maxAge {
		t.Errorf("event.maxAge after the reset: %v, want %v", got, maxAge)
	}
	var depots map[string]interface{}
	if tl.login(t).Do(http.MethodGet, "/api/esx/settings/depots/offline", nil, &depots); len(depots) != 0 {
		t.Errorf("depots after the reset: %v", depots)
	}
	sameState(t, "state a moment later", tl.state(t), start)
}

// A remediation in flight ends at the reset instead of holding it up, and none of it reaches the new lab.
func TestResetEndsARemediationInFlight(t *testing.T) {
	tl := startResettableLab(t, strings.Replace(testTopology, `{"datacenters"`,
		`{"vlcm": {"remediation_delay_ms": 60000}, "datacenters"`, 1))
	start := tl.state(t)
	a := tl.login(t)
	base := imageWithDriver(t, tl, a)
	var id string
	if code := a.Do(http.MethodPost, base+"?action=apply&vmw-task=true", map[string]interface{}{"accept_eula": true},
		&id); code != http.StatusAccepted {
		t.Fatalf("apply: %d", code)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !tl.state(t).Hosts[0].MaintenanceMode {
		if time.Now().After(deadline) {
			t.Fatal("the remediation did not start on the first host")
		}
		time.Sleep(10 * time.Millisecond)
	}

	if took := tl.reset(t); took > 10*time.Second {
		t.Errorf("the reset took %s: it waited for the remediation", took)
	}

	sameState(t, "state after the reset", tl.state(t), start)
	var e vapi.Err
	if code := tl.login(t).Do(http.MethodGet, "/api/cis/tasks/"+id, nil, &e); code != http.StatusNotFound {
		t.Errorf("the task of the replaced lab: %d %+v", code, e)
	}
}

func TestResetTakesPOST(t *testing.T) {
	tl := startResettableLab(t, testTopology)
	if code := tl.call(t, http.MethodGet, "/lab/reset", nil, nil); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /lab/reset: %d", code)
	}
}

func listHosts(ctx context.Context, c *govmomi.Client) ([]mo.HostSystem, error) {
	var hosts []mo.HostSystem
	v, err := view.NewManager(c.Client).CreateContainerView(ctx, c.ServiceContent.RootFolder, []string{"HostSystem"}, true)
	if err != nil {
		return nil, err
	}
	return hosts, v.Retrieve(ctx, []string{"HostSystem"}, []string{"name"}, &hosts)
}
