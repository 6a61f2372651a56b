package main

import (
	"sort"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// The com.vmware.vcenter inventory services over JSON-RPC (vapi.go): list with their FilterSpec and get, answered from
// the same simulator objects SOAP serves, so identifiers (vm-NN, group-vNN, domain-cNN, …), names and power states
// are SOAP's. Structure, field and enumeration names: vmware-vcenter 9.1.1.0, com/vmware/vcenter_client.py (VM,
// Folder, Datacenter, Cluster, Host, Datastore, Network, ResourcePool and their Summary, FilterSpec and Info).
//
// "Folders that must contain …" (and datacenters, clusters, hosts) is read as containment anywhere above the object,
// not only the direct parent; VMware's reference does not say which (unconfirmed).

func vcenterOperations() map[string]vapiOperation {
	ops := map[string]vapiOperation{
		"com.vmware.vcenter.VM.list":               locked(listVMs),
		"com.vmware.vcenter.folder.list":           locked(listFolders),
		"com.vmware.vcenter.datacenter.list":       locked(listDatacentersVapi),
		"com.vmware.vcenter.datacenter.get":        locked(getDatacenter),
		"com.vmware.vcenter.cluster.list":          locked(listClustersVapi),
		"com.vmware.vcenter.cluster.get":           locked(getCluster),
		"com.vmware.vcenter.host.list":             locked(listHostsVapi),
		"com.vmware.vcenter.datastore.list":        locked(listDatastores),
		"com.vmware.vcenter.network.list":          locked(listNetworks),
		"com.vmware.vcenter.resource_pool.list":    locked(listResourcePools),
		"com.vmware.vcenter.resource_pool.get":     locked(getResourcePool),
		"com.vmware.vcenter.vm.guest.identity.get": locked(getGuestIdentity),
	}
	return ops
}

// locked runs an inventory operation under the lab's lock, which every SOAP change also holds.
func locked(op vapiOperation) vapiOperation {
	return func(c *vapiCall) (interface{}, *vapiErr) {
		c.lab.mu.Lock()
		defer c.lab.mu.Unlock()
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
func within(ref types.ManagedObjectReference, f filter) bool {
	if len(f) == 0 {
		return true
	}
	for {
		e := entity(ref)
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
func (c *vapiCall) specFilters(fields ...string) (map[string]filter, map[string]interface{}, *vapiErr) {
	spec, err := c.filterSpec()
	if err != nil {
		return nil, nil, err
	}
	out := map[string]filter{}
	for _, field := range fields {
		if out[field], err = setFilter(spec, field); err != nil {
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

func vmObject(e mo.Entity) *simulator.VirtualMachine {
	switch v := e.(type) {
	case *labVM:
		return &v.VirtualMachine
	case *simulator.VirtualMachine:
		return v
	}
	return nil
}

// vmCluster is the cluster of the host a VM is registered on ("" for a standalone host).
func vmCluster(vm *simulator.VirtualMachine) string {
	if vm.Runtime.Host == nil {
		return ""
	}
	cluster, _ := ancestor(*vm.Runtime.Host, "ClusterComputeResource")
	return cluster.Value
}

func listVMs(c *vapiCall) (interface{}, *vapiErr) {
	f, _, err := c.specFilters("vms", "names", "folders", "datacenters", "hosts", "clusters", "resource_pools",
		"power_states")
	if err != nil {
		return nil, err
	}
	out := []interface{}{}
	for _, e := range entitiesOf("VirtualMachine") {
		vm := vmObject(e)
		if vm == nil || !f["vms"].allows(vm.Self.Value) || !f["names"].allows(vm.Name) ||
			!within(vm.Self, f["folders"]) || !within(vm.Self, f["datacenters"]) ||
			!f["power_states"].allows(vmPowerStates[vm.Runtime.PowerState]) || !f["clusters"].allows(vmCluster(vm)) {
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

func vmSummary(vm *simulator.VirtualMachine) vapiStruct {
	fields := map[string]interface{}{"vm": vm.Self.Value, "name": vm.Name,
		"power_state": vmPowerStates[vm.Runtime.PowerState], "cpu_count": vapiOptional{},
		"memory_size_MiB": vapiOptional{}}
	if vm.Config != nil {
		fields["cpu_count"] = vapiOptional{vm.Config.Hardware.NumCPU}
		fields["memory_size_MiB"] = vapiOptional{vm.Config.Hardware.MemoryMB}
	}
	return vapiStruct{"com.vmware.vcenter.VM.summary", fields}
}

// findVM reads the required "vm" input and returns the VM, or NOT_FOUND.
func (c *vapiCall) findVM() (*simulator.VirtualMachine, *vapiErr) {
	e, err := c.findEntity("vm", "VirtualMachine", "Virtual machine")
	if err != nil {
		return nil, err
	}
	return vmObject(e), nil
}

// findEntity reads the required identifier input field and returns the inventory object of that managed object
// type with that id, or NOT_FOUND naming it as label.
func (c *vapiCall) findEntity(field, kind, label string) (mo.Entity, *vapiErr) {
	id, err := c.str(field)
	if err != nil {
		return nil, err
	}
	e := entity(types.ManagedObjectReference{Type: kind, Value: id})
	if e == nil {
		return nil, notFound(label, id)
	}
	return e, nil
}

// ---- datacenters, folders, clusters, hosts -------------------------------------------------------------------------

func listDatacentersVapi(c *vapiCall) (interface{}, *vapiErr) {
	f, _, err := c.specFilters("datacenters", "names", "folders")
	if err != nil {
		return nil, err
	}
	out := []interface{}{}
	for _, e := range entitiesOf("Datacenter") {
		dc := e.Entity()
		if f["datacenters"].allows(dc.Self.Value) && f["names"].allows(dc.Name) && within(dc.Self, f["folders"]) {
			out = append(out, vapiStruct{"com.vmware.vcenter.datacenter.summary",
				map[string]interface{}{"datacenter": dc.Self.Value, "name": dc.Name}})
		}
	}
	return out, nil
}

func getDatacenter(c *vapiCall) (interface{}, *vapiErr) {
	e, err := c.findEntity("datacenter", "Datacenter", "Datacenter")
	if err != nil {
		return nil, err
	}
	dc := e.(*simulator.Datacenter)
	return vapiStruct{"com.vmware.vcenter.datacenter.info", map[string]interface{}{"name": dc.Name,
		"datastore_folder": dc.DatastoreFolder.Value, "host_folder": dc.HostFolder.Value,
		"network_folder": dc.NetworkFolder.Value, "vm_folder": dc.VmFolder.Value}}, nil
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

func listFolders(c *vapiCall) (interface{}, *vapiErr) {
	f, spec, err := c.specFilters("folders", "names", "parent_folders", "datacenters")
	if err != nil {
		return nil, err
	}
	wantType, _ := optional(spec["type"])
	out := []interface{}{}
	for _, e := range entitiesOf("Folder") {
		folder, ok := e.(*simulator.Folder)
		if !ok || !f["folders"].allows(folder.Self.Value) || !f["names"].allows(folder.Name) ||
			!within(folder.Self, f["datacenters"]) || (wantType != nil && wantType != folderType(folder)) {
			continue
		}
		if len(f["parent_folders"]) > 0 && (folder.Parent == nil || !f["parent_folders"][folder.Parent.Value]) {
			continue
		}
		out = append(out, vapiStruct{"com.vmware.vcenter.folder.summary", map[string]interface{}{
			"folder": folder.Self.Value, "name": folder.Name, "type": folderType(folder)}})
	}
	return out, nil
}

func listClustersVapi(c *vapiCall) (interface{}, *vapiErr) {
	f, _, err := c.specFilters("clusters", "names", "folders", "datacenters")
	if err != nil {
		return nil, err
	}
	out := []interface{}{}
	for _, e := range entitiesOf("ClusterComputeResource") {
		cluster, ok := e.(*simulator.ClusterComputeResource)
		if !ok || !f["clusters"].allows(cluster.Self.Value) || !f["names"].allows(cluster.Name) ||
			!within(cluster.Self, f["folders"]) || !within(cluster.Self, f["datacenters"]) {
			continue
		}
		out = append(out, vapiStruct{"com.vmware.vcenter.cluster.summary", map[string]interface{}{
			"cluster": cluster.Self.Value, "name": cluster.Name, "ha_enabled": clusterHA(cluster),
			"drs_enabled": clusterState(cluster).DRS.Enabled}})
	}
	return out, nil
}

func clusterHA(cluster *simulator.ClusterComputeResource) bool {
	config, ok := cluster.ConfigurationEx.(*types.ClusterConfigInfoEx)
	return ok && config.DasConfig.Enabled != nil && *config.DasConfig.Enabled
}

func getCluster(c *vapiCall) (interface{}, *vapiErr) {
	e, err := c.findEntity("cluster", "ClusterComputeResource", "Cluster")
	if err != nil {
		return nil, err
	}
	cluster := e.(*simulator.ClusterComputeResource)
	return vapiStruct{"com.vmware.vcenter.cluster.info", map[string]interface{}{"name": cluster.Name,
		"resource_pool": cluster.ResourcePool.Value}}, nil
}

var hostPowerStates = map[types.HostSystemPowerState]string{
	types.HostSystemPowerStatePoweredOn: "POWERED_ON", types.HostSystemPowerStatePoweredOff: "POWERED_OFF",
	types.HostSystemPowerStateStandBy: "STANDBY",
}

func listHostsVapi(c *vapiCall) (interface{}, *vapiErr) {
	f, spec, err := c.specFilters("hosts", "names", "folders", "datacenters", "clusters", "connection_states",
		"host_uuids")
	if err != nil {
		return nil, err
	}
	standalone, standaloneSet, err := optionalBool(spec, "standalone")
	if err != nil {
		return nil, err
	}
	out := []interface{}{}
	for _, e := range entitiesOf("HostSystem") {
		host, ok := e.(*simulator.HostSystem)
		if !ok || !f["hosts"].allows(host.Self.Value) || !f["names"].allows(host.Name) ||
			!within(host.Self, f["folders"]) || !within(host.Self, f["datacenters"]) ||
			!f["connection_states"].allows(connectionStates[host.Runtime.ConnectionState]) {
			continue
		}
		cluster, inCluster := ancestor(host.Self, "ClusterComputeResource")
		uuid := ""
		if host.Summary.Hardware != nil {
			uuid = host.Summary.Hardware.Uuid
		}
		if (standaloneSet && standalone == inCluster) || !f["clusters"].allows(cluster.Value) ||
			!f["host_uuids"].allows(uuid) {
			continue
		}
		// power_state is only set for a connected host (com.vmware.vcenter.host.summary).
		power := ""
		if host.Runtime.ConnectionState == types.HostSystemConnectionStateConnected {
			power = hostPowerStates[host.Runtime.PowerState]
		}
		out = append(out, vapiStruct{"com.vmware.vcenter.host.summary", map[string]interface{}{
			"host": host.Self.Value, "name": host.Name,
			"connection_state": connectionStates[host.Runtime.ConnectionState],
			"power_state":      optionalString(power), "host_uuid": optionalString(uuid)}})
	}
	return out, nil
}
