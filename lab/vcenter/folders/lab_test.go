package folders

import (
	"context"
	"net/http"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
	"vcsim/simobj"
	"vcsim/soaphttp"
	"vcsim/vimfault"
)

// testLab is govmomi's own simulator (labtest.Simulator: datacenter DC0 with the powered-on VMs DC0_H0_VM0 and
// DC0_C0_RP0_VM0 in its vm folder) as the folders see a lab; failed tasks carry the lab's messages (labtest.Hooked).
type testLab struct {
	labtest.Hooked
	ctx *simulator.Context
	c   *govmomi.Client
	dc  *simulator.Datacenter
}

func (tl *testLab) VM(ref types.ManagedObjectReference) *simulator.VirtualMachine {
	vm, _ := simulator.Map.Get(ref).(*simulator.VirtualMachine)
	return vm
}

func (tl *testLab) Context() *simulator.Context { return tl.ctx }

func (tl *testLab) RunTask(obj mo.Reference, name string, fn func() *vimfault.Fault) types.ManagedObjectReference {
	return simulator.CreateTask(obj, name, func(t *simulator.Task) (types.AnyType, types.BaseMethodFault) {
		if f := fn(); f != nil {
			return tl.TaskFailed(t, f)
		}
		return nil, nil
	}).Run()
}

// startLab serves the simulator with Serve in front of it, as the lab's SOAP handler does.
func startLab(t *testing.T) *testLab {
	t.Helper()
	model := labtest.Simulator(t)
	tl := &testLab{ctx: simobj.Context(context.Background())}
	tl.dc = simulator.Map.Any("Datacenter").(*simulator.Datacenter)
	tl.c = tl.Serve(t, model, nil, func(w http.ResponseWriter, call soaphttp.Call, body []byte) bool {
		return Serve(tl, w, call)
	})
	return tl
}
