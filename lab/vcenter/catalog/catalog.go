// Package catalog is the GPU model catalog the lab exports from the collection's Python catalog: the GPU models,
// their PCI identities and the vGPU profiles each offers.
package catalog

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"vcsim/lists"
)

// Catalog is the GPU model catalog the lab exports from the collection's Python catalog.
type Catalog struct {
	GPUs map[string]*GPUModel `json:"gpus"`

	profiles map[string]*Profile
}

// GPUModel is one physical GPU model and the vGPU profiles it offers.
type GPUModel struct {
	ID               string     `json:"-"`
	DeviceName       string     `json:"device_name"`
	PCIDeviceID      string     `json:"pci_device_id"`
	FramebufferMiB   int64      `json:"framebuffer_mib"`
	Architecture     string     `json:"architecture"`
	MIGCapable       bool       `json:"mig_capable"`
	MixedSizeCapable bool       `json:"mixed_size_capable"`
	GPUsPerBoard     int        `json:"gpus_per_board"`
	Profiles         []*Profile `json:"profiles"`

	DeviceID uint16 `json:"-"` // PCIDeviceID as a number, set by Load
}

// Profile is a vGPU type as vSphere names it, e.g. grid_p40-8q.
type Profile struct {
	Name           string `json:"name"`
	FramebufferMiB int64  `json:"framebuffer_mib"`
	Series         string `json:"series"`
	MaxPerGPU      int    `json:"max_per_gpu"`
	Sharing        string `json:"sharing"`
	ProfileClass   string `json:"profile_class"`
	// Placements are the GiB offsets where a vGPU of this type may start on a GPU in mixed-size mode (NVIDIA's
	// placement IDs); none means the type is not offered in mixed-size mode.
	Placements []int64 `json:"mixed_size_placements"`

	model *GPUModel
}

var (
	sharingModes   = []string{"timeSliced", "mig"}
	profileClasses = []string{"compute", "quadro"}
)

// Load reads and validates a catalog file. Keys the simulator does not use are ignored, so the exporter can
// carry more facts than the lab needs.
func Load(path string) (*Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Catalog
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("catalog %s: %v", path, err)
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("catalog %s: %v", path, err)
	}
	return &c, nil
}

func (c *Catalog) validate() error {
	if len(c.GPUs) == 0 {
		return fmt.Errorf(`no GPU models (expected {"gpus": {"P40": {...}}})`)
	}
	c.profiles = make(map[string]*Profile)
	var problems []string
	for _, id := range c.ModelIDs() {
		m := c.GPUs[id]
		if m == nil {
			problems = append(problems, fmt.Sprintf("GPU model %s: empty entry", id))
			continue
		}
		m.ID = id
		problems = append(problems, c.validateModel(m)...)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

func (c *Catalog) validateModel(m *GPUModel) []string {
	var problems []string
	bad := func(format string, args ...interface{}) {
		problems = append(problems, fmt.Sprintf("GPU model %s: ", m.ID)+fmt.Sprintf(format, args...))
	}
	if m.DeviceName == "" {
		bad("device_name is empty")
	}
	id, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(m.PCIDeviceID), "0x"), 16, 16)
	if err != nil || !strings.HasPrefix(strings.ToLower(m.PCIDeviceID), "0x") {
		bad("pci_device_id %q is not a hexadecimal PCI device id such as 0x1b38", m.PCIDeviceID)
	}
	m.DeviceID = uint16(id)
	if m.FramebufferMiB <= 0 {
		bad("framebuffer_mib must be positive, got %d", m.FramebufferMiB)
	}
	if m.GPUsPerBoard == 0 {
		m.GPUsPerBoard = 1
	}
	if m.GPUsPerBoard < 0 {
		bad("gpus_per_board must be positive, got %d", m.GPUsPerBoard)
	}
	if len(m.Profiles) == 0 {
		bad("no vGPU profiles")
	}
	for _, p := range m.Profiles {
		if p == nil || p.Name == "" {
			bad("a profile has no name")
			continue
		}
		p.model = m
		if other, ok := c.profiles[p.Name]; ok {
			bad("profile %s is also listed for %s", p.Name, other.model.ID)
		}
		c.profiles[p.Name] = p
		if p.FramebufferMiB <= 0 || p.FramebufferMiB > m.FramebufferMiB {
			bad("profile %s: framebuffer_mib %d is not within 1..%d", p.Name, p.FramebufferMiB, m.FramebufferMiB)
		}
		if p.MaxPerGPU < 1 {
			bad("profile %s: max_per_gpu must be at least 1, got %d", p.Name, p.MaxPerGPU)
		}
		if !lists.Contains(sharingModes, p.Sharing) {
			bad("profile %s: sharing %q is not one of %s", p.Name, p.Sharing, strings.Join(sharingModes, ", "))
		}
		for _, at := range p.Placements {
			if p.Sharing != "timeSliced" || at < 0 || at*1024+p.FramebufferMiB > m.FramebufferMiB {
				bad("profile %s: mixed-size placement %d GiB does not fit a time-sliced %d MiB vGPU into %d MiB",
					p.Name, at, p.FramebufferMiB, m.FramebufferMiB)
			}
		}
		if !lists.Contains(profileClasses, p.ProfileClass) {
			bad("profile %s: profile_class %q is not one of %s", p.Name, p.ProfileClass,
				strings.Join(profileClasses, ", "))
		}
	}
	return problems
}

// ModelIDs returns the catalog's GPU model ids in sorted order.
func (c *Catalog) ModelIDs() []string {
	ids := make([]string, 0, len(c.GPUs))
	for id := range c.GPUs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Profile returns a vGPU profile by its vSphere name, or nil.
func (c *Catalog) Profile(name string) *Profile {
	return c.profiles[name]
}

// Supports reports whether the GPU model offers the profile.
func (m *GPUModel) Supports(profile string) *Profile {
	for _, p := range m.Profiles {
		if p.Name == profile {
			return p
		}
	}
	return nil
}
