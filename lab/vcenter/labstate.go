package main

import (
	"fmt"
	"net/http"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/chaos"
	"vcsim/faults"
	"vcsim/gpu"
	"vcsim/labapi"
	"vcsim/settings"
	"vcsim/simobj"
	"vcsim/stats"
	"vcsim/topology"
	"vcsim/vcmanagers"
)

// labapiLab is the lab as its own endpoints (package labapi) see it.
type labapiLab struct{ *Lab }

func (l labapiLab) State() labapi.State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state()
}

func (l labapiLab) Stats() *stats.Counters { return l.stats }

func (l labapiLab) Faults() *faults.Store { return l.faults }

func (l labapiLab) Chaos() *chaos.Injector { return l.chaos }

func (l labapiLab) VMNames() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	vms := l.allVMs()
	names := make([]string, 0, len(vms))
	for _, vm := range vms {
		names = append(names, vm.Name)
	}
	return names
}

// ChangeGPUs stages what the host's nvidia-smi reads (hostshell.go) on one GPU of a host or all of them.
func (l labapiLab) ChangeGPUs(c labapi.GPUChange) (labapi.Host, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var host *hostState
	for _, h := range l.hosts {
		if h.Name == c.Host {
			host = h
		}
	}
	if host == nil {
		return labapi.Host{}, fmt.Errorf("no host %q in the lab", c.Host)
	}
	gpus := host.GPUs
	if c.PciID != "" {
		g := host.GPU(c.PciID)
		if g == nil {
			return labapi.Host{}, fmt.Errorf("host %s has no GPU %q (it has %s)", c.Host, c.PciID, host.PCIIDs())
		}
		gpus = []*gpu.Device{g}
	}
	for _, g := range gpus {
		if c.TemperatureC != nil {
			g.TemperatureC = *c.TemperatureC
		}
		if c.ECCMode != "" {
			g.ECC = c.ECCMode == topology.ECCEnabled
		}
		l.logf("host %s: GPU %s now at %d C, ECC %s", host.Name, g.PciID, g.TemperatureC, eccWord(g.ECC))
	}
	return host.state(l.hostObject(host.Ref)), nil
}

func (l labapiLab) DepotFiles() http.Handler { return l.vlcm.DepotFiles() }

func (l labapiLab) Logf(format string, args ...interface{}) { l.logf(format, args...) }

func name(ref types.ManagedObjectReference) string {
	if e := simobj.Entity(ref); e != nil {
		return e.Entity().Name
	}
	return ""
}

// placement returns the datacenter and cluster (nil when standalone) of a host.
func placement(host *simulator.HostSystem) (string, *string) {
	dc, _ := simobj.Ancestor(host.Self, "Datacenter")
	if cluster, ok := simulator.Map.Get(*host.Parent).(*simulator.ClusterComputeResource); ok {
		n := cluster.Name
		return name(dc), &n
	}
	return name(dc), nil
}

// state is the ground truth of GET /lab/state. The caller holds l.mu.
func (l *Lab) state() labapi.State {
	s := labapi.State{
		Datacenters: make([]labapi.Datacenter, 0, len(l.datacenters)),
		Clusters:    make([]labapi.Cluster, 0, len(l.clusters)),
		Settings:    map[string]interface{}{},
	}
	for _, ref := range l.datacenters {
		s.Datacenters = append(s.Datacenters, labapi.Datacenter{Name: name(ref), Moid: ref.Value})
	}
	for _, ref := range l.clusters {
		if c, ok := simulator.Map.Get(ref).(*simulator.ClusterComputeResource); ok {
			s.Clusters = append(s.Clusters, clusterState(c))
		}
	}
	vms := l.allVMs()
	s.Hosts = make([]labapi.Host, 0, len(l.hosts))
	for _, h := range l.hosts {
		if obj := l.hostObject(h.Ref); obj != nil {
			s.Hosts = append(s.Hosts, h.state(obj))
		}
	}
	s.VMs = make([]labapi.VM, 0, len(vms))
	for _, vm := range vms {
		s.VMs = append(s.VMs, l.vmState(vm))
	}
	s.VGPUEvents = append([]labapi.VGPUEvent{}, l.vgpuEvents...)
	for _, o := range settings.VCenterOptions {
		s.Settings[o.Key] = l.settings.Value(o.Key)
	}
	l.addVLCMState(&s)
	return s
}

func clusterState(c *simulator.ClusterComputeResource) labapi.Cluster {
	dc, _ := simobj.Ancestor(c.Self, "Datacenter")
	cfg := c.ConfigurationEx.(*types.ClusterConfigInfoEx)
	j := labapi.Cluster{
		Name:         c.Name,
		Moid:         c.Self.Value,
		Datacenter:   name(dc),
		Hosts:        make([]string, 0, len(c.Host)),
		DRS:          labapi.Automation{Enabled: isTrue(cfg.DrsConfig.Enabled), Behavior: string(cfg.DrsConfig.DefaultVmBehavior)},
		CustomValues: vcmanagers.CustomValues(&c.ManagedEntity),
	}
	if d := cfg.DpmConfigInfo; d != nil {
		j.DPM = labapi.Automation{Enabled: isTrue(d.Enabled), Behavior: string(d.DefaultDpmBehavior)}
	}
	for _, ref := range c.Host {
		j.Hosts = append(j.Hosts, name(ref))
	}
	return j
}

func (h *hostState) state(obj *simulator.HostSystem) labapi.Host {
	dc, cluster := placement(obj)
	j := labapi.Host{
		Name:                   obj.Name,
		Moid:                   h.Ref.Value,
		Cluster:                cluster,
		Datacenter:             dc,
		ConnectionState:        string(obj.Runtime.ConnectionState),
		MaintenanceMode:        obj.Runtime.InMaintenanceMode,
		BootTime:               obj.Runtime.BootTime,
		Reboots:                h.reboots,
		CustomValues:           vcmanagers.CustomValues(&obj.ManagedEntity),
		PassthroughNeedsReboot: h.rebindNeedsReboot,
		XorgRestarts:           h.xorgRestarts,
		SupportedProfiles:      h.ProfileList(),
		GPUs:                   make([]labapi.GPU, 0, len(h.GPUs)),
		GraphicsConfig: labapi.GraphicsConfig{
			DefaultGraphicsType: h.Config.HostDefaultGraphicsType,
			AssignmentPolicy:    h.Config.SharedPassthruAssignmentPolicy,
			DeviceTypes:         make([]labapi.DeviceType, 0, len(h.Config.DeviceType)),
		},
	}
	if j.SupportedProfiles == nil {
		j.SupportedProfiles = []string{}
	}
	j.NVLink = h.nvlinkPairs()
	j.NVSwitches = h.nvswitchState()
	for _, d := range h.Config.DeviceType {
		j.GraphicsConfig.DeviceTypes = append(j.GraphicsConfig.DeviceTypes,
			labapi.DeviceType{DeviceID: d.DeviceId, GraphicsType: d.GraphicsType, VgpuMode: d.VgpuMode})
	}
	for _, g := range h.GPUs {
		gj := labapi.GPU{
			PciID:                  g.PciID,
			Model:                  g.Model.ID,
			DeviceName:             g.Model.DeviceName,
			DeviceID:               fmt.Sprintf("0x%04x", g.Model.DeviceID),
			MemoryMiB:              g.Model.FramebufferMiB,
			GraphicsType:           g.Active,
			ConfiguredGraphicsType: g.ConfiguredType(),
			VgpuMode:               g.VgpuMode(),
			VMs:                    []string{},
			ECCMode:                eccWord(g.ECC),
			TemperatureC:           g.TemperatureC,
		}
		if p := g.Profile(); p != "" {
			gj.Profile = &p
		}
		if e := h.passthruInfo(g.PciID); e != nil {
			gj.PassthruEnabled, gj.PassthruActive = e.PassthruEnabled, e.PassthruActive
		}
		if g.HeldBy != nil {
			holder := name(*g.HeldBy)
			gj.PassthroughVM = &holder
		}
		for _, ref := range g.VMs() {
			gj.VMs = append(gj.VMs, name(ref))
		}
		j.GPUs = append(j.GPUs, gj)
	}
	return j
}

func (l *Lab) vmState(vm *labVM) labapi.VM {
	host := l.hostObject(*vm.Runtime.Host)
	_, cluster := placement(host)
	j := labapi.VM{
		Name:                         vm.Name,
		Moid:                         vm.Self.Value,
		UUID:                         vm.Config.Uuid,
		InstanceUUID:                 vm.Config.InstanceUuid,
		Host:                         host.Name,
		Cluster:                      cluster,
		PowerState:                   string(vm.Runtime.PowerState),
		MemoryMB:                     vm.Config.Hardware.MemoryMB,
		MemoryReservationMB:          gpu.ReservationMB(vm.managed()),
		MemoryReservationLockedToMax: isTrue(vm.Config.MemoryReservationLockedToMax),
		VGPUs:                        []labapi.VGPU{},
		Passthrough:                  l.passthroughState(vm),
		CustomValues:                 vcmanagers.CustomValues(&vm.ManagedEntity),
	}
	for _, d := range gpu.VGPUs(vm.Config.Hardware.Device) {
		v := labapi.VGPU{Key: d.Key, Profile: d.Profile}
		for _, s := range vm.slots {
			if s.Key == d.Key {
				pci, at := s.GPU.PciID, s.At
				v.GPU = &pci
				if at >= 0 {
					v.PlacementID = &at
				}
			}
		}
		j.VGPUs = append(j.VGPUs, v)
	}
	return j
}
