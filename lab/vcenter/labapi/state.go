package labapi

import (
	"time"

	"vcsim/vlcm"
)

// State is the lab's ground truth, the answer of GET /lab/state. Tests of the collection read these names: keep
// every field's name and meaning.
type State struct {
	Datacenters []Datacenter           `json:"datacenters"`
	Clusters    []Cluster              `json:"clusters"`
	Hosts       []Host                 `json:"hosts"`
	VMs         []VM                   `json:"vms"`
	Settings    map[string]interface{} `json:"settings"`
	Depots      []vlcm.Depot           `json:"depots"` // vLCM offline depots
	VGPUEvents  []VGPUEvent            `json:"vgpu_events"`
}

// VGPUEvent is one vGPU start or stop on a host, or one host's new image (event host_image, no VM).
type VGPUEvent struct {
	Seq        int    `json:"seq"`
	Event      string `json:"event"` // vgpu_start, vgpu_stop or host_image
	VM         string `json:"vm,omitempty"`
	Host       string `json:"host"`
	GPU        string `json:"gpu,omitempty"`
	Profile    string `json:"profile,omitempty"`
	HostDriver string `json:"host_driver"` // the NVIDIA host driver component version the host runs, "" if none
}

type Datacenter struct {
	Name string `json:"name"`
	Moid string `json:"moid"`
}

// Automation is a cluster's DRS or DPM setting.
type Automation struct {
	Enabled  bool   `json:"enabled"`
	Behavior string `json:"behavior"`
}

type Cluster struct {
	Name       string     `json:"name"`
	Moid       string     `json:"moid"`
	Datacenter string     `json:"datacenter"`
	Hosts      []string   `json:"hosts"`
	DRS        Automation `json:"drs"`
	DPM        Automation `json:"dpm"`
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

type Host struct {
	Name            string     `json:"name"`
	Moid            string     `json:"moid"`
	Cluster         *string    `json:"cluster"`
	Datacenter      string     `json:"datacenter"`
	ConnectionState string     `json:"connection_state"`
	MaintenanceMode bool       `json:"maintenance_mode"`
	BootTime        *time.Time `json:"boot_time"` // runtime.bootTime
	Reboots         int        `json:"reboots"`   // RebootHost_Task reboots since the lab started
	// PassthroughNeedsReboot: passthrough changes wait for a reboot (deviceRebindWithoutRebootSupported false).
	PassthroughNeedsReboot bool              `json:"passthrough_needs_reboot"`
	XorgRestarts           int               `json:"xorg_restarts"`
	GraphicsConfig         GraphicsConfig    `json:"graphics_config"`
	SupportedProfiles      []string          `json:"supported_profiles"`
	GPUs                   []GPU             `json:"gpus"`
	Components             map[string]string `json:"components"` // installed, name to version
	NVLink                 [][]string        `json:"nvlink"`     // GPU pairs joined by NVLink (bridge or NVSwitch), by PCI id
	NVSwitches             []NVSwitch        `json:"nvswitches"`
	CustomValues           map[string]string `json:"custom_values"`
}

type GraphicsConfig struct {
	DefaultGraphicsType string       `json:"default_graphics_type"`
	AssignmentPolicy    string       `json:"assignment_policy"`
	DeviceTypes         []DeviceType `json:"device_types"`
}

type DeviceType struct {
	DeviceID     string `json:"device_id"`
	GraphicsType string `json:"graphics_type"`
	VgpuMode     string `json:"vgpu_mode"` // "" when the entry sets none
}

type GPU struct {
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

// NVSwitch is an NVSwitch of a host.
type NVSwitch struct {
	PciID      string `json:"pci_id"`
	DeviceID   string `json:"device_id"`
	DeviceName string `json:"device_name"`
}

type VM struct {
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
	VGPUs                        []VGPU            `json:"vgpus"`
	Passthrough                  []Passthrough     `json:"passthrough"`
	CustomValues                 map[string]string `json:"custom_values"`
}

type VGPU struct {
	Key         int32   `json:"key"`
	Profile     string  `json:"profile"`
	GPU         *string `json:"gpu"`
	PlacementID *int64  `json:"placement_id"` // GiB offset on a GPU in mixed-size mode
}

// Passthrough is a passthrough device of a VM, with the host GPU it holds while running.
type Passthrough struct {
	Key      int32   `json:"key"`
	Backing  string  `json:"backing"` // static or dynamic
	ID       *string `json:"id"`
	DeviceID *string `json:"device_id"`
	Label    *string `json:"label"`
	GPU      *string `json:"gpu"`
}
