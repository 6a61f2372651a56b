package main

import (
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
	"vcsim/vimfault"
)

// imageConfigManager is a host's HostImageConfigManager (configManager.imageConfigManager): the host image
// profile's acceptance level, PartnerSupported ("partner") as ESXi installs it, which NVIDIA's host driver VIBs
// need. UpdateHostImageAcceptanceLevel takes one of HostImageAcceptanceLevel's values and refuses another with
// InvalidArgument (vSphere Web Services API, HostImageConfigManager). fetchSoftwarePackages lists the VIBs of the
// host's installed components (softwarepackages.go).
type imageConfigManager struct {
	mo.HostImageConfigManager
	acceptance string
	host       *hostState
}

func newImageConfigManager(h *hostState) *imageConfigManager {
	m := &imageConfigManager{acceptance: string(types.HostImageAcceptanceLevelPartner), host: h}
	m.Self = types.ManagedObjectReference{Type: "HostImageConfigManager",
		Value: "imageConfigManager-" + simobj.Number(h.Ref)}
	return m
}

func (m *imageConfigManager) HostImageConfigGetAcceptance(*types.HostImageConfigGetAcceptance) soap.HasFault {
	return &methods.HostImageConfigGetAcceptanceBody{
		Res: &types.HostImageConfigGetAcceptanceResponse{Returnval: m.acceptance}}
}

func (m *imageConfigManager) UpdateHostImageAcceptanceLevel(
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
