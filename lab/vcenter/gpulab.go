package main

import (
	"github.com/vmware/govmomi/vim25/types"
)

// gpuLab is the lab as package gpu sees it (gpu.Lab).
type gpuLab struct{ labView }

func (g gpuLab) VMName(ref types.ManagedObjectReference) string { return name(ref) }

// PassthruInfo is the host's HostPciPassthruInfo entry for a device, or nil.
func (g gpuLab) PassthruInfo(host types.ManagedObjectReference, pciID string) *types.HostPciPassthruInfo {
	if h := g.l.host(host); h != nil {
		return h.passthruInfo(pciID)
	}
	return nil
}

// Publish copies a host's graphics state into the simulator's objects (hostState.publish).
func (g gpuLab) Publish(host types.ManagedObjectReference) {
	if h := g.l.host(host); h != nil {
		h.publish()
	}
}
