package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/gpu"
	"vcsim/hostservices"
	"vcsim/labapi"
	"vcsim/labtest"
	"vcsim/stats"
)

const testTopology = `{"datacenters": [{"name": "dc",
	"clusters": [{"name": "gpu", "drs": {"enabled": true}, "hosts": [
		{"name": "esxi-01", "gpus": [{"model": "P40", "count": 2}]},
		{"name": "esxi-02", "gpus": [{"model": "T4", "count": 1}]}]}],
	"hosts": [{"name": "esxi-sa"}],
	"vms": [{"name": "vm-1", "host": "esxi-01", "memory_mb": 8192}, {"name": "vm-2", "host": "esxi-02"},
	        {"name": "vm-3", "host": "esxi-sa", "power_state": "poweredOn"}]}]}`

type testLab struct {
	*Lab
	server *httptest.Server
	sdk    *url.URL
}

func startLab(t *testing.T) *testLab {
	t.Helper()
	return startLabWith(t, testTopology)
}

// startLabWith serves a lab of the given topology for one test.
func startLabWith(t *testing.T, topology string) *testLab {
	t.Helper()
	topo, err := labtest.Topology(t, topology)
	if err != nil {
		t.Fatal(err)
	}
	l, svc, err := NewSimulator(labtest.Catalog(t), topo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, l, svc)
}

// serve starts a lab's SOAP and /lab endpoints over TLS for one test.
func serve(t *testing.T, l *Lab, svc *simulator.Service) *testLab {
	t.Helper()
	server := httptest.NewUnstartedServer(l.Handler(svc))
	server.StartTLS()
	t.Cleanup(server.Close)
	sdk, _ := url.Parse(server.URL + "/sdk")
	svc.Listen = &url.URL{Scheme: "https", Host: sdk.Host, Path: "/sdk", User: url.UserPassword("lab", "s3cret")}
	return &testLab{Lab: l, server: server, sdk: sdk}
}

func (tl *testLab) connect(t *testing.T, password string) (*govmomi.Client, error) {
	t.Helper()
	u := *tl.sdk
	u.User = url.UserPassword("lab", password)
	return govmomi.NewClient(context.Background(), &u, true)
}

// client is a session of the lab's user, logged in with its password; the test stops where the login fails.
func (tl *testLab) client(t *testing.T) *govmomi.Client {
	t.Helper()
	c, err := tl.connect(t, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (tl *testLab) call(t *testing.T, method, path string, body, out interface{}) int {
	t.Helper()
	var data bytes.Buffer
	if body != nil {
		_ = json.NewEncoder(&data).Encode(body)
	}
	req, _ := http.NewRequest(method, tl.server.URL+path, &data)
	res, err := tl.server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	return res.StatusCode
}

func (tl *testLab) state(t *testing.T) labapi.State {
	var s labapi.State
	tl.call(t, http.MethodGet, "/lab/state", nil, &s)
	return s
}

// runVGPU puts the first host in Shared Direct and powers the first VM on with a P40-8Q vGPU.
func (tl *testLab) runVGPU(t *testing.T, ctx context.Context, c *govmomi.Client) {
	t.Helper()
	host := tl.hosts[0]
	if _, err := methods.UpdateGraphicsConfig(ctx, c, &types.UpdateGraphicsConfig{This: host.graphics.Self,
		Config: types.HostGraphicsConfig{HostDefaultGraphicsType: gpu.GraphicsSharedDirect}}); err != nil {
		t.Fatal(err)
	}
	if _, err := methods.RestartService(ctx, c, &types.RestartService{This: host.svc.Self, Id: hostservices.Xorg}); err != nil {
		t.Fatal(err)
	}
	vm := object.NewVirtualMachine(c.Client, tl.vms[0])
	task, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{MemoryReservationLockedToMax: types.NewBool(true),
		DeviceChange: []types.BaseVirtualDeviceConfigSpec{&types.VirtualDeviceConfigSpec{
			Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{
				Backing: &types.VirtualPCIPassthroughVmiopBackingInfo{Vgpu: "grid_p40-8q"}}}}}})
	if err == nil {
		err = task.Wait(ctx)
	}
	if err == nil {
		if task, err = vm.PowerOn(ctx); err == nil {
			err = task.Wait(ctx)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestLoginAndOneInventoryRead(t *testing.T) {
	tl := startLab(t)
	if _, err := tl.connect(t, "wrong"); err == nil || !strings.Contains(err.Error(), "Login failure") {
		t.Fatalf("wrong password: %v", err)
	}
	c := tl.client(t)
	ctx := context.Background()
	v, err := view.NewManager(c.Client).CreateContainerView(ctx, c.ServiceContent.RootFolder, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	tl.call(t, http.MethodPost, "/lab/stats/reset", nil, nil)
	var hosts []mo.HostSystem
	if err := v.Retrieve(ctx, []string{"HostSystem"}, []string{"name", "config.graphicsInfo", "config.graphicsConfig",
		"config.sharedPassthruGpuTypes", "configManager.graphicsManager", "hardware.pciDevice", "parent"}, &hosts); err != nil {
		t.Fatal(err)
	}
	var stats stats.Snapshot
	tl.call(t, http.MethodGet, "/lab/stats", nil, &stats)
	if stats.SOAPRequests != 1 {
		t.Errorf("one property collector call expected, counted %+v", stats)
	}
	managers := map[string]bool{}
	for _, h := range hosts {
		want := map[string]int{"esxi-01": 2, "esxi-02": 1, "esxi-sa": 0}[h.Name]
		var nvidia int
		for _, d := range h.Hardware.PciDevice {
			if d.VendorId == gpu.NVIDIAVendorID && d.ClassId == gpu.PCIClass3D {
				nvidia++
			}
		}
		if len(h.Config.GraphicsInfo) != want || nvidia != want || h.Config.GraphicsConfig.HostDefaultGraphicsType != "shared" {
			t.Errorf("%s: %d graphicsInfo, %d NVIDIA PCI devices, want %d", h.Name, len(h.Config.GraphicsInfo), nvidia, want)
		}
		managers[h.ConfigManager.GraphicsManager.Value] = true
	}
	if len(hosts) != 3 || len(managers) != 3 {
		t.Errorf("%d hosts with %d graphics managers", len(hosts), len(managers))
	}
	if s := tl.state(t); len(s.Datacenters) != 1 || s.Datacenters[0].Name != "dc" || len(s.VMs) != 3 {
		t.Errorf("inventory is not exactly the topology: %+v", s.Datacenters)
	}
}

func TestVGPUFlow(t *testing.T) {
	tl := startLab(t)
	c := tl.client(t)
	ctx := context.Background()
	host := tl.hosts[0]
	_, err := methods.UpdateGraphicsConfig(ctx, c, &types.UpdateGraphicsConfig{This: host.graphics.Self,
		Config: types.HostGraphicsConfig{HostDefaultGraphicsType: gpu.GraphicsSharedDirect, SharedPassthruAssignmentPolicy: gpu.PolicyPerformance}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := methods.RestartService(ctx, c, &types.RestartService{This: host.svc.Self, Id: hostservices.Xorg}); err != nil {
		t.Fatal(err)
	}
	vm := object.NewVirtualMachine(c.Client, tl.vms[0])
	device := &types.VirtualPCIPassthrough{VirtualDevice: types.VirtualDevice{
		Backing: &types.VirtualPCIPassthroughVmiopBackingInfo{Vgpu: "grid_p40-8q"}}}
	task, err := vm.Reconfigure(ctx, types.VirtualMachineConfigSpec{
		MemoryReservationLockedToMax: types.NewBool(true),
		DeviceChange: []types.BaseVirtualDeviceConfigSpec{&types.VirtualDeviceConfigSpec{
			Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: device}},
	})
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	if task, err = vm.PowerOn(ctx); err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	var gm mo.HostGraphicsManager
	if err := c.RetrieveOne(ctx, host.graphics.Self, []string{"graphicsInfo"}, &gm); err != nil {
		t.Fatal(err)
	}
	if len(gm.GraphicsInfo) != 2 || len(gm.GraphicsInfo[0].Vm) != 1 || gm.GraphicsInfo[0].Vm[0] != tl.vms[0] ||
		gm.GraphicsInfo[0].GraphicsType != gpu.GraphicsSharedDirect {
		t.Errorf("graphicsInfo after power-on: %+v", gm.GraphicsInfo)
	}
	s := tl.state(t)
	got := s.VMs[0]
	if got.PowerState != "poweredOn" || got.MemoryReservationMB != 8192 || len(got.VGPUs) != 1 ||
		got.VGPUs[0].GPU == nil || *got.VGPUs[0].GPU != "0000:3b:00.0" || got.VGPUs[0].Key != firstPCIPassthroughKey {
		t.Errorf("lab state of vm-1: %+v", got)
	}
	if g := s.Hosts[0].GPUs[0]; g.Profile == nil || *g.Profile != "grid_p40-8q" || len(g.VMs) != 1 || s.Hosts[0].XorgRestarts != 1 {
		t.Errorf("lab state of esxi-01: %+v", s.Hosts[0])
	}
}

func TestFaultsOverHTTP(t *testing.T) {
	tl := startLab(t)
	c := tl.client(t)
	ctx := context.Background()
	if code := tl.call(t, http.MethodPost, "/lab/faults", map[string]interface{}{"kind": "drop_connection"}, nil); code != http.StatusCreated {
		t.Fatalf("POST /lab/faults: %d", code)
	}
	if _, err := methods.GetCurrentTime(ctx, c); err == nil {
		t.Error("the call whose connection was dropped succeeded")
	}
	if _, err := methods.GetCurrentTime(ctx, c); err != nil {
		t.Errorf("the next call failed: %v", err)
	}
	var errBody map[string]string
	if code := tl.call(t, http.MethodPost, "/lab/faults", map[string]interface{}{"kind": "fail_reconfigure", "vm": "ghost"}, &errBody); code != http.StatusBadRequest || !strings.Contains(errBody["error"], "ghost") {
		t.Errorf("fault for an unknown VM: %d %v", code, errBody)
	}
	// A simulator method that cannot handle lab VMs answers with a fault, and the server keeps serving.
	_, err := methods.QueryAvailablePerfMetric(ctx, c, &types.QueryAvailablePerfMetric{
		This: *c.ServiceContent.PerfManager, Entity: tl.vms[0]})
	if err == nil || !soap.IsSoapFault(err) {
		t.Fatalf("expected a SOAP fault, got %v", err)
	}
	if _, ok := soap.ToSoapFault(err).VimFault().(types.SystemError); !ok {
		t.Errorf("expected SystemError, got %v", err)
	}
}

// drop_answer serves the request and then closes the connection: the change is made, the client never hears so.
func TestDropAnswerServesTheRequestAndLosesTheAnswer(t *testing.T) {
	tl := startLab(t)
	c := tl.client(t)
	ctx := context.Background()
	fault := map[string]interface{}{"kind": "drop_answer", "method": "PowerOnVM_Task"}
	if code := tl.call(t, http.MethodPost, "/lab/faults", fault, nil); code != http.StatusCreated {
		t.Fatalf("POST /lab/faults: %d", code)
	}
	vm := tl.vms[0]
	if _, err := methods.PowerOnVM_Task(ctx, c, &types.PowerOnVM_Task{This: vm}); err == nil {
		t.Fatal("the call whose answer was dropped succeeded")
	}
	if got := tl.state(t).VMs[0].PowerState; got != "poweredOn" {
		t.Errorf("the VM is %s: the request was not served", got)
	}
	var errBody map[string]string
	bad := map[string]interface{}{"kind": "drop_answer", "vm": "gpu-vm-01"}
	if code := tl.call(t, http.MethodPost, "/lab/faults", bad, &errBody); code != http.StatusBadRequest {
		t.Errorf("drop_answer with a VM: %d %v", code, errBody)
	}
}
