package main

import (
	"log"
	"net/http"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/about"
	"vcsim/catalog"
	"vcsim/chaos"
	"vcsim/clusters"
	"vcsim/datastores"
	"vcsim/dvs"
	"vcsim/events"
	"vcsim/faults"
	"vcsim/gpu"
	"vcsim/guestnet"
	"vcsim/hostconfig"
	"vcsim/hostd"
	"vcsim/hostservices"
	"vcsim/labapi"
	"vcsim/settings"
	"vcsim/stats"
	"vcsim/tagging"
	"vcsim/vapi"
	"vcsim/vimfault"
	"vcsim/vlcm"
)

// Lab holds the GPU side of the simulated vCenter and the lab's own bookkeeping.
//
// Locking: mu serializes every change, SOAP requests (except property collector waits, which block) as well as lab
// endpoints and timers, so the lab's state and the simulator's objects change together. Inside a SOAP request the
// simulator already holds the lock of the object the method runs on (current); the lab locks any other object it
// changes, so property collector waits, which only take object locks, never read a half-written object.
type Lab struct {
	mu      sync.Mutex
	current types.ManagedObjectReference

	ctx      *simulator.Context // for simulator methods the lab calls on its own, outside a client's request
	catalog  *catalog.Catalog
	settings *settings.Manager
	stats    *stats.Counters
	faults   *faults.Store
	chaos    *chaos.Injector
	rest     *http.ServeMux   // REST APIs served next to SOAP (paths under /api/ and /rest/)
	vlcm     *vlcm.Manager    // vSphere Lifecycle Manager (REST, package vlcm; vlcm.go)
	tasks    *vapi.Tasks      // the CIS tasks of the REST APIs (/api/cis/tasks)
	tagging  *tagging.Service // vSphere tags (REST and JSON-RPC, package tagging; tags.go)
	// vgpuEvents records, in order, every vGPU start and stop and every host image change (vgpu_events in
	// /lab/state), so a test can replay which host driver each vGPU ran under at every step.
	vgpuEvents []labapi.VGPUEvent

	hostdLogin hostd.Login // the hosts' root account, for the host view (package hostd; hostview.go)

	datacenters []types.ManagedObjectReference
	clusters    []types.ManagedObjectReference
	hosts       []*hostState
	hostByRef   map[types.ManagedObjectReference]*hostState
	vms         []types.ManagedObjectReference
	vmKnown     map[types.ManagedObjectReference]bool

	clusterSettings *clusters.Clusters     // DRS, DPM, HA, cluster creation and destruction (package clusters)
	switches        *dvs.Switches          // distributed switches (package dvs)
	datastores      *datastores.Datastores // shared and NFS datastores, datastore maintenance (package datastores)
	guestAddresses  guestnet.Addresses     // the guest address Tools reports of a VM while it runs (package guestnet)

	// eventLog is vCenter's event history as the lab keeps it (package events).
	// caller is the user of the session whose request is being served, for the events that name it.
	eventLog events.History
	caller   string

	// inflight is the decoded request being served, for the task hooks that need its arguments.
	inflight interface{}
	// taskMessages holds the localized message of tasks that failed with a vimfault.Fault, until the task is patched.
	taskMessages map[types.ManagedObjectReference]*vimfault.Fault

	// background counts the work that runs outside a request (REST tasks, guest shutdowns); retiring is closed
	// when a reset replaces the lab (reset.go).
	background sync.WaitGroup
	retiring   chan struct{}
}

func NewLab(models *catalog.Catalog) *Lab {
	l := &Lab{
		catalog:      models,
		stats:        stats.New(),
		rest:         http.NewServeMux(),
		faults:       faults.NewStore(),
		chaos:        chaos.New(),
		hostByRef:    map[types.ManagedObjectReference]*hostState{},
		vmKnown:      map[types.ManagedObjectReference]bool{},
		taskMessages: map[types.ManagedObjectReference]*vimfault.Fault{},
		retiring:     make(chan struct{}),
	}
	l.clusterSettings = clusters.New(clusterLab{labView{l}})
	l.switches = dvs.New(switchLab{labView{l}})
	return l
}

func (l *Lab) logf(format string, args ...interface{}) {
	log.Printf(format, args...)
}

// locked runs f holding the simulator's lock of ref, unless the request being served already holds it.
func (l *Lab) locked(ref types.ManagedObjectReference, f func()) {
	if ref == l.current {
		f()
		return
	}
	simulator.Map.WithLock(ref, f)
}

// as runs f the way the simulator runs a method of ref: holding its lock, with ref as the current object.
func (l *Lab) as(ref types.ManagedObjectReference, f func()) {
	l.locked(ref, func() {
		saved := l.current
		l.current = ref
		defer func() { l.current = saved }()
		f()
	})
}

// update changes properties of a simulator object so that property collector waiters see the change.
func (l *Lab) update(obj mo.Reference, changes ...types.PropertyChange) {
	l.locked(obj.Reference(), func() { simulator.Map.Update(obj, changes) })
}

func (l *Lab) hostObject(ref types.ManagedObjectReference) *simulator.HostSystem {
	h, _ := simulator.Map.Get(ref).(*simulator.HostSystem)
	return h
}

// host returns the lab state of a host. A host added through the API after start has no GPUs; it gets its graphics
// manager and service system the first time the lab looks at it.
func (l *Lab) host(ref types.ManagedObjectReference) *hostState {
	if h := l.hostByRef[ref]; h != nil {
		return h
	}
	obj := l.hostObject(ref)
	if obj == nil {
		return nil
	}
	h := newHostState(l, ref, obj.Name, nil, l.catalog)
	l.locked(ref, func() { l.attachHost(h, obj) })
	return h
}

// attachHost registers a host's GPU devices, graphics manager, service system and other managers with the simulator.
func (l *Lab) attachHost(h *hostState, obj *simulator.HostSystem) {
	hw := *obj.Hardware
	hw.PciDevice = append(append([]types.HostPciDevice(nil), obj.Hardware.PciDevice...), h.PCIDevices()...)
	obj.Hardware = &hw

	h.graphics = gpu.NewGraphicsManager(h.Host)
	h.svc = hostservices.New(servicesLab{labView{l}}, h.Ref, h.Name)
	simulator.Map.Put(h.graphics)
	simulator.Map.Put(h.svc)
	gm, ss := h.graphics.Self, h.svc.Self
	obj.ConfigManager.GraphicsManager = &gm
	obj.ConfigManager.ServiceSystem = &ss
	l.attachConfigManagers(h, obj)
	obj.Capability = hostconfig.Capability()
	obj.Capability.DeviceRebindWithoutRebootSupported = types.NewBool(!h.rebindNeedsReboot)
	booted := hostsBooted
	obj.Runtime.BootTime = &booted

	product := about.ESXi(obj.Config.Product)
	obj.Config.Product = product
	obj.Summary.Config.Product = &product
	obj.Config.GraphicsInfo = h.GraphicsInfo()
	obj.Config.GraphicsConfig = h.GraphicsConfig()
	obj.Config.SharedPassthruGpuTypes = h.ProfileList()
	obj.Config.SharedGpuCapabilities = h.SharedGpuCapabilities()
	obj.Config.Service = &types.HostServiceInfo{Service: h.svc.List()}

	l.hosts = append(l.hosts, h)
	l.hostByRef[h.Ref] = h
}

// vm returns a VM as the lab's VirtualMachine, adopting VMs the simulator created after start (CreateVM_Task,
// CloneVM_Task, RegisterVM_Task) so that the vGPU rules apply to them as well.
func (l *Lab) vm(ref types.ManagedObjectReference) *labVM {
	switch obj := simulator.Map.Get(ref).(type) {
	case *labVM:
		return obj
	case *simulator.VirtualMachine:
		return l.adopt(obj)
	}
	return nil
}

// allVMs returns the lab's VMs in the order they were created, picking up VMs created through the API.
func (l *Lab) allVMs() []*labVM {
	for _, h := range l.hosts {
		if obj := l.hostObject(h.Ref); obj != nil {
			for _, ref := range obj.Vm {
				l.vm(ref)
			}
		}
	}
	vms := make([]*labVM, 0, len(l.vms))
	kept := l.vms[:0]
	for _, ref := range l.vms {
		if vm := l.vm(ref); vm != nil {
			vms = append(vms, vm)
			kept = append(kept, ref)
		} else {
			delete(l.vmKnown, ref)
		}
	}
	l.vms = kept
	return vms
}

// patchTaskMessages gives failed tasks the message vCenter would show instead of the simulator's fault type name.
func (l *Lab) patchTaskMessages() {
	for ref, f := range l.taskMessages {
		if task, ok := simulator.Map.Get(ref).(*simulator.Task); ok {
			l.update(task, types.PropertyChange{
				Name: "info.error", Val: types.LocalizedMethodFault{Fault: f.Fault, LocalizedMessage: f.Msg},
			})
		}
		delete(l.taskMessages, ref)
	}
}

// runTask runs a task on obj that ends with the result of fn, as vCenter's task of that name would.
func (l *Lab) runTask(obj mo.Reference, name string,
	fn func(*simulator.Task) (types.AnyType, *vimfault.Fault)) types.ManagedObjectReference {
	task := simulator.CreateTask(obj, name, func(t *simulator.Task) (types.AnyType, types.BaseMethodFault) {
		result, f := fn(t)
		return l.taskResult(t, result, f)
	})
	ref := task.Run()
	l.patchTaskMessages()
	return ref
}

// taskResult turns a vimfault.Fault into a task error, remembering its message for patchTaskMessages.
func (l *Lab) taskResult(t *simulator.Task, result types.AnyType, f *vimfault.Fault) (types.AnyType, types.BaseMethodFault) {
	if f == nil {
		return result, nil
	}
	l.logf("%s %s failed: %s", t.Info.DescriptionId, t.Info.EntityName, f.Msg)
	l.taskMessages[t.Self] = f
	return nil, f.Fault
}

func taskSucceeded(ref types.ManagedObjectReference) bool {
	task, ok := simulator.Map.Get(ref).(*simulator.Task)
	return ok && task.Info.State == types.TaskInfoStateSuccess
}
