package main

import (
	"fmt"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labapi"
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
// that needs it): there, and with applyNow false, passthruActive waits for the host's reboot (hostreboot.go).

const (
	largeBARLimitGB = 16
	mmioOption      = "pciPassthru.use64bitMMIO"
	mmioSizeOption  = "pciPassthru.64bitMMIOSizeGB"
	devicePowerOn   = "Module 'DevicePowerOn' power on failed."
)

// passthroughDevice is a whole-device VirtualPCIPassthrough of a VM: a static backing names the device (id), a
// dynamic one a vendor/device id pair and an optional hardware label.
type passthroughDevice struct {
	key      int32
	label    string
	id       string
	vendorID int32
	deviceID int32
	hwLabel  string
}

func passthroughOf(d types.BaseVirtualDevice) (passthroughDevice, bool) {
	pci, ok := d.(*types.VirtualPCIPassthrough)
	if !ok {
		return passthroughDevice{}, false
	}
	v := d.GetVirtualDevice()
	p := passthroughDevice{key: v.Key, label: deviceLabel(v)}
	switch b := pci.Backing.(type) {
	case *types.VirtualPCIPassthroughDeviceBackingInfo:
		p.id = b.Id
	case *types.VirtualPCIPassthroughDynamicBackingInfo:
		if len(b.AllowedDevice) > 0 {
			p.vendorID, p.deviceID = b.AllowedDevice[0].VendorId, b.AllowedDevice[0].DeviceId
		}
		p.hwLabel = b.CustomLabel
	default:
		return passthroughDevice{}, false
	}
	return p, true
}

func passthroughDevices(devices []types.BaseVirtualDevice) []passthroughDevice {
	var list []passthroughDevice
	for _, d := range devices {
		if p, ok := passthroughOf(d); ok {
			list = append(list, p)
		}
	}
	return list
}

// passthruSystem is the host's HostPciPassthruSystem, or nil.
func (h *hostState) passthruSystem() *pciPassthruSystem {
	obj := h.lab.hostObject(h.ref)
	if obj == nil || obj.ConfigManager.PciPassthruSystem == nil {
		return nil
	}
	s, _ := simulator.Map.Get(*obj.ConfigManager.PciPassthruSystem).(*pciPassthruSystem)
	return s
}

// passthruInfo is the host's HostPciPassthruInfo entry for a device, or nil.
func (h *hostState) passthruInfo(id string) *types.HostPciPassthruInfo {
	s := h.passthruSystem()
	if s == nil {
		return nil
	}
	for _, info := range s.PciPassthruInfo {
		if e := info.GetHostPciPassthruInfo(); e.Id == id {
			return e
		}
	}
	return nil
}

func (g *gpuDevice) passthruActive() bool {
	e := g.host.passthruInfo(g.pciID)
	return e != nil && e.PassthruActive
}

// checkPassthruSwitch is vSphere's rule for UpdatePassthruConfig on a GPU: one running vGPUs (Shared Direct) cannot
// switch to passthrough, and one a running VM holds cannot leave it.
func (h *hostState) checkPassthruSwitch(id string, enable bool) string {
	g := h.gpu(id)
	if g == nil {
		return ""
	}
	if enable && len(g.vgpus) > 0 {
		names := make([]string, 0, len(g.vgpus))
		for _, ref := range g.vms() {
			names = append(names, name(ref))
		}
		return fmt.Sprintf("is in use by vGPU virtual machines (%s); power them off first", strings.Join(names, ", "))
	}
	if !enable && g.heldBy != nil {
		return fmt.Sprintf("is in use by virtual machine %s; power it off first", name(*g.heldBy))
	}
	return ""
}

// checkPassthroughChange refuses passthrough devices added or removed while the VM is not powered off, and static
// backings that do not name a passthrough-enabled device of the VM's host.
func (l *Lab) checkPassthroughChange(vm *labVM, spec *types.VirtualMachineConfigSpec) *vimfault.Fault {
	devices := object.VirtualDeviceList(vm.Config.Hardware.Device)
	host := l.host(*vm.Runtime.Host)
	for i, change := range spec.DeviceChange {
		c := change.GetVirtualDeviceConfigSpec()
		p, ok := passthroughOf(c.Device)
		if !ok && c.Operation != types.VirtualDeviceConfigSpecOperationAdd {
			if existing := devices.FindByKey(c.Device.GetVirtualDevice().Key); existing != nil {
				_, ok = passthroughOf(existing)
			}
		}
		if !ok {
			continue
		}
		if state := vm.Runtime.PowerState; state != types.VirtualMachinePowerStatePoweredOff {
			return invalidPowerState(types.VirtualMachinePowerStatePoweredOff, state)
		}
		if c.Operation == types.VirtualDeviceConfigSpecOperationAdd && p.id == "" && p.deviceID == 0 {
			return invalidPassthroughSpec(i, "the dynamic PCI passthrough backing names no allowed device")
		}
		if c.Operation == types.VirtualDeviceConfigSpecOperationAdd && p.id != "" {
			if e := host.passthruInfo(p.id); e == nil || !e.PassthruEnabled {
				return invalidPassthroughSpec(i, "PCI device %s of host %s is not available for passthrough "+
					"(passthrough-enabled GPUs: %s)", p.id, host.name, host.passthruGPUs())
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

func (h *hostState) passthruGPUs() string {
	var ids []string
	for _, g := range h.gpus {
		if e := h.passthruInfo(g.pciID); e != nil && e.PassthruEnabled {
			ids = append(ids, g.pciID)
		}
	}
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// barGB is the GPU's BAR1 size in GB: its framebuffer rounded up to a power of two.
func (g *gpuDevice) barGB() int64 {
	need := (g.model.FramebufferMiB + 1023) / 1024
	size := int64(1)
	for size < need {
		size *= 2
	}
	return size
}

// planPassthrough chooses the host GPU for each passthrough device of a VM that powers on, or says why it cannot.
func (l *Lab) planPassthrough(vm *labVM, h *hostState) (map[int32]*gpuDevice, *vimfault.Fault) {
	devices := passthroughDevices(vm.Config.Hardware.Device)
	if len(devices) == 0 {
		return nil, nil
	}
	memory := int64(vm.Config.Hardware.MemoryMB)
	if !isTrue(vm.Config.MemoryReservationLockedToMax) && reservationMB(vm) < memory {
		return nil, genericVMConfigFault(fmt.Sprintf("Invalid memory setting: memory reservation (sched.mem.min) "+
			"should be equal to memsize(%d).", memory))
	}
	chosen := map[int32]*gpuDevice{}
	taken := map[*gpuDevice]bool{}
	for _, d := range devices {
		g, why := h.freePassthroughGPU(d, taken)
		if g == nil {
			return nil, genericVMConfigFault(fmt.Sprintf("%s PCI passthrough %s of virtual machine %s: %s",
				devicePowerOn, d.label, vm.Name, why))
		}
		chosen[d.key], taken[g] = g, true
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

func (h *hostState) freePassthroughGPU(d passthroughDevice, taken map[*gpuDevice]bool) (*gpuDevice, string) {
	if d.id != "" {
		g := h.gpu(d.id)
		switch {
		case g == nil:
			return nil, fmt.Sprintf("device %s is not a GPU of host %s (GPUs: %s)", d.id, h.name, h.pciIDs())
		case !g.passthruActive():
			return nil, fmt.Sprintf("device %s of host %s is not active for passthrough", d.id, h.name)
		case g.heldBy != nil || taken[g]:
			return nil, fmt.Sprintf("device %s of host %s is in use by another virtual machine", d.id, h.name)
		}
		return g, ""
	}
	for _, g := range h.gpus {
		if int32(nvidiaVendorID) == d.vendorID && int32(g.model.DeviceID) == d.deviceID && g.passthruActive() &&
			g.heldBy == nil && !taken[g] && (d.hwLabel == "" || g.hardwareLabel() == d.hwLabel) {
			return g, ""
		}
	}
	return nil, fmt.Sprintf("no free passthrough device with vendor id 0x%04x and device id 0x%04x on host %s",
		uint16(d.vendorID), uint16(d.deviceID), h.name)
}

// hardwareLabel is the label ESXi shows for the device; the govmomi the lab builds with predates
// HostPciPassthruInfo.hardwareLabel (vSphere API 7.0.2), so the lab's GPUs carry none and a dynamic backing with a
// custom label matches no lab GPU.
func (g *gpuDevice) hardwareLabel() string {
	return ""
}

// checkLargeBARs is what vmx needs to map BARs above 16 GB: EFI firmware and a 64-bit MMIO window that holds them.
func checkLargeBARs(vm *labVM, barGB int64) *vimfault.Fault {
	if vm.Config.Firmware != string(types.GuestOsDescriptorFirmwareTypeEfi) {
		return genericVMConfigFault(fmt.Sprintf("%s Virtual machine %s maps %d GB of PCI BARs and boots with %s "+
			"firmware; BARs above %d GB need EFI firmware.", devicePowerOn, vm.Name, barGB, vm.Config.Firmware,
			largeBARLimitGB))
	}
	if !strings.EqualFold(extraConfig(vm, mmioOption), "true") {
		return genericVMConfigFault(fmt.Sprintf("%s Virtual machine %s maps %d GB of PCI BARs; %s is not TRUE.",
			devicePowerOn, vm.Name, barGB, mmioOption))
	}
	var size int64
	_, _ = fmt.Sscan(extraConfig(vm, mmioSizeOption), &size)
	if size < barGB {
		return genericVMConfigFault(fmt.Sprintf("%s PCIPassthru: virtual machine %s needs %d GB of 64-bit MMIO "+
			"space, %s is %d.", devicePowerOn, vm.Name, barGB, mmioSizeOption, size))
	}
	return nil
}

// extraConfig is the value of an advanced setting of the VM; the last entry wins, as vmx reads its file.
func extraConfig(vm *labVM, key string) string {
	value := ""
	for _, o := range vm.Config.ExtraConfig {
		if v := o.GetOptionValue(); v.Key == key {
			value = fmt.Sprint(v.Value)
		}
	}
	return value
}

// commitPassthrough hands the chosen GPUs to the VM that powered on; releasePassthrough gives them back.
func (l *Lab) commitPassthrough(vm *labVM, chosen map[int32]*gpuDevice) {
	for key, g := range chosen {
		ref := vm.Self
		g.heldBy = &ref
		if vm.passthru == nil {
			vm.passthru = map[int32]*gpuDevice{}
		}
		vm.passthru[key] = g
	}
}

func (l *Lab) releasePassthrough(vm *labVM) {
	for _, g := range vm.passthru {
		g.heldBy = nil
	}
	vm.passthru = nil
}

// passthroughMigration refuses moving a running VM that holds passthrough devices to another host.
func passthroughMigration(vm *labVM) *vimfault.Fault {
	devices := passthroughDevices(vm.Config.Hardware.Device)
	if vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn || len(devices) == 0 {
		return nil
	}
	d := devices[0]
	reason := "DirectPath I/O devices cannot migrate with a running virtual machine"
	return &vimfault.Fault{
		Fault: &types.DisallowedMigrationDeviceAttached{Fault: types.LocalizedMethodFault{
			Fault:            &types.DeviceNotSupported{Device: d.label, Reason: reason},
			LocalizedMessage: reason,
		}},
		Msg: fmt.Sprintf("Migration of virtual machine %s is not allowed with its attached device %s "+
			"(PCI passthrough): %s.", vm.Name, d.label, reason),
	}
}

func (l *Lab) passthroughState(vm *labVM) []labapi.Passthrough {
	list := []labapi.Passthrough{}
	for _, d := range passthroughDevices(vm.Config.Hardware.Device) {
		j := labapi.Passthrough{Key: d.key, Backing: "dynamic"}
		if d.id != "" {
			id := d.id
			j.Backing, j.ID = "static", &id
		} else {
			dev := fmt.Sprintf("0x%04x", uint16(d.deviceID))
			j.DeviceID = &dev
			if d.hwLabel != "" {
				label := d.hwLabel
				j.Label = &label
			}
		}
		if g := vm.passthru[d.key]; g != nil {
			pci := g.pciID
			j.GPU = &pci
		}
		list = append(list, j)
	}
	return list
}
