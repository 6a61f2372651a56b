package dvs

import (
	"context"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
)

// testLab is govmomi's own simulator (labtest.Simulator) as the switches see a lab (labtest.Hooked): the switches'
// task hooks run as the lab runs them.
type testLab struct {
	labtest.Hooked
	switches *Switches
	c        *govmomi.Client
	folders  *object.DatacenterFolders
	hosts    []types.ManagedObjectReference // the cluster's hosts
}

func (tl *testLab) VMNetworks(ref types.ManagedObjectReference) []types.ManagedObjectReference {
	if vm, ok := simulator.Map.Get(ref).(*simulator.VirtualMachine); ok {
		return vm.Network
	}
	return nil
}

func startLab(t *testing.T) *testLab {
	t.Helper()
	model := labtest.Simulator(t)
	InstallManager()
	tl := &testLab{}
	tl.switches = New(tl)
	tl.Hooks = tl.switches.Hooks()
	tl.hosts = simulator.Map.Any("ClusterComputeResource").(*simulator.ClusterComputeResource).Host
	tl.c = tl.Serve(t, model, RequestsRead, tl.switches.Serve)
	dc := simulator.Map.Any("Datacenter").Reference()
	folders, err := object.NewDatacenter(tl.c.Client, dc).Folders(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tl.folders = folders
	return tl
}
