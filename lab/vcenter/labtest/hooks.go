package labtest

import (
	"net/http"
	"sync"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/lists"
	"vcsim/soaphttp"
	"vcsim/vimfault"
)

// TaskHook runs in place of a simulator task, calling the task's own work (original) or not.
type TaskHook = func(t *simulator.Task, original func(*simulator.Task) (types.AnyType, types.BaseMethodFault)) (
	types.AnyType, types.BaseMethodFault)

// Hooked is what the lab does around the simulator for a package whose task hooks read the request being served:
// it decodes the requests the package reads (Inflight, SetInflight), runs the simulator's tasks under the package's
// hooks by the task's description id, tells Put of every object the simulator registers, and words failed tasks
// (TaskFailed) as the lab does. A test lab embeds it to implement those methods of the package's Lab interface.
type Hooked struct {
	Hooks map[string]TaskHook
	Put   func(mo.Reference)

	mu       sync.Mutex
	inflight interface{}
	faults   TaskFaults
}

func (h *Hooked) Inflight() interface{}       { return h.inflight }
func (h *Hooked) SetInflight(req interface{}) { h.inflight = req }
func (h *Hooked) Logf(string, ...interface{}) {}

func (h *Hooked) TaskFailed(t *simulator.Task, f *vimfault.Fault) (types.AnyType, types.BaseMethodFault) {
	return h.faults.Fail(t, f)
}

// Reference, PutObject, UpdateObject and RemoveObject make Hooked a registry handler.
func (h *Hooked) Reference() types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "TestTaskHooks", Value: "test-task-hooks"}
}

func (h *Hooked) PutObject(obj mo.Reference) {
	if h.Put != nil {
		h.Put(obj)
	}
	if task, ok := obj.(*simulator.Task); ok {
		if hook := h.Hooks[task.Info.DescriptionId]; hook != nil {
			original := task.Execute
			task.Execute = func(t *simulator.Task) (types.AnyType, types.BaseMethodFault) { return hook(t, original) }
		}
	}
}

func (h *Hooked) UpdateObject(mo.Reference, []types.PropertyChange) {}

func (h *Hooked) RemoveObject(types.ManagedObjectReference) {}

// Serve registers h with the simulator's registry and serves model (as Serve does) one request at a time: the
// requests named in read are decoded for the hooks, serve answers first, then the simulator.
func (h *Hooked) Serve(t *testing.T, model *simulator.Model, read []string,
	serve func(w http.ResponseWriter, call soaphttp.Call, body []byte) bool) *govmomi.Client {
	t.Helper()
	simulator.Map.AddHandler(h)
	return Serve(t, model, func(w http.ResponseWriter, call soaphttp.Call, body []byte, sim func()) {
		h.mu.Lock()
		defer func() { h.inflight = nil; h.mu.Unlock() }()
		if lists.Contains(read, call.Method) {
			if method, err := simulator.UnmarshalBody(types.TypeFunc(), body); err == nil {
				h.inflight = method.Body
			}
		}
		if !serve(w, call, body) {
			sim()
		}
		h.faults.Patch()
	})
}
