package vcmanagers

import (
	"net/http"
	"sync"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
	"vcsim/soaphttp"
)

// testLab is govmomi's own simulator (labtest.Simulator: a cluster of two hosts and a standalone host, a VM on
// each) with the managers in place as the lab puts them: vCenter's AuthorizationManager, the ScheduledTaskManager,
// and SetField answered before the simulator, one request at a time.
type testLab struct {
	c        *govmomi.Client
	clusters []types.ManagedObjectReference
	vms      []types.ManagedObjectReference
}

func startLab(t *testing.T) *testLab {
	t.Helper()
	model := labtest.Simulator(t)
	InstallScheduledTaskManager()
	content := simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance).Content
	auth := simulator.Map.Get(*content.AuthorizationManager).(*simulator.AuthorizationManager)
	simulator.Map.Put(NewAuthorizationManager(auth))
	tl := &testLab{}
	for _, e := range simulator.Map.All("ClusterComputeResource") {
		tl.clusters = append(tl.clusters, e.Reference())
	}
	for _, e := range simulator.Map.All("VirtualMachine") {
		tl.vms = append(tl.vms, e.Reference())
	}
	var mu sync.Mutex
	tl.c = labtest.Serve(t, model, func(w http.ResponseWriter, call soaphttp.Call, body []byte, sim func()) {
		mu.Lock()
		defer mu.Unlock()
		if !ServeSetField(w, call, body) {
			sim()
		}
	})
	return tl
}

// customValues is the custom values of an entity as /lab/state shows them.
func customValues(ref types.ManagedObjectReference) map[string]string {
	return CustomValues(simulator.Map.Get(ref).(mo.Entity).Entity())
}
