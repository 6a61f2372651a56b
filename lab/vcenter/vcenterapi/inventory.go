// Package vcenterapi answers the Automation API's com.vmware.vcenter inventory services over JSON-RPC (package
// vapi): list with their FilterSpec and get of VMs, folders, datacenters, clusters, hosts, datastores, networks,
// resource pools and a VM's guest identity, read from the simulator's objects under the lab's lock. What it needs of
// the lab is its Lab interface; the lab registers Operations on its router.
package vcenterapi

import (
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
	"vcsim/vapi"
)

// The com.vmware.vcenter inventory services over JSON-RPC (package vapi): list with their FilterSpec and get, answered from
// the same simulator objects SOAP serves, so identifiers (vm-NN, group-vNN, domain-cNN, …), names and power states
// are SOAP's. Structure, field and enumeration names: vmware-vcenter 9.1.1.0, com/vmware/vcenter_client.py (VM,
// Folder, Datacenter, Cluster, Host, Datastore, Network, ResourcePool and their Summary, FilterSpec and Info).
//
// "Folders that must contain …" (and datacenters, clusters, hosts) is read as containment anywhere above the object,
// not only the direct parent; VMware's reference does not say which (unconfirmed).

// Lab is what the inventory services need of the lab.
type Lab interface {
	// Lock and Unlock take and let go of the lab's lock, which every SOAP change also holds.
	sync.Locker
	// VM answers the simulator's VM of an inventory object of type VirtualMachine (the lab's VMs embed it), or nil.
	VM(e mo.Entity) *simulator.VirtualMachine
}

// Operations are the inventory services by their JSON-RPC operation names.
func Operations(lab Lab) map[string]vapi.Operation {
	vmList := func(c *vapi.Invocation) (interface{}, *vapi.Err) { return listVMs(c, lab.VM) }
	guestIdentity := func(c *vapi.Invocation) (interface{}, *vapi.Err) { return getGuestIdentity(c, lab.VM) }
	ops := map[string]vapi.Operation{
		"com.vmware.vcenter.VM.list":               locked(lab, vmList),
		"com.vmware.vcenter.folder.list":           locked(lab, listFolders),
		"com.vmware.vcenter.datacenter.list":       locked(lab, listDatacenters),
		"com.vmware.vcenter.datacenter.get":        locked(lab, getDatacenter),
		"com.vmware.vcenter.cluster.list":          locked(lab, listClusters),
		"com.vmware.vcenter.cluster.get":           locked(lab, getCluster),
		"com.vmware.vcenter.host.list":             locked(lab, listHosts),
		"com.vmware.vcenter.datastore.list":        locked(lab, listDatastores),
		"com.vmware.vcenter.network.list":          locked(lab, listNetworks),
		"com.vmware.vcenter.resource_pool.list":    locked(lab, listResourcePools),
		"com.vmware.vcenter.resource_pool.get":     locked(lab, getResourcePool),
		"com.vmware.vcenter.vm.guest.identity.get": locked(lab, guestIdentity),
	}
	return ops
}

// locked runs an inventory operation under the lab's lock.
func locked(mu sync.Locker, op vapi.Operation) vapi.Operation {
	return func(c *vapi.Invocation) (interface{}, *vapi.Err) {
		mu.Lock()
		defer mu.Unlock()
		return op(c)
	}
}

// entitiesOf returns the inventory objects of one managed object type, in the order of their numeric ids.
func entitiesOf(kind string) []mo.Entity {
	all := simulator.Map.All(kind)
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i].Reference().Value, all[j].Reference().Value
		return idNumber(a) < idNumber(b) || (idNumber(a) == idNumber(b) && a < b)
	})
	return all
}

func idNumber(id string) int {
	n, _ := strconv.Atoi(id[strings.LastIndexAny(id, "-")+1:])
	return n
}

// within tells whether any object above ref (its parent, the parent's parent, …) is in f; an empty f matches.
func within(ref types.ManagedObjectReference, f vapi.Filter) bool {
	if len(f) == 0 {
		return true
	}
	for {
		e := simobj.Entity(ref)
		if e == nil || e.Entity().Parent == nil {
			return false
		}
		ref = *e.Entity().Parent
		if f[ref.Value] {
			return true
		}
	}
}

// specFilters reads the named set fields of the call's filter spec.
func specFilters(c *vapi.Invocation, fields ...string) (map[string]vapi.Filter, map[string]interface{}, *vapi.Err) {
	spec, err := c.FilterSpec()
	if err != nil {
		return nil, nil, err
	}
	out := map[string]vapi.Filter{}
	for _, field := range fields {
		if out[field], err = vapi.SetFilter(spec, field); err != nil {
			return nil, nil, err
		}
	}
	return out, spec, nil
}

// ---- virtual machines --------------------------------------------------------------------------------------------

var vmPowerStates = map[types.VirtualMachinePowerState]string{
	types.VirtualMachinePowerStatePoweredOn:  "POWERED_ON",
	types.VirtualMachinePowerStatePoweredOff: "POWERED_OFF",
	types.VirtualMachinePowerStateSuspended:  "SUSPENDED",
}

// vmCluster is the cluster of the host a VM is registered on ("" for a standalone host).
func vmCluster(vm *simulator.VirtualMachine) string {
	if vm.Runtime.Host == nil {
		return ""
	}
	cluster, _ := simobj.Ancestor(*vm.Runtime.Host, "ClusterComputeResource")
	return cluster.Value
}

func listVMs(c *vapi.Invocation, vmObject func(mo.Entity) *simulator.VirtualMachine) (interface{}, *vapi.Err) {
	f, _, err := specFilters(c, "vms", "names", "folders", "datacenters", "hosts", "clusters", "resource_pools",
		"power_states")
	if err != nil {
		return nil, err
	}
	out := []interface{}{}
	for _, e := range entitiesOf("VirtualMachine") {
		vm := vmObject(e)
		if vm == nil || !f["vms"].Allows(vm.Self.Value) || !f["names"].Allows(vm.Name) ||
			!within(vm.Self, f["folders"]) || !within(vm.Self, f["datacenters"]) ||
			!f["power_states"].Allows(vmPowerStates[vm.Runtime.PowerState]) || !f["clusters"].Allows(vmCluster(vm)) {
			continue
		}
		if len(f["hosts"]) > 0 && (vm.Runtime.Host == nil || !f["hosts"][vm.Runtime.Host.Value]) {
			continue
		}
		if len(f["resource_pools"]) > 0 && (vm.ResourcePool == nil || !f["resource_pools"][vm.ResourcePool.Value]) {
			continue
		}
		out = append(out, vmSummary(vm))
	}
	return out, nil
}

func vmSummary(vm *simulator.VirtualMachine) vapi.Struct {
	fields := map[string]interface{}{"vm": vm.Self.Value, "name": vm.Name,
		"power_state": vmPowerStates[vm.Runtime.PowerState], "cpu_count": vapi.Optional{},
		"memory_size_MiB": vapi.Optional{}}
	if vm.Config != nil {
		fields["cpu_count"] = vapi.OptionalOf(vm.Config.Hardware.NumCPU)
		fields["memory_size_MiB"] = vapi.OptionalOf(vm.Config.Hardware.MemoryMB)
	}
	return vapi.NewStruct("com.vmware.vcenter.VM.summary", fields)
}

// findVM reads the required "vm" input and returns the VM, or NOT_FOUND.
func findVM(c *vapi.Invocation, vmObject func(mo.Entity) *simulator.VirtualMachine) (*simulator.VirtualMachine, *vapi.Err) {
	e, err := findEntity(c, "vm", "VirtualMachine", "Virtual machine")
	if err != nil {
		return nil, err
	}
	return vmObject(e), nil
}

// findEntity reads the required identifier input field and returns the inventory object of that managed object
// type with that id, or NOT_FOUND naming it as label.
func findEntity(c *vapi.Invocation, field, kind, label string) (mo.Entity, *vapi.Err) {
	id, err := c.Str(field)
	if err != nil {
		return nil, err
	}
	e := simobj.Entity(types.ManagedObjectReference{Type: kind, Value: id})
	if e == nil {
		return nil, vapi.NotFound(label, id)
	}
	return e, nil
}

// ---- datacenters, folders, clusters, hosts -------------------------------------------------------------------------

func listDatacenters(c *vapi.Invocation) (interface{}, *vapi.Err) {
	f, _, err := specFilters(c, "datacenters", "names", "folders")
	if err != nil {
		return nil, err
	}
	out := []interface{}{}
	for _, e := range entitiesOf("Datacenter") {
		dc := e.Entity()
		if f["datacenters"].Allows(dc.Self.Value) && f["names"].Allows(dc.Name) && within(dc.Self, f["folders"]) {
			out = append(out, vapi.NewStruct("com.vmware.vcenter.datacenter.summary",
				map[string]interface{}{"datacenter": dc.Self.Value, "name": dc.Name}))
		}
	}
	return out, nil
}

func getDatacenter(c *vapi.Invocation) (interface{}, *vapi.Err) {
	e, err := findEntity(c, "datacenter", "Datacenter", "Datacenter")
	if err != nil {
		return nil, err
	}
	dc := e.(*simulator.Datacenter)
	return vapi.NewStruct("com.vmware.vcenter.datacenter.info", map[string]interface{}{"name": dc.Name,
		"datastore_folder": dc.DatastoreFolder.Value, "host_folder": dc.HostFolder.Value,
		"network_folder": dc.NetworkFolder.Value, "vm_folder": dc.VmFolder.Value}), nil
}

// folderTypes maps a folder's first child type to com.vmware.vcenter.folder.type.
var folderTypes = map[string]string{"Datacenter": "DATACENTER", "VirtualMachine": "VIRTUAL_MACHINE",
	"ComputeResource": "HOST", "Datastore": "DATASTORE", "Network": "NETWORK"}

func folderType(folder *simulator.Folder) string {
	for _, child := range folder.ChildType {
		if t, ok := folderTypes[child]; ok {
			return t
		}
	}
	return ""
}

func listFolders(c *vapi.Invocation) (interface{}, *vapi.Err) {
	f, spec, err := specFilters(c, "folders", "names", "parent_folders", "datacenters")
	if err != nil {
		return nil, err
	}
	wantType, _ := vapi.Unwrap(spec["type"])
	out := []interface{}{}
	for _, e := range entitiesOf("Folder") {
		folder, ok := e.(*simulator.Folder)
		if !ok || !f["folders"].Allows(folder.Self.Value) || !f["names"].Allows(folder.Name) ||
			!within(folder.Self, f["datacenters"]) || (wantType != nil && wantType != folderType(folder)) {
			continue
		}
		if len(f["parent_folders"]) > 0 && (folder.Parent == nil || !f["parent_folders"][folder.Parent.Value]) {
			continue
		}
		out = append(out, vapi.NewStruct("com.vmware.vcenter.folder.summary", map[string]interface{}{
			"folder": folder.Self.Value, "name": folder.Name, "type": folderType(folder)}))
	}
	return out, nil
}

func listClusters(c *vapi.Invocation) (interface{}, *vapi.Err) {
	f, _, err := specFilters(c, "clusters", "names", "folders", "datacenters")
	if err != nil {
		return nil, err
	}
	out := []interface{}{}
	for _, e := range entitiesOf("ClusterComputeResource") {
		cluster, ok := e.(*simulator.ClusterComputeResource)
		if !ok || !f["clusters"].Allows(cluster.Self.Value) || !f["names"].Allows(cluster.Name) ||
			!within(cluster.Self, f["folders"]) || !within(cluster.Self, f["datacenters"]) {
			continue
		}
		out = append(out, vapi.NewStruct("com.vmware.vcenter.cluster.summary", map[string]interface{}{
			"cluster": cluster.Self.Value, "name": cluster.Name, "ha_enabled": clusterHA(cluster),
			"drs_enabled": clusterDRS(cluster)}))
	}
	return out, nil
}

func clusterHA(cluster *simulator.ClusterComputeResource) bool {
	config, ok := cluster.ConfigurationEx.(*types.ClusterConfigInfoEx)
	return ok && config.DasConfig.Enabled != nil && *config.DasConfig.Enabled
}

func clusterDRS(cluster *simulator.ClusterComputeResource) bool {
	config, ok := cluster.ConfigurationEx.(*types.ClusterConfigInfoEx)
	return ok && config.DrsConfig.Enabled != nil && *config.DrsConfig.Enabled
}

func getCluster(c *vapi.Invocation) (interface{}, *vapi.Err) {
	e, err := findEntity(c, "cluster", "ClusterComputeResource", "Cluster")
	if err != nil {
		return nil, err
	}
	cluster := e.(*simulator.ClusterComputeResource)
	return vapi.NewStruct("com.vmware.vcenter.cluster.info", map[string]interface{}{"name": cluster.Name,
		"resource_pool": cluster.ResourcePool.Value}), nil
}

// ConnectionStates are com.vmware.vcenter.host.connection_state by SOAP's connection state.
var ConnectionStates = map[types.HostSystemConnectionState]string{
	types.HostSystemConnectionStateConnected:     "CONNECTED",
	types.HostSystemConnectionStateDisconnected:  "DISCONNECTED",
	types.HostSystemConnectionStateNotResponding: "NOT_RESPONDING",
}

var hostPowerStates = map[types.HostSystemPowerState]string{
	types.HostSystemPowerStatePoweredOn: "POWERED_ON", types.HostSystemPowerStatePoweredOff: "POWERED_OFF",
	types.HostSystemPowerStateStandBy: "STANDBY",
}

func listHosts(c *vapi.Invocation) (interface{}, *vapi.Err) {
	f, spec, err := specFilters(c, "hosts", "names", "folders", "datacenters", "clusters", "connection_states",
		"host_uuids")
	if err != nil {
		return nil, err
	}
	standalone, standaloneSet, err := vapi.OptionalBool(spec, "standalone")
	if err != nil {
		return nil, err
	}
	out := []interface{}{}
	for _, e := range entitiesOf("HostSystem") {
		host, ok := e.(*simulator.HostSystem)
		if !ok || !f["hosts"].Allows(host.Self.Value) || !f["names"].Allows(host.Name) ||
			!within(host.Self, f["folders"]) || !within(host.Self, f["datacenters"]) ||
			!f["connection_states"].Allows(ConnectionStates[host.Runtime.ConnectionState]) {
			continue
		}
		cluster, inCluster := simobj.Ancestor(host.Self, "ClusterComputeResource")
		uuid := ""
		if host.Summary.Hardware != nil {
			uuid = host.Summary.Hardware.Uuid
		}
		if (standaloneSet && standalone == inCluster) || !f["clusters"].Allows(cluster.Value) ||
			!f["host_uuids"].Allows(uuid) {
			continue
		}
		// power_state is only set for a connected host (com.vmware.vcenter.host.summary).
		power := ""
		if host.Runtime.ConnectionState == types.HostSystemConnectionStateConnected {
			power = hostPowerStates[host.Runtime.PowerState]
		}
		out = append(out, vapi.NewStruct("com.vmware.vcenter.host.summary", map[string]interface{}{
			"host": host.Self.Value, "name": host.Name,
			"connection_state": ConnectionStates[host.Runtime.ConnectionState],
			"power_state":      vapi.OptionalString(power), "host_uuid": vapi.OptionalString(uuid)}))
	}
	return out, nil
}
