package vcmanagers

import (
	"fmt"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// scheduledTaskManager is vCenter's ScheduledTaskManager (content.scheduledTaskManager), which the simulator names
// in its service content without an object behind it. Scheduled tasks are kept with vCenter's faults (vSphere Web
// Services API, ScheduledTaskManager.CreateScheduledTask: InvalidName for an empty name, DuplicateName for a name
// in use, InvalidArgument for an invalid spec) but never run: the lab has no scheduler.
type scheduledTaskManager struct {
	mo.ScheduledTaskManager
	next int
}

type scheduledTask struct {
	mo.ScheduledTask
	manager *scheduledTaskManager
}

// InstallScheduledTaskManager puts the ScheduledTaskManager in the simulator's registry, under the reference the
// service content names.
func InstallScheduledTaskManager() {
	content := simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance).Content
	m := &scheduledTaskManager{}
	m.Self = *content.ScheduledTaskManager
	simulator.Map.Put(m)
}

func (m *scheduledTaskManager) CreateScheduledTask(ctx *simulator.Context,
	req *types.CreateScheduledTask) soap.HasFault {
	body := &methods.CreateScheduledTaskBody{}
	spec := req.Spec.GetScheduledTaskSpec()
	switch {
	case ctx.Map.Get(req.Entity) == nil:
		body.Fault_ = simulator.Fault("", &types.ManagedObjectNotFound{Obj: req.Entity})
	case spec.Name == "":
		body.Fault_ = simulator.Fault("The name '' is invalid.", &types.InvalidName{Name: spec.Name, Entity: &req.Entity})
	case m.byName(ctx, spec.Name) != nil:
		existing := m.byName(ctx, spec.Name).Self
		body.Fault_ = simulator.Fault(fmt.Sprintf("The name '%s' already exists.", spec.Name),
			&types.DuplicateName{Name: spec.Name, Object: existing})
	case spec.Scheduler == nil || spec.Action == nil:
		property := "spec.scheduler"
		if spec.Scheduler != nil {
			property = "spec.action"
		}
		body.Fault_ = simulator.Fault("A specified parameter was not correct: "+property,
			&types.InvalidArgument{InvalidProperty: property})
	}
	if body.Fault_ != nil {
		return body
	}
	m.next++
	task := &scheduledTask{manager: m}
	task.Self = types.ManagedObjectReference{Type: "ScheduledTask", Value: fmt.Sprintf("schedule-%d", m.next)}
	task.Info = types.ScheduledTaskInfo{
		ScheduledTaskSpec: *spec,
		ScheduledTask:     task.Self,
		Entity:            req.Entity,
		LastModifiedTime:  time.Now(),
		LastModifiedUser:  ctx.Session.UserName,
		State:             types.TaskInfoStateQueued,
	}
	if once, ok := spec.Scheduler.(*types.OnceTaskScheduler); ok && once.RunAt != nil {
		task.Info.NextRunTime = once.RunAt
	}
	ctx.Map.Put(task)
	m.ScheduledTask = append(m.ScheduledTask, task.Self)
	body.Res = &types.CreateScheduledTaskResponse{Returnval: task.Self}
	return body
}

func (m *scheduledTaskManager) byName(ctx *simulator.Context, name string) *scheduledTask {
	for _, ref := range m.ScheduledTask {
		if task, ok := ctx.Map.Get(ref).(*scheduledTask); ok && task.Info.Name == name {
			return task
		}
	}
	return nil
}

// RetrieveEntityScheduledTask lists the scheduled tasks of an entity, or all of them without one.
func (m *scheduledTaskManager) RetrieveEntityScheduledTask(ctx *simulator.Context,
	req *types.RetrieveEntityScheduledTask) soap.HasFault {
	res := &types.RetrieveEntityScheduledTaskResponse{}
	for _, ref := range m.ScheduledTask {
		if task, ok := ctx.Map.Get(ref).(*scheduledTask); ok && (req.Entity == nil || task.Info.Entity == *req.Entity) {
			res.Returnval = append(res.Returnval, ref)
		}
	}
	return &methods.RetrieveEntityScheduledTaskBody{Res: res}
}

func (t *scheduledTask) RemoveScheduledTask(ctx *simulator.Context, req *types.RemoveScheduledTask) soap.HasFault {
	m := t.manager
	for i, ref := range m.ScheduledTask {
		if ref == t.Self {
			m.ScheduledTask = append(m.ScheduledTask[:i:i], m.ScheduledTask[i+1:]...)
			break
		}
	}
	ctx.Map.Remove(t.Self)
	return &methods.RemoveScheduledTaskBody{Res: &types.RemoveScheduledTaskResponse{}}
}
