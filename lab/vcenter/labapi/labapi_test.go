package labapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"vcsim/chaos"
	"vcsim/faults"
	"vcsim/stats"
	"vcsim/vlcm"
)

// testLab is a lab of one host with one GPU and one VM that runs a vGPU on it; its counters, faults and chaos are
// the lab's own types.
type testLab struct {
	stats   *stats.Counters
	faults  *faults.Store
	chaos   *chaos.Injector
	changes []GPUChange
	logs    []string
}

func newTestLab() *testLab {
	return &testLab{stats: stats.New(), faults: faults.NewStore(), chaos: chaos.New()}
}

func (l *testLab) host() Host {
	cluster, profile, vm, boot := "gpu-cluster", "grid_p40-8q", "gpu-vm-01", time.Unix(0, 0).UTC()
	return Host{Name: "esxi-01.lab.local", Moid: "host-21", Cluster: &cluster, Datacenter: "lab-dc",
		ConnectionState: "connected", BootTime: &boot, SupportedProfiles: []string{profile},
		GraphicsConfig: GraphicsConfig{DefaultGraphicsType: "sharedDirect", AssignmentPolicy: "performance",
			DeviceTypes: []DeviceType{{DeviceID: "0000:3b:00.0", GraphicsType: "sharedDirect"}}},
		GPUs: []GPU{{PciID: "0000:3b:00.0", Model: "P40", Profile: &profile, VMs: []string{"gpu-vm-01"},
			PassthroughVM: &vm}},
		Components: map[string]string{"ESXi": "8.0.2-0.0.22380479"}, NVLink: [][]string{},
		NVSwitches: []NVSwitch{{PciID: "0000:05:00.0"}}, CustomValues: map[string]string{}}
}

func (l *testLab) State() State {
	gpu, at, id := "0000:3b:00.0", int64(0), "0000:3b:00.0"
	return State{
		Datacenters: []Datacenter{{Name: "lab-dc", Moid: "datacenter-2"}},
		Clusters: []Cluster{{Name: "gpu-cluster", Moid: "domain-c7", Datacenter: "lab-dc", Hosts: []string{"esxi-01.lab.local"},
			ImageCommits: []vlcm.ImageCommit{}, CustomValues: map[string]string{}}},
		Hosts: []Host{l.host()},
		VMs: []VM{{Name: "gpu-vm-01", Moid: "vm-30", Host: "esxi-01.lab.local", PowerState: "poweredOn",
			VGPUs:       []VGPU{{Key: 13000, Profile: "grid_p40-8q", GPU: &gpu, PlacementID: &at}},
			Passthrough: []Passthrough{{Key: 13001, Backing: "static", ID: &id}}, CustomValues: map[string]string{}}},
		Settings: map[string]interface{}{"config.vpxd.stats.maxQueryMetrics": 64},
		Depots:   []vlcm.Depot{},
		VGPUEvents: []VGPUEvent{{Seq: 1, Event: "vgpu_start", VM: "gpu-vm-01", Host: "esxi-01.lab.local", GPU: gpu,
			Profile: "grid_p40-8q"}},
	}
}

func (l *testLab) Stats() *stats.Counters { return l.stats }
func (l *testLab) Faults() *faults.Store  { return l.faults }
func (l *testLab) Chaos() *chaos.Injector { return l.chaos }
func (l *testLab) VMNames() []string      { return []string{"gpu-vm-01"} }

func (l *testLab) ChangeGPUs(c GPUChange) (Host, error) {
	if c.Host != "esxi-01.lab.local" {
		return Host{}, fmt.Errorf("no host %q in the lab", c.Host)
	}
	l.changes = append(l.changes, c)
	return l.host(), nil
}

func (l *testLab) DepotFiles() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "depot file") })
}

func (l *testLab) Logf(format string, args ...interface{}) {
	l.logs = append(l.logs, fmt.Sprintf(format, args...))
}

func call(t *testing.T, h http.Handler, method, path, body string) (int, string, http.Header) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, strings.NewReader(body)))
	var compact bytes.Buffer
	if json.Compact(&compact, w.Body.Bytes()) != nil {
		return w.Code, w.Body.String(), w.Header()
	}
	return w.Code, compact.String(), w.Header()
}

func keys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	list := make([]string, 0, len(m))
	for k := range m {
		list = append(list, k)
	}
	sort.Strings(list)
	return list
}

func first(t *testing.T, raw json.RawMessage, field string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(m[field], &list); err != nil || len(list) == 0 {
		t.Fatalf("%s is not a list of at least one: %v", field, err)
	}
	return list[0]
}

// The names of /lab/state are what the collection's tests read: every object's keys are pinned here.
func TestStateNames(t *testing.T) {
	code, body, _ := call(t, Handler(newTestLab()), http.MethodGet, "/lab/state", "")
	if code != http.StatusOK {
		t.Fatalf("GET /lab/state: %d %s", code, body)
	}
	state := json.RawMessage(body)
	host, vm := first(t, state, "hosts"), first(t, state, "vms")
	var graphics struct {
		GraphicsConfig json.RawMessage `json:"graphics_config"`
	}
	if err := json.Unmarshal(host, &graphics); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"state":           "clusters datacenters depots hosts settings vgpu_events vms",
		"datacenter":      "moid name",
		"cluster":         "custom_values datacenter dpm drafts drs hosts image image_commit image_commits image_managed moid name",
		"drs":             "behavior enabled",
		"host":            "boot_time cluster components connection_state custom_values datacenter gpus graphics_config maintenance_mode moid name nvlink nvswitches passthrough_needs_reboot reboots supported_profiles xorg_restarts",
		"graphics_config": "assignment_policy default_graphics_type device_types",
		"device_type":     "device_id graphics_type vgpu_mode",
		"gpu":             "configured_graphics_type device_id device_name ecc_mode graphics_type memory_mib model passthrough_vm passthru_active passthru_enabled pci_id profile temperature_c vgpu_mode vms",
		"nvswitch":        "device_id device_name pci_id",
		"vm":              "cluster custom_values host instance_uuid memory_mb memory_reservation_locked_to_max memory_reservation_mb moid name passthrough power_state uuid vgpus",
		"vgpu":            "gpu key placement_id profile",
		"passthrough":     "backing device_id gpu id key label",
		"vgpu_event":      "event gpu host host_driver profile seq vm",
	}
	cluster := first(t, state, "clusters")
	var drs struct {
		DRS json.RawMessage `json:"drs"`
	}
	if err := json.Unmarshal(cluster, &drs); err != nil {
		t.Fatal(err)
	}
	got := map[string]json.RawMessage{
		"state": state, "datacenter": first(t, state, "datacenters"), "cluster": cluster, "drs": drs.DRS,
		"host": host, "graphics_config": graphics.GraphicsConfig,
		"device_type": first(t, graphics.GraphicsConfig, "device_types"), "gpu": first(t, host, "gpus"),
		"nvswitch": first(t, host, "nvswitches"), "vm": vm, "vgpu": first(t, vm, "vgpus"),
		"passthrough": first(t, vm, "passthrough"), "vgpu_event": first(t, state, "vgpu_events"),
	}
	for what, names := range want {
		if g := strings.Join(keys(t, got[what]), " "); g != names {
			t.Errorf("%s has keys %q, want %q", what, g, names)
		}
	}
}

func TestMethodsAndUnknownEndpoints(t *testing.T) {
	h := Handler(newTestLab())
	code, body, header := call(t, h, http.MethodPost, "/lab/state", "")
	if code != http.StatusMethodNotAllowed || header.Get("Allow") != http.MethodGet || !strings.Contains(body, "/lab/state takes GET") {
		t.Errorf("POST /lab/state: %d %v %s", code, header, body)
	}
	code, body, _ = call(t, h, http.MethodGet, "/lab/nothing", "")
	if code != http.StatusNotFound || !strings.Contains(body, "no lab endpoint /lab/nothing") {
		t.Errorf("GET /lab/nothing: %d %s", code, body)
	}
	if code, body, _ = call(t, h, http.MethodGet, "/lab/depot/a.zip", ""); code != http.StatusOK || body != "depot file" {
		t.Errorf("GET /lab/depot/a.zip: %d %s", code, body)
	}
}

func TestStats(t *testing.T) {
	lab := newTestLab()
	lab.stats.SOAP("RetrieveProperties")
	h := Handler(lab)
	if _, body, _ := call(t, h, http.MethodGet, "/lab/stats", ""); !strings.Contains(body, "RetrieveProperties") {
		t.Errorf("GET /lab/stats: %s", body)
	}
	if code, body, _ := call(t, h, http.MethodPost, "/lab/stats/reset", ""); code != http.StatusOK || strings.Contains(body, "RetrieveProperties") {
		t.Errorf("POST /lab/stats/reset: %d %s", code, body)
	}
}

func TestFaults(t *testing.T) {
	lab := newTestLab()
	h := Handler(lab)
	code, body, _ := call(t, h, http.MethodPost, "/lab/faults", `{"kind": "fail_reconfigure", "vm": "nope"}`)
	if code != http.StatusBadRequest || !strings.Contains(body, `fault: no VM named \"nope\"`) {
		t.Errorf("a fault on an unknown VM: %d %s", code, body)
	}
	if code, body, _ = call(t, h, http.MethodPost, "/lab/faults", `{"kind": "fail_reconfigure", "vmm": "x"}`); code != http.StatusBadRequest {
		t.Errorf("an unknown field: %d %s", code, body)
	}
	code, body, _ = call(t, h, http.MethodPost, "/lab/faults", `{"id": 9, "kind": "fail_reconfigure", "vm": "gpu-vm-01"}`)
	if code != http.StatusCreated || !strings.Contains(body, `"id":1`) || len(lab.logs) != 1 {
		t.Errorf("a fault: %d %s %v", code, body, lab.logs)
	}
	if _, body, _ = call(t, h, http.MethodGet, "/lab/faults", ""); !strings.Contains(body, `"vm":"gpu-vm-01"`) {
		t.Errorf("GET /lab/faults: %s", body)
	}
	if _, body, _ = call(t, h, http.MethodDelete, "/lab/faults", ""); !strings.Contains(body, `"cleared":1`) {
		t.Errorf("DELETE /lab/faults: %s", body)
	}
	code, _, header := call(t, h, http.MethodPut, "/lab/faults", "")
	if code != http.StatusMethodNotAllowed || header.Get("Allow") != "GET, POST, DELETE" {
		t.Errorf("PUT /lab/faults: %d %v", code, header)
	}
}

func TestGPUs(t *testing.T) {
	lab := newTestLab()
	h := Handler(lab)
	for body, want := range map[string]string{
		`{"host": "esxi-01.lab.local"}`:                       "gpus: give temperature_c or ecc_mode",
		`{"host": "esxi-01.lab.local", "temperature_c": 121}`: "gpus: temperature_c 121 is outside 0 to 120",
		`{"host": "esxi-01.lab.local", "ecc_mode": "on"}`:     `gpus: ecc_mode \"on\" is not enabled or disabled`,
		`{"host": "esxi-01.lab.local", "fan": 1}`:             "gpus: json: unknown field",
	} {
		if code, got, _ := call(t, h, http.MethodPost, "/lab/gpus", body); code != http.StatusBadRequest || !strings.Contains(got, want) {
			t.Errorf("%s: %d %s, want 400 %s", body, code, got, want)
		}
	}
	if len(lab.changes) != 0 {
		t.Errorf("bad bodies reached the lab: %v", lab.changes)
	}
	code, got, _ := call(t, h, http.MethodPost, "/lab/gpus", `{"host": "esxi-09", "ecc_mode": "disabled"}`)
	if code != http.StatusNotFound || !strings.Contains(got, `gpus: no host \"esxi-09\" in the lab`) {
		t.Errorf("an unknown host: %d %s", code, got)
	}
	code, got, _ = call(t, h, http.MethodPost, "/lab/gpus", `{"host": "esxi-01.lab.local", "temperature_c": 90}`)
	if code != http.StatusOK || !strings.Contains(got, `"name":"esxi-01.lab.local"`) {
		t.Errorf("a change: %d %s", code, got)
	}
	if temp := 90; len(lab.changes) != 1 || !reflect.DeepEqual(lab.changes[0], GPUChange{Host: "esxi-01.lab.local", TemperatureC: &temp}) {
		t.Errorf("the lab got %+v", lab.changes)
	}
}

func TestChaos(t *testing.T) {
	lab := newTestLab()
	h := Handler(lab)
	if code, body, _ := call(t, h, http.MethodPost, "/lab/chaos", `{"seed": 1, "rate": 2, "seconds": 10}`); code != http.StatusBadRequest || !strings.Contains(body, "chaos: ") {
		t.Errorf("a rate of 2: %d %s", code, body)
	}
	if code, body, _ := call(t, h, http.MethodPost, "/lab/chaos", `{"seed": 1, "rate": 0.5, "seconds": 10}`); code != http.StatusCreated || !strings.Contains(body, `"active":true`) {
		t.Errorf("chaos on: %d %s", code, body)
	}
	if _, body, _ := call(t, h, http.MethodDelete, "/lab/chaos", ""); !strings.Contains(body, `"active":false`) {
		t.Errorf("chaos off: %s", body)
	}
}

func TestReset(t *testing.T) {
	resets := 0
	ok := Reset(func() error { resets++; return nil })
	if code, body, _ := call(t, ok, http.MethodGet, "/lab/reset", ""); code != http.StatusMethodNotAllowed || !strings.Contains(body, "/lab/reset takes POST") || resets != 0 {
		t.Errorf("GET /lab/reset: %d %s", code, body)
	}
	if code, body, _ := call(t, ok, http.MethodPost, "/lab/reset", ""); code != http.StatusOK || !strings.Contains(body, `"reset_ms":`) || resets != 1 {
		t.Errorf("POST /lab/reset: %d %s", code, body)
	}
	failing := Reset(func() error { return errors.New("busy") })
	if code, body, _ := call(t, failing, http.MethodPost, "/lab/reset", ""); code != http.StatusServiceUnavailable || !strings.Contains(body, "reset: busy") {
		t.Errorf("a failing reset: %d %s", code, body)
	}
}
