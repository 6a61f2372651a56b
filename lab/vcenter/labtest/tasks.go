package labtest

import (
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vimfault"
)

// TaskFaults fails a test lab's tasks with the message vCenter words their fault with, as the lab does: the
// simulator writes a failed task's fault type name as its message, and Patch gives the tasks that failed since its
// last call their message.
type TaskFaults struct {
	mu      sync.Mutex
	pending map[types.ManagedObjectReference]*vimfault.Fault
}

// Fail ends task t with fault f.
func (tf *TaskFaults) Fail(t *simulator.Task, f *vimfault.Fault) (types.AnyType, types.BaseMethodFault) {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	if tf.pending == nil {
		tf.pending = map[types.ManagedObjectReference]*vimfault.Fault{}
	}
	tf.pending[t.Self] = f
	return nil, f.Fault
}

// Patch writes the message of the tasks that failed.
func (tf *TaskFaults) Patch() {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	for ref, f := range tf.pending {
		if task, ok := simulator.Map.Get(ref).(*simulator.Task); ok {
			simulator.Map.Update(task, []types.PropertyChange{{Name: "info.error",
				Val: types.LocalizedMethodFault{Fault: f.Fault, LocalizedMessage: f.Msg}}})
		}
		delete(tf.pending, ref)
	}
}
