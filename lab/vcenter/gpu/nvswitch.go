package gpu

import "fmt"

// NVSwitches of an HGX baseboard: PCI bridges of class 0x0680 (other bridge), vendor NVIDIA, one device per switch
// chip (HGX H100 8-GPU: four third-generation NVSwitches; HGX A100: six), named as the PCI ID database names them.
// The bus numbers are the lab's choice. They are not passthrough-capable in the lab (vmkernel keeps bridges), and
// NVIDIA does not support GPU passthrough on NVSwitch systems under vSphere (NVIDIA AI Enterprise, "NVIDIA NVSwitch
// Limitations"): there the board's GPUs serve full-size time-sliced C-series vGPUs, with the fabric manager on
// the host.

// PCIClassOtherBridge is the PCI class of an NVSwitch.
const PCIClassOtherBridge = 0x0680

var nvswitchBuses = []uint8{0x05, 0x06, 0x07, 0x08, 0x09, 0x0a}

// nvswitchModels are the switch chips per GPU architecture: device id and name.
var nvswitchModels = map[string]struct {
	deviceID uint16
	name     string
}{
	"hopper": {0x22a3, "GH100 [H100 NVSwitch]"},
	"ampere": {0x1af1, "GA100 [A100 NVSwitch]"},
}

// NVSwitch is one NVSwitch chip of a host: a PCI device.
type NVSwitch struct {
	PciID    string
	Bus      uint8
	DeviceID uint16
	Name     string
}

// AddNVSwitches gives the host count NVSwitches of the generation of its GPUs (hopper when it has none known).
func (h *Host) AddNVSwitches(count int) {
	model := nvswitchModels["hopper"]
	for _, g := range h.GPUs {
		if m, ok := nvswitchModels[g.Model.Architecture]; ok {
			model = m
			break
		}
	}
	for i := 0; i < count; i++ {
		bus := nvswitchBuses[i]
		h.NVSwitches = append(h.NVSwitches, NVSwitch{PciID: fmt.Sprintf("0000:%02x:00.0", bus), Bus: bus,
			DeviceID: model.deviceID, Name: model.name})
	}
}
