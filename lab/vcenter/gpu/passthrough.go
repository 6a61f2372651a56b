package gpu

import (
	"fmt"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vimfault"
)

// Whole-GPU DirectPath I/O. What vCenter and ESXi check, and where it is documented:
//   - A device is added to or removed from a powered-off VM only (vSphere docs, "Add a PCI Device to a Virtual
//     Machine": prerequisite "Power off the virtual machine"; DirectPath I/O VMs cannot hot add or remove devices).
//   - Power-on needs the whole memory reserved (vSphere docs: adding a PCI device reserves the VM's full memory).
//   - BARs above 16 GB in total need EFI firmware, pciPassthru.use64bitMMIO = TRUE and pciPassthru.64bitMMIOSizeGB
//     large enough, else vmx fails with "Module 'DevicePowerOn' power on failed." (Dell KB 000199172, VMware KB
//     2142307 as cited there). The lab's BAR1 size is the framebuffer rounded up to a power of two (P40 24 GB -> 32,
//     A100 40 GB -> 64): that matches NVIDIA's published BAR1 sizes for these boards, not confirmed for every model.
//   - A device serves one running VM; a static backing names the device of one host; DirectPath VMs do not migrate
//     while running (vSphere docs, DirectPath I/O: "DRS ... cannot migrate across hosts").
// Passthrough activation: HostPciPassthruConfig.applyNow unset takes effect at once where the device can be rebound
// without a reboot (vSphere API 7.0.2+, HostCapability.deviceRebindWithoutRebootSupported); the lab's hosts can, as
// ESXi 8 does for NVIDIA GPUs, unless the topology marks them passthrough_needs_reboot (an older ESXi, or a device
// that needs it): there, and with applyNow false, passthruActive waits for the host's reboot (the lab's hostreboot.go).

// MMIOOption and MMIOSizeOption are the VM's advanced settings of its 64-bit MMIO window.
const (
	largeBARLimitGB = 16
	MMIOOption      = "pciPassthru.use64bitMMIO"
	MMIOSizeOption  = "pciPassthru.64bitMMIOSizeGB"
	devicePowerOn   = "Module 'DevicePowerOn' power on failed."
)

// Passthrough is a whole-device VirtualPCIPassthrough of a VM: a static backing names the device (id), a
// dynamic one a vendor/device id pair and an optional hardware label.
type Passthrough struct {
	Key      int32
	Label    string
	ID       string
	VendorID int32
	DeviceID int32
	HWLabel  string
}

// PassthroughOf is a VM device as a whole-device passthrough, if it is one.
func PassthroughOf(d types.BaseVirtualDevice) (Passthrough, bool) {
	var p Passthrough
	switch b := pciBacking(d).(type) {
	case *types.VirtualPCIPassthroughDeviceBackingInfo:
		p.ID = b.Id
	case *types.VirtualPCIPassthroughDynamicBackingInfo:
		if len(b.AllowedDevice) > 0 {
			p.VendorID, p.DeviceID = b.AllowedDevice[0].VendorId, b.AllowedDevice[0].DeviceId
		}
		p.HWLabel = b.CustomLabel
	default:
		return Passthrough{}, false
	}
	v := d.GetVirtualDevice()
	p.Key, p.Label = v.Key, deviceLabel(v)
	return p, true
}

// PassthroughDevices lists a VM's whole-device passthrough devices.
func PassthroughDevices(devices []types.BaseVirtualDevice) []Passthrough {
	var list []Passthrough
	for _, d := range devices {
		if p, ok := PassthroughOf(d); ok {
			list = append(list, p)
		}
	}
	return list
}

// PassthruActive says whether the GPU is active for passthrough on its host (HostPciPassthruInfo.passthruActive).
func (g *Device) PassthruActive() bool {
	e := g.Host.passthruInfo(g.PciID)
	return e != nil && e.PassthruActive
}

// CheckPassthruSwitch is vSphere's rule for UpdatePassthruConfig on a GPU: one running vGPUs (Shared Direct) cannot
// switch to passthrough, and one a running VM holds cannot leave it.
func (h *Host) CheckPassthruSwitch(id string, enable bool) string {
	g := h.GPU(id)
	if g == nil {
		return ""
	}
	if enable && len(g.VGPUs) > 0 {
		names := make([]string, 0, len(g.VGPUs))
		for _, ref := range g.VMs() {
			names = append(names, h.vmName(ref))
		}
		return fmt.Sprintf("is in use by vGPU virtual machines (%s); power them off first", strings.Join(names, ", "))
	}
	if !enable && g.HeldBy != nil {
		return fmt.Sprintf("is in use by virtual machine %s; power it off first", h.vmName(*g.HeldBy))
	}
	return ""
}

// CheckPassthroughChange refuses passthrough devices added or removed while the VM is not powered off, and static
// backings that do not name a passthrough-enabled device of the VM's host.
func CheckPassthroughChange(vm *mo.VirtualMachine, host *Host, spec *types.VirtualMachineConfigSpec) *vimfault.Fault {
	devices := object.VirtualDeviceList(vm.Config.Hardware.Device)
	for i, change := range spec.DeviceChange {
		c := change.GetVirtualDeviceConfigSpec()
		p, ok := PassthroughOf(c.Device)
		if !ok && c.Operation != types.VirtualDeviceConfigSpecOperationAdd {
			if existing := devices.FindByKey(c.Device.GetVirtualDevice().Key); existing != nil {
				_, ok = PassthroughOf(existing)
			}
		}
		if !ok {
			continue
		}
		if state := vm.Runtime.PowerState; state != types.VirtualMachinePowerStatePoweredOff {
			return InvalidPowerState(types.VirtualMachinePowerStatePoweredOff, state)
		}
		if c.Operation == types.VirtualDeviceConfigSpecOperationAdd && p.ID == "" && p.DeviceID == 0 {
			return invalidPassthroughSpec(i, "the dynamic PCI passthrough backing names no allowed device")
		}
		if c.Operation == types.VirtualDeviceConfigSpecOperationAdd && p.ID != "" {
			if e := host.passthruInfo(p.ID); e == nil || !e.PassthruEnabled {
				return invalidPassthroughSpec(i, "PCI device %s of host %s is not available for passthrough "+
					"(passthrough-enabled GPUs: %s)", p.ID, host.Name, host.passthruGPUs())
			}
		}
	}
	return nil
}

func invalidPassthroughSpec(index int, format string, args ...interface{}) *vimfault.Fault {
	f := invalidDeviceSpec(index, format, args...)
	f.Fault.(*types.InvalidDeviceSpec).Property = "spec.deviceChange.device.backing"
	return f
}

func (h *Host) passthruGPUs() string {
	var ids []string
	for _, g := range h.GPUs {
		if e := h.passthruInfo(g.PciID); e != nil && e.PassthruEnabled {
			ids = append(ids, g.PciID)
		}
	}
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// barGB is the GPU's BAR1 size in GB: its framebuffer rounded up to a power of two.
func (g *Device) barGB() int64 {
	need := (g.Model.FramebufferMiB + 1023) / 1024
	size := int64(1)
	for size < need {
		size *= 2
	}
	return size
}

// PlanPassthrough chooses the host GPU for each passthrough device of a VM that powers on, or says why it cannot.
func PlanPassthrough(vm *mo.VirtualMachine, h *Host) (map[int32]*Device, *vimfault.Fault) {
	devices := PassthroughDevices(vm.Config.Hardware.Device)
	if len(devices) == 0 {
		return nil, nil
	}
	if fault := fullReservation(vm); fault != nil {
		return nil, fault
	}
	chosen := map[int32]*Device{}
	taken := map[*Device]bool{}
	for _, d := range devices {
		g, why := h.freePassthroughGPU(d, taken)
		if g == nil {
			return nil, genericVMConfigFault(fmt.Sprintf("%s PCI passthrough %s of virtual machine %s: %s",
				devicePowerOn, d.Label, vm.Name, why))
		}
		chosen[d.Key], taken[g] = g, true
	}
	var barGB int64
	for _, g := range chosen {
		barGB += g.barGB()
	}
	if barGB > largeBARLimitGB {
		if f := checkLargeBARs(vm, barGB); f != nil {
			return nil, f
		}
	}
	return chosen, nil
}

func (h *Host) freePassthroughGPU(d Passthrough, taken map[*Device]bool) (*Device, string) {
	if d.ID != "" {
		g := h.GPU(d.ID)
		switch {
		case g == nil:
			return nil, fmt.Sprintf("device %s is not a GPU of host %s (GPUs: %s)", d.ID, h.Name, h.PCIIDs())
		case !g.PassthruActive():
			return nil, fmt.Sprintf("device %s of host %s is not active for passthrough", d.ID, h.Name)
		case g.HeldBy != nil || taken[g]:
			return nil, fmt.Sprintf("device %s of host %s is in use by another virtual machine", d.ID, h.Name)
		}
		return g, ""
	}
	for _, g := range h.GPUs {
		if int32(NVIDIAVendorID) == d.VendorID && int32(g.Model.DeviceID) == d.DeviceID && g.PassthruActive() &&
			g.HeldBy == nil && !taken[g] && (d.HWLabel == "" || g.hardwareLabel() == d.HWLabel) {
			return g, ""
		}
	}
	return nil, fmt.Sprintf("no free passthrough device with vendor id 0x%04x and device id 0x%04x on host %s",
		uint16(d.VendorID), uint16(d.DeviceID), h.Name)
}

// hardwareLabel is the label ESXi shows for the device; the govmomi the lab builds with predates
// HostPciPassthruInfo.hardwareLabel (vSphere API 7.0.2), so the lab's GPUs carry none and a dynamic backing with a
// custom label matches no lab GPU.
func (g *Device) hardwareLabel() string {
	return ""
}

// checkLargeBARs is what vmx needs to map BARs above 16 GB: EFI firmware and a 64-bit MMIO window that holds them.
func checkLargeBARs(vm *mo.VirtualMachine, barGB int64) *vimfault.Fault {
	if vm.Config.Firmware != string(types.GuestOsDescriptorFirmwareTypeEfi) {
		return genericVMConfigFault(fmt.Sprintf("%s Virtual machine %s maps %d GB of PCI BARs and boots with %s "+
			"firmware; BARs above %d GB need EFI firmware.", devicePowerOn, vm.Name, barGB, vm.Config.Firmware,
			largeBARLimitGB))
	}
	if !strings.EqualFold(extraConfig(vm, MMIOOption), "true") {
		return genericVMConfigFault(fmt.Sprintf("%s Virtual machine %s maps %d GB of PCI BARs; %s is not TRUE.",
			devicePowerOn, vm.Name, barGB, MMIOOption))
	}
	var size int64
	_, _ = fmt.Sscan(extraConfig(vm, MMIOSizeOption), &size)
	if size < barGB {
		return genericVMConfigFault(fmt.Sprintf("%s PCIPassthru: virtual machine %s needs %d GB of 64-bit MMIO "+
			"space, %s is %d.", devicePowerOn, vm.Name, barGB, MMIOSizeOption, size))
	}
	return nil
}

// extraConfig is the value of an advanced setting of the VM; the last entry wins, as vmx reads its file.
func extraConfig(vm *mo.VirtualMachine, key string) string {
	value := ""
	for _, o := range vm.Config.ExtraConfig {
		if v := o.GetOptionValue(); v.Key == key {
			value = fmt.Sprint(v.Value)
		}
	}
	return value
}

// PassthroughMigration refuses moving a running VM that holds passthrough devices to another host.
func PassthroughMigration(vm *mo.VirtualMachine) *vimfault.Fault {
	devices := PassthroughDevices(vm.Config.Hardware.Device)
	if vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn || len(devices) == 0 {
		return nil
	}
	d := devices[0]
	reason := "DirectPath I/O devices cannot migrate with a running virtual machine"
	return &vimfault.Fault{
		Fault: &types.DisallowedMigrationDeviceAttached{Fault: types.LocalizedMethodFault{
			Fault:            &types.DeviceNotSupported{Device: d.Label, Reason: reason},
			LocalizedMessage: reason,
		}},
		Msg: fmt.Sprintf("Migration of virtual machine %s is not allowed with its attached device %s "+
			"(PCI passthrough): %s.", vm.Name, d.Label, reason),
	}
}
