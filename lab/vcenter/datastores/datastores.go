package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/soaphttp"
)

// datastoreCapacity is the size the lab gives each datacenter's shared datastore. The simulator would report the
// size of the file system under the lab's scratch directory and take every VM's provisioned disk from it, which
// goes negative with the topology's VMs; a datastore on vCenter never reports free space below zero
// (vSphere Web Services API, DatastoreSummary.freeSpace: "available space of this datastore, in bytes";
// developer.broadcom.com/xapis/vmware-storage-policy-api/8.0u2/vim.Datastore.Summary.html).
const datastoreCapacity int64 = 16 << 40

// createSharedDatastore creates one datastore for all of a datacenter's hosts, as a cluster's shared storage is on
// vCenter: one Datastore object, id datastore-<n>, mounted read-write on every host (Datastore.host lists each
// mount). The simulator would create one object per host under a path-named id, with only the last host mounted.
func (l *Lab) createSharedDatastore(ctx context.Context, hosts []*object.HostSystem, name, dir string) error {
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
		mountDatastore(l.hostObject(host.Reference()), ds)
	}
	settleFreeSpace(ds)
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
	if dc, ok := simulator.Map.Get(datacenterOf(ds.Parent)).(*simulator.Datacenter); ok {
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

// datacenterOf walks up from a folder to its datacenter.
func datacenterOf(ref *types.ManagedObjectReference) types.ManagedObjectReference {
	for ref != nil {
		obj := simulator.Map.Get(*ref)
		if dc, ok := obj.(*simulator.Datacenter); ok {
			return dc.Self
		}
		entity, ok := obj.(mo.Entity)
		if !ok {
			break
		}
		ref = entity.Entity().Parent
	}
	return types.ManagedObjectReference{}
}

// settleFreeSpace sets a datastore's capacity to the lab's and its free space to what the VMs' provisioned disks
// leave, never below zero.
func settleFreeSpace(ds *simulator.Datastore) {
	used := int64(0)
	for _, ref := range ds.Vm {
		var config *types.VirtualMachineConfigInfo
		switch vm := simulator.Map.Get(ref).(type) {
		case *labVM:
			config = vm.Config
		case *simulator.VirtualMachine:
			config = vm.Config
		}
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
func (l *Lab) serveRefreshDatastore(w http.ResponseWriter, call soaphttp.Call) bool {
	if call.Method != "RefreshDatastore" {
		return false
	}
	ds, ok := simulator.Map.Get(call.This).(*simulator.Datastore)
	if !ok {
		soaphttp.WriteObjectNotFound(w, call.This)
		return true
	}
	settleFreeSpace(ds)
	now := time.Now()
	ds.Info.GetDatastoreInfo().Timestamp = &now
	soaphttp.WriteResponse(w, `<RefreshDatastoreResponse xmlns="urn:vim25"></RefreshDatastoreResponse>`)
	return true
}
