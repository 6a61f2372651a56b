package hostconfig

import (
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// testLab is govmomi's own simulator (labtest.Simulator: a cluster of two hosts and a standalone host) with each
// host's configuration managers as the lab attaches them, and a client logged in.
type testLab struct {
	c     *govmomi.Client
	hosts []types.ManagedObjectReference
}

func startLab(t *testing.T) *testLab {
	t.Helper()
	model := labtest.Simulator(t)
	tl := &testLab{}
	for _, e := range simulator.Map.All("HostSystem") {
		host := e.(*simulator.HostSystem)
		tl.hosts = append(tl.hosts, host.Self)
		power, clock, access, vsan := NewPowerSystem(host), NewDateTimeSystem(host), NewAccessManager(host),
			NewVsanSystem(host)
		simulator.Map.Put(power)
		simulator.Map.Put(clock)
		simulator.Map.Put(access)
		simulator.Map.Put(vsan)
		powerRef, clockRef, accessRef, vsanRef := power.Self, clock.Self, access.Self, vsan.Self
		host.ConfigManager.PowerSystem, host.ConfigManager.DateTimeSystem = &powerRef, &clockRef
		host.ConfigManager.HostAccessManager, host.ConfigManager.VsanSystem = &accessRef, &vsanRef
		simulator.Map.Put(NewAutoStartManager(host))
		AddPlaceholders(host)
	}
	tl.c = labtest.Serve(t, model, nil)
	return tl
}
