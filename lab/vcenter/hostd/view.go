package hostd

import (
	"net/http"
	"reflect"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/simulator/esx"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/soaphttp"
	"vcsim/xmltree"
)

// inventoryTypes are the managed entity types a host view shows only where they belong to the host; objects of
// other types (the host's managers, tasks, views, the property collector) pass through as they are.
var inventoryTypes = map[string]bool{
	"Folder": true, "Datacenter": true, "ComputeResource": true, "ClusterComputeResource": true,
	"HostSystem": true, "ResourcePool": true, "VirtualApp": true, "VirtualMachine": true, "Datastore": true,
	"StoragePod": true, "Network": true, "OpaqueNetwork": true, "DistributedVirtualPortgroup": true,
	"DistributedVirtualSwitch": true, "VmwareDistributedVirtualSwitch": true,
}

// hostView is one host's view of the inventory at the time of a request: the vCenter objects it shows under
// hostd's fixed ids, and the others it shows under vCenter's own (the host's datastores and networks).
type hostView struct {
	login       Login
	toHostd     map[types.ManagedObjectReference]types.ManagedObjectReference
	toVC        map[types.ManagedObjectReference]types.ManagedObjectReference
	shown       map[types.ManagedObjectReference]bool   // vCenter references the host view shows
	vcenterOnly map[types.ManagedObjectReference]bool   // vCenter's service managers that ESXi does not have
	vmFolder    *types.ManagedObjectReference           // the datacenter's VM folder, ha-folder-vm
	vms         []types.ManagedObjectReference          // the host's VMs
	names       map[types.ManagedObjectReference]string // the names ESXi gives objects vCenter names otherwise
	datacenter  string                                  // the datacenter's name in vCenter
}

func newHostView(ref types.ManagedObjectReference, login Login) *hostView {
	v := &hostView{login: login, toHostd: map[types.ManagedObjectReference]types.ManagedObjectReference{},
		toVC:  map[types.ManagedObjectReference]types.ManagedObjectReference{},
		shown: map[types.ManagedObjectReference]bool{}, vcenterOnly: map[types.ManagedObjectReference]bool{},
		names: map[types.ManagedObjectReference]string{}}
	v.mapServiceManagers()
	host, _ := simulator.Map.Get(ref).(*simulator.HostSystem)
	if host == nil {
		return v
	}
	v.mapInventory(host)
	return v
}

// mapServiceManagers pairs ESXi's service content (govmomi's esx.ServiceContent, recorded from a real host) with
// the simulator's vCenter service content field by field.
func (v *hostView) mapServiceManagers() {
	vc := simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance).Content
	hostd, vcenter := reflect.ValueOf(esx.ServiceContent), reflect.ValueOf(vc)
	for i := 0; i < hostd.NumField(); i++ {
		hostdRef, vcRef := moRefField(hostd.Field(i)), moRefField(vcenter.Field(i))
		switch {
		case hostdRef != nil && vcRef != nil:
			v.pair(*vcRef, *hostdRef)
		case vcRef != nil:
			v.vcenterOnly[*vcRef] = true
		}
	}
}

func moRefField(field reflect.Value) *types.ManagedObjectReference {
	switch value := field.Interface().(type) {
	case types.ManagedObjectReference:
		return &value
	case *types.ManagedObjectReference:
		return value
	}
	return nil
}

func (v *hostView) pair(vc, hostd types.ManagedObjectReference) {
	v.toHostd[vc], v.toVC[hostd] = hostd, vc
	v.shown[vc] = true
}

// mapInventory gives the host's inventory ESXi's ids (vSphere Web Services API, ServiceContent.rootFolder: on ESXi
// the root folder holds the single datacenter ha-datacenter; its folders, the host's compute resource and root
// resource pool have fixed ids, VMs numeric ones).
func (v *hostView) mapInventory(host *simulator.HostSystem) {
	root := simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance).Content.RootFolder
	v.pair(root, types.ManagedObjectReference{Type: "Folder", Value: "ha-folder-root"})
	v.pair(host.Self, types.ManagedObjectReference{Type: "HostSystem", Value: "ha-host"})
	if host.Parent != nil {
		v.pair(*host.Parent, types.ManagedObjectReference{Type: "ComputeResource", Value: "ha-compute-res"})
		v.names[*host.Parent] = host.Name
		if cr, ok := simulator.Map.Get(*host.Parent).(mo.Entity); ok {
			if pool := computeResourcePool(cr); pool != nil {
				v.pair(*pool, types.ManagedObjectReference{Type: "ResourcePool", Value: "ha-root-pool"})
			}
		}
	}
	if dc := entityDatacenter(host); dc != nil {
		v.pair(dc.Self, types.ManagedObjectReference{Type: "Datacenter", Value: "ha-datacenter"})
		v.names[dc.Self], v.datacenter = "ha-datacenter", dc.Name
		for vc, id := range map[types.ManagedObjectReference]string{dc.VmFolder: "ha-folder-vm",
			dc.HostFolder: "ha-folder-host", dc.DatastoreFolder: "ha-folder-datastore",
			dc.NetworkFolder: "ha-folder-network"} {
			v.pair(vc, types.ManagedObjectReference{Type: "Folder", Value: id})
		}
		vmFolder := dc.VmFolder
		v.vmFolder = &vmFolder
	}
	v.vms = host.Vm
	for _, vm := range host.Vm {
		v.pair(vm, types.ManagedObjectReference{Type: "VirtualMachine", Value: strings.TrimPrefix(vm.Value, "vm-")})
	}
	for _, ref := range append(append([]types.ManagedObjectReference{}, host.Datastore...), host.Network...) {
		v.shown[ref] = true
	}
}

func computeResourcePool(entity mo.Entity) *types.ManagedObjectReference {
	switch cr := entity.(type) {
	case *simulator.ClusterComputeResource:
		return cr.ResourcePool
	case *mo.ComputeResource:
		return cr.ResourcePool
	}
	value := reflect.ValueOf(entity)
	if value.Kind() == reflect.Ptr {
		if field := value.Elem().FieldByName("ResourcePool"); field.IsValid() {
			if ref, ok := field.Interface().(*types.ManagedObjectReference); ok {
				return ref
			}
		}
	}
	return nil
}

// entityDatacenter is the datacenter an entity sits in.
func entityDatacenter(entity mo.Entity) *simulator.Datacenter {
	for parent := entity.Entity().Parent; parent != nil; {
		obj := simulator.Map.Get(*parent)
		if dc, ok := obj.(*simulator.Datacenter); ok {
			return dc
		}
		next, ok := obj.(mo.Entity)
		if !ok {
			return nil
		}
		parent = next.Entity().Parent
	}
	return nil
}

// vcenterRef is the vCenter reference behind a reference a client of the host view sent, and whether the host
// view has that object.
func (v *hostView) vcenterRef(ref types.ManagedObjectReference) (types.ManagedObjectReference, bool) {
	if vc, ok := v.toVC[ref]; ok {
		return vc, true
	}
	if ref.Type == "VirtualMachine" && !strings.HasPrefix(ref.Value, "vm-") {
		ref.Value = "vm-" + ref.Value
	}
	if v.vcenterOnly[ref] {
		return ref, false
	}
	return ref, !inventoryTypes[ref.Type] || v.shown[ref]
}

// hostdRef is the reference a client of the host view sees for a vCenter reference, and whether it is shown.
func (v *hostView) hostdRef(ref types.ManagedObjectReference) (types.ManagedObjectReference, bool) {
	if hostd, ok := v.toHostd[ref]; ok {
		return hostd, true
	}
	if v.vcenterOnly[ref] {
		return ref, false
	}
	return ref, !inventoryTypes[ref.Type] || v.shown[ref]
}

// toVCenter rewrites a request's references into vCenter's. A call on an object the host does not have is answered
// with ManagedObjectNotFound, before the simulator sees it.
func (v *hostView) toVCenter(request *xmltree.Node, call soaphttp.Call) func(http.ResponseWriter) {
	var fault func(http.ResponseWriter)
	request.Walk(func(n *xmltree.Node) {
		typ, value, ok := n.MoRef()
		if !ok {
			return
		}
		vc, shown := v.vcenterRef(types.ManagedObjectReference{Type: typ, Value: value})
		if !shown && n.Name() == "_this" && fault == nil {
			fault = writeManagedObjectNotFound(types.ManagedObjectReference{Type: typ, Value: value})
		}
		n.SetAttr("type", vc.Type)
		n.SetText(vc.Value)
	})
	v.datacenterPaths(request)
	return fault
}

// fromVCenter rewrites an answer's references into hostd's and leaves out what the host does not have: an object
// of another host in a property collector's result, a reference in a list, a struct that names it (a datastore's
// mount on another host). Faults keep every reference, translated where the host view has a form for it.
func (v *hostView) fromVCenter(answer []byte, call hostdCall, ok bool) []byte {
	tree, err := xmltree.Parse(answer)
	if err != nil {
		return answer
	}
	method := call.method
	if ok {
		v.hostdProperties(tree, method, call.this, call.prop)
	}
	tree.Walk(func(n *xmltree.Node) {
		typ, value, isRef := n.MoRef()
		if !isRef {
			return
		}
		hostd, shown := v.hostdRef(types.ManagedObjectReference{Type: typ, Value: value})
		if shown || !ok {
			n.SetAttr("type", hostd.Type)
			n.SetText(hostd.Value)
			return
		}
		dropForeign(n)
	})
	if ok && (method == "Login" || method == "RetrievePropertiesEx" || method == "RetrieveProperties" ||
		method == "Fetch" || method == "SessionIsActive") {
		v.hostdAnswerUser(tree)
	}
	return tree.Bytes()
}

// dropForeign removes a reference to an object the host does not have, with what exists only to hold it.
func dropForeign(n *xmltree.Node) {
	parent := n.Parent()
	switch {
	case parent == nil:
	case n.Name() == "obj" || n.Name() == "val": // ObjectContent, ObjectUpdate; DynamicProperty, PropertyChange
		parent.Remove()
	case n.Name() == "ManagedObjectReference" || n.Name() == "returnval" || parent.Name() == "val" ||
		parent.Name() == "returnval":
		n.Remove()
	default: // a struct in a list that names the object (DatastoreHostMount.key, ClusterDasVmConfigInfo.key)
		parent.Remove()
	}
}
