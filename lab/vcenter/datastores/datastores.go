// Package datastores holds the lab's datastores beside the simulator's: a datacenter's shared datastore with a
// vCenter id and the lab's capacity, free space that the VMs' disks leave, NFS datastores of the exports the lab
// serves (nfs.go), each host's file systems, and datastore maintenance mode (maintenance.go). What it needs of the
// lab is its Lab interface; Serve answers the SOAP methods the simulator lacks or gets wrong.
package datastores

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
	"vcsim/soaphttp"
)

// Lab is what the datastores need of the lab.
type Lab interface {
	// Context is the simulator context of what the lab does on its own, outside a client's request.
	Context() *simulator.Context
	// Update changes properties of a simulator object so that property collector waiters see the change.
	Update(obj mo.Reference, changes ...types.PropertyChange)
	// RunTask runs a task named name on obj, which fails with the fault and message fn returns, if any.
	RunTask(obj mo.Reference, name string, fn func() (types.BaseMethodFault, string)) types.ManagedObjectReference
	// VMConfig is the configuration of a VM of the inventory, or nil.
	VMConfig(ref types.ManagedObjectReference) *types.VirtualMachineConfigInfo
	Logf(format string, args ...interface{})
}

// Datastores serves the lab's datastores; dataDir holds their files, exports are the NFS exports (server:path)
// the lab serves.
type Datastores struct {
	lab     Lab
	dataDir string
	exports map[string]bool
}

func New(lab Lab, dataDir string, exports []string) *Datastores {
	d := &Datastores{lab: lab, dataDir: dataDir, exports: map[string]bool{}}
	for _, export := range exports {
		d.exports[export] = true
	}
	return d
}

// Serve answers the datastore methods the lab implements itself (RefreshDatastore, CreateNasDatastore, datastore
// maintenance mode), and says whether it did.
func (d *Datastores) Serve(w http.ResponseWriter, call soaphttp.Call, body []byte) bool {
	return d.serveRefreshDatastore(w, call) || d.serveCreateNasDatastore(w, call, body) ||
		d.serveDatastoreMaintenance(w, call)
}

// datastoreCapacity is the size the lab gives each datacenter's shared datastore. The simulator would report the
// size of the file system under the lab's scratch directory and take every VM's provisioned disk from it, which
// goes negative with the topology's VMs; a datastore on vCenter never reports free space below zero
// (vSphere Web Services API, DatastoreSummary.freeSpace: "available space of this datastore, in bytes";
// developer.broadcom.com/xapis/vmware-storage-policy-api/8.0u2/vim.Datastore.Summary.html).
const datastoreCapacity int64 = 16 << 40

// CreateShared creates one datastore for all of a datacenter's hosts, as a cluster's shared storage is on
// vCenter: one Datastore object, id datastore-<n>, mounted read-write on every host (Datastore.host lists each
// mount). The simulator would create one object per host under a path-named id, with only the last host mounted.
func (d *Datastores) CreateShared(ctx context.Context, hosts []*object.HostSystem, name, dir string) error {
	dss, err := hosts[0].ConfigManager().DatastoreSystem(ctx)
	if err != nil {
		return err
	}
	created, err := dss.CreateLocalDatastore(ctx, name, dir)
	if err != nil {
		return fmt.Errorf("datastore %s on host %s: %v", name, hosts[0].Name(), err)
	}
	ds := simulator.Map.Get(created.Reference()).(*simulator.Datastore)
	rekeyDatastore(ds)
	for _, host := range hosts[1:] {
		mountDatastore(simulator.Map.Get(host.Reference()).(*simulator.HostSystem), ds)
	}
	d.settleFreeSpace(ds)
	return nil
}

// rekeyDatastore gives a datastore a vCenter id (datastore-<n>) and updates every list that names it.
func rekeyDatastore(ds *simulator.Datastore) {
	old := ds.Self
	next := simulator.Map.Put(&mo.Datastore{}).Reference()
	simulator.Map.Remove(next)
	simulator.Map.Remove(old)
	ds.Self = next
	ds.Summary.Datastore = &ds.Self
	simulator.Map.Put(ds)
	swap := func(refs []types.ManagedObjectReference) {
		for i := range refs {
			if refs[i] == old {
				refs[i] = next
			}
		}
	}
	for _, mount := range ds.Host {
		host := simulator.Map.Get(mount.Key).(*simulator.HostSystem)
		swap(host.Datastore)
		if dss, ok := simulator.Map.Get(*host.ConfigManager.DatastoreSystem).(*simulator.HostDatastoreSystem); ok {
			swap(dss.Datastore)
		}
		swap(parentResource(host).Datastore)
	}
	if browser, ok := simulator.Map.Get(ds.Browser).(*simulator.HostDatastoreBrowser); ok {
		swap(browser.Datastore)
	}
	if folder, ok := simulator.Map.Get(*ds.Parent).(*simulator.Folder); ok {
		swap(folder.ChildEntity)
	}
	if ref, _ := simobj.Ancestor(ds.Self, "Datacenter"); ref.Value != "" {
		dc := simulator.Map.Get(ref).(*simulator.Datacenter)
		swap(dc.Datastore)
	}
}

// mountDatastore mounts a datastore on one more host, read-write and accessible, as a shared datastore is.
func mountDatastore(host *simulator.HostSystem, ds *simulator.Datastore) {
	host.Datastore = append(host.Datastore, ds.Self)
	if dss, ok := simulator.Map.Get(*host.ConfigManager.DatastoreSystem).(*simulator.HostDatastoreSystem); ok {
		dss.Datastore = append(dss.Datastore, ds.Self)
	}
	cr := parentResource(host)
	if simulator.FindReference(cr.Datastore, ds.Self) == nil {
		cr.Datastore = append(cr.Datastore, ds.Self)
	}
	ds.Host = append(ds.Host, types.DatastoreHostMount{Key: host.Self, MountInfo: types.HostMountInfo{
		Path:       ds.Info.GetDatastoreInfo().Url,
		AccessMode: string(types.HostMountModeReadWrite),
		Mounted:    types.NewBool(true),
		Accessible: types.NewBool(true),
	}})
}

func parentResource(host *simulator.HostSystem) *mo.ComputeResource {
	switch cr := simulator.Map.Get(*host.Parent).(type) {
	case *simulator.ClusterComputeResource:
		return &cr.ComputeResource
	case *mo.ComputeResource:
		return cr
	}
	return &mo.ComputeResource{}
}

// settleFreeSpace sets a datastore's capacity to the lab's and its free space to what the VMs' provisioned disks
// leave, never below zero.
func (d *Datastores) settleFreeSpace(ds *simulator.Datastore) {
	used := int64(0)
	for _, ref := range ds.Vm {
		config := d.lab.VMConfig(ref)
		if config == nil {
			continue
		}
		for _, device := range config.Hardware.Device {
			disk, ok := device.(*types.VirtualDisk)
			if !ok {
				continue
			}
			backing, ok := disk.Backing.(types.BaseVirtualDeviceFileBackingInfo)
			if ok && backing.GetVirtualDeviceFileBackingInfo().Datastore != nil &&
				*backing.GetVirtualDeviceFileBackingInfo().Datastore == ds.Self {
				used += diskBytes(disk)
			}
		}
	}
	free := datastoreCapacity - used
	if free < 0 {
		free = 0
	}
	info := ds.Info.GetDatastoreInfo()
	ds.Summary.Capacity, ds.Summary.FreeSpace = datastoreCapacity, free
	info.FreeSpace, info.MaxFileSize, info.MaxMemoryFileSize = free, free, free
}

func diskBytes(disk *types.VirtualDisk) int64 {
	if disk.CapacityInBytes != 0 {
		return disk.CapacityInBytes
	}
	return disk.CapacityInKB * 1024
}

// serveRefreshDatastore answers Datastore.RefreshDatastore (vSphere Web Services API: "explicitly refreshes free
// space and capacity values in summary and info", no return value). The simulator's own measures the lab's scratch
// file system and then fails to encode its empty answer, which drops the client's connection.
func (d *Datastores) serveRefreshDatastore(w http.ResponseWriter, call soaphttp.Call) bool {
	if call.Method != "RefreshDatastore" {
		return false
	}
	ds, ok := simulator.Map.Get(call.This).(*simulator.Datastore)
	if !ok {
		soaphttp.WriteObjectNotFound(w, call.This)
		return true
	}
	d.settleFreeSpace(ds)
	now := time.Now()
	ds.Info.GetDatastoreInfo().Timestamp = &now
	soaphttp.WriteResponse(w, `<RefreshDatastoreResponse xmlns="urn:vim25"></RefreshDatastoreResponse>`)
	return true
}
