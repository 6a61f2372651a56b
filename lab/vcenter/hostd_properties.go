package main

import (
	"encoding/xml"
	"strings"

	"github.com/vmware/govmomi/vim25/types"
)

// Properties whose value on a host differs from vCenter's for the same object:
//   - On ESXi every VM sits in ha-folder-vm: a host has no VM folders of its own. The host view shows the VMs vCenter
//     keeps in folders below the datacenter's VM folder the same way: their parent is ha-folder-vm, and
//     ha-folder-vm's childEntity lists all the host's VMs (the folders themselves are vCenter's and left out).
//   - The datacenter is named ha-datacenter, as ESXi names it (clients look it up by that name); the compute
//     resource is named after the host (not confirmed against a host).

// hostdProperties rewrites, in an answer still in vCenter's references, the properties that differ, in property
// collector results and in Fetch (this and prop of the call).
func (v *hostView) hostdProperties(answer *xmlNode, method string, this types.ManagedObjectReference, prop string) {
	if method == "Fetch" {
		if value := answer.find("returnval"); value != nil {
			v.hostdProperty(this, prop, value)
		}
		return
	}
	answer.walk(func(n *xmlNode) {
		if n.name() != "propSet" && n.name() != "changeSet" {
			return
		}
		container := n.parent
		obj, name, value := container.child("obj"), n.child("name"), n.child("val")
		if obj == nil || name == nil || value == nil {
			return
		}
		typ, id, isRef := obj.moRef()
		prop, _ := name.text()
		if isRef {
			v.hostdProperty(types.ManagedObjectReference{Type: typ, Value: id}, prop, value)
		}
	})
}

func (v *hostView) hostdProperty(obj types.ManagedObjectReference, prop string, value *xmlNode) {
	if name, ok := v.names[obj]; ok && prop == "name" {
		value.setText(name)
		return
	}
	if v.vmFolder == nil {
		return
	}
	switch {
	case obj.Type == "VirtualMachine" && prop == "parent" && v.shown[obj]:
		value.setAttr("type", "Folder")
		value.setText(v.vmFolder.Value)
	case obj == *v.vmFolder && prop == "childEntity":
		value.children = nil
		for _, vm := range v.vms {
			value.children = append(value.children, moRefNode("ManagedObjectReference", vm))
		}
	}
}

func moRefNode(name string, ref types.ManagedObjectReference) *xmlNode {
	return &xmlNode{start: xml.StartElement{Name: xml.Name{Local: name}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "type"}, Value: ref.Type},
		{Name: xml.Name{Space: "xsi", Local: "type"}, Value: "ManagedObjectReference"}}},
		children: []interface{}{xml.CharData(ref.Value)}}
}

// datacenterPaths turns the datacenter's ESXi name in a request's inventory path (SearchIndex.FindByInventoryPath)
// or child name (SearchIndex.FindChild) into its vCenter name.
func (v *hostView) datacenterPaths(request *xmlNode) {
	if v.datacenter == "" {
		return
	}
	request.walk(func(n *xmlNode) {
		text, ok := n.text()
		if !ok {
			return
		}
		switch n.name() {
		case "inventoryPath":
			lead := strings.HasPrefix(text, "/")
			parts := strings.SplitN(strings.TrimPrefix(text, "/"), "/", 2)
			if parts[0] == "ha-datacenter" {
				parts[0] = v.datacenter
				text = strings.Join(parts, "/")
				if lead {
					text = "/" + text
				}
				n.setText(text)
			}
		case "name":
			if text == "ha-datacenter" && n.parent != nil && n.parent.name() == "FindChild" {
				n.setText(v.datacenter)
			}
		}
	})
}
