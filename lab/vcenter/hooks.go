package main

import (
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

type taskRunner = func(*simulator.Task) (types.AnyType, types.BaseMethodFault)

// taskHooks changes what some of the simulator's own tasks do, for objects the lab cannot wrap: the simulator
// type-asserts HostSystem and ClusterComputeResource objects in many places. It is a registry handler, so it sees
// each task as the simulator creates it and before the task runs.
type taskHooks struct {
	lab   *Lab
	hooks map[string]func(*simulator.Task, taskRunner) (types.AnyType, types.BaseMethodFault)
}

func newTaskHooks(l *Lab) *taskHooks {
	h := &taskHooks{lab: l, hooks: map[string]func(*simulator.Task, taskRunner) (types.AnyType, types.BaseMethodFault){
		"HostSystem.enterMaintenanceMode":           l.enterMaintenanceMode,
		"HostSystem.exitMaintenanceMode":            l.exitMaintenanceMode,
		"ClusterComputeResource.reconfigureCluster": l.clusterSettings.Reconfigure,
		"Datacenter.powerOnMultiVM":                 l.powerOnMultiVM,
		"Folder.createVm":                           l.createVMTask,
		"Folder.registerVm":                         newVMToolsRecord,
		"VirtualMachine.cloneVm":                    newVMToolsRecord,
	}}
	for method, hook := range l.switches.Hooks() {
		h.hooks[method] = hook
	}
	return h
}

func (h *taskHooks) Reference() types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "LabTaskHooks", Value: "lab-task-hooks"}
}

func (h *taskHooks) PutObject(obj mo.Reference) {
	if entity, ok := obj.(mo.Entity); ok {
		escapeEntityName(entity)
	}
	if cluster, ok := obj.(*simulator.ClusterComputeResource); ok {
		h.lab.clusterSettings.Created(cluster)
		return
	}
	task, ok := obj.(*simulator.Task)
	if !ok {
		return
	}
	snapshotTaskOnVM(task)
	hook := h.hooks[task.Info.DescriptionId]
	if hook == nil && strings.HasSuffix(task.Info.DescriptionId, ".rename") {
		hook = renamed
	}
	if hook != nil {
		original := task.Execute
		task.Execute = func(t *simulator.Task) (types.AnyType, types.BaseMethodFault) { return hook(t, original) }
	}
}

func (h *taskHooks) UpdateObject(mo.Reference, []types.PropertyChange) {}

func (h *taskHooks) RemoveObject(types.ManagedObjectReference) {}

// powerOnMultiVM replaces the simulator's task (which only knows its own VM type): each VM powers on by the lab's
// rules in a task of its own, listed in the result as vCenter does.
func (l *Lab) powerOnMultiVM(t *simulator.Task, original taskRunner) (types.AnyType, types.BaseMethodFault) {
	req, ok := l.inflight.(*types.PowerOnMultiVM_Task)
	if !ok || req.This != *t.Info.Entity {
		return original(t)
	}
	result := &types.ClusterPowerOnVmResult{}
	for _, ref := range req.Vm {
		vm := l.vm(ref)
		if vm == nil {
			result.NotAttempted = append(result.NotAttempted, types.ClusterNotAttemptedVmInfo{Vm: ref,
				Fault: types.LocalizedMethodFault{Fault: &types.ManagedObjectNotFound{Obj: ref},
					LocalizedMessage: "The object has already been deleted or has not been completely created"}})
			continue
		}
		var body *methods.PowerOnVM_TaskBody
		l.as(ref, func() {
			body = vm.PowerOnVMTask(l.ctx, &types.PowerOnVM_Task{This: ref}).(*methods.PowerOnVM_TaskBody)
		})
		if body.Res == nil {
			fault, _ := body.Fault_.Detail.Fault.(types.BaseMethodFault)
			result.NotAttempted = append(result.NotAttempted, types.ClusterNotAttemptedVmInfo{Vm: ref,
				Fault: types.LocalizedMethodFault{Fault: fault, LocalizedMessage: body.Fault_.String}})
			continue
		}
		task := body.Res.Returnval
		result.Attempted = append(result.Attempted, types.ClusterAttemptedVmInfo{Vm: ref, Task: &task})
	}
	return result, nil
}

// snapshotTaskOnVM gives a task the simulator starts on a snapshot (RemoveSnapshot_Task, RevertToSnapshot_Task) the
// snapshot's VM as its entity, as vCenter does: TaskInfo.entity is a ManagedEntity, which a snapshot is not, and
// clients such as pyVmomi refuse the task's info otherwise.
func snapshotTaskOnVM(task *simulator.Task) {
	if task.Info.Entity == nil || task.Info.Entity.Type != "VirtualMachineSnapshot" {
		return
	}
	snapshot, ok := simulator.Map.Get(*task.Info.Entity).(*simulator.VirtualMachineSnapshot)
	if !ok {
		return
	}
	vm := snapshot.Vm
	task.Info.Entity = &vm
	if entity, isEntity := simulator.Map.Get(vm).(mo.Entity); isEntity {
		task.Info.EntityName = entity.Entity().Name
	}
}

// newVMToolsRecord runs a task that makes a VM (create, register, clone) and gives the new VM the Tools install
// record at once: clients read a VM created through the API before the lab adopts it at its first call.
func newVMToolsRecord(t *simulator.Task, original taskRunner) (types.AnyType, types.BaseMethodFault) {
	result, fault := original(t)
	if ref, ok := result.(types.ManagedObjectReference); ok {
		if vm, isVM := simulator.Map.Get(ref).(*simulator.VirtualMachine); isVM {
			vcenterVMDefaults(vm)
		}
	}
	return result, fault
}
