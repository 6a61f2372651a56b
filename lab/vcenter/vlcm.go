package main

import (
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/bundle"
	"vcsim/faults"
	"vcsim/gpu"
	"vcsim/labapi"
	"vcsim/vlcm"
)

// imageConfigLab is the lab as a host's image configuration manager (package imageconfig) sees it: vLCM's record of
// what the host runs, read at each call (the hosts get their managers before the lab starts vLCM).
type imageConfigLab struct{ *Lab }

func (l imageConfigLab) Installed(host types.ManagedObjectReference) map[string]string {
	return l.vlcm.Installed(host)
}

func (l imageConfigLab) BaseImage(version string) *vlcm.BaseImage { return l.vlcm.BaseImage(version) }

func (l imageConfigLab) Component(name, version string) *bundle.Component {
	return l.vlcm.Component(name, version)
}

// vlcmLab is the lab as vSphere Lifecycle Manager (package vlcm) sees it: its hosts and clusters, maintenance mode
// and VM power by the lab's rules, the vGPU event record. vLCM calls it holding l.mu.
type vlcmLab struct{ *Lab }

func (l vlcmLab) Hosts() []vlcm.Host {
	hosts := make([]vlcm.Host, 0, len(l.hosts))
	for _, h := range l.hosts {
		hosts = append(hosts, vlcm.Host{Ref: h.Ref, Name: h.Name})
	}
	return hosts
}

func (l vlcmLab) Clusters() []types.ManagedObjectReference { return l.clusters }

func (l vlcmLab) Logf(format string, args ...interface{}) { l.logf(format, args...) }

func (l vlcmLab) Pause(d time.Duration) bool { return l.pause(d) }

func (l vlcmLab) Faults() *faults.Store { return l.faults }

func (l vlcmLab) EvacuationBlocker(host types.ManagedObjectReference, evacuateOff bool) string {
	obj, h := l.hostObject(host), l.host(host)
	if _, f := l.planEvacuation(h, obj, evacuateOff); f != nil {
		return f.Msg
	}
	return ""
}

// MaintenanceMode enters or exits maintenance mode through the simulator, so the lab's maintenance rules apply and
// the tasks show in vCenter as vLCM's do.
func (l vlcmLab) MaintenanceMode(host types.ManagedObjectReference, enter, evacuateOff bool) string {
	obj := l.hostObject(host)
	var ref types.ManagedObjectReference
	l.as(host, func() {
		if enter {
			req := &types.EnterMaintenanceMode_Task{This: host, EvacuatePoweredOffVms: types.NewBool(evacuateOff)}
			saved := l.inflight
			l.inflight = req
			body := obj.EnterMaintenanceModeTask(req)
			l.inflight = saved
			ref = body.(*methods.EnterMaintenanceMode_TaskBody).Res.Returnval
		} else {
			body := obj.ExitMaintenanceModeTask(&types.ExitMaintenanceMode_Task{This: host})
			ref = body.(*methods.ExitMaintenanceMode_TaskBody).Res.Returnval
		}
	})
	l.patchTaskMessages()
	task, ok := simulator.Map.Get(ref).(*simulator.Task)
	if !ok || task.Info.State == types.TaskInfoStateSuccess {
		return ""
	}
	if task.Info.Error != nil && task.Info.Error.LocalizedMessage != "" {
		return task.Info.Error.LocalizedMessage
	}
	return "the maintenance mode task failed"
}

func (l vlcmLab) PoweredOnVMs(host types.ManagedObjectReference) []types.ManagedObjectReference {
	var on []types.ManagedObjectReference
	for _, ref := range l.hostObject(host).Vm {
		if vm := l.vm(ref); vm != nil && vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn {
			on = append(on, ref)
		}
	}
	return on
}

func (l vlcmLab) SetPower(ref types.ManagedObjectReference, state types.VirtualMachinePowerState) bool {
	vm := l.vm(ref)
	if vm == nil {
		return false
	}
	var task types.ManagedObjectReference
	l.as(ref, func() { task = vlcm.PowerTask(l.ctx, vm, ref, state) })
	return taskSucceeded(task)
}

func (l vlcmLab) HostImageChanged(host, driver string) {
	l.vgpuEvents = append(l.vgpuEvents, labapi.VGPUEvent{Seq: len(l.vgpuEvents) + 1, Event: "host_image", Host: host,
		HostDriver: driver})
}

// addVLCMState adds vLCM's ground truth to GET /lab/state: the offline depots, installed components per host, the
// desired image per cluster (its effective components, base image included; null when not image-managed).
func (l *Lab) addVLCMState(s *labapi.State) {
	s.Depots = l.vlcm.Depots()
	for i := range s.Hosts {
		for _, h := range l.hosts {
			if h.Ref.Value == s.Hosts[i].Moid {
				s.Hosts[i].Components = l.vlcm.Installed(h.Ref)
			}
		}
	}
	for i := range s.Clusters {
		ref := types.ManagedObjectReference{Type: "ClusterComputeResource", Value: s.Clusters[i].Moid}
		if c := l.vlcm.Cluster(ref); c != nil {
			s.Clusters[i].ImageManaged, s.Clusters[i].Drafts = c.Managed, c.Drafts
			s.Clusters[i].Image, s.Clusters[i].ImageCommit, s.Clusters[i].ImageCommits = c.Image, c.Commit, c.Commits
		}
	}
}

// recordVGPU adds a vGPU start or stop to the lab's event record. The caller holds l.mu.
func (l *Lab) recordVGPU(event string, vm *labVM, slot *gpu.Slot) {
	driver := ""
	if l.vlcm != nil {
		driver = l.vlcm.HostDriver(slot.GPU.Host.Ref)
	}
	l.vgpuEvents = append(l.vgpuEvents, labapi.VGPUEvent{Seq: len(l.vgpuEvents) + 1, Event: event, VM: vm.Name,
		Host: slot.GPU.Host.Name, GPU: slot.GPU.PciID, Profile: slot.Profile, HostDriver: driver})
}
