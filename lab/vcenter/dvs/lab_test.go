package dvs

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
	"vcsim/lists"
	"vcsim/soaphttp"
	"vcsim/vimfault"
)

// testLab is govmomi's own simulator (labtest.Simulator) as the switches see a lab: the request being served is
// decoded for the methods whose tasks the switches hook, Serve answers first, and a registry handler puts the
// switches' hooks on the simulator's tasks as the lab's does.
type testLab struct {
	mu       sync.Mutex
	inflight interface{}
	faults   labtest.TaskFaults
	switches *Switches
	hooks    map[string]func(*simulator.Task, TaskRunner) (types.AnyType, types.BaseMethodFault)
	c        *govmomi.Client
	folders  *object.DatacenterFolders
	hosts    []types.ManagedObjectReference // the cluster's hosts
}

func (tl *testLab) Inflight() interface{}       { return tl.inflight }
func (tl *testLab) Logf(string, ...interface{}) {}

func (tl *testLab) TaskFailed(t *simulator.Task, f *vimfault.Fault) (types.AnyType, types.BaseMethodFault) {
	return tl.faults.Fail(t, f)
}

func (tl *testLab) VMNetworks(ref types.ManagedObjectReference) []types.ManagedObjectReference {
	if vm, ok := simulator.Map.Get(ref).(*simulator.VirtualMachine); ok {
		return vm.Network
	}
	return nil
}

// Reference, PutObject, UpdateObject and RemoveObject make the test lab a registry handler.
func (tl *testLab) Reference() types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "TestTaskHooks", Value: "test-task-hooks"}
}

func (tl *testLab) PutObject(obj mo.Reference) {
	if task, ok := obj.(*simulator.Task); ok {
		if hook := tl.hooks[task.Info.DescriptionId]; hook != nil {
			original := task.Execute
			task.Execute = func(t *simulator.Task) (types.AnyType, types.BaseMethodFault) { return hook(t, original) }
		}
	}
}

func (tl *testLab) UpdateObject(mo.Reference, []types.PropertyChange) {}

func (tl *testLab) RemoveObject(types.ManagedObjectReference) {}

func startLab(t *testing.T) *testLab {
	t.Helper()
	model := labtest.Simulator(t)
	InstallManager()
	tl := &testLab{}
	tl.switches = New(tl)
	tl.hooks = tl.switches.Hooks()
	simulator.Map.AddHandler(tl)
	tl.hosts = simulator.Map.Any("ClusterComputeResource").(*simulator.ClusterComputeResource).Host
	tl.c = labtest.Serve(t, model, func(w http.ResponseWriter, call soaphttp.Call, body []byte, sim func()) {
		tl.mu.Lock()
		defer func() { tl.inflight = nil; tl.mu.Unlock() }()
		if lists.Contains(RequestsRead, call.Method) {
			if method, err := simulator.UnmarshalBody(types.TypeFunc(), body); err == nil {
				tl.inflight = method.Body
			}
		}
		if !tl.switches.Serve(w, call, body) {
			sim()
		}
		tl.faults.Patch()
	})
	dc := simulator.Map.Any("Datacenter").Reference()
	folders, err := object.NewDatacenter(tl.c.Client, dc).Folders(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tl.folders = folders
	return tl
}
