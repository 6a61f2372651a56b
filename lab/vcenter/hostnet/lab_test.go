package hostnet

import (
	"testing"

	"github.com/vmware/govmomi/simulator"

	"vcsim/labtest"
)

// startLab gives each host of labtest.StartHosts's simulator its network system and VMkernel NIC manager, as the
// lab does.
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
