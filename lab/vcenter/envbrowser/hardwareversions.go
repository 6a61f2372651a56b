package envbrowser

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// esxiHardwareVersions are the virtual hardware versions an ESXi 8.0 Update 2 host creates and runs, oldest first:
// vmx-21 is the version of 8.0 U2 and its default ("Hardware Features Available with Virtual Machine Compatibility
// Settings", vSphere 8.0 documentation, which points to VMware KB 2007240 for the list); 12 and 16 are hosted-product
// versions ESXi never had. The oldest version listed (4, ESX 3.5) is as remembered from that KB, not confirmed.
var esxiHardwareVersions = []string{"vmx-04", "vmx-07", "vmx-08", "vmx-09", "vmx-10", "vmx-11", "vmx-13", "vmx-14",
	"vmx-15", "vmx-17", "vmx-18", "vmx-19", "vmx-20", "vmx-21"}

// HardwareVersions is the list the browser offers, oldest first: the last is the default.
func HardwareVersions() []string { return append([]string(nil), esxiHardwareVersions...) }

// QueryConfigOptionDescriptor lists the hardware versions the compute resource's hosts support, the newest the
// default (the simulator lists one version, vmx-13, and no default).
func (b *Browser) QueryConfigOptionDescriptor(ctx *simulator.Context,
	req *types.QueryConfigOptionDescriptor) soap.HasFault {
	hosts := b.hosts()
	descriptors := make([]types.VirtualMachineConfigOptionDescriptor, len(esxiHardwareVersions))
	for i, version := range esxiHardwareVersions {
		descriptors[i] = types.VirtualMachineConfigOptionDescriptor{Key: version, Description: version, Host: hosts,
			CreateSupported: types.NewBool(true), DefaultConfigOption: types.NewBool(i == len(esxiHardwareVersions)-1),
			RunSupported: types.NewBool(true), UpgradeSupported: types.NewBool(true)}
	}
	return &methods.QueryConfigOptionDescriptorBody{Res: &types.QueryConfigOptionDescriptorResponse{
		Returnval: descriptors}}
}
