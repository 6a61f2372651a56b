// Package topology reads and validates the lab datacenter the simulator builds (the topology JSON), with the
// limits of what the lab models.
package topology

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/vmware/govmomi/simulator"

	"vcsim/catalog"
	"vcsim/lists"
)

// Topology is the lab datacenter the simulator builds: exactly these objects, nothing else.
type Topology struct {
	Datacenters []*DatacenterSpec `json:"datacenters"`
	VLCM        *VLCMSpec         `json:"vlcm"`
	// NFSExports are the NFS exports the lab serves, "server:/path" (top-level key "nfs_exports", nfs.go).
	NFSExports []string `json:"nfs_exports"`
}

// VLCMSpec tunes the lab's vSphere Lifecycle Manager (top-level key "vlcm").
type VLCMSpec struct {
	// RemediationDelayMS is how long installing an image takes per host (default 300), so progress can be seen.
	RemediationDelayMS *int `json:"remediation_delay_ms"`
}

type DatacenterSpec struct {
	Name     string         `json:"name"`
	Clusters []*ClusterSpec `json:"clusters"`
	Hosts    []*HostSpec    `json:"hosts"`
	VMs      []*VMSpec      `json:"vms"`
}

// AllHosts lists the datacenter's hosts: those of its clusters in order, then the standalone ones.
func (spec *DatacenterSpec) AllHosts() []*HostSpec {
	var hosts []*HostSpec
	for _, c := range spec.Clusters {
		hosts = append(hosts, c.Hosts...)
	}
	return append(hosts, spec.Hosts...)
}

type ClusterSpec struct {
	Name  string          `json:"name"`
	DRS   *AutomationSpec `json:"drs"`
	DPM   *AutomationSpec `json:"dpm"`
	Hosts []*HostSpec     `json:"hosts"`
	// ImageManaged: the cluster is managed with a single vLCM image (default true).
	ImageManaged *bool `json:"image_managed"`
}

type AutomationSpec struct {
	Enabled  bool   `json:"enabled"`
	Behavior string `json:"behavior"`
}

type HostSpec struct {
	Name string     `json:"name"`
	GPUs []*GPUSpec `json:"gpus"`
	// BMC settings belong to the Redfish lab; the vCenter simulator accepts and ignores them.
	BMC json.RawMessage `json:"bmc,omitempty"`
	// Components installed at start, name to version (default: the ESXi base image only).
	Components map[string]string `json:"components"`
	// The host's SSH shell belongs to labctl (lab/hosts); the vCenter simulator accepts and ignores it.
	Shell json.RawMessage `json:"shell,omitempty"`
	// GPU pairs joined by an NVLink bridge, by their index on the host (the order of "gpus", boards expanded).
	NVLink [][]int `json:"nvlink,omitempty"`
	// NVSwitches on the host's GPU baseboard (HGX: 4 on H100, 6 on A100): PCI devices of their own, and then an
	// nvlink entry may join more than two GPUs (all those on the switch fabric).
	NVSwitches int `json:"nvswitches,omitempty"`
	// PassthroughNeedsReboot: the host cannot rebind devices for passthrough without a reboot (an ESXi before 7.0
	// Update 2, or a device that needs it), so a passthrough change waits for RebootHost_Task.
	PassthroughNeedsReboot bool `json:"passthrough_needs_reboot,omitempty"`
	// RebootSeconds is how long a reboot keeps the host away from vCenter (default 3).
	RebootSeconds *float64 `json:"reboot_seconds,omitempty"`
	// NICs is the number of physical NICs, vmnic0 on (2 to 8, default 2).
	NICs int `json:"nics,omitempty"`
	// Tags are vSphere tags attached to the host at start, "category:tag" (package tagging).
	Tags []string `json:"tags,omitempty"`

	cluster *ClusterSpec
}

type GPUSpec struct {
	Model string `json:"model"`
	Count int    `json:"count"`
	// ECC mode of these GPUs as the host's nvidia-smi reports it: "enabled" (the default) or "disabled".
	ECC string `json:"ecc,omitempty"`
}

type VMSpec struct {
	Name       string `json:"name"`
	Host       string `json:"host"`
	Cluster    string `json:"cluster"`
	MemoryMB   int    `json:"memory_mb"`
	CPUs       int    `json:"cpus"`
	PowerState string `json:"power_state"`
	GuestID    string `json:"guest_id"`
	Firmware   string `json:"firmware"` // bios (vSphere's default for a new VM) or efi
	// Tags are vSphere tags attached to the VM at start, "category:tag" (package tagging).
	Tags []string `json:"tags,omitempty"`
	// GuestIP is the address of the VM's guest OS, which VMware Tools reports (guest.ipAddress, guest.net) while
	// the VM runs; none by default (package guestnet).
	GuestIP string `json:"guest_ip,omitempty"`
}

const (
	defaultVMMemoryMB = 4096
	defaultVMCPUs     = 2
	defaultGuestID    = "otherLinux64Guest"
)

// The limits of what the lab models, which the rest of the lab builds to.
const (
	ECCEnabled, ECCDisabled = "enabled", "disabled" // a GPU's ECC mode as nvidia-smi words it
	MaxNVSwitches           = 6
	MinNICs, MaxNICs        = 2, 8
	DefaultRebootDuration   = 3 * time.Second
)

// GPUBuses are the PCI buses of a host's GPUs, in the order the GPUs take them: a host has at most that many GPUs.
var GPUBuses = []uint8{0x3b, 0x5e, 0x86, 0xaf, 0xd8, 0x17, 0x31, 0x4b, 0x65, 0x81, 0x99, 0xb1, 0xc9, 0xe3}

var (
	DRSBehaviors = []string{"fullyAutomated", "partiallyAutomated", "manual"}
	DPMBehaviors = []string{"automated", "manual"}
	powerStates  = []string{"poweredOn", "poweredOff"}
)

// Load reads a topology file. Inside "datacenters" every key must be known (a typo fails loudly); other
// top-level keys belong to other lab services and are ignored.
func Load(path string, models *catalog.Catalog) (*Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("topology %s: %v", path, err)
	}
	raw, ok := top["datacenters"]
	if !ok {
		return nil, fmt.Errorf(`topology %s: no "datacenters" list`, path)
	}
	var t Topology
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t.Datacenters); err != nil {
		return nil, fmt.Errorf("topology %s: datacenters: %v", path, err)
	}
	if raw, ok := top["vlcm"]; ok {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t.VLCM); err != nil {
			return nil, fmt.Errorf("topology %s: vlcm: %v", path, err)
		}
	}
	if raw, ok := top["nfs_exports"]; ok {
		if err := json.Unmarshal(raw, &t.NFSExports); err != nil {
			return nil, fmt.Errorf("topology %s: nfs_exports: %v", path, err)
		}
	}
	if err := t.Validate(models); err != nil {
		return nil, fmt.Errorf("topology %s: %v", path, err)
	}
	return &t, nil
}

// Validate checks the topology against the catalog, fills defaults and resolves every VM to a host.
func (t *Topology) Validate(models *catalog.Catalog) error {
	v := &validator{catalog: models, names: map[string]map[string]string{}}
	if len(t.Datacenters) == 0 {
		v.fail("no datacenters")
	}
	for _, dc := range t.Datacenters {
		if dc == nil {
			v.fail("a datacenter entry is empty")
			continue
		}
		v.datacenter(dc)
	}
	if t.VLCM != nil && t.VLCM.RemediationDelayMS != nil && (*t.VLCM.RemediationDelayMS < 0 ||
		*t.VLCM.RemediationDelayMS > 60000) {
		v.fail("vlcm: remediation_delay_ms must be between 0 and 60000, got %d", *t.VLCM.RemediationDelayMS)
	}
	for _, export := range t.NFSExports {
		if server, path, ok := strings.Cut(export, ":"); !ok || server == "" || !strings.HasPrefix(path, "/") {
			v.fail("nfs_exports: %q is not server:/path", export)
		}
	}
	if len(v.problems) > 0 {
		return fmt.Errorf("%s", strings.Join(v.problems, "; "))
	}
	return nil
}

type validator struct {
	catalog  *catalog.Catalog
	names    map[string]map[string]string // kind -> name -> where it was first seen
	problems []string
}

func (v *validator) fail(format string, args ...interface{}) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

func (v *validator) unique(kind, name, where string) {
	if name == "" {
		v.fail("%s: a %s has no name", where, kind)
		return
	}
	seen := v.names[kind]
	if seen == nil {
		seen = map[string]string{}
		v.names[kind] = seen
	}
	if first, dup := seen[name]; dup {
		v.fail("duplicate %s name %q (in %s and %s)", kind, name, first, where)
		return
	}
	seen[name] = where
}

func (v *validator) datacenter(dc *DatacenterSpec) {
	where := fmt.Sprintf("datacenter %q", dc.Name)
	v.unique("datacenter", dc.Name, "the topology")
	hosts := map[string]*HostSpec{}
	clusters := map[string]*ClusterSpec{}
	for _, c := range dc.Clusters {
		if c == nil {
			v.fail("%s: a cluster entry is empty", where)
			continue
		}
		v.unique("cluster", c.Name, where)
		clusters[c.Name] = c
		v.automation(fmt.Sprintf("cluster %q drs", c.Name), &c.DRS, "fullyAutomated", DRSBehaviors)
		v.automation(fmt.Sprintf("cluster %q dpm", c.Name), &c.DPM, "manual", DPMBehaviors)
		for _, h := range c.Hosts {
			v.host(h, c, fmt.Sprintf("cluster %q", c.Name), hosts)
		}
	}
	for _, h := range dc.Hosts {
		v.host(h, nil, where, hosts)
	}
	next := map[string]int{} // round-robin position per cluster
	for _, vm := range dc.VMs {
		if vm == nil {
			v.fail("%s: a VM entry is empty", where)
			continue
		}
		v.vm(vm, where, hosts, clusters, next)
	}
}

func (v *validator) automation(where string, spec **AutomationSpec, behavior string, allowed []string) {
	if *spec == nil {
		*spec = &AutomationSpec{Enabled: false, Behavior: behavior}
		return
	}
	if (*spec).Behavior == "" {
		(*spec).Behavior = behavior
	}
	if !lists.Contains(allowed, (*spec).Behavior) {
		v.fail("%s: behavior %q is not one of %s", where, (*spec).Behavior, strings.Join(allowed, ", "))
	}
}

func (v *validator) host(h *HostSpec, c *ClusterSpec, where string, hosts map[string]*HostSpec) {
	if h == nil {
		v.fail("%s: a host entry is empty", where)
		return
	}
	v.unique("host", h.Name, where)
	v.tags(fmt.Sprintf("host %q", h.Name), h.Tags)
	h.cluster = c
	hosts[h.Name] = h
	for name, version := range h.Components {
		if name == "" || version == "" {
			v.fail("host %q: components need a name and a version, got %q: %q", h.Name, name, version)
		}
	}
	total := 0
	for _, g := range h.GPUs {
		if g == nil {
			v.fail("host %q: a GPU entry is empty", h.Name)
			continue
		}
		model := v.catalog.GPUs[g.Model]
		if model == nil {
			v.fail("host %q: unknown GPU model %q (the catalog has %s)", h.Name, g.Model,
				strings.Join(v.catalog.ModelIDs(), ", "))
			continue
		}
		if g.Count < 1 {
			v.fail("host %q: GPU model %s: count must be at least 1, got %d", h.Name, g.Model, g.Count)
			continue
		}
		if g.ECC != "" && g.ECC != ECCEnabled && g.ECC != ECCDisabled {
			v.fail("host %q: GPU model %s: ecc must be %s or %s, got %q", h.Name, g.Model, ECCEnabled, ECCDisabled, g.ECC)
		}
		total += g.Count * model.GPUsPerBoard
	}
	if total > len(GPUBuses) {
		v.fail("host %q: %d GPUs, the lab models at most %d per host", h.Name, total, len(GPUBuses))
	}
	if h.NVSwitches < 0 || h.NVSwitches > MaxNVSwitches {
		v.fail("host %q: nvswitches must be between 0 and %d, got %d", h.Name, MaxNVSwitches, h.NVSwitches)
	}
	v.nvlink(h, total)
	if h.RebootSeconds != nil && (*h.RebootSeconds < 0 || *h.RebootSeconds > 600) {
		v.fail("host %q: reboot_seconds must be between 0 and 600, got %v", h.Name, *h.RebootSeconds)
	}
	if h.NICs != 0 && (h.NICs < MinNICs || h.NICs > MaxNICs) {
		v.fail("host %q: nics must be between %d and %d, got %d", h.Name, MinNICs, MaxNICs, h.NICs)
	}
}

// RebootDuration is how long a reboot of the host takes in the lab.
func (h *HostSpec) RebootDuration() time.Duration {
	if h.RebootSeconds == nil {
		return DefaultRebootDuration
	}
	return time.Duration(*h.RebootSeconds * float64(time.Second))
}

// tags checks that every tag of an object is "category:tag" with both names given.
func (v *validator) tags(label string, tags []string) {
	for _, tag := range tags {
		if category, name, ok := strings.Cut(tag, ":"); !ok || strings.TrimSpace(category) == "" ||
			strings.TrimSpace(name) == "" {
			v.fail("%s: tag %q is not category:tag", label, tag)
		}
	}
}

func (v *validator) vm(vm *VMSpec, where string, hosts map[string]*HostSpec, clusters map[string]*ClusterSpec,
	next map[string]int) {
	v.unique("VM", vm.Name, where)
	label := fmt.Sprintf("VM %q", vm.Name)
	v.tags(label, vm.Tags)
	switch {
	case vm.Host != "":
		h := hosts[vm.Host]
		if h == nil {
			v.fail("%s: unknown host %q (not in %s)", label, vm.Host, where)
			return
		}
		if vm.Cluster != "" && (h.cluster == nil || h.cluster.Name != vm.Cluster) {
			v.fail("%s: host %q is not in cluster %q", label, vm.Host, vm.Cluster)
		}
	case vm.Cluster != "":
		c := clusters[vm.Cluster]
		if c == nil {
			v.fail("%s: unknown cluster %q (not in %s)", label, vm.Cluster, where)
			return
		}
		if len(c.Hosts) == 0 {
			v.fail("%s: cluster %q has no hosts", label, vm.Cluster)
			return
		}
		vm.Host = c.Hosts[next[c.Name]%len(c.Hosts)].Name
		next[c.Name]++
	default:
		v.fail("%s: names neither a host nor a cluster", label)
	}
	if vm.MemoryMB == 0 {
		vm.MemoryMB = defaultVMMemoryMB
	}
	if vm.CPUs == 0 {
		vm.CPUs = defaultVMCPUs
	}
	if vm.MemoryMB < 4 || vm.CPUs < 1 {
		v.fail("%s: memory_mb %d and cpus %d must be positive", label, vm.MemoryMB, vm.CPUs)
	}
	if vm.PowerState == "" {
		vm.PowerState = "poweredOff"
	}
	if !lists.Contains(powerStates, vm.PowerState) {
		v.fail("%s: power_state %q is not one of %s", label, vm.PowerState, strings.Join(powerStates, ", "))
	}
	if vm.GuestID == "" {
		vm.GuestID = defaultGuestID
	}
	if vm.Firmware != "" && vm.Firmware != "bios" && vm.Firmware != "efi" {
		v.fail("%s: firmware %q is not bios or efi", label, vm.Firmware)
	}
	if vm.GuestIP != "" && net.ParseIP(vm.GuestIP) == nil {
		v.fail("%s: guest_ip %q is not an IP address", label, vm.GuestIP)
	}
	if !KnownGuestID(vm.GuestID) {
		v.fail("%s: guest_id %q is not a vSphere guest OS identifier (e.g. ubuntu64Guest, rhel9_64Guest)",
			label, vm.GuestID)
	}
}

// KnownGuestID reports whether id is a vSphere guest OS identifier.
func KnownGuestID(id string) bool {
	for _, known := range simulator.GuestID {
		if string(known) == id {
			return true
		}
	}
	return false
}

func (v *validator) nvlink(h *HostSpec, gpus int) {
	used := map[int]bool{}
	for _, pair := range h.NVLink {
		if !distinct(pair) || len(pair) < 2 || (len(pair) > 2 && h.NVSwitches == 0) {
			v.fail("host %q: nvlink entries are pairs of two different GPU indexes (or, on a host with nvswitches, "+
				"the GPUs on the switch fabric), got %v", h.Name, pair)
			continue
		}
		for _, i := range pair {
			if i < 0 || i >= gpus {
				v.fail("host %q: nvlink: GPU index %d out of range (the host has %d GPUs, 0 to %d)", h.Name, i,
					gpus, gpus-1)
			} else if used[i] {
				v.fail("host %q: nvlink: GPU %d is in two NVLink sets", h.Name, i)
			}
			used[i] = true
		}
	}
}

func distinct(indexes []int) bool {
	seen := map[int]bool{}
	for _, i := range indexes {
		if seen[i] {
			return false
		}
		seen[i] = true
	}
	return true
}
