package datastores

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/labtest"
	"vcsim/simobj"
	"vcsim/soaphttp"
)

// testLab is govmomi's own simulator (its VPX model without datastores or VMs) as the datastores see a lab: one
// datacenter whose cluster's two hosts share the datastore dc-ds, which holds one VM
// with a 40 GB disk.
type testLab struct {
	mu    sync.Mutex
	ctx   *simulator.Context
	c     *govmomi.Client
	d     *Datastores
	hosts []types.ManagedObjectReference
	dc    types.ManagedObjectReference
	vms   []types.ManagedObjectReference
}

func (tl *testLab) Context() *simulator.Context { return tl.ctx }

func (tl *testLab) Update(obj mo.Reference, changes ...types.PropertyChange) {
	simulator.Map.Update(obj, changes)
}

func (tl *testLab) RunTask(obj mo.Reference, name string,
	fn func() (types.BaseMethodFault, string)) types.ManagedObjectReference {
	return simulator.CreateTask(obj, name, func(*simulator.Task) (types.AnyType, types.BaseMethodFault) {
		fault, _ := fn()
		return nil, fault
	}).Run()
}

func (tl *testLab) VMConfig(ref types.ManagedObjectReference) *types.VirtualMachineConfigInfo {
	if vm, ok := simulator.Map.Get(ref).(*simulator.VirtualMachine); ok {
		return vm.Config
	}
	return nil
}

func (tl *testLab) Logf(format string, args ...interface{}) {}

// startLab serves the simulator with the datastores' methods in front of it, as the lab's SOAP handler does.
func startLab(t *testing.T, exports ...string) *testLab {
	t.Helper()
	model := simulator.VPX()
	model.Datastore, model.Machine, model.Host, model.ClusterHost = 0, 0, 0, 2
	if err := model.Create(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(model.Remove)
	ctx := context.Background()
	tl := &testLab{ctx: simobj.Context(ctx)}
	dataDir := t.TempDir()
	tl.d = New(tl, dataDir, exports)
	tl.c = labtest.Serve(t, model, func(w http.ResponseWriter, call soaphttp.Call, body []byte, sim func()) {
		tl.mu.Lock()
		defer tl.mu.Unlock()
		if !tl.d.Serve(w, call, body) {
			sim()
		}
	})

	dc := simulator.Map.Any("Datacenter").(*simulator.Datacenter)
	tl.dc = dc.Self
	cluster := simulator.Map.Any("ClusterComputeResource").(*simulator.ClusterComputeResource)
	var members []*object.HostSystem
	for _, ref := range cluster.Host {
		tl.hosts = append(tl.hosts, ref)
		members = append(members, object.NewHostSystem(tl.c.Client, ref))
	}
	dir := filepath.Join(dataDir, "dc")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := tl.d.CreateShared(ctx, members, "dc-ds", dir); err != nil {
		t.Fatal(err)
	}
	for _, ref := range cluster.Host {
		simulator.Map.Put(NewHostStorageSystem(simulator.Map.Get(ref).(*simulator.HostSystem)))
	}
	tl.vms = append(tl.vms, tl.createVM(t, "vm-1", cluster.ResourcePool))
	return tl
}

// createVM creates a VM on dc-ds with a pvscsi controller and a 40 GB thin disk there.
func (tl *testLab) createVM(t *testing.T, name string, pool *types.ManagedObjectReference) types.ManagedObjectReference {
	t.Helper()
	ctx := context.Background()
	var devices object.VirtualDeviceList
	scsi, err := devices.CreateSCSIController("pvscsi")
	if err != nil {
		t.Fatal(err)
	}
	devices = append(devices, scsi)
	disk := devices.CreateDisk(scsi.(types.BaseVirtualController), types.ManagedObjectReference{}, "[dc-ds] "+name+
		"/"+name+".vmdk")
	disk.CapacityInKB = 40 << 20
	devices = append(devices, disk)
	changes, err := devices.ConfigSpec(types.VirtualDeviceConfigSpecOperationAdd)
	if err != nil {
		t.Fatal(err)
	}
	changes[1].GetVirtualDeviceConfigSpec().FileOperation = types.VirtualDeviceConfigSpecFileOperationCreate
	folders, err := object.NewDatacenter(tl.c.Client, tl.dc).Folders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	task, err := folders.VmFolder.CreateVM(ctx, types.VirtualMachineConfigSpec{Name: name, GuestId: "otherLinux64Guest",
		Files: &types.VirtualMachineFileInfo{VmPathName: "[dc-ds]"}, DeviceChange: changes},
		object.NewResourcePool(tl.c.Client, *pool), nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := task.WaitForResult(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return info.Result.(types.ManagedObjectReference)
}
