package clusters

import (
	"net/http"
	"sync"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
	"vcsim/lists"
	"vcsim/soaphttp"
	"vcsim/vimfault"
)

// testLab is govmomi's own simulator (its VPX model, one cluster of two hosts with two VMs) as the clusters see a
// lab: the request being served is decoded for the methods whose tasks the clusters hook, Serve answers first, and
// a registry handler hooks the tasks and new clusters as the lab's does.
type testLab struct {
	mu        sync.Mutex
	inflight  interface{}
	faults    labtest.TaskFaults
	clusters  *Clusters
	destroyed []types.ManagedObjectReference
	c         *govmomi.Client
	cluster   types.ManagedObjectReference
	vms       []types.ManagedObjectReference // the cluster's VMs
}

func (tl *testLab) Inflight() interface{}       { return tl.inflight }
func (tl *testLab) SetInflight(req interface{}) { tl.inflight = req }
func (tl *testLab) Logf(string, ...interface{}) {}

func (tl *testLab) TaskFailed(t *simulator.Task, f *vimfault.Fault) (types.AnyType, types.BaseMethodFault) {
	return tl.faults.Fail(t, f)
}

func (tl *testLab) Update(obj mo.Reference, changes ...types.PropertyChange) {
	simulator.Map.Update(obj, changes)
}

func (tl *testLab) ClusterDestroyed(ref types.ManagedObjectReference) {
	tl.destroyed = append(tl.destroyed, ref)
}

// Reference, PutObject, UpdateObject and RemoveObject make the test lab a registry handler.
func (tl *testLab) Reference() types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "TestTaskHooks", Value: "test-task-hooks"}
}

func (tl *testLab) PutObject(obj mo.Reference) {
	switch obj := obj.(type) {
	case *simulator.ClusterComputeResource:
		tl.clusters.Created(obj)
	case *simulator.Task:
		if obj.Info.DescriptionId == "ClusterComputeResource.reconfigureCluster" {
			original := obj.Execute
			obj.Execute = func(t *simulator.Task) (types.AnyType, types.BaseMethodFault) {
				return tl.clusters.Reconfigure(t, original)
			}
		}
	}
}

func (tl *testLab) UpdateObject(mo.Reference, []types.PropertyChange) {}

func (tl *testLab) RemoveObject(types.ManagedObjectReference) {}

func startLab(t *testing.T) *testLab {
	t.Helper()
	model := simulator.VPX()
	model.Host, model.ClusterHost, model.Machine = 0, 2, 2
	if err := model.Create(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(model.Remove)
	tl := &testLab{}
	tl.clusters = New(tl)
	cluster := simulator.Map.Any("ClusterComputeResource").(*simulator.ClusterComputeResource)
	tl.cluster = cluster.Self
	cfg := cluster.ConfigurationEx.(*types.ClusterConfigInfoEx)
	FillDefaults(cfg)
	SyncLegacyConfiguration(cluster)
	for _, e := range simulator.Map.All("VirtualMachine") {
		tl.vms = append(tl.vms, e.Reference())
	}
	simulator.Map.AddHandler(tl)
	tl.c = labtest.Serve(t, model, func(w http.ResponseWriter, call soaphttp.Call, body []byte, sim func()) {
		tl.mu.Lock()
		defer func() { tl.inflight = nil; tl.mu.Unlock() }()
		if lists.Contains(RequestsRead, call.Method) {
			if method, err := simulator.UnmarshalBody(types.TypeFunc(), body); err == nil {
				tl.inflight = method.Body
			}
		}
		if !tl.clusters.Serve(w, call, body) {
			sim()
		}
		tl.faults.Patch()
	})
	return tl
}
