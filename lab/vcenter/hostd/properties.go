package hostd

import (
	"encoding/xml"
	"strings"

	"github.com/vmware/govmomi/vim25/types"

	"vcsim/xmltree"
)

// Properties whose value on a host differs from vCenter's for the same object:
//   - On ESXi every VM sits in ha-folder-vm: a host has no VM folders of its own. The host view shows the VMs vCenter
//     keeps in folders below the datacenter's VM folder the same way: their parent is ha-folder-vm, and
//     ha-folder-vm's childEntity lists all the host's VMs (the folders themselves are vCenter's and left out).
//   - The datacenter is named ha-datacenter, as ESXi names it (clients look it up by that name); the compute
//     resource is named after the host (not confirmed against a host).

// hostdProperties rewrites, in an answer still in vCenter's references, the properties that differ, in property
// collector results and in Fetch (this and prop of the call).
func (v *hostView) hostdProperties(answer *xmltree.Node, method string, this types.ManagedObjectReference, prop string) {
	if method == "Fetch" {
		if value := answer.Find("returnval"); value != nil {
			v.hostdProperty(this, prop, value)
		}
		return
	}
	answer.Walk(func(n *xmltree.Node) {
		if n.Name() != "propSet" && n.Name() != "changeSet" {
			return
		}
		container := n.Parent()
		obj, name, value := container.Child("obj"), n.Child("name"), n.Child("val")
		if obj == nil || name == nil || value == nil {
			return
		}
		typ, id, isRef := obj.MoRef()
		prop, _ := name.Text()
		if isRef {
			v.hostdProperty(types.ManagedObjectReference{Type: typ, Value: id}, prop, value)
		}
	})
}

func (v *hostView) hostdProperty(obj types.ManagedObjectReference, prop string, value *xmltree.Node) {
	if name, ok := v.names[obj]; ok && prop == "name" {
		value.SetText(name)
		return
	}
	if v.vmFolder == nil {
		return
	}
	switch {
	case obj.Type == "VirtualMachine" && prop == "parent" && v.shown[obj]:
		value.SetAttr("type", "Folder")
		value.SetText(v.vmFolder.Value)
	case obj == *v.vmFolder && prop == "childEntity":
		refs := make([]*xmltree.Node, len(v.vms))
		for i, vm := range v.vms {
			refs[i] = moRefNode("ManagedObjectReference", vm)
		}
		value.SetElements(refs...)
	}
}

func moRefNode(name string, ref types.ManagedObjectReference) *xmltree.Node {
	return xmltree.NewElement(name, []xml.Attr{
		{Name: xml.Name{Local: "type"}, Value: ref.Type},
		{Name: xml.Name{Space: "xsi", Local: "type"}, Value: "ManagedObjectReference"}}, ref.Value)
}

// datacenterPaths turns the datacenter's ESXi name in a request's inventory path (SearchIndex.FindByInventoryPath)
// or child name (SearchIndex.FindChild) into its vCenter name.
func (v *hostView) datacenterPaths(request *xmltree.Node) {
	if v.datacenter == "" {
		return
	}
	request.Walk(func(n *xmltree.Node) {
		text, ok := n.Text()
		if !ok {
			return
		}
		switch n.Name() {
		case "inventoryPath":
			lead := strings.HasPrefix(text, "/")
			parts := strings.SplitN(strings.TrimPrefix(text, "/"), "/", 2)
			if parts[0] == "ha-datacenter" {
				parts[0] = v.datacenter
				text = strings.Join(parts, "/")
				if lead {
					text = "/" + text
				}
				n.SetText(text)
			}
		case "name":
			if text == "ha-datacenter" && n.Parent() != nil && n.Parent().Name() == "FindChild" {
				n.SetText(v.datacenter)
			}
		}
	})
}
