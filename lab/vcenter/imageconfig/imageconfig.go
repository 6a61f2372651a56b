// Package imageconfig is a host's HostImageConfigManager (configManager.imageConfigManager): the host image
// profile's acceptance level and the VIBs of the components the host runs, as vLCM records them.
package imageconfig

import (
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/bundle"
	"vcsim/simobj"
	"vcsim/vimfault"
	"vcsim/vlcm"
)

// Lab is what the manager needs of the lab: vLCM's record of the components a host runs (name to version, the base
// image as vlcm.BaseImageComponent) and what vLCM knows of a base image and a component version (nil when it knows
// none), as vlcm.Manager answers them. The manager calls it under the lab's lock, within a SOAP request.
type Lab interface {
	Installed(host types.ManagedObjectReference) map[string]string
	BaseImage(version string) *vlcm.BaseImage
	Component(name, version string) *bundle.Component
}

// Manager is a host's HostImageConfigManager: the host image profile's acceptance level, PartnerSupported
// ("partner") as ESXi installs it, which NVIDIA's host driver VIBs need. UpdateHostImageAcceptanceLevel takes one of
// HostImageAcceptanceLevel's values and refuses another with InvalidArgument (vSphere Web Services API,
// HostImageConfigManager). FetchSoftwarePackages lists the VIBs of the host's installed components
// (softwarepackages.go).
type Manager struct {
	mo.HostImageConfigManager
	acceptance string
	host       types.ManagedObjectReference
	lab        Lab
}

// New is the image configuration manager of a host, at acceptance level partner, under an id of the host's own.
func New(host types.ManagedObjectReference, lab Lab) *Manager {
	m := &Manager{acceptance: string(types.HostImageAcceptanceLevelPartner), host: host, lab: lab}
	m.Self = types.ManagedObjectReference{Type: "HostImageConfigManager",
		Value: "imageConfigManager-" + simobj.Number(host)}
	return m
}

func (m *Manager) HostImageConfigGetAcceptance(*types.HostImageConfigGetAcceptance) soap.HasFault {
	return &methods.HostImageConfigGetAcceptanceBody{
		Res: &types.HostImageConfigGetAcceptanceResponse{Returnval: m.acceptance}}
}

func (m *Manager) UpdateHostImageAcceptanceLevel(
	req *types.UpdateHostImageAcceptanceLevel) soap.HasFault {
	body := &methods.UpdateHostImageAcceptanceLevelBody{}
	for _, level := range []types.HostImageAcceptanceLevel{types.HostImageAcceptanceLevelVmware_certified,
		types.HostImageAcceptanceLevelVmware_accepted, types.HostImageAcceptanceLevelPartner,
		types.HostImageAcceptanceLevelCommunity} {
		if string(level) == req.NewAcceptanceLevel {
			m.acceptance = req.NewAcceptanceLevel
			body.Res = &types.UpdateHostImageAcceptanceLevelResponse{}
			return body
		}
	}
	body.Fault_ = vimfault.InvalidArgument("newAcceptanceLevel", "%q is not one of vmware_certified, vmware_accepted, "+
		"partner, community", req.NewAcceptanceLevel).SOAP()
	return body
}
