package settings

import (
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// testLab is govmomi's own simulator (labtest.Simulator) with vCenter's settings and each host's advanced options
// as the lab makes them, and a client logged in.
type testLab struct {
	c       *govmomi.Client
	vcenter *Manager
	// simulatorSettings is the simulator's own content.setting, which the lab's copies.
	simulatorSettings *simulator.OptionManager
	hosts             []types.ManagedObjectReference
}

func startLab(t *testing.T) *testLab {
	t.Helper()
	model := labtest.Simulator(t)
	tl := &testLab{}
	tl.hosts = labtest.Hosts(func(host *simulator.HostSystem) {
		if om, ok := simulator.Map.Get(*host.ConfigManager.AdvancedOption).(*simulator.OptionManager); ok {
			simulator.Map.Put(NewManager(om, ESXiOptions, true))
		}
	})
	tl.simulatorSettings = simulator.Map.OptionManager()
	tl.vcenter = NewManager(tl.simulatorSettings, VCenterOptions, false)
	simulator.Map.Put(tl.vcenter)
	tl.c = labtest.Serve(t, model, nil)
	return tl
}
