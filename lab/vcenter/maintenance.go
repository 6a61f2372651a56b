package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/gpu"
	"vcsim/settings"
	"vcsim/vimfault"
)

// evacuation is one VM leaving a host that enters maintenance mode.
type evacuation struct {
	vm     *labVM
	target *hostState
	chosen []gpu.Placement // GPUs on the target for a powered-on vGPU VM
}

// enterMaintenanceMode replaces the simulator's task: a host with powered-on VMs enters maintenance mode only if
// DRS (fully automated) can move every one of them, as vMotion would; vGPU VMs need vGPU vMotion and a GPU on the
// target. With evacuatePoweredOffVms, DRS also re-registers powered-off VMs on other hosts.
func (l *Lab) enterMaintenanceMode(t *simulator.Task, _ taskRunner) (types.AnyType, types.BaseMethodFault) {
	ref := *t.Info.Entity
	h, obj := l.host(ref), l.hostObject(ref)
	if obj.Runtime.InMaintenanceMode {
		return nil, nil
	}
	evacuateOff := false
	if req, ok := l.inflight.(*types.EnterMaintenanceMode_Task); ok && req.This == ref {
		evacuateOff = isTrue(req.EvacuatePoweredOffVms)
	}
	l.maintenanceEvent("entering", ref)
	plan, f := l.planEvacuation(h, obj, evacuateOff)
	if f != nil {
		return l.taskResult(t, nil, f)
	}
	for _, e := range plan {
		l.moveVM(e.vm, e.target.Ref, *e.vm.ResourcePool)
		if e.chosen != nil {
			l.release(e.vm)
			l.commit(e.vm, e.chosen)
		}
	}
	l.update(obj, types.PropertyChange{Name: "runtime.inMaintenanceMode", Val: true})
	l.maintenanceEvent("entered", ref)
	l.logf("host %s: entered maintenance mode (%d VMs moved)", h.Name, len(plan))
	return nil, nil
}

func (l *Lab) exitMaintenanceMode(t *simulator.Task, original taskRunner) (types.AnyType, types.BaseMethodFault) {
	wasIn := l.hostObject(*t.Info.Entity).Runtime.InMaintenanceMode
	result, fault := original(t)
	if fault == nil {
		obj := l.hostObject(*t.Info.Entity)
		if wasIn {
			l.maintenanceEvent("exit", obj.Self)
		}
		l.update(obj, types.PropertyChange{Name: "runtime.inMaintenanceMode", Val: false})
		l.logf("host %s: exited maintenance mode", obj.Name)
	}
	return result, fault
}

func maintenanceFault(h *hostState, format string, args ...interface{}) *vimfault.Fault {
	return &vimfault.Fault{
		Fault: &types.InvalidState{},
		Msg:   fmt.Sprintf("Host %s cannot enter maintenance mode: ", h.Name) + fmt.Sprintf(format, args...),
	}
}

func (l *Lab) planEvacuation(h *hostState, obj *simulator.HostSystem, evacuateOff bool) ([]evacuation, *vimfault.Fault) {
	var running, stopped []*labVM
	for _, ref := range obj.Vm {
		if vm := l.vm(ref); vm != nil {
			if vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn {
				running = append(running, vm)
			} else {
				stopped = append(stopped, vm)
			}
		}
	}
	if len(running) == 0 && (!evacuateOff || len(stopped) == 0) {
		return nil, nil
	}
	cluster, _ := simulator.Map.Get(*obj.Parent).(*simulator.ClusterComputeResource)
	if cluster == nil {
		return nil, maintenanceFault(h, "virtual machines %s must be moved first: the host is not in a cluster",
			vmNames(append(running, stopped...)))
	}
	drs := cluster.ConfigurationEx.(*types.ClusterConfigInfoEx).DrsConfig
	drsOn := isTrue(drs.Enabled)
	automated := drsOn && (drs.DefaultVmBehavior == "" || drs.DefaultVmBehavior == types.DrsBehaviorFullyAutomated)
	if len(running) > 0 && !automated {
		why := "DRS is disabled"
		if drsOn {
			why = "DRS is " + string(drs.DefaultVmBehavior) + ", not fullyAutomated"
		}
		return nil, maintenanceFault(h, "powered-on virtual machines %s cannot be moved: %s on cluster %s",
			vmNames(running), why, cluster.Name)
	}
	if evacuateOff && len(stopped) > 0 && !drsOn {
		return nil, maintenanceFault(h, "powered-off virtual machines %s must be moved first: DRS is disabled on "+
			"cluster %s", vmNames(stopped), cluster.Name)
	}
	var targets []*hostState
	count := map[*hostState]int{}
	for _, ref := range cluster.Host {
		if ref == h.Ref {
			continue
		}
		if t := l.host(ref); l.hostAccepts(t) == nil {
			targets = append(targets, t)
			count[t] = len(t.runningVMs())
		}
	}
	loads := map[*hostState][]*gpu.Load{}
	var plan []evacuation
	var problems []string
	for _, vm := range running {
		e, why := l.evacuationTarget(vm, targets, loads, count)
		if why != "" {
			problems = append(problems, fmt.Sprintf("%s (%s)", vm.Name, why))
			continue
		}
		plan = append(plan, e)
	}
	if len(problems) > 0 {
		return nil, maintenanceFault(h, "powered-on virtual machines cannot be moved: %s",
			strings.Join(problems, "; "))
	}
	if evacuateOff {
		for _, vm := range stopped {
			if e, why := l.evacuationTarget(vm, targets, loads, count); why == "" {
				plan = append(plan, e)
			}
		}
	}
	return plan, nil
}

// evacuationTarget picks the least busy host that can take the VM, as DRS spreads an evacuation.
func (l *Lab) evacuationTarget(vm *labVM, targets []*hostState, loads map[*hostState][]*gpu.Load,
	count map[*hostState]int) (evacuation, string) {
	withVgpus := vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn && len(vm.slots) > 0
	if withVgpus && !l.hotMigrateEnabled() {
		return evacuation{}, fmt.Sprintf("its vGPUs need vGPU vMotion: %s is false", settings.VGPUHotMigrate)
	}
	order := append([]*hostState(nil), targets...)
	sort.SliceStable(order, func(i, j int) bool { return count[order[i]] < count[order[j]] })
	var reasons []string
	for _, t := range order {
		e := evacuation{vm: vm, target: t}
		if withVgpus {
			current := loads[t]
			if current == nil {
				current = gpu.LoadsOf(t.Host)
			}
			trial := gpu.CloneLoads(current)
			chosen, f := l.planMigration(vm, t, trial)
			if f != nil {
				reasons = append(reasons, f.Msg)
				continue
			}
			loads[t], e.chosen = trial, chosen
		}
		count[t]++
		return e, ""
	}
	if len(reasons) == 0 {
		return evacuation{}, "no other connected host outside maintenance mode"
	}
	return evacuation{}, strings.Join(reasons, " ")
}

func (h *hostState) runningVMs() []*labVM {
	var vms []*labVM
	if obj := h.lab.hostObject(h.Ref); obj != nil {
		for _, ref := range obj.Vm {
			if vm := h.lab.vm(ref); vm != nil && vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn {
				vms = append(vms, vm)
			}
		}
	}
	return vms
}

func vmNames(vms []*labVM) string {
	names := make([]string, len(vms))
	for i, vm := range vms {
		names[i] = vm.Name
	}
	return strings.Join(names, ", ")
}
