package vlcm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/faults"
	"vcsim/labtest"
	"vcsim/simobj"
	"vcsim/vapi"
)

// simulatorTopology names the inventory of labtest.Simulator, govmomi's VPX model.
const simulatorTopology = `{"datacenters": [{"name": "DC0",
	"clusters": [{"name": "DC0_C0", "hosts": [{"name": "DC0_C0_H0"}, {"name": "DC0_C0_H1"}]}],
	"hosts": [{"name": "DC0_H0"}]}], "vlcm": {"remediation_delay_ms": 0}}`

// testLab is the lab as vLCM's tests see it: govmomi's simulator, whose own methods enter maintenance mode and
// change VM power (it has no rules that keep a host from entering maintenance mode), served with vLCM's REST API.
type testLab struct {
	t          *testing.T
	mu         sync.Mutex
	background sync.WaitGroup
	ctx        *simulator.Context
	faults     *faults.Store
	hosts      []Host
	clusters   []types.ManagedObjectReference
	images     []string // "host driver" for every host that got a new image, in order
	power      []string // "vm state" for every power change of a VM, in order
	vlcm       *Manager
	server     *httptest.Server
}

func startLab(t *testing.T) *testLab {
	t.Helper()
	return startLabWith(t, simulatorTopology)
}

// startLabWith builds labtest.Simulator with vLCM configured by the given topology, whose names must be the model's.
func startLabWith(t *testing.T, doc string) *testLab {
	t.Helper()
	labtest.Simulator(t)
	topo, err := labtest.Topology(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	tl := &testLab{t: t, faults: faults.NewStore(), ctx: simobj.Context(context.Background())}
	seen := map[types.ManagedObjectReference]bool{}
	for _, e := range simulator.Map.All("ClusterComputeResource") {
		cluster := e.(*simulator.ClusterComputeResource)
		tl.clusters = append(tl.clusters, cluster.Self)
		for _, ref := range cluster.Host {
			tl.hosts, seen[ref] = append(tl.hosts, Host{Ref: ref, Name: name(ref)}), true
		}
	}
	for _, e := range simulator.Map.All("HostSystem") {
		if ref := e.(*simulator.HostSystem).Self; !seen[ref] {
			tl.hosts = append(tl.hosts, Host{Ref: ref, Name: name(ref)})
		}
	}
	rt := vapi.NewRouter(func() (string, string) { return "lab", "s3cret" })
	tasks := vapi.NewTasks(&tl.mu, &tl.background)
	rt.Add(http.MethodGet, "/api/cis/tasks/{task}", tasks.Serve)
	tl.mu.Lock()
	tl.vlcm = New(tl, &tl.mu, tasks, topo)
	tl.mu.Unlock()
	tl.vlcm.Routes(rt)
	tl.server = httptest.NewTLSServer(rt)
	t.Cleanup(func() {
		tl.server.Close()
		tl.background.Wait()
	})
	return tl
}

func (tl *testLab) login() *labtest.API { return labtest.Login(tl.t, tl.server) }

// cluster is the cluster's image as /lab/state shows it.
func (tl *testLab) cluster() *Cluster {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.vlcm.Cluster(tl.clusters[0])
}

// installed is what host i runs.
func (tl *testLab) installed(i int) map[string]string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.vlcm.Installed(tl.hosts[i].Ref)
}

func (tl *testLab) inMaintenance(i int) bool {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return hostObject(tl.hosts[i].Ref).Runtime.InMaintenanceMode
}

func (tl *testLab) Hosts() []Host                            { return tl.hosts }
func (tl *testLab) Clusters() []types.ManagedObjectReference { return tl.clusters }
func (tl *testLab) Logf(format string, args ...interface{})  { tl.t.Logf(format, args...) }
func (tl *testLab) Faults() *faults.Store                    { return tl.faults }
func (tl *testLab) HostImageChanged(host, driver string) {
	tl.images = append(tl.images, host+" "+driver)
}

func (tl *testLab) Pause(d time.Duration) bool {
	time.Sleep(d)
	return true
}

func (tl *testLab) EvacuationBlocker(types.ManagedObjectReference, bool) string { return "" }

func (tl *testLab) MaintenanceMode(host types.ManagedObjectReference, enter, evacuateOff bool) string {
	obj := hostObject(host)
	var task types.ManagedObjectReference
	simulator.Map.WithLock(host, func() {
		if enter {
			task = obj.EnterMaintenanceModeTask(&types.EnterMaintenanceMode_Task{This: host,
				EvacuatePoweredOffVms: types.NewBool(evacuateOff)}).(*methods.EnterMaintenanceMode_TaskBody).Res.Returnval
		} else {
			task = obj.ExitMaintenanceModeTask(&types.ExitMaintenanceMode_Task{This: host}).(*methods.ExitMaintenanceMode_TaskBody).Res.Returnval
		}
	})
	if !succeeded(task) {
		return "the maintenance mode task failed"
	}
	return ""
}

func (tl *testLab) PoweredOnVMs(host types.ManagedObjectReference) []types.ManagedObjectReference {
	var on []types.ManagedObjectReference
	for _, ref := range hostObject(host).Vm {
		if vm := simulator.Map.Get(ref).(*simulator.VirtualMachine); vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn {
			on = append(on, ref)
		}
	}
	return on
}

func (tl *testLab) SetPower(ref types.ManagedObjectReference, state types.VirtualMachinePowerState) bool {
	vm := simulator.Map.Get(ref).(*simulator.VirtualMachine)
	var task types.ManagedObjectReference
	simulator.Map.WithLock(ref, func() { task = PowerTask(tl.ctx, vm, ref, state) })
	if !succeeded(task) {
		return false
	}
	tl.power = append(tl.power, vm.Name+" "+string(state))
	return true
}

func succeeded(task types.ManagedObjectReference) bool {
	t, ok := simulator.Map.Get(task).(*simulator.Task)
	return ok && t.Info.State == types.TaskInfoStateSuccess
}
