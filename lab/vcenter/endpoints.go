package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/chaos"
	"vcsim/faults"
	"vcsim/jsonhttp"
	"vcsim/vlcm"
)

type stateJSON struct {
	Datacenters []datacenterJSON       `json:"datacenters"`
	Clusters    []clusterJSON          `json:"clusters"`
	Hosts       []hostJSON             `json:"hosts"`
	VMs         []vmJSON               `json:"vms"`
	Settings    map[string]interface{} `json:"settings"`
	Depots      []vlcm.Depot           `json:"depots"` // vLCM offline depots
	VGPUEvents  []vgpuEventJSON        `json:"vgpu_events"`
}

// vgpuEventJSON is one vGPU start or stop on a host, or one host's new image (event host_image, no VM).
type vgpuEventJSON struct {
	Seq        int    `json:"seq"`
	Event      string `json:"event"` // vgpu_start, vgpu_stop or host_image
	VM         string `json:"vm,omitempty"`
	Host       string `json:"host"`
	GPU        string `json:"gpu,omitempty"`
	Profile    string `json:"profile,omitempty"`
	HostDriver string `json:"host_driver"` // the NVIDIA host driver component version the host runs, "" if none
}

type datacenterJSON struct {
	Name string `json:"name"`
	Moid string `json:"moid"`
}

type automationJSON struct {
	Enabled  bool   `json:"enabled"`
	Behavior string `json:"behavior"`
}

type clusterJSON struct {
	Name       string         `json:"name"`
	Moid       string         `json:"moid"`
	Datacenter string         `json:"datacenter"`
	Hosts      []string       `json:"hosts"`
	DRS        automationJSON `json:"drs"`
	DPM        automationJSON `json:"dpm"`
	// The desired vLCM image (effective components, base image included); null when not image-managed.
	Image        map[string]string `json:"image"`
	ImageManaged bool              `json:"image_managed"`
	// The commit the image is at, and every commit with its image, oldest first (empty when not image-managed).
	ImageCommit  string             `json:"image_commit"`
	ImageCommits []vlcm.ImageCommit `json:"image_commits"`
	// vLCM drafts of the cluster's image that were neither committed nor deleted.
	Drafts int `json:"drafts"`
	// Custom attributes by name (the cluster lock of gpuops.vgpu.cluster_lock among them).
	CustomValues map[string]string `json:"custom_values"`
}

type hostJSON struct {
	Name            string     `json:"name"`
	Moid            string     `json:"moid"`
	Cluster         *string    `json:"cluster"`
	Datacenter      string     `json:"datacenter"`
	ConnectionState string     `json:"connection_state"`
	MaintenanceMode bool       `json:"maintenance_mode"`
	BootTime        *time.Time `json:"boot_time"` // runtime.bootTime
	Reboots         int        `json:"reboots"`   // RebootHost_Task reboots since the lab started
	// PassthroughNeedsReboot: passthrough changes wait for a reboot (deviceRebindWithoutRebootSupported false).
	PassthroughNeedsReboot bool               `json:"passthrough_needs_reboot"`
	XorgRestarts           int                `json:"xorg_restarts"`
	GraphicsConfig         graphicsConfigJSON `json:"graphics_config"`
	SupportedProfiles      []string           `json:"supported_profiles"`
	GPUs                   []gpuJSON          `json:"gpus"`
	Components             map[string]string  `json:"components"` // installed, name to version
	NVLink                 [][]string         `json:"nvlink"`     // GPU pairs joined by NVLink (bridge or NVSwitch), by PCI id
	NVSwitches             []nvswitchJSON     `json:"nvswitches"`
	CustomValues           map[string]string  `json:"custom_values"`
}

type graphicsConfigJSON struct {
	DefaultGraphicsType string           `json:"default_graphics_type"`
	AssignmentPolicy    string           `json:"assignment_policy"`
	DeviceTypes         []deviceTypeJSON `json:"device_types"`
}

type deviceTypeJSON struct {
	DeviceID     string `json:"device_id"`
	GraphicsType string `json:"graphics_type"`
	VgpuMode     string `json:"vgpu_mode"` // "" when the entry sets none
}

type gpuJSON struct {
	PciID                  string   `json:"pci_id"`
	Model                  string   `json:"model"`
	DeviceName             string   `json:"device_name"`
	DeviceID               string   `json:"device_id"`
	MemoryMiB              int64    `json:"memory_mib"`
	GraphicsType           string   `json:"graphics_type"`
	ConfiguredGraphicsType string   `json:"configured_graphics_type"`
	VgpuMode               string   `json:"vgpu_mode"` // in effect, as HostGraphicsInfo.vgpuMode
	Profile                *string  `json:"profile"`
	VMs                    []string `json:"vms"`
	ECCMode                string   `json:"ecc_mode"`      // enabled or disabled (the host's nvidia-smi)
	TemperatureC           int      `json:"temperature_c"` // the host's nvidia-smi; POST /lab/gpus sets it
	PassthruEnabled        bool     `json:"passthru_enabled"`
	PassthruActive         bool     `json:"passthru_active"`
	PassthroughVM          *string  `json:"passthrough_vm"` // the running VM the GPU is passed through to
}

type vmJSON struct {
	Name                         string            `json:"name"`
	Moid                         string            `json:"moid"`
	UUID                         string            `json:"uuid"`
	InstanceUUID                 string            `json:"instance_uuid"`
	Host                         string            `json:"host"`
	Cluster                      *string           `json:"cluster"`
	PowerState                   string            `json:"power_state"`
	MemoryMB                     int32             `json:"memory_mb"`
	MemoryReservationMB          int64             `json:"memory_reservation_mb"`
	MemoryReservationLockedToMax bool              `json:"memory_reservation_locked_to_max"`
	VGPUs                        []vgpuJSON        `json:"vgpus"`
	Passthrough                  []passthroughJSON `json:"passthrough"`
	CustomValues                 map[string]string `json:"custom_values"`
}

type vgpuJSON struct {
	Key         int32   `json:"key"`
	Profile     string  `json:"profile"`
	GPU         *string `json:"gpu"`
	PlacementID *int64  `json:"placement_id"` // GiB offset on a GPU in mixed-size mode
}

func (l *Lab) labHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/lab/state", l.only(http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		state := l.state()
		l.mu.Unlock()
		jsonhttp.Write(w, http.StatusOK, state)
	}))
	mux.HandleFunc("/lab/stats", l.only(http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
		jsonhttp.Write(w, http.StatusOK, l.stats.Snapshot())
	}))
	mux.HandleFunc("/lab/stats/reset", l.only(http.MethodPost, func(w http.ResponseWriter, r *http.Request) {
		l.stats.Reset()
		jsonhttp.Write(w, http.StatusOK, l.stats.Snapshot())
	}))
	mux.HandleFunc("/lab/faults", l.faultsEndpoint)
	mux.HandleFunc("/lab/gpus", l.only(http.MethodPost, l.gpusEndpoint))
	mux.HandleFunc("/lab/chaos", l.chaosEndpoint)
	mux.Handle("/lab/depot/", l.vlcm.DepotFiles())
	mux.HandleFunc("/lab/", func(w http.ResponseWriter, r *http.Request) {
		jsonhttp.Error(w, http.StatusNotFound, "no lab endpoint %s (endpoints: /lab/state, /lab/stats, "+
			"/lab/stats/reset, /lab/faults, /lab/gpus, /lab/chaos, /lab/depot/, /lab/reset)", r.URL.Path)
	})
	return mux
}

func (l *Lab) only(method string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			jsonhttp.Error(w, http.StatusMethodNotAllowed, "%s takes %s", r.URL.Path, method)
			return
		}
		h(w, r)
	}
}

func (l *Lab) faultsEndpoint(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		jsonhttp.Write(w, http.StatusOK, map[string]interface{}{"faults": l.faults.List()})
	case http.MethodDelete:
		jsonhttp.Write(w, http.StatusOK, map[string]interface{}{"cleared": l.faults.Clear()})
	case http.MethodPost:
		var f faults.Fault
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			jsonhttp.Error(w, http.StatusBadRequest, "fault: %v", err)
			return
		}
		f.ID = 0
		l.mu.Lock()
		names := map[string]bool{}
		for _, vm := range l.allVMs() {
			names[vm.Name] = true
		}
		l.mu.Unlock()
		if err := f.Validate(func(name string) bool { return names[name] }); err != nil {
			jsonhttp.Error(w, http.StatusBadRequest, "fault: %v", err)
			return
		}
		added := l.faults.Add(f)
		l.logf("fault added: %+v", added)
		jsonhttp.Write(w, http.StatusCreated, added)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		jsonhttp.Error(w, http.StatusMethodNotAllowed, "/lab/faults takes GET, POST or DELETE")
	}
}

func name(ref types.ManagedObjectReference) string {
	if e := entity(ref); e != nil {
		return e.Entity().Name
	}
	return ""
}

// placement returns the datacenter and cluster (nil when standalone) of a host.
func placement(host *simulator.HostSystem) (string, *string) {
	dc, _ := ancestor(host.Self, "Datacenter")
	if cluster, ok := simulator.Map.Get(*host.Parent).(*simulator.ClusterComputeResource); ok {
		n := cluster.Name
		return name(dc), &n
	}
	return name(dc), nil
}

// state is the ground truth of GET /lab/state. The caller holds l.mu.
func (l *Lab) state() stateJSON {
	s := stateJSON{
		Datacenters: make([]datacenterJSON, 0, len(l.datacenters)),
		Clusters:    make([]clusterJSON, 0, len(l.clusters)),
		Settings:    map[string]interface{}{},
	}
	for _, ref := range l.datacenters {
		s.Datacenters = append(s.Datacenters, datacenterJSON{Name: name(ref), Moid: ref.Value})
	}
	for _, ref := range l.clusters {
		if c, ok := simulator.Map.Get(ref).(*simulator.ClusterComputeResource); ok {
			s.Clusters = append(s.Clusters, clusterState(c))
		}
	}
	vms := l.allVMs()
	s.Hosts = make([]hostJSON, 0, len(l.hosts))
	for _, h := range l.hosts {
		if obj := l.hostObject(h.ref); obj != nil {
			s.Hosts = append(s.Hosts, h.state(obj))
		}
	}
	s.VMs = make([]vmJSON, 0, len(vms))
	for _, vm := range vms {
		s.VMs = append(s.VMs, l.vmState(vm))
	}
	s.VGPUEvents = append([]vgpuEventJSON{}, l.vgpuEvents...)
	for _, o := range labOptions {
		s.Settings[o.key] = l.settings.value(o.key)
	}
	l.addVLCMState(&s)
	return s
}

func clusterState(c *simulator.ClusterComputeResource) clusterJSON {
	dc, _ := ancestor(c.Self, "Datacenter")
	cfg := c.ConfigurationEx.(*types.ClusterConfigInfoEx)
	j := clusterJSON{
		Name:         c.Name,
		Moid:         c.Self.Value,
		Datacenter:   name(dc),
		Hosts:        make([]string, 0, len(c.Host)),
		DRS:          automationJSON{Enabled: isTrue(cfg.DrsConfig.Enabled), Behavior: string(cfg.DrsConfig.DefaultVmBehavior)},
		CustomValues: customValues(&c.ManagedEntity),
	}
	if d := cfg.DpmConfigInfo; d != nil {
		j.DPM = automationJSON{Enabled: isTrue(d.Enabled), Behavior: string(d.DefaultDpmBehavior)}
	}
	for _, ref := range c.Host {
		j.Hosts = append(j.Hosts, name(ref))
	}
	return j
}

func (h *hostState) state(obj *simulator.HostSystem) hostJSON {
	dc, cluster := placement(obj)
	j := hostJSON{
		Name:                   obj.Name,
		Moid:                   h.ref.Value,
		Cluster:                cluster,
		Datacenter:             dc,
		ConnectionState:        string(obj.Runtime.ConnectionState),
		MaintenanceMode:        obj.Runtime.InMaintenanceMode,
		BootTime:               obj.Runtime.BootTime,
		Reboots:                h.reboots,
		CustomValues:           customValues(&obj.ManagedEntity),
		PassthroughNeedsReboot: h.rebindNeedsReboot,
		XorgRestarts:           h.xorgRestarts,
		SupportedProfiles:      h.profileList(),
		GPUs:                   make([]gpuJSON, 0, len(h.gpus)),
		GraphicsConfig: graphicsConfigJSON{
			DefaultGraphicsType: h.config.HostDefaultGraphicsType,
			AssignmentPolicy:    h.config.SharedPassthruAssignmentPolicy,
			DeviceTypes:         make([]deviceTypeJSON, 0, len(h.config.DeviceType)),
		},
	}
	if j.SupportedProfiles == nil {
		j.SupportedProfiles = []string{}
	}
	j.NVLink = h.nvlinkPairs()
	j.NVSwitches = h.nvswitchState()
	for _, d := range h.config.DeviceType {
		j.GraphicsConfig.DeviceTypes = append(j.GraphicsConfig.DeviceTypes,
			deviceTypeJSON{DeviceID: d.DeviceId, GraphicsType: d.GraphicsType, VgpuMode: d.VgpuMode})
	}
	for _, g := range h.gpus {
		gj := gpuJSON{
			PciID:                  g.pciID,
			Model:                  g.model.ID,
			DeviceName:             g.model.DeviceName,
			DeviceID:               fmt.Sprintf("0x%04x", g.model.DeviceID),
			MemoryMiB:              g.model.FramebufferMiB,
			GraphicsType:           g.active,
			ConfiguredGraphicsType: g.configuredType(),
			VgpuMode:               g.vgpuMode(),
			VMs:                    []string{},
			ECCMode:                eccWord(g.ecc),
			TemperatureC:           g.temperatureC,
		}
		if p := g.profile(); p != "" {
			gj.Profile = &p
		}
		if e := h.passthruInfo(g.pciID); e != nil {
			gj.PassthruEnabled, gj.PassthruActive = e.PassthruEnabled, e.PassthruActive
		}
		if g.heldBy != nil {
			holder := name(*g.heldBy)
			gj.PassthroughVM = &holder
		}
		for _, ref := range g.vms() {
			gj.VMs = append(gj.VMs, name(ref))
		}
		j.GPUs = append(j.GPUs, gj)
	}
	return j
}

func (l *Lab) vmState(vm *labVM) vmJSON {
	host := l.hostObject(*vm.Runtime.Host)
	_, cluster := placement(host)
	j := vmJSON{
		Name:                         vm.Name,
		Moid:                         vm.Self.Value,
		UUID:                         vm.Config.Uuid,
		InstanceUUID:                 vm.Config.InstanceUuid,
		Host:                         host.Name,
		Cluster:                      cluster,
		PowerState:                   string(vm.Runtime.PowerState),
		MemoryMB:                     vm.Config.Hardware.MemoryMB,
		MemoryReservationMB:          reservationMB(vm),
		MemoryReservationLockedToMax: isTrue(vm.Config.MemoryReservationLockedToMax),
		VGPUs:                        []vgpuJSON{},
		Passthrough:                  l.passthroughState(vm),
		CustomValues:                 customValues(&vm.ManagedEntity),
	}
	for _, d := range vgpuDevices(vm.Config.Hardware.Device) {
		v := vgpuJSON{Key: d.key, Profile: d.profile}
		for _, s := range vm.slots {
			if s.key == d.key {
				pci, at := s.gpu.pciID, s.at
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

func (l *Lab) chaosEndpoint(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		jsonhttp.Write(w, http.StatusOK, l.chaos.Report())
	case http.MethodDelete:
		jsonhttp.Write(w, http.StatusOK, l.chaos.Stop())
	case http.MethodPost:
		var cfg chaos.Config
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			jsonhttp.Error(w, http.StatusBadRequest, "chaos: %v", err)
			return
		}
		if err := cfg.Validate(); err != nil {
			jsonhttp.Error(w, http.StatusBadRequest, "chaos: %v", err)
			return
		}
		l.chaos.Start(cfg)
		l.logf("chaos on: %+v", cfg)
		jsonhttp.Write(w, http.StatusCreated, l.chaos.Report())
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		jsonhttp.Error(w, http.StatusMethodNotAllowed, "/lab/chaos takes GET, POST or DELETE")
	}
}
