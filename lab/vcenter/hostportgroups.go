package main

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// UpdatePortGroup changes a standard port group of the host: its VLAN, its policy, its name or its switch
// (vSphere Web Services API, HostNetworkSystem.UpdatePortGroup: "Reconfigures a port group on the virtual switch";
// faults NotFound when the port group or the switch named in the spec does not exist, AlreadyExists when the new
// name is taken). Checked before any change. A new name is a remove and an add, as the host's port groups are
// keyed by name (the Network object of the old name goes, one of the new name comes).
func (s *hostNetworkSystem) UpdatePortGroup(ctx *simulator.Context, req *types.UpdatePortGroup) soap.HasFault {
	defer s.refresh()
	body := &methods.UpdatePortGroupBody{}
	info := s.sim.NetworkInfo
	index := portGroupIndex(info.Portgroup, req.PgName)
	if index < 0 {
		body.Fault_ = notFoundFault(fmt.Sprintf("The object or item referred to could not be found: port group %q "+
			"on host %s", req.PgName, s.host.Name))
		return body
	}
	spec := req.Portgrp
	if spec.Name == "" {
		spec.Name = req.PgName
	}
	if spec.VswitchName == "" {
		spec.VswitchName = info.Portgroup[index].Spec.VswitchName
	}
	if switchIndex(info.Vswitch, spec.VswitchName) < 0 {
		body.Fault_ = notFoundFault(fmt.Sprintf("The object or item referred to could not be found: virtual switch "+
			"%q on host %s", spec.VswitchName, s.host.Name))
		return body
	}
	if spec.Name != req.PgName && portGroupIndex(info.Portgroup, spec.Name) >= 0 {
		body.Fault_ = simulator.Fault(fmt.Sprintf("The specified key, name, or identifier '%s' already exists.",
			spec.Name), &types.AlreadyExists{Name: spec.Name})
		return body
	}
	if spec.Name != req.PgName || spec.VswitchName != info.Portgroup[index].Spec.VswitchName {
		if fault := s.removePortGroup(ctx, &types.RemovePortGroup{This: req.This, PgName: req.PgName}).Fault(); fault != nil {
			body.Fault_ = fault
			return body
		}
		if fault := s.sim.AddPortGroup(ctx, &types.AddPortGroup{This: req.This, Portgrp: spec}).Fault(); fault != nil {
			body.Fault_ = fault
			return body
		}
	} else {
		info.Portgroup[index].Spec = spec
	}
	body.Res = &types.UpdatePortGroupResponse{}
	return body
}

func (s *hostNetworkSystem) RemovePortGroup(ctx *simulator.Context, req *types.RemovePortGroup) soap.HasFault {
	defer s.refresh()
	return s.removePortGroup(ctx, req)
}

// removePortGroup is the simulator's, which finds the port group's network by the name as given: vCenter stores
// it with / \ and %% escaped (escapeName), so a network of such a name is first given its plain name back.
func (s *hostNetworkSystem) removePortGroup(ctx *simulator.Context, req *types.RemovePortGroup) soap.HasFault {
	if escaped := escapeName(req.PgName); escaped != req.PgName && portGroupIndex(s.sim.NetworkInfo.Portgroup, req.PgName) >= 0 {
		for _, network := range simulator.Map.All("Network") {
			if entity := network.Entity(); entity.Name == escaped {
				entity.Name = req.PgName
				defer func() { entity.Name = escaped }() // for a removal that fails; a removed network is gone
			}
		}
	}
	return s.sim.RemovePortGroup(ctx, req)
}

func portGroupIndex(portgroups []types.HostPortGroup, name string) int {
	for i := range portgroups {
		if portgroups[i].Spec.Name == name {
			return i
		}
	}
	return -1
}

func switchIndex(switches []types.HostVirtualSwitch, name string) int {
	for i := range switches {
		if switches[i].Name == name {
			return i
		}
	}
	return -1
}
