package main

import (
	"fmt"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/gpu"
	"vcsim/settings"
	"vcsim/simobj"
	"vcsim/vimfault"
)

// computeResource is the cluster or standalone compute resource a host belongs to, with its hosts and root pool.
func computeResource(host *simulator.HostSystem) (cr types.ManagedObjectReference,
	hosts []types.ManagedObjectReference, rootPool types.ManagedObjectReference) {
	switch cr := simulator.Map.Get(*host.Parent).(type) {
	case *simulator.ClusterComputeResource:
		return cr.Self, cr.Host, *cr.ResourcePool
	case *mo.ComputeResource:
		return cr.Self, cr.Host, *cr.ResourcePool
	}
	return types.ManagedObjectReference{}, nil, types.ManagedObjectReference{}
}

func environmentBrowserOf(cr types.ManagedObjectReference) *types.ManagedObjectReference {
	switch c := simulator.Map.Get(cr).(type) {
	case *simulator.ClusterComputeResource:
		return c.EnvironmentBrowser
	case *mo.ComputeResource:
		return c.EnvironmentBrowser
	}
	return nil
}

func invalidHostState(h *hostState, reason string) *vimfault.Fault {
	ref := h.Ref
	return &vimfault.Fault{
		Fault: &types.InvalidHostState{Host: &ref},
		Msg:   fmt.Sprintf("The operation is not allowed in the current state of the host: %s %s.", h.Name, reason),
	}
}

// hostAccepts reports why a host cannot run another VM now (disconnected or in maintenance mode), or nil.
func (l *Lab) hostAccepts(h *hostState) *vimfault.Fault {
	obj := l.hostObject(h.Ref)
	if obj.Runtime.ConnectionState != types.HostSystemConnectionStateConnected {
		return invalidHostState(h, "is "+string(obj.Runtime.ConnectionState))
	}
	if obj.Runtime.InMaintenanceMode {
		return invalidHostState(h, "is in maintenance mode")
	}
	return nil
}

// powerOnHost moves a powered-off VM to the host PowerOnVM_Task names, which must share its compute resource.
func (l *Lab) powerOnHost(vm *labVM, target types.ManagedObjectReference) *vimfault.Fault {
	dst := l.host(target)
	if dst == nil {
		return vimfault.InvalidArgument("host", "%s is not a host", target.Value)
	}
	cr, _, _ := computeResource(l.hostObject(*vm.Runtime.Host))
	dstCR, _, _ := computeResource(l.hostObject(target))
	if cr != dstCR {
		return vimfault.InvalidArgument("host", "host %s is not in the compute resource of virtual machine %s", dst.Name,
			vm.Name)
	}
	l.moveVM(vm, target, *vm.ResourcePool)
	return nil
}

func (l *Lab) hotMigrateEnabled() bool {
	v, _ := l.settings.Value(settings.VGPUHotMigrate).(bool)
	return v
}

// planMigration checks that a powered-on VM's vGPUs may move and that the target host can run them.
func (l *Lab) planMigration(vm *labVM, dst *hostState, loads []*gpu.Load) ([]gpu.Placement, *vimfault.Fault) {
	devices := gpu.VGPUs(vm.Config.Hardware.Device)
	if !l.hotMigrateEnabled() {
		d := devices[0]
		reason := fmt.Sprintf("vGPU vMotion is disabled: the vCenter Server advanced setting %s is false",
			settings.VGPUHotMigrate)
		return nil, &vimfault.Fault{
			Fault: &types.DisallowedMigrationDeviceAttached{Fault: types.LocalizedMethodFault{
				Fault:            &types.DeviceNotSupported{Device: d.Label, Reason: reason},
				LocalizedMessage: reason,
			}},
			Msg: fmt.Sprintf("Migration of virtual machine %s is not allowed with its attached device %s "+
				"(vGPU %s): %s.", vm.Name, d.Label, d.Profile, reason),
		}
	}
	chosen, why := gpu.Place(loads, devices, dst.Config.SharedPassthruAssignmentPolicy)
	if why != "" {
		return nil, &vimfault.Fault{
			Fault: &types.InsufficientGraphicsResourcesFault{},
			Msg: fmt.Sprintf("Cannot migrate virtual machine %s to host %s: no GPU there can run vGPU %s: %s.",
				vm.Name, dst.Name, devices[0].Profile, why),
		}
	}
	return chosen, nil
}

// migrate moves a VM to another host and/or resource pool, by vCenter's rules for vGPU VMs.
func (l *Lab) migrate(vm *labVM, hostRef, poolRef *types.ManagedObjectReference) *vimfault.Fault {
	src := *vm.Runtime.Host
	srcCR, _, _ := computeResource(l.hostObject(src))
	if hostRef == nil && poolRef != nil {
		owner, f := l.poolOwner(*poolRef)
		if f != nil {
			return f
		}
		if owner != srcCR {
			target, f := l.hostInPool(vm, owner)
			if f != nil {
				return f
			}
			hostRef = &target
		}
	}
	dstRef := src
	if hostRef != nil {
		dstRef = *hostRef
	}
	dst := l.host(dstRef)
	if dst == nil {
		return vimfault.InvalidArgument("host", "%s is not a host", dstRef.Value)
	}
	if a, _ := simobj.Ancestor(dstRef, "Datacenter"); a != l.datacenterOf(vm) {
		return vimfault.InvalidArgument("host", "host %s is not in the datacenter of virtual machine %s", dst.Name, vm.Name)
	}
	dstCR, _, rootPool := computeResource(l.hostObject(dstRef))
	pool := *vm.ResourcePool
	if poolRef != nil {
		owner, f := l.poolOwner(*poolRef)
		if f != nil {
			return f
		}
		if owner != dstCR {
			return vimfault.InvalidArgument("pool", "resource pool %s does not belong to the compute resource of host %s",
				poolRef.Value, dst.Name)
		}
		pool = *poolRef
	} else if dstCR != srcCR {
		pool = rootPool
	}
	var chosen []gpu.Placement
	if dstRef != src {
		if f := l.hostAccepts(dst); f != nil {
			return f
		}
		if f := gpu.PassthroughMigration(vm.managed()); f != nil {
			return f
		}
		if vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn && len(vm.slots) > 0 {
			var f *vimfault.Fault
			if chosen, f = l.planMigration(vm, dst, gpu.LoadsOf(dst.Host)); f != nil {
				return f
			}
		}
	}
	l.moveVM(vm, dstRef, pool)
	if chosen != nil {
		l.release(vm)
		l.commit(vm, chosen)
	}
	return nil
}

func (l *Lab) datacenterOf(vm *labVM) types.ManagedObjectReference {
	dc, _ := simobj.Ancestor(*vm.Runtime.Host, "Datacenter")
	return dc
}

func (l *Lab) poolOwner(ref types.ManagedObjectReference) (types.ManagedObjectReference, *vimfault.Fault) {
	if pool, ok := simulator.Map.Get(ref).(*simulator.ResourcePool); ok {
		return pool.Owner, nil
	}
	return types.ManagedObjectReference{}, vimfault.InvalidArgument("pool", "%s is not a resource pool", ref.Value)
}

// hostInPool picks the host DRS would pick in another compute resource: the first one that accepts the VM.
func (l *Lab) hostInPool(vm *labVM, cr types.ManagedObjectReference) (types.ManagedObjectReference, *vimfault.Fault) {
	var hosts []types.ManagedObjectReference
	switch c := simulator.Map.Get(cr).(type) {
	case *simulator.ClusterComputeResource:
		hosts = c.Host
	case *mo.ComputeResource:
		hosts = c.Host
	}
	var reasons []string
	for _, ref := range hosts {
		h := l.host(ref)
		f := l.hostAccepts(h)
		if f == nil && vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn && len(vm.slots) > 0 {
			_, f = l.planMigration(vm, h, gpu.LoadsOf(h.Host))
		}
		if f == nil {
			return ref, nil
		}
		reasons = append(reasons, f.Msg)
	}
	return types.ManagedObjectReference{}, &vimfault.Fault{
		Fault: &types.NoCompatibleHost{},
		Msg: fmt.Sprintf("No host in %s is compatible with virtual machine %s: %s", cr.Value, vm.Name,
			strings.Join(reasons, " ")),
	}
}

// moveVM re-registers a VM on another host and/or pool: the host and pool VM lists, runtime.host, resourcePool and
// the environment browser of its new compute resource.
func (l *Lab) moveVM(vm *labVM, dst, pool types.ManagedObjectReference) {
	src := *vm.Runtime.Host
	if dst != src {
		srcObj, dstObj := l.hostObject(src), l.hostObject(dst)
		l.update(srcObj, types.PropertyChange{Name: "vm", Val: without(srcObj.Vm, vm.Self)})
		l.update(dstObj, types.PropertyChange{Name: "vm", Val: append(without(dstObj.Vm, vm.Self), vm.Self)})
		cr, _, _ := computeResource(dstObj)
		changes := []types.PropertyChange{
			{Name: "runtime.host", Val: dst},
			{Name: "summary.runtime.host", Val: dst},
		}
		if browser := environmentBrowserOf(cr); browser != nil {
			changes = append(changes, types.PropertyChange{Name: "environmentBrowser", Val: *browser})
		}
		l.update(vm, changes...)
		l.logf("VM %s: moved from host %s to %s", vm.Name, srcObj.Name, dstObj.Name)
	}
	if old := vm.ResourcePool; old != nil && *old != pool {
		if p, ok := simulator.Map.Get(*old).(*simulator.ResourcePool); ok {
			l.update(p, types.PropertyChange{Name: "vm", Val: without(p.Vm, vm.Self)})
		}
		if p, ok := simulator.Map.Get(pool).(*simulator.ResourcePool); ok {
			l.update(p, types.PropertyChange{Name: "vm", Val: append(without(p.Vm, vm.Self), vm.Self)})
		}
		l.update(vm, types.PropertyChange{Name: "resourcePool", Val: pool})
	}
}

func without(refs []types.ManagedObjectReference, ref types.ManagedObjectReference) []types.ManagedObjectReference {
	out := make([]types.ManagedObjectReference, 0, len(refs))
	for _, r := range refs {
		if r != ref {
			out = append(out, r)
		}
	}
	return out
}

// relocate implements RelocateVM_Task for the parts of the spec the lab models: host, pool, datastore and folder.
func (l *Lab) relocate(ctx *simulator.Context, vm *labVM, spec *types.VirtualMachineRelocateSpec) *vimfault.Fault {
	var ds *simulator.Datastore
	if spec.Datastore != nil {
		ds, _ = simulator.Map.Get(*spec.Datastore).(*simulator.Datastore)
		if ds == nil {
			return vimfault.InvalidArgument("spec.datastore", "%s is not a datastore", spec.Datastore.Value)
		}
		if dc, _ := simobj.Ancestor(ds.Self, "Datacenter"); dc != l.datacenterOf(vm) {
			return vimfault.InvalidArgument("spec.datastore", "datastore %s is not in the datacenter of virtual machine %s",
				ds.Name, vm.Name)
		}
	}
	if spec.Host != nil || spec.Pool != nil {
		if f := l.migrate(vm, spec.Host, spec.Pool); f != nil {
			return f
		}
	}
	if ds != nil {
		host := l.hostObject(*vm.Runtime.Host)
		if simulator.FindReference(host.Datastore, ds.Self) == nil {
			return vimfault.InvalidArgument("spec.datastore", "datastore %s is not mounted on host %s", ds.Name, host.Name)
		}
		l.update(vm, types.PropertyChange{Name: "datastore", Val: []types.ManagedObjectReference{ds.Self}})
	}
	if spec.Folder != nil {
		folder, ok := simulator.Map.Get(*spec.Folder).(*simulator.Folder)
		if !ok {
			return vimfault.InvalidArgument("spec.folder", "%s is not a folder", spec.Folder.Value)
		}
		body := folder.MoveIntoFolderTask(ctx, &types.MoveIntoFolder_Task{
			This: folder.Self, List: []types.ManagedObjectReference{vm.Self},
		}).(*methods.MoveIntoFolder_TaskBody)
		if !taskSucceeded(body.Res.Returnval) {
			return vimfault.InvalidArgument("spec.folder", "folder %s cannot hold virtual machines", folder.Name)
		}
	}
	return nil
}
