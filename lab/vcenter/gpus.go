package main

import (
	"time"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/catalog"
	"vcsim/gpu"
	"vcsim/hostservices"
	"vcsim/topology"
)

// hostState is what the lab knows about a host beyond the simulator's HostSystem: its GPUs and graphics settings
// (gpu.Host), Xorg, services, reboots and its managers.
type hostState struct {
	*gpu.Host
	lab *Lab

	xorgRestarts int

	// rebindNeedsReboot: passthrough changes wait for a reboot (HostCapability.deviceRebindWithoutRebootSupported
	// false); rebootDuration is how long a reboot keeps the host away; reboots counts them.
	rebindNeedsReboot bool
	rebootDuration    time.Duration
	reboots           int

	graphics *gpu.GraphicsManager
	svc      *hostservices.System
}

func newHostState(l *Lab, ref types.ManagedObjectReference, name string, gpus []*topology.GPUSpec, models *catalog.Catalog) *hostState {
	return &hostState{
		Host:           gpu.NewHost(gpuLab{labView{l}}, ref, name, gpus, models),
		lab:            l,
		rebootDuration: topology.DefaultRebootDuration,
	}
}

// publish copies the host's graphics state into its HostGraphicsManager and into HostSystem.config, through the
// registry so that property collector waiters see the change.
func (h *hostState) publish() {
	l := h.lab
	l.update(h.graphics,
		types.PropertyChange{Name: "graphicsInfo", Val: h.GraphicsInfo()},
		types.PropertyChange{Name: "graphicsConfig", Val: h.GraphicsConfig()},
		types.PropertyChange{Name: "sharedPassthruGpuTypes", Val: h.ProfileList()},
		types.PropertyChange{Name: "sharedGpuCapabilities", Val: h.SharedGpuCapabilities()},
	)
	host := l.hostObject(h.Ref)
	if host == nil {
		return
	}
	l.update(host,
		types.PropertyChange{Name: "config.graphicsInfo", Val: h.GraphicsInfo()},
		types.PropertyChange{Name: "config.graphicsConfig", Val: h.GraphicsConfig()},
		types.PropertyChange{Name: "config.sharedPassthruGpuTypes", Val: h.ProfileList()},
		types.PropertyChange{Name: "config.sharedGpuCapabilities", Val: h.SharedGpuCapabilities()},
	)
}

// gpuHost is the host's GPUs, nil for no host.
func (h *hostState) gpuHost() *gpu.Host {
	if h == nil {
		return nil
	}
	return h.Host
}
