package main

import (
	"encoding/xml"

	"github.com/vmware/govmomi/vim25/types"
)

// On ESXi every VM sits in ha-folder-vm: a host has no VM folders of its own. The host view shows the VMs vCenter
// keeps in folders below the datacenter's VM folder the same way: their parent is ha-folder-vm, and ha-folder-vm's
// childEntity lists all the host's VMs (the folders themselves are vCenter's and left out).

// flattenVMFolder rewrites, in an answer still in vCenter's references, the properties that differ: a host VM's
// parent and the VM folder's childEntity, in property collector results and in Fetch (this and prop of the call).
func (v *hostView) flattenVMFolder(answer *xmlNode, method string, this types.ManagedObjectReference, prop string) {
	if v.vmFolder == nil {
		return
	}
	if method == "Fetch" {
		if value := answer.find("returnval"); value != nil {
			v.flattenProperty(this, prop, value)
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
			v.flattenProperty(types.ManagedObjectReference{Type: typ, Value: id}, prop, value)
		}
	})
}

func (v *hostView) flattenProperty(obj types.ManagedObjectReference, prop string, value *xmlNode) {
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
