package main

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/gpu"
	"vcsim/labapi"
	"vcsim/pcipassthru"
)

// passthruSystem is the host's HostPciPassthruSystem (package pcipassthru), or nil.
func (h *hostState) passthruSystem() *pcipassthru.System {
	obj := h.lab.hostObject(h.Ref)
	if obj == nil || obj.ConfigManager.PciPassthruSystem == nil {
		return nil
	}
	s, _ := simulator.Map.Get(*obj.ConfigManager.PciPassthruSystem).(*pcipassthru.System)
	return s
}

// passthruInfo is the host's HostPciPassthruInfo entry for a device, or nil.
func (h *hostState) passthruInfo(id string) *types.HostPciPassthruInfo {
	if s := h.passthruSystem(); s != nil {
		return s.Info(id)
	}
	return nil
}

// commitPassthrough hands the chosen GPUs to the VM that powered on; releasePassthrough gives them back.
func (l *Lab) commitPassthrough(vm *labVM, chosen map[int32]*gpu.Device) {
	for key, g := range chosen {
		ref := vm.Self
		g.HeldBy = &ref
		if vm.passthru == nil {
			vm.passthru = map[int32]*gpu.Device{}
		}
		vm.passthru[key] = g
	}
}

func (l *Lab) releasePassthrough(vm *labVM) {
	for _, g := range vm.passthru {
		g.HeldBy = nil
	}
	vm.passthru = nil
}

func (l *Lab) passthroughState(vm *labVM) []labapi.Passthrough {
	list := []labapi.Passthrough{}
	for _, d := range gpu.PassthroughDevices(vm.Config.Hardware.Device) {
		j := labapi.Passthrough{Key: d.Key, Backing: "dynamic"}
		if d.ID != "" {
			id := d.ID
			j.Backing, j.ID = "static", &id
		} else {
			dev := fmt.Sprintf("0x%04x", uint16(d.DeviceID))
			j.DeviceID = &dev
			if d.HWLabel != "" {
				label := d.HWLabel
				j.Label = &label
			}
		}
		if g := vm.passthru[d.Key]; g != nil {
			pci := g.PciID
			j.GPU = &pci
		}
		list = append(list, j)
	}
	return list
}
