package vcmanagers

import (
	"context"
	"testing"
	"time"

	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// A scheduled task is stored as given, listed for its entity (and without one) and removed; a task of an empty or
// taken name, without a scheduler or action, or of a missing entity is refused with vCenter's faults.
func TestScheduledTasks(t *testing.T) {
	tl := startLab(t)
	ctx := context.Background()
	c := tl.c.Client
	ref := *c.ServiceContent.ScheduledTaskManager
	vm, other := tl.vms[0], tl.vms[1]
	runAt := time.Date(2030, 10, 10, 10, 10, 0, 0, time.UTC)
	spec := func(name string) *types.ScheduledTaskSpec {
		return &types.ScheduledTaskSpec{Name: name, Description: "power on", Enabled: true,
			Scheduler: &types.OnceTaskScheduler{RunAt: &runAt}, Action: &types.MethodAction{Name: "PowerOnVM_Task"}}
	}
	create := func(entity types.ManagedObjectReference, spec *types.ScheduledTaskSpec) (
		types.ManagedObjectReference, error) {
		res, err := methods.CreateScheduledTask(ctx, c, &types.CreateScheduledTask{This: ref, Entity: entity,
			Spec: spec})
		if err != nil {
			return types.ManagedObjectReference{}, err
		}
		return res.Returnval, nil
	}
	list := func(entity *types.ManagedObjectReference) []types.ManagedObjectReference {
		res, err := methods.RetrieveEntityScheduledTask(ctx, c, &types.RetrieveEntityScheduledTask{This: ref,
			Entity: entity})
		if err != nil {
			t.Fatal(err)
		}
		return res.Returnval
	}

	task, err := create(vm, spec("power-on-later"))
	if err != nil {
		t.Fatal(err)
	}
	var info mo.ScheduledTask
	if err := tl.c.RetrieveOne(ctx, task, []string{"info"}, &info); err != nil {
		t.Fatal(err)
	}
	i := info.Info
	if i.Name != "power-on-later" || i.Entity != vm || i.NextRunTime == nil || !i.NextRunTime.Equal(runAt) ||
		i.State != types.TaskInfoStateQueued || i.LastModifiedUser == "" {
		t.Errorf("stored: %+v", i)
	}
	later, err := create(other, spec("power-on-later-too"))
	if err != nil {
		t.Fatal(err)
	}
	if later == task {
		t.Fatalf("two tasks got one reference, %s", task.Value)
	}
	if got := list(&vm); len(got) != 1 || got[0] != task {
		t.Errorf("the VM's scheduled tasks: %v", got)
	}
	if got := list(nil); len(got) != 2 {
		t.Errorf("all scheduled tasks: %v", got)
	}

	noScheduler, noAction := spec("no-scheduler"), spec("no-action")
	noScheduler.Scheduler, noAction.Action = nil, nil
	gone := types.ManagedObjectReference{Type: "VirtualMachine", Value: "vm-999999"}
	for _, bad := range []struct {
		entity types.ManagedObjectReference
		spec   *types.ScheduledTaskSpec
		fault  string
	}{
		{vm, spec("power-on-later"), "DuplicateName"}, {other, spec("power-on-later"), "DuplicateName"},
		{vm, spec(""), "InvalidName"}, {vm, noScheduler, "InvalidArgument"}, {vm, noAction, "InvalidArgument"},
		{gone, spec("elsewhere"), "ManagedObjectNotFound"},
	} {
		if _, err := create(bad.entity, bad.spec); !labtest.IsFault(err, bad.fault) {
			t.Errorf("%q on %s: want %s, got %v", bad.spec.Name, bad.entity.Value, bad.fault, err)
		}
	}

	if _, err := methods.RemoveScheduledTask(ctx, c, &types.RemoveScheduledTask{This: task}); err != nil {
		t.Fatal(err)
	}
	if got := list(&vm); len(got) != 0 {
		t.Errorf("the VM's scheduled tasks after the removal: %v", got)
	}
	var m mo.ScheduledTaskManager
	if err := tl.c.RetrieveOne(ctx, ref, []string{"scheduledTask"}, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.ScheduledTask) != 1 || m.ScheduledTask[0] != later {
		t.Errorf("the manager's scheduledTask after the removal: %v", m.ScheduledTask)
	}
}
