package hostconfig

import (
	"testing"

	"github.com/vmware/govmomi/simulator"

	"vcsim/labtest"
)

// startLab attaches each host's configuration managers to labtest.StartHosts's simulator as the lab does.
func startLab(t *testing.T) *labtest.HostLab {
	t.Helper()
	return labtest.StartHosts(t, func(host *simulator.HostSystem) {
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
	})
}
