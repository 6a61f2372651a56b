package vcenterapi

import (
	"strings"
	"unicode"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/vapi"
)

// Datastores, networks, resource pools and the guest identity of VMs over JSON-RPC (package vapi, inventory.go).
// Names as in vmware-vcenter 9.1.1.0: com/vmware/vcenter_client.py and com/vmware/vcenter/vm/guest_client.py.

func listDatastores(c *vapi.Invocation) (interface{}, *vapi.Err) {
	f, _, err := specFilters(c, "datastores", "names", "types", "folders", "datacenters")
	if err != nil {
		return nil, err
	}
	out := []interface{}{}
	for _, e := range entitiesOf("Datastore") {
		ds, ok := e.(*simulator.Datastore)
		if !ok {
			continue
		}
		// com.vmware.vcenter.datastore.type: VMFS, NFS, NFS41, CIFS, VSAN, VFFS, VVOL; SOAP's summary.type
		// spells them the same, vsan in lower case.
		kind := strings.ToUpper(ds.Summary.Type)
		if !f["datastores"].Allows(ds.Self.Value) || !f["names"].Allows(ds.Name) ||
			!f["types"].Allows(kind) || !within(ds.Self, f["folders"]) || !within(ds.Self, f["datacenters"]) {
			continue
		}
		out = append(out, vapi.NewStruct("com.vmware.vcenter.datastore.summary", map[string]interface{}{
			"datastore": ds.Self.Value, "name": ds.Name, "type": kind,
			"free_space": vapi.OptionalOf(ds.Summary.FreeSpace), "capacity": vapi.OptionalOf(ds.Summary.Capacity)}))
	}
	return out, nil
}

// networkTypes maps the managed object type of a network to com.vmware.vcenter.network.type.
var networkTypes = map[string]string{"Network": "STANDARD_PORTGROUP",
	"DistributedVirtualPortgroup": "DISTRIBUTED_PORTGROUP", "OpaqueNetwork": "OPAQUE_NETWORK"}

func listNetworks(c *vapi.Invocation) (interface{}, *vapi.Err) {
	f, _, err := specFilters(c, "networks", "names", "types", "folders", "datacenters")
	if err != nil {
		return nil, err
	}
	out := []interface{}{}
	for _, kind := range []string{"Network", "DistributedVirtualPortgroup", "OpaqueNetwork"} {
		for _, e := range entitiesOf(kind) {
			n := e.Entity()
			if !f["networks"].Allows(n.Self.Value) || !f["names"].Allows(n.Name) ||
				!f["types"].Allows(networkTypes[kind]) || !within(n.Self, f["folders"]) ||
				!within(n.Self, f["datacenters"]) {
				continue
			}
			out = append(out, vapi.NewStruct("com.vmware.vcenter.network.summary", map[string]interface{}{
				"network": n.Self.Value, "name": n.Name, "type": networkTypes[kind]}))
		}
	}
	return out, nil
}

func listResourcePools(c *vapi.Invocation) (interface{}, *vapi.Err) {
	f, _, err := specFilters(c, "resource_pools", "names", "parent_resource_pools", "datacenters", "hosts",
		"clusters")
	if err != nil {
		return nil, err
	}
	out := []interface{}{}
	for _, e := range entitiesOf("ResourcePool") {
		pool, ok := e.(*simulator.ResourcePool)
		if !ok || !f["resource_pools"].Allows(pool.Self.Value) || !f["names"].Allows(pool.Name) ||
			!within(pool.Self, f["datacenters"]) || !f["clusters"].Allows(poolCluster(pool)) ||
			!poolOnHosts(pool, f["hosts"]) {
			continue
		}
		if len(f["parent_resource_pools"]) > 0 && (pool.Parent == nil || !f["parent_resource_pools"][pool.Parent.Value]) {
			continue
		}
		out = append(out, vapi.NewStruct("com.vmware.vcenter.resource_pool.summary", map[string]interface{}{
			"resource_pool": pool.Self.Value, "name": pool.Name}))
	}
	return out, nil
}

func poolCluster(pool *simulator.ResourcePool) string {
	if pool.Owner.Type == "ClusterComputeResource" {
		return pool.Owner.Value
	}
	return ""
}

// poolOnHosts tells whether the compute resource owning the pool holds one of the hosts (an empty f matches).
func poolOnHosts(pool *simulator.ResourcePool, f vapi.Filter) bool {
	if len(f) == 0 {
		return true
	}
	var hosts []types.ManagedObjectReference
	switch owner := simulator.Map.Get(pool.Owner).(type) {
	case *simulator.ClusterComputeResource:
		hosts = owner.Host
	case *mo.ComputeResource:
		hosts = owner.Host
	}
	for _, h := range hosts {
		if f[h.Value] {
			return true
		}
	}
	return false
}

func getResourcePool(c *vapi.Invocation) (interface{}, *vapi.Err) {
	e, err := findEntity(c, "resource_pool", "ResourcePool", "Resource pool")
	if err != nil {
		return nil, err
	}
	pool := e.(*simulator.ResourcePool)
	children := []string{}
	for _, child := range pool.ResourcePool.ResourcePool {
		children = append(children, child.Value)
	}
	return vapi.NewStruct("com.vmware.vcenter.resource_pool.info", map[string]interface{}{"name": pool.Name,
		"resource_pools":    children,
		"cpu_allocation":    vapi.OptionalOf(allocationInfo(pool.Config.CpuAllocation)),
		"memory_allocation": vapi.OptionalOf(allocationInfo(pool.Config.MemoryAllocation))}), nil
}

func allocationInfo(a types.ResourceAllocationInfo) vapi.Struct {
	level, shares := "NORMAL", vapi.Optional{}
	if a.Shares != nil {
		level = strings.ToUpper(string(a.Shares.Level))
		if a.Shares.Level == types.SharesLevelCustom {
			shares = vapi.OptionalOf(a.Shares.Shares)
		}
	}
	return vapi.NewStruct("com.vmware.vcenter.resource_pool.resource_allocation_info", map[string]interface{}{
		"reservation": deref64(a.Reservation), "expandable_reservation": a.ExpandableReservation != nil &&
			*a.ExpandableReservation, "limit": deref64Or(a.Limit, -1),
		"shares": vapi.NewStruct("com.vmware.vcenter.resource_pool.shares_info",
			map[string]interface{}{"level": level, "shares": shares})})
}

func deref64(p *int64) int64 { return deref64Or(p, 0) }

func deref64Or(p *int64, unset int64) int64 {
	if p == nil {
		return unset
	}
	return *p
}

// ---- guest identity ------------------------------------------------------------------------------------------------

// getGuestIdentity is com.vmware.vcenter.vm.guest.Identity.get: what VMware Tools reports, SERVICE_UNAVAILABLE while
// Tools does not run or has reported nothing (the operation's documented errors).
func getGuestIdentity(c *vapi.Invocation, vmObject func(mo.Entity) *simulator.VirtualMachine) (interface{}, *vapi.Err) {
	vm, err := findVM(c, vmObject)
	if err != nil {
		return nil, err
	}
	guest := vm.Guest
	if guest == nil || guest.ToolsRunningStatus != string(types.VirtualMachineToolsRunningStatusGuestToolsRunning) {
		return nil, vapi.NewErr("SERVICE_UNAVAILABLE", "VMware Tools is not running in virtual machine %s.", vm.Self.Value)
	}
	if guest.GuestId == "" {
		return nil, vapi.NewErr("SERVICE_UNAVAILABLE", "VMware Tools has not provided any data for virtual machine %s.",
			vm.Self.Value)
	}
	return vapi.NewStruct("com.vmware.vcenter.vm.guest.identity.info", map[string]interface{}{
		"name": guestOSEnum(guest.GuestId), "family": guestFamilyEnum(guest.GuestFamily),
		"full_name": vapi.Localizable(vapi.Message{ID: "vmsg.guestos." + guest.GuestId + ".label",
			DefaultMessage: guest.GuestFullName, Args: []string{}}),
		"host_name": guest.HostName, "ip_address": vapi.OptionalString(guest.IpAddress)}), nil
}

// guestOSEnum turns SOAP's guest id into com.vmware.vcenter.vm.guest_OS: otherLinux64Guest is OTHER_LINUX_64,
// windows9Server64Guest WINDOWS_9_SERVER_64, debian10_64Guest DEBIAN_10_64.
func guestOSEnum(id string) string {
	id = strings.TrimSuffix(id, "Guest")
	var b strings.Builder
	var prev rune
	for i, r := range id {
		startsWord := unicode.IsUpper(r) || (unicode.IsDigit(r) && unicode.IsLetter(prev))
		if i > 0 && startsWord && prev != '_' {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
		prev = r
	}
	return b.String()
}

// guestFamilyEnum turns SOAP's guest family (linuxGuest, windowsGuest, otherGuestFamily, …) into
// com.vmware.vcenter.vm.guest_OS_family (LINUX, WINDOWS, OTHER, …).
func guestFamilyEnum(family string) string {
	if i := strings.Index(family, "Guest"); i > 0 {
		family = family[:i]
	}
	return strings.ToUpper(family)
}
