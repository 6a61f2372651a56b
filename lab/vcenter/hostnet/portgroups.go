package hostnet

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"vcsim/simobj"
)

// UpdatePortGroup changes a standard port group of the host: its VLAN, its policy, its name or its switch
// (vSphere Web Services API, HostNetworkSystem.UpdatePortGroup: "Reconfigures a port group on the virtual switch";
// faults NotFound when the port group or the switch named in the spec does not exist, AlreadyExists when the new
// name is taken). Checked before any change. A new name is a remove and an add, as the host's port groups are
// keyed by name (the Network object of the old name goes, one of the new name comes).
func (s *NetworkSystem) UpdatePortGroup(ctx *simulator.Context, req *types.UpdatePortGroup) soap.HasFault {
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

// AddPortGroup adds a standard port group to the host. vCenter keeps one Network per name in a datacenter, shared
// by every host with a port group of that name (Network.host): a second host adding the name joins the network
// where the simulator refuses it as a duplicate. A name the host already has is AlreadyExists (vSphere Web
// Services API, HostNetworkSystem.AddPortGroup).
func (s *NetworkSystem) AddPortGroup(ctx *simulator.Context, req *types.AddPortGroup) soap.HasFault {
	defer s.refresh()
	body := &methods.AddPortGroupBody{}
	info := s.sim.NetworkInfo
	if portGroupIndex(info.Portgroup, req.Portgrp.Name) >= 0 {
		body.Fault_ = simulator.Fault(fmt.Sprintf("The specified key, name, or identifier '%s' already exists.",
			req.Portgrp.Name), &types.AlreadyExists{Name: req.Portgrp.Name})
		return body
	}
	network := s.sharedNetwork(req.Portgrp.Name)
	if network == nil {
		result := s.sim.AddPortGroup(ctx, req)
		if result.Fault() == nil {
			s.joinNetwork(s.sharedNetwork(req.Portgrp.Name))
		}
		return result
	}
	index := switchIndex(info.Vswitch, req.Portgrp.VswitchName)
	if index < 0 {
		body.Fault_ = notFoundFault(fmt.Sprintf("The object or item referred to could not be found: virtual switch "+
			"%q on host %s", req.Portgrp.VswitchName, s.host.Name))
		return body
	}
	info.Vswitch[index].Portgroup = append(info.Vswitch[index].Portgroup, req.Portgrp.Name)
	info.Portgroup = append(info.Portgroup, types.HostPortGroup{Key: "key-vim.host.PortGroup-" + req.Portgrp.Name,
		Spec: req.Portgrp})
	s.joinNetwork(network)
	body.Res = &types.AddPortGroupResponse{}
	return body
}

func (s *NetworkSystem) RemovePortGroup(ctx *simulator.Context, req *types.RemovePortGroup) soap.HasFault {
	defer s.refresh()
	return s.removePortGroup(ctx, req)
}

// sharedNetwork is the standard network of that name in the host's datacenter, if there is one.
func (s *NetworkSystem) sharedNetwork(name string) *mo.Network {
	ref, _ := simobj.Ancestor(s.host.Self, "Datacenter")
	dc, ok := simulator.Map.Get(ref).(*simulator.Datacenter)
	if !ok {
		return nil
	}
	folder, ok := simulator.Map.Get(dc.NetworkFolder).(*simulator.Folder)
	if !ok {
		return nil
	}
	for _, ref := range folder.ChildEntity {
		if network, ok := simulator.Map.Get(ref).(*mo.Network); ok && network.Name == simobj.EscapeName(name) {
			return network
		}
	}
	return nil
}

func (s *NetworkSystem) joinNetwork(network *mo.Network) {
	if network == nil {
		return
	}
	if simulator.FindReference(network.Host, s.host.Self) == nil {
		network.Host = append(network.Host, s.host.Self)
	}
	if simulator.FindReference(s.host.Network, network.Self) == nil {
		s.host.Network = append(s.host.Network, network.Self)
	}
}

// leaveNetwork takes the host off a shared network that other hosts still have, without the simulator, which
// would remove the network itself. It answers false when the host is the network's last one.
func (s *NetworkSystem) leaveNetwork(name string) bool {
	network := s.sharedNetwork(name)
	if network == nil {
		return false
	}
	if len(network.Host) == 0 || (len(network.Host) == 1 && network.Host[0] == s.host.Self) {
		return false
	}
	info := s.sim.NetworkInfo
	for i := range info.Vswitch {
		kept := info.Vswitch[i].Portgroup[:0]
		for _, pg := range info.Vswitch[i].Portgroup {
			if pg != name {
				kept = append(kept, pg)
			}
		}
		info.Vswitch[i].Portgroup = kept
	}
	if index := portGroupIndex(info.Portgroup, name); index >= 0 {
		info.Portgroup = append(info.Portgroup[:index], info.Portgroup[index+1:]...)
	}
	simulator.RemoveReference(&network.Host, s.host.Self)
	simulator.RemoveReference(&s.host.Network, network.Self)
	return true
}

// removePortGroup is the simulator's, which finds the port group's network by the name as given: vCenter stores
// it with / \ and %% escaped (escapeName), so a network of such a name is first given its plain name back.
func (s *NetworkSystem) removePortGroup(ctx *simulator.Context, req *types.RemovePortGroup) soap.HasFault {
	if portGroupIndex(s.sim.NetworkInfo.Portgroup, req.PgName) >= 0 && s.leaveNetwork(req.PgName) {
		return &methods.RemovePortGroupBody{Res: &types.RemovePortGroupResponse{}}
	}
	if escaped := simobj.EscapeName(req.PgName); escaped != req.PgName && portGroupIndex(s.sim.NetworkInfo.Portgroup, req.PgName) >= 0 {
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
