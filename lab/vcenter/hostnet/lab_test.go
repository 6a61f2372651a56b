package hostnet

import (
	"testing"

	"github.com/vmware/govmomi/simulator"

	"vcsim/labtest"
)

// startLab serves govmomi's own simulator (labtest.Simulator: a cluster of two hosts and a standalone host) with
// each host's network system and VMkernel NIC manager as the lab attaches them, to a client logged in.
func startLab(t *testing.T) *labtest.HostLab {
	t.Helper()
	return labtest.StartHosts(t, func(host *simulator.HostSystem) {
		if network := NewNetworkSystem(host); network != nil {
			simulator.Map.Put(network)
		}
		vnics := NewVirtualNicManager(host)
		simulator.Map.Put(vnics)
		vnicsRef := vnics.Self
		host.ConfigManager.VirtualNicManager = &vnicsRef
	})
}
